"""The auditor console's pages, under /audit/ (read-only; see audit.web.audit_page)."""

from django.urls import path

from . import metrics_web, session_web, web

urlpatterns = [
    path("", web.audit_index, name="audit-index"),
    path("<slug:tenant_slug>/sessions/<uuid:session_id>", session_web.audit_session, name="audit-session"),
    path("<slug:tenant_slug>/metrics", metrics_web.audit_metrics, name="audit-metrics"),
]
