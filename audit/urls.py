"""The auditor console's pages, under /audit/ (read-only; see audit.web.audit_page)."""

from django.urls import path

from . import verification_web, web

urlpatterns = [
    path("", web.audit_index, name="audit-index"),
    path("<slug:tenant_slug>/verification", verification_web.audit_verification, name="audit-verification"),
    path("<slug:tenant_slug>/verification/run", verification_web.audit_verify_run, name="audit-verify-run"),
    path("<slug:tenant_slug>/export", verification_web.audit_export, name="audit-export"),
]
