"""Where the console's pages link to one another: one function per kind of pointer, so that a
session id, an event's seq or an entity reads the same on every page."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

from facade.tenancy.models import Tenant


def timeline_url(tenant: Tenant, **params: Any) -> str:
    """The timeline of `tenant` with these query parameters (empty ones left out)."""
    base = reverse("audit-timeline", args=[tenant.slug])
    kept = {key: str(value) for key, value in params.items() if value not in (None, "")}
    return base + ("?" + urlencode(kept) if kept else "")


def entity_url(tenant: Tenant, entity_type: str, entity_id: str) -> str:
    """An entity's page: a conversation's pointers page for a session, else its timeline."""
    if entity_type == "session":
        return session_url(tenant, entity_id)
    return timeline_url(tenant, entity_type=entity_type, entity_id=entity_id)


def session_url(tenant: Tenant, session_id: str) -> str:
    try:
        return reverse("audit-session", args=[tenant.slug, session_id])
    except Exception:  # not a session id (a pointer the review stored otherwise): its timeline
        return timeline_url(tenant, entity_type="session", entity_id=session_id)


def event_url(tenant: Tenant, seq: int) -> str:
    return reverse("audit-event", args=[tenant.slug, seq])


def lineage_url(tenant: Tenant, entity_type: str, entity_id: str, field: str = "") -> str:
    params = {"entity_type": entity_type, "entity_id": entity_id}
    if field:
        params["field"] = field
    return reverse("audit-lineage", args=[tenant.slug]) + "?" + urlencode(params)


def review_url(tenant: Tenant, report_id: str) -> str:
    return reverse("audit-review", args=[tenant.slug, report_id])
