"""Server-rendered pages: home, and the customer page of an agent."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from facade.tenancy.policy import LEDGER_READERS, AgentPolicy, NotFound, TenantPolicy


def home(request: HttpRequest) -> HttpResponse:
    context = {
        "owned_agents": AgentPolicy.owned(request.user).select_related("tenant").order_by("slug"),
        "ledger_tenants": TenantPolicy.with_roles(request.user, LEDGER_READERS).order_by("slug"),
    }
    return render(request, "home.html", context)


@ensure_csrf_cookie
def customer_page(request: HttpRequest, slug: str) -> HttpResponse:
    try:
        agent = AgentPolicy.get_public(slug)
    except NotFound as exc:
        raise Http404("no such agent") from exc
    return render(request, "customer.html", {"agent": agent})
