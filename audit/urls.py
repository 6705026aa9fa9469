"""The auditor console's pages, under /audit/ (read-only; see audit.web.audit_page)."""

from django.urls import path

from . import lineage_web, metrics_web, replay_web, session_web, timeline_web, verification_web, web

urlpatterns = [
    path("", web.audit_index, name="audit-index"),
    path("<slug:tenant_slug>/", timeline_web.timeline, name="audit-timeline"),
    path("<slug:tenant_slug>/events/<int:seq>", timeline_web.event, name="audit-event"),
    path("<slug:tenant_slug>/lineage", lineage_web.lineage_page, name="audit-lineage"),
    path("<slug:tenant_slug>/reviews/<uuid:report_id>", lineage_web.review_page, name="audit-review"),
    path("<slug:tenant_slug>/replay", replay_web.audit_replay, name="audit-replay"),
    path("<slug:tenant_slug>/verification", verification_web.audit_verification, name="audit-verification"),
    path("<slug:tenant_slug>/verification/run", verification_web.audit_verify_run, name="audit-verify-run"),
    path("<slug:tenant_slug>/export", verification_web.audit_export, name="audit-export"),
    path("<slug:tenant_slug>/export/verify_export.py", verification_web.audit_verifier, name="audit-verifier"),
    path("<slug:tenant_slug>/sessions/<uuid:session_id>", session_web.audit_session, name="audit-session"),
    path("<slug:tenant_slug>/metrics", metrics_web.audit_metrics, name="audit-metrics"),
]
