"""The auditor console as JSON for tools, under /api/audit/ (read-only; `?tenant=<slug>` names the
ledger, optional when the caller audits exactly one)."""

from django.urls import URLPattern, path

from .export_api import AuditExportView

urlpatterns: list[URLPattern] = [
    path("export", AuditExportView.as_view(), name="audit-export-api"),
]
