"""`/audit/`: the auditor console's front page — the tenants whose ledger the reader may audit —
and the decorator every console page of one tenant is served through."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from facade.tenancy.models import Tenant
from facade.tenancy.policy import NotFound, ledger_tenants

from .access import audit_tenant
from .nav import audit_nav
from .services import access_record

Page = Callable[..., HttpResponse]


def audit_page(view: str, tab: str = "") -> Callable[[Page], Page]:
    """Serve a read-only console page of one tenant (`/audit/<tenant>/…`): signed in, the tenant
    among those the reader may audit (else 404, like a tenant that does not exist), and the view
    recorded as `audit.viewed` with its query parameters once the page was rendered.  The page
    function gets the tenant and a context holding the navigation, where the page's tab (`tab`,
    else the url name `audit-<view>`) is the current one."""

    def wrap(page: Page) -> Page:
        @require_safe
        @login_required
        @functools.wraps(page)
        def served(request: HttpRequest, tenant_slug: str, *args: Any, **kwargs: Any) -> HttpResponse:
            try:
                tenant = audit_tenant(request.user, tenant_slug)
            except NotFound as exc:
                raise Http404("no such tenant among those you audit") from exc
            context = {"tenant": tenant, "audit_nav": audit_nav(tenant, tab or f"audit-{view}")}
            response = page(request, tenant, context, *args, **kwargs)
            if response.status_code < 400:
                # What was asked: the query and the path's own pointers (an event's seq, …).
                params = {**dict(request.GET.items()), **{key: str(value) for key, value in kwargs.items()}}
                access_record(tenant=tenant, reader=request.user, view=view, params=params)
            return response

        return served

    return wrap


@require_safe
@login_required
def audit_index(request: HttpRequest) -> HttpResponse:
    tenants: list[Tenant] = list(ledger_tenants(request.user).order_by("slug"))
    cards = [{"tenant": tenant, "nav": audit_nav(tenant, "")} for tenant in tenants]
    return render(request, "audit/index.html", {"cards": cards})
