"""The auditor console as JSON for tools, under /api/audit/ (read-only; `?tenant=<slug>` names the
ledger, optional when the caller audits exactly one)."""

from django.urls import URLPattern, path

from . import replay_api
from .export_api import AuditExportView
from .lineage_api import LineageView
from .timeline_api import AuditEventsView

urlpatterns: list[URLPattern] = [
    path("events", AuditEventsView.as_view(), name="audit-events"),
    path("lineage", LineageView.as_view(), name="audit-lineage-api"),
    path("replay", replay_api.ReplayApiView.as_view(), name="audit-replay-api"),
    path("export", AuditExportView.as_view(), name="audit-export-api"),
]
