"""The auditor console's pages, under /audit/ (read-only; see audit.web.audit_page)."""

from django.urls import path

from . import timeline_web, web

urlpatterns = [
    path("", web.audit_index, name="audit-index"),
    path("<slug:tenant_slug>/", timeline_web.timeline, name="audit-timeline"),
    path("<slug:tenant_slug>/events/<int:seq>", timeline_web.event, name="audit-event"),
]
