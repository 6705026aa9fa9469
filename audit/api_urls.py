"""The auditor console as JSON for tools, under /api/audit/ (read-only; `?tenant=<slug>` names the
ledger, optional when the caller audits exactly one)."""

from django.urls import URLPattern, path

from . import replay_api

urlpatterns: list[URLPattern] = [
    path("replay", replay_api.ReplayApiView.as_view(), name="audit-replay-api"),
]
