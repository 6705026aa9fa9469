"""The console's lineage pages: `/audit/<tenant>/lineage` (one entity's versions, each with its
diff, decision, proposal and what started it; or the search for a sentence an auditor saw in a
chat) and `/audit/<tenant>/reviews/<report>` (a daily review report, read-only, with its
evidence pointers linking to the ledger timeline).  Read-only; every view is recorded."""

from __future__ import annotations

import hashlib
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.utils.translation import gettext

from facade.errors import ApplicationError
from facade.tenancy.models import Tenant
from facade.tenancy.policy import NotFound
from rsi.review_inbox import claim_text
from rsi.review_models import ReviewAggregate, ReviewReport

from .actors import actors_shown, user_id_of
from .lineage import CONTRACT_FIELDS, ENTITY_TYPES, entity_lineage, evidence_pointers, lineage_choices, lineage_search
from .links import entity_url, event_url, lineage_url, review_url, session_url
from .web import audit_page


def _linked(tenant: Tenant, lineage: dict[str, Any]) -> dict[str, Any]:
    """The lineage with the links a page needs beside each pointer."""

    def event(ref: dict[str, Any] | None) -> None:
        if ref:
            ref["url"] = event_url(tenant, int(ref["seq"]))

    def pointers(items: list[dict[str, Any]]) -> None:
        for item in items:
            if item.get("type") == "session":
                item["url"] = session_url(tenant, str(item.get("id")))
            elif item.get("type") == "knowledge_version":
                item["url"] = ""

    def proposal(found: dict[str, Any] | None) -> None:
        if not found:
            return
        found["url"] = lineage_url(tenant, "change_proposal", found["id"])
        found["timeline_url"] = entity_url(tenant, "change_proposal", found["id"])
        event(found.get("created"))
        for item in [*found.get("decisions", []), *found.get("authority", [])]:
            event(item)
        pointers(found.get("evidence", []))
        started(found.get("started"))

    def started(found: dict[str, Any] | None) -> None:
        if not found:
            return
        event(found.get("event"))
        if found.get("type") == "review_report":
            found["url"] = review_url(tenant, str(found["report"]))
            if found.get("claim"):
                pointers(found["claim"]["evidence"])
        elif found.get("type") == "owner_dialogue":
            found["url"] = session_url(tenant, str(found["session"]))
        elif found.get("type") == "rollback" and found.get("of"):
            found["url"] = lineage_url(tenant, "change_proposal", str(found["of"]))

    proposal(lineage.get("proposal"))
    for version in lineage["versions"]:
        event(version.get("published"))
        event(version.get("created"))
        if version.get("proposal") is not lineage.get("proposal"):
            proposal(version.get("proposal"))
        started(version.get("started"))
        if version.get("decision") and "url" not in version["decision"]:
            event(version["decision"])
        rollback = version.get("rollback") or {}
        event(rollback.get("event"))
    return lineage


def _people(found: Any) -> set[str]:
    """Every `user:<id>` in a lineage (who published, decided, edited), to show them by name."""
    if isinstance(found, dict):
        return {p for value in found.values() for p in _people(value)}
    if isinstance(found, list):
        return {p for value in found for p in _people(value)}
    return {found} if isinstance(found, str) and user_id_of(found) is not None else set()


@audit_page("lineage")
def lineage_page(request: HttpRequest, tenant: Tenant, context: dict[str, Any]) -> HttpResponse:
    entity_type = request.GET.get("entity_type", "").strip()
    entity_id = request.GET.get("entity_id", "").strip()
    field = request.GET.get("field", "").strip()
    q = request.GET.get("q", "").strip()[:500]
    if "q" in request.GET:
        # The sentence may be anything an auditor pasted: the ledger keeps its fingerprint and
        # length (audit_page records these parameters), never its words.
        recorded = request.GET.copy()
        del recorded["q"]
        recorded["q_sha256"] = hashlib.sha256(q.encode()).hexdigest()
        recorded["q_length"] = str(len(q))
        request.GET = recorded  # type: ignore[assignment]
    context.update({"q": q, "entity_types": ENTITY_TYPES, "fields": CONTRACT_FIELDS})
    if entity_type or entity_id:
        try:
            lineage = entity_lineage(tenant=tenant, entity_type=entity_type, entity_id=entity_id, field=field)
        except NotFound as exc:
            raise Http404("no such entity in this ledger") from exc
        except ApplicationError as exc:
            context["error"] = exc.detail
            return render(request, "audit/lineage.html", context, status=400)
        context["lineage"] = _linked(tenant, lineage)
        context["actors"] = actors_shown(_people(lineage))
        context["timeline"] = entity_url(tenant, entity_type, entity_id)
        return render(request, "audit/lineage.html", context)
    if q:
        hits = lineage_search(tenant=tenant, q=q)
        if len(hits) == 1:
            hit = hits[0]
            return HttpResponseRedirect(lineage_url(tenant, hit["entity_type"], hit["entity_id"], hit["field"]))
        for hit in hits:
            hit["url"] = lineage_url(tenant, hit["entity_type"], hit["entity_id"], hit["field"])
        context["hits"] = hits
        return render(request, "audit/lineage.html", context)
    choices = lineage_choices(tenant)
    for agent in choices:
        agent["field_links"] = [
            (name, lineage_url(tenant, "contract", agent["agent"].slug, name)) for name in agent["fields"]
        ]
        agent["contract_url"] = lineage_url(tenant, "contract", agent["agent"].slug)
        for entry in agent["entries"]:
            entry["url"] = lineage_url(tenant, "knowledge_entry", str(entry["id"]))
    context["choices"] = choices
    return render(request, "audit/lineage.html", context)


def _claims(tenant: Tenant, report: ReviewReport, claims: list[Any]) -> list[dict[str, Any]]:
    figures = {str(k): int(v) for k, v in (report.review_input or {}).get("figures", {}).items()}
    labels = dict(ReviewAggregate.objects.filter(report=report).exclude(label="").values_list("key", "label"))
    shown = []
    for claim in claims:
        if not isinstance(claim, dict):
            continue
        evidence = evidence_pointers(report, claim.get("evidence") or [])
        for item in evidence:
            if item["type"] == "session":
                item["url"] = session_url(tenant, item["id"])
            elif item["type"] == "aggregate":
                item["url"] = entity_url(tenant, "review_report", str(report.pk))
        change_id = str(claim.get("change_id", ""))
        shown.append(
            {
                "kind": claim.get("kind", ""),
                "text": claim_text(claim, figures, labels),
                "reviewer": claim.get("reviewer", ""),
                "evidence": evidence,
                "change_id": change_id,
                "change_url": lineage_url(tenant, "change_proposal", change_id) if change_id else "",
            }
        )
    return shown


@audit_page("review", tab="audit-lineage")
def review_page(request: HttpRequest, tenant: Tenant, context: dict[str, Any], report_id: Any) -> HttpResponse:
    report = ReviewReport.objects.filter(tenant=tenant, pk=report_id).select_related("agent").first()
    if report is None:
        raise Http404("no such review in this ledger")
    context.update(
        {
            "report": report,
            "groups": [
                (gettext("Gaps"), _claims(tenant, report, report.gaps)),
                (gettext("Misses"), _claims(tenant, report, report.misses)),
                (gettext("Wins"), _claims(tenant, report, report.wins)),
            ],
            "proposals": [
                {
                    "change_id": str(p.get("change_id", "")),
                    "kind": str(p.get("kind", "")),
                    "url": lineage_url(tenant, "change_proposal", str(p.get("change_id", ""))),
                }
                for p in report.proposals
                if isinstance(p, dict)
            ],
            "dropped": len(report.dropped_claims or []),
            "timeline": entity_url(tenant, "review_report", str(report.pk)),
        }
    )
    return render(request, "audit/review.html", context)
