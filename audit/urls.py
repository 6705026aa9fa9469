"""The auditor console's pages, under /audit/ (read-only; see audit.web.audit_page)."""

from django.urls import path

from . import web

urlpatterns = [
    path("", web.audit_index, name="audit-index"),
]
