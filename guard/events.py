"""The guard app's ledger events: one payload model and one typed constructor per type.  Each
block belongs to one feature; keep them apart.  Payloads carry ids, categories, rule ids, counts
and hashes — never the text of a reply or of a customer's message."""

from __future__ import annotations

from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor
from ledger.catalogue import EventPayload, EventType, register
from ledger.schemas import AppendedEvent
from ledger.services import ledger_append

from .models import GuardBreaker

APP = "guard"
RECHECK_ACTOR = Actor.platform("guard_recheck")


def _append(
    event_type: EventType, tenant_id: int, entity_id: str, payload: EventPayload, actor: Actor = RECHECK_ACTOR
) -> AppendedEvent:
    return ledger_append(
        chain_id=tenant_id,
        event_type=event_type.name,
        entity_type=event_type.entity_type,
        entity_id=entity_id,
        actor_type=actor.type,
        actor_id=actor.id,
        payload=payload.model_dump(),
    )


# --- the nightly re-check of delivered replies (issue 15 §6; guard/recheck.py) ------------------


class DeliveredViolationFound(EventPayload):
    agent: str
    message_id: int  # the delivered reply
    run_id: str | None
    category: str
    check: str  # "guard" or "grounding"
    rule: str | None
    ruleset_hash: str


class RecheckCompleted(EventPayload):
    agent: str
    day: str  # the tenant's local day whose replies were read (YYYY-MM-DD)
    ruleset_hash: str
    checked: int  # replies an older rule set had passed, read again
    skipped: int  # replies the current rule set had read already
    violations: int  # of the checked, those counted as delivered violations for the first time


GUARD_DELIVERED_VIOLATION = register(
    "guard.delivered_violation",
    app=APP,
    entity_type="message",
    payload=DeliveredViolationFound,
    description=(
        "The nightly re-check found that a delivered customer or peer reply fails the current outgoing check "
        "(counted once per reply)."
    ),
)
GUARD_RECHECK_COMPLETED = register(
    "guard.recheck_completed",
    app=APP,
    entity_type="agent",
    payload=RecheckCompleted,
    description=(
        "The nightly re-check read an agent's delivered replies of one local day again: how many, and what it found."
    ),
)


def guard_delivered_violation(
    *,
    agent: AgentProfile,
    message_id: int,
    run_id: str | None,
    category: str,
    check: str,
    rule: str | None,
    ruleset_hash: str,
) -> AppendedEvent:
    payload = DeliveredViolationFound(
        agent=agent.slug,
        message_id=message_id,
        run_id=run_id,
        category=category,
        check=check,
        rule=rule,
        ruleset_hash=ruleset_hash,
    )
    return _append(GUARD_DELIVERED_VIOLATION, agent.tenant_id, str(message_id), payload)


def guard_recheck_completed(
    *, agent: AgentProfile, day: str, ruleset_hash: str, checked: int, skipped: int, violations: int
) -> AppendedEvent:
    payload = RecheckCompleted(
        agent=agent.slug, day=day, ruleset_hash=ruleset_hash, checked=checked, skipped=skipped, violations=violations
    )
    return _append(GUARD_RECHECK_COMPLETED, agent.tenant_id, str(agent.pk), payload)


# --- the breaker (issue 15 §5; guard/breaker.py) ---------------------------------------------

ENTITY = "guard_breaker"
BREAKER = Actor.platform("guard")


class BreakerOpened(EventPayload):
    agent: str
    blocks: int  # blocked customer and peer replies in the window
    threshold: int
    window_minutes: int


class BreakerClosed(EventPayload):
    agent: str
    opened_at: str  # ISO 8601
    open_minutes: int


def _type(name: str, payload: type[EventPayload], description: str) -> EventType:
    return register(name, app=APP, entity_type=ENTITY, payload=payload, description=description)


GUARD_BREAKER_OPENED = _type(
    "guard.breaker_opened",
    BreakerOpened,
    "An agent's blocked customer and peer replies in the last hour exceeded the threshold: its customer face "
    "switched to strict composition until an owner closes the breaker, and the owners were e-mailed.",
)
GUARD_BREAKER_CLOSED = _type(
    "guard.breaker_closed",
    BreakerClosed,
    "An owner closed an agent's guard breaker: its customer face composes as its contract says again.",
)


def guard_breaker_opened(*, breaker: GuardBreaker, agent_slug: str, window_minutes: int) -> AppendedEvent:
    payload = BreakerOpened(
        agent=agent_slug, blocks=breaker.blocks, threshold=breaker.threshold, window_minutes=window_minutes
    )
    return _append(GUARD_BREAKER_OPENED, breaker.tenant_id, str(breaker.pk), payload, BREAKER)


def guard_breaker_closed(*, breaker: GuardBreaker, agent_slug: str, actor: Actor) -> AppendedEvent:
    """`breaker` already holds its `closed_at`."""
    assert breaker.closed_at is not None
    minutes = int((breaker.closed_at - breaker.opened_at).total_seconds() // 60)
    payload = BreakerClosed(agent=agent_slug, opened_at=breaker.opened_at.isoformat(), open_minutes=minutes)
    return _append(GUARD_BREAKER_CLOSED, breaker.tenant_id, str(breaker.pk), payload, actor)
