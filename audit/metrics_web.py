"""`/audit/<tenant>/metrics`: an agent's metrics as its owner sees them on the overview — the
week over week and the 30-day charts with their tables (`rsi.metrics_web.metrics_context`,
templates/rsi/_metrics.html) — read-only, without the owner's links and actions.  One agent at a
time: the tenant's first by slug, or the one `?agent=<slug>` names, with the others listed."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from facade.tenancy.models import AgentProfile, Tenant
from rsi.metrics_web import metrics_context

from .web import audit_page


@audit_page("metrics")
def audit_metrics(request: HttpRequest, tenant: Tenant, context: dict[str, Any]) -> HttpResponse:
    agents = list(AgentProfile.objects.filter(tenant=tenant).order_by("slug"))
    wanted = request.GET.get("agent")
    agent = next((a for a in agents if a.slug == wanted), None) if wanted else (agents[0] if agents else None)
    if wanted and agent is None:
        raise Http404("no such agent in this tenant")
    context.update({"agents": agents, "agent": agent})
    if agent is not None:
        context.update(metrics_context(agent))
    return render(request, "audit/metrics.html", context)
