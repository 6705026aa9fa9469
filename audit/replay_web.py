"""`/audit/<tenant>/replay`: an agent as it was at a moment — its contract version and approved
knowledge — and, with one change left out, what would differ (audit/replay.py decides it all).

The time is entered and shown in the tenant's time zone; it is compared in UTC."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from approvals.contract_rules import item_label
from facade.tenancy.models import AgentProfile, Tenant

from .replay import (
    AgentReplay,
    ContractDiff,
    ReplayError,
    agent_state_at,
    change_choices,
    tenant_zone,
)
from .web import audit_page

FIELD_LABELS: dict[str, Any] = {
    "mission": _("Mission"),
    "boundary_wording": _("Boundary wording"),
    "wording": _("Wording"),
    "clarification_order": _("Clarification order"),
    "request_flow": _("Request flow"),
    "skill_ids": _("Skills"),
    "delivery": _("Delivery"),
    "pricing": _("Pricing"),
    "composition_mode": _("Composition mode"),
}
INPUT_FORMAT = "%Y-%m-%dT%H:%M:%S"


def _text(value: Any) -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def readable(field: str, value: Any) -> list[tuple[str, str]]:
    """One contract field as (label, text) lines a person reads."""
    if field == "boundary_wording" and isinstance(value, dict):
        return [(str(lang), _text(text)) for lang, text in sorted(value.items())]
    if field == "wording" and isinstance(value, dict):
        return [
            (f"{lang} · {situation}", _text(text))
            for lang, said in sorted(value.items())
            for situation, text in sorted((said or {}).items())
        ]
    if field in ("clarification_order", "skill_ids") and isinstance(value, list):
        return [("", ", ".join(str(v) for v in value) or "—")]
    if field == "request_flow" and isinstance(value, dict) and isinstance(value.get("states"), dict):
        initial = value.get("initial")
        return [
            (
                f"{name}{' *' if name == initial else ''}",
                f"{(state or {}).get('next_actor', '')} → {', '.join((state or {}).get('to', [])) or '∎'}",
            )
            for name, state in value["states"].items()
        ]
    if field == "delivery" and isinstance(value, list):
        return [(str(o.get("channel", "")), _text(o.get("note", ""))) for o in value if isinstance(o, dict)]
    if field == "pricing" and isinstance(value, dict):
        currency = str(value.get("currency", ""))
        items = [(item_label(i), f"{i.get('amount', '')} {currency}") for i in value.get("items", [])]
        return items or [("", currency)]
    return [("", _text(value))]


def _contract_rows(content: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"field": field, "label": label, "lines": readable(field, content.get(field)) or [("", "—")]}
        for field, label in FIELD_LABELS.items()
    ]


def _diff_rows(diffs: list[ContractDiff]) -> list[dict[str, Any]]:
    return [
        {
            "label": " › ".join([str(FIELD_LABELS.get(d.path[0], d.path[0])), *d.path[1:]]),
            "live": _text(d.live),
            "without": _text(d.without),
        }
        for d in diffs
    ]


def _local_input(moment: dt.datetime, tenant: Tenant) -> str:
    return moment.astimezone(tenant_zone(tenant)).strftime(INPUT_FORMAT)


@audit_page("replay")
def audit_replay(request: HttpRequest, tenant: Tenant, context: dict[str, Any]) -> HttpResponse:
    agents = list(AgentProfile.objects.filter(tenant=tenant).order_by("slug"))
    chosen_slug = request.GET.get("agent", "") or (agents[0].slug if len(agents) == 1 else "")
    at_text = request.GET.get("at", "").strip()
    without = request.GET.get("without_seq", "").strip() or request.GET.get("without", "").strip()
    context.update(
        {
            "agents": agents,
            "chosen": chosen_slug,
            "at_value": at_text,
            "without": without,
            "zone": tenant.time_zone,
            "replay": None,
            "error": None,
        }
    )
    status = 200
    if request.GET.get("agent") or at_text:
        agent = next((a for a in agents if a.slug == chosen_slug), None)
        if agent is None:
            raise Http404("no such agent in this tenant")
        try:
            replay: AgentReplay = agent_state_at(agent=agent, at=at_text or timezone.now(), without=without or None)
        except ReplayError as refused:
            context["error"] = refused.detail
            status = 400
        else:
            context.update(
                {
                    "replay": replay,
                    "at_value": _local_input(replay.live.at, tenant),
                    "contract_rows": _contract_rows(replay.live.contract.content),
                    "mismatches": replay.live.mismatches(),
                    "choices": change_choices(agent=agent, cut=replay.live.seq),
                    "contract_diff": _diff_rows(replay.diff.contract) if replay.diff else [],
                }
            )
    return render(request, "audit/replay.html", context, status=status)
