"""The console's timeline (`/audit/<tenant>/`) and one event in full
(`/audit/<tenant>/events/<seq>`): server-rendered, read-only, served through `audit_page` (which
checks the reader and records the view)."""

from __future__ import annotations

from itertools import groupby
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext_lazy as _

from facade.errors import ApplicationError
from facade.tenancy.models import AgentProfile, Tenant
from ledger.catalogue import catalogue
from ledger.models import ActorType

from .actors import actors_shown, user_id_of
from .links import entity_url, event_url, lineage_url, timeline_url
from .timeline import (
    PARAMS,
    TimelineFilters,
    TimelineRow,
    event_detail,
    parse_filters,
    parse_limit,
    parse_paging,
    timeline_page,
)
from .web import audit_page

ACTOR_TYPE_LABELS = {
    ActorType.HUMAN.value: _("human"),
    ActorType.AGENT.value: _("agent"),
    ActorType.PLATFORM.value: _("platform"),
}


def row_view(tenant: Tenant, row: TimelineRow) -> dict[str, Any]:
    """A row with the links the page shows beside it."""
    return {
        "row": row,
        "url": event_url(tenant, row.seq),
        "entity_url": entity_url(tenant, row.entity_type, row.entity_id),
        "caused_by_url": event_url(tenant, row.caused_by) if row.caused_by else "",
        "caused": [{"seq": seq, "url": event_url(tenant, seq)} for seq in row.caused],
        "caused_all_url": timeline_url(tenant, caused_by=row.seq),
        "payload": [
            {
                "key": item.key,
                "text": item.text,
                "person": person_in(item.key, item.text),
                "links": [
                    {"text": entity_id, "url": entity_url(tenant, kind, entity_id)} for kind, entity_id in item.pointers
                ],
            }
            for item in row.payload_items()
        ],
    }


# Payload fields that hold a user's id as a number (`owner_id` of a decision token, `user_id` of a
# membership); a `user:<id>` value anywhere is one too.
PERSON_FIELDS = frozenset({"owner_id", "user_id"})


def person_in(key: str, text: str) -> str:
    """The actor id of the person a payload value names, or ""."""
    if user_id_of(text) is not None:
        return text
    return f"user:{text}" if key in PERSON_FIELDS and text.isdigit() else ""


def rows_actors(rows: list[TimelineRow]) -> dict[str, Any]:
    """The people among the rows' actors (and their payloads' `user:<id>` values), by name."""
    ids = {row.actor_id for row in rows}
    ids |= {person_in(item.key, item.text) for row in rows for item in row.payload_items()} - {""}
    return dict(actors_shown(ids))


def _type_groups() -> list[dict[str, Any]]:
    return [
        {"app": app, "types": [{"name": t.name, "description": t.description} for t in types]}
        for app, types in groupby(catalogue, key=lambda t: t.app)
    ]


def _form_context(tenant: Tenant, raw: dict[str, str]) -> dict[str, Any]:
    entity_types = sorted({t.entity_type for t in catalogue})
    return {
        "form": {key: raw.get(key, "") for key in PARAMS},
        "type_groups": _type_groups(),
        "entity_types": entity_types,
        "actor_types": list(ACTOR_TYPE_LABELS.items()),
        "agents": list(AgentProfile.objects.filter(tenant=tenant).order_by("slug").values_list("slug", "name")),
    }


@audit_page("timeline")
def timeline(request: HttpRequest, tenant: Tenant, context: dict[str, Any]) -> HttpResponse:
    raw = {str(key): str(value) for key, value in request.GET.items()}
    context.update(_form_context(tenant, raw))
    try:
        filters = parse_filters(raw)
        before, after = parse_paging(raw)
        limit = parse_limit(raw.get("limit"))
    except ApplicationError as exc:
        context.update({"error": exc.detail, "error_code": exc.code, "page": None})
        return render(request, "audit/timeline.html", context, status=400)
    page = timeline_page(chain_id=tenant.pk, filters=filters, before=before, after=after, limit=limit)
    kept = filters.as_params()
    if limit != parse_limit(None):
        kept["limit"] = str(limit)
    context.update(
        {
            "page": page,
            "rows": [row_view(tenant, row) for row in page.rows],
            "actors": rows_actors(list(page.rows)),
            "filters": filters,
            "filtered": filters.any,
            "older_url": timeline_url(tenant, **kept, before=page.next_before) if page.next_before else "",
            "newer_url": timeline_url(tenant, **kept, after=page.prev_after) if page.prev_after else "",
            "newest_url": timeline_url(tenant, **kept) if (before or after) else "",
            "clear_url": timeline_url(tenant),
            "caused_by_url": timeline_url(tenant, caused_by=filters.caused_by) if filters.caused_by else "",
        }
    )
    return render(request, "audit/timeline.html", context)


@audit_page("event", tab="audit-timeline")
def event(request: HttpRequest, tenant: Tenant, context: dict[str, Any], seq: int) -> HttpResponse:
    found = event_detail(chain_id=tenant.pk, seq=seq)
    if found is None:
        raise Http404("no such event in this ledger")
    row, cause, caused, caused_more = found
    context.update(
        {
            "row": row,
            "view": row_view(tenant, row),
            "cause": row_view(tenant, cause) if cause is not None else None,
            "caused": [row_view(tenant, one) for one in caused],
            "caused_more": caused_more,
            "caused_url": timeline_url(tenant, caused_by=row.seq),
            "entity_url": entity_url(tenant, row.entity_type, row.entity_id),
            "lineage_url": lineage_url(tenant, row.entity_type, row.entity_id) if row.lineage else "",
            "type_url": timeline_url(tenant, type=row.event_type),
            "actor_url": timeline_url(tenant, actor=row.actor_id) if row.actor_id else "",
            "filters": TimelineFilters(),
            "actors": rows_actors([row, *([cause] if cause is not None else []), *caused]),
        }
    )
    return render(request, "audit/event.html", context)
