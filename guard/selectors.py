"""What the owner's pages read of the guard's rows (read only)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from facade.tenancy.models import AgentProfile

from .models import DeliveredViolation

__all__ = ["ShownViolation", "delivered_violations"]

SHOWN = 50  # the most recent violations a page lists (the count above it covers them all)


@dataclass(frozen=True)
class ShownViolation:
    id: int
    day: dt.date  # the tenant's local day the reply was delivered
    found_at: dt.datetime
    rule: str
    category: str
    check: str
    message_id: int
    session_id: str
    reply: str | None  # the agent's own words; None where only pointers are shown


def delivered_violations(
    agent: AgentProfile, *, since: dt.datetime, with_reply: bool, limit: int = SHOWN, audience: str | None = None
) -> list[ShownViolation]:
    """The agent's delivered violations of replies sent since `since`, newest first (`audience`:
    of replies to that audience only).  The reply text is the agent's (never the customer's
    message it answered, which is not read at all)."""
    zone = ZoneInfo(agent.tenant.time_zone)
    fields = ["pk", "delivered_at", "found_at", "rule", "category", "failed_check", "message_id", "message__session_id"]
    if with_reply:
        fields.append("message__text")
    found = DeliveredViolation.objects.filter(tenant_id=agent.tenant_id, agent=agent, delivered_at__gte=since)
    if audience is not None:
        found = found.filter(message__session__audience=audience)
    rows = found.order_by("-delivered_at", "-pk").values(*fields)[:limit]
    return [
        ShownViolation(
            id=row["pk"],
            day=row["delivered_at"].astimezone(zone).date(),
            found_at=row["found_at"],
            rule=row["rule"],
            category=row["category"],
            check=row["failed_check"],
            message_id=row["message_id"],
            session_id=str(row["message__session_id"]),
            reply=row.get("message__text") if with_reply else None,
        )
        for row in rows
    ]
