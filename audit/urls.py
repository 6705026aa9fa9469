"""The auditor console's pages, under /audit/ (read-only; see audit.web.audit_page)."""

from django.urls import path

from . import lineage_web, timeline_web, web

urlpatterns = [
    path("", web.audit_index, name="audit-index"),
    path("<slug:tenant_slug>/", timeline_web.timeline, name="audit-timeline"),
    path("<slug:tenant_slug>/events/<int:seq>", timeline_web.event, name="audit-event"),
    path("<slug:tenant_slug>/lineage", lineage_web.lineage_page, name="audit-lineage"),
    path("<slug:tenant_slug>/reviews/<uuid:report_id>", lineage_web.review_page, name="audit-review"),
]
