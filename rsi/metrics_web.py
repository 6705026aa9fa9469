"""`/owner/<slug>/`: the agent's owner overview — the owner's metrics as 30-day charts (Chart.js,
vendored in static/vendor/chart.js) with the same figures as tables, the week over week, and the
way to the agent's other owner pages.  Owners of the agent only; anyone else gets a 404."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_safe

from facade.tenancy.models import AgentProfile
from facade.tenancy.policy import AgentPolicy, NotFound
from guard.breaker import breaker_current
from guard.selectors import delivered_violations

from .metrics import DEFAULT_DAYS, HEALTHY_ADOPTION, METRICS, PARTS, Counts, Metrics, agent_metrics
from .review_web import overview_review
from .schedule_rules import day_bounds

# What each chart is called and what it counts (the same words label the chart and its table).
TITLES: dict[str, Any] = {
    "review_adoption": _("Review adoption"),
    "hallucinated_claims": _("Claims without evidence"),
    "over_commitment": _("Over-commitment"),
    "knowledge_hit": _("Knowledge hits"),
    "clarification_completion": _("Clarification completed"),
    "request_conversion": _("Request conversion"),
    "satisfaction": _("Satisfaction"),
}
MEANINGS: dict[str, Any] = {
    "review_adoption": _(
        "Proposals of the daily review you approved, of those you decided that day. Healthy above 20%."
    ),
    "hallucinated_claims": _(
        "Claims of the daily review that its gate dropped (no evidence, a pointer that does not resolve or a "
        "wrong figure), of all its claims that day."
    ),
    "over_commitment": _("Replies the commitment guard blocked and replaced, of all replies."),
    "knowledge_hit": _("Questions answered with a citation of your knowledge, of all knowledge questions."),
    "clarification_completion": _(
        "Conversations where the customer confirmed a request's summary, of those where the agent began to "
        "register one."
    ),
    "request_conversion": _("Requests registered, per conversation."),
    "satisfaction": _("Mean customer rating (1–5 stars) and how many ratings."),
}


# What each category of the outgoing check is called (guard.outgoing; a category not listed here
# is shown as written).
CATEGORY_LABELS: dict[str, Any] = {
    "price": _("a price"),
    "deadline": _("a deadline"),
    "outcome": _("an outcome"),
    "conclusion": _("a conclusion"),
    "unsourced_figure": _("a figure it was not given"),
    "applied_quote": _("a quote applied to the customer"),
}
CHECK_LABELS: dict[str, Any] = {"guard": _("commitment guard"), "grounding": _("grounding check")}


def shown(value: float | None, kind: str) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}" if kind == "stars" else f"{value * 100:.0f}%"


def shown_change(value: float | None, kind: str) -> str:
    if value is None:
        return "—"
    return f"{value:+.2f}" if kind == "stars" else f"{value * 100:+.0f}"


def _parts(row: Counts, metric: str) -> str:
    top, bottom = PARTS[metric]
    if metric == "satisfaction":
        return str(row.ratings)
    return f"{getattr(row, top)} / {getattr(row, bottom)}"


def violations_context(
    agent: AgentProfile, first_day: dt.date, *, with_reply: bool, audience: str = "customer"
) -> list[dict[str, Any]]:
    """The delivered violations of the period to one audience, newest first: the rule, category,
    day and a pointer to the reply (its message and conversation), with the agent's own words
    when `with_reply` (the owner's overview); never the customer's or peer's message."""
    since = day_bounds(first_day, agent.tenant.time_zone)[0]
    return [
        {
            "id": v.id,
            "day": v.day,
            "found_at": v.found_at,
            "rule": v.rule,
            "category": str(CATEGORY_LABELS.get(v.category, v.category)),
            "check": str(CHECK_LABELS.get(v.check, v.check)),
            "message_id": v.message_id,
            "session_id": v.session_id,
            "reply": v.reply,
        }
        for v in delivered_violations(agent, since=since, with_reply=with_reply, audience=audience)
    ]


# The peers' figures (issue 33 §4): the metrics that speak of conversations, counted on theirs.
PEER_METRICS = ("over_commitment", "knowledge_hit", "clarification_completion", "request_conversion")


def peers_context(agent: AgentProfile, data: Metrics, *, with_replies: bool) -> dict[str, Any]:
    """Other agents' traffic over the same 30 days, counted apart from the customers': the
    period's figures, never a peer's words."""
    totals = data.peers.totals
    kinds = dict(METRICS)
    return {
        "conversations": totals.sessions,
        "replies": totals.replies,
        "requests": totals.requests,
        "figures": [
            {
                "id": metric,
                "title": TITLES[metric],
                "value": shown(getattr(totals, metric), kinds[metric]),
                "parts": _parts(totals, metric),
            }
            for metric in PEER_METRICS
        ],
        "delivered_violations": totals.delivered_violations,
        "violations": violations_context(agent, data.first_day, with_reply=with_replies, audience="peer"),
        "model_trouble": {
            "empty": totals.empty_replies,
            "malformed": totals.malformed_replies,
            "failed": totals.model_failures,
        },
    }


def metrics_context(agent: AgentProfile, *, with_replies: bool = False) -> dict[str, Any]:
    """The charts and tables of an agent's metrics over the last 30 days, as both the owner's
    overview and the auditor console's metrics page show them (templates/rsi/_metrics.html).
    `with_replies`: the delivered violations show the agent's replies (the owner's overview);
    else only their pointers."""
    data = agent_metrics(agent, days=DEFAULT_DAYS)
    charts = []
    for metric, kind in METRICS:
        charts.append(
            {
                "id": metric,
                "kind": kind,
                "title": TITLES[metric],
                "meaning": MEANINGS[metric],
                "total": shown(getattr(data.totals, metric), kind),
                # No day has a figure: the chart and its table would be 30 empty days.
                "empty": all(getattr(row, metric) is None for row in data.rows),
                "rows": [
                    {
                        "day": row.day,
                        "partial": row.partial,
                        "value": shown(getattr(row, metric), kind),
                        "parts": _parts(row, metric),
                    }
                    for row in data.rows
                ],
            }
        )
    kinds = dict(METRICS)
    weeks = [
        {
            "title": TITLES[change.metric],
            "this_week": shown(change.this_week, kinds[change.metric]),
            "last_week": shown(change.last_week, kinds[change.metric]),
            "change": shown_change(change.change, kinds[change.metric]),
        }
        for change in data.week_over_week.metrics
    ]
    island = {
        "days": [row.day.isoformat() for row in data.rows],
        "healthy": HEALTHY_ADOPTION,
        "series": [
            {
                "id": metric,
                "kind": kind,
                "label": str(TITLES[metric]),
                "values": [getattr(r, metric) for r in data.rows],
            }
            for metric, kind in METRICS
        ],
    }
    return {
        "metrics": data,
        "charts": charts,
        # Nothing to chart on any day: one sentence instead of seven empty charts.
        "charts_empty": all(c["empty"] for c in charts),
        "weeks": weeks,
        "island": island,
        "delivered_violations": data.totals.delivered_violations,
        "model_trouble": {
            "empty": data.totals.empty_replies,
            "malformed": data.totals.malformed_replies,
            "failed": data.totals.model_failures,
        },
        "violations": violations_context(agent, data.first_day, with_reply=with_replies),
        "peers": peers_context(agent, data, with_replies=with_replies),
    }


@require_safe
@login_required
@ensure_csrf_cookie
def owner_overview(request: HttpRequest, slug: str) -> HttpResponse:
    try:
        agent = AgentPolicy.get_owned(request.user, slug)
    except NotFound as exc:
        raise Http404("no such agent among those you own") from exc
    context = {
        "agent": agent,
        "review": overview_review(agent),
        "breaker": breaker_current(agent),
        **metrics_context(agent, with_replies=True),
    }
    return render(request, "rsi/owner_overview.html", context)
