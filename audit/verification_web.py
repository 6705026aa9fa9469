"""The console's Verification and Export pages, the "Verify now" button, and the offline
verifier the Export page offers for download."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from facade.tenancy.models import Tenant
from facade.tenancy.policy import NotFound

from .access import audit_tenant
from .services import verification_run
from .verification import last_run, latest_checkpoint, public_key
from .web import audit_page


@audit_page("verification")
def audit_verification(request: HttpRequest, tenant: Tenant, context: dict) -> HttpResponse:
    context.update(
        {
            "last_run": last_run(tenant),
            "checkpoint": latest_checkpoint(tenant),
            "public_key": public_key(),
        }
    )
    return render(request, "audit/verification.html", context)


@require_POST
@login_required
def audit_verify_run(request: HttpRequest, tenant_slug: str) -> HttpResponse:
    try:
        tenant = audit_tenant(request.user, tenant_slug)
    except NotFound as exc:
        raise Http404("no such tenant among those you audit") from exc
    verification_run(tenant=tenant, reader=request.user)
    return redirect(reverse("audit-verification", args=[tenant.slug]) + "#result")


@audit_page("export")
def audit_export(request: HttpRequest, tenant: Tenant, context: dict) -> HttpResponse:
    context.update({"public_key": public_key(), "checkpoint": latest_checkpoint(tenant)})
    return render(request, "audit/export.html", context)


# The verifier an outside auditor runs on an export: the very file the project's own tests run
# (tools/verify_export.py — Python's standard library only, importing nothing from Facade).
VERIFIER = settings.BASE_DIR / "tools" / "verify_export.py"


@audit_page("verifier", tab="audit-export")
def audit_verifier(request: HttpRequest, tenant: Tenant, context: dict) -> HttpResponse:
    # Plain bytes (the file is a few KB), so that it passes as a page to audit_page's recording.
    response = HttpResponse(VERIFIER.read_bytes(), content_type="text/x-python; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="verify_export.py"'
    return response
