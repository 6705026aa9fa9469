"""The guard breaker's ledger events (issue 15 §5): an agent's breaker opened (its customer face
switched to strict composition) and an owner closed it.  One payload model and one typed
constructor per type; counts, ids and settings only — never a reply's text."""

from __future__ import annotations

from facade.tenancy.schemas import Actor
from ledger.catalogue import EventPayload, EventType, register
from ledger.schemas import AppendedEvent
from ledger.services import ledger_append

from .models import GuardBreaker

APP = "guard"
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


def _append(event_type: EventType, breaker: GuardBreaker, payload: EventPayload, actor: Actor) -> AppendedEvent:
    return ledger_append(
        chain_id=breaker.tenant_id,
        event_type=event_type.name,
        entity_type=ENTITY,
        entity_id=breaker.pk,
        actor_type=actor.type,
        actor_id=actor.id,
        payload=payload.model_dump(),
    )


def guard_breaker_opened(*, breaker: GuardBreaker, agent_slug: str, window_minutes: int) -> AppendedEvent:
    payload = BreakerOpened(
        agent=agent_slug, blocks=breaker.blocks, threshold=breaker.threshold, window_minutes=window_minutes
    )
    return _append(GUARD_BREAKER_OPENED, breaker, payload, BREAKER)


def guard_breaker_closed(*, breaker: GuardBreaker, agent_slug: str, actor: Actor) -> AppendedEvent:
    """`breaker` already holds its `closed_at`."""
    assert breaker.closed_at is not None
    minutes = int((breaker.closed_at - breaker.opened_at).total_seconds() // 60)
    payload = BreakerClosed(agent=agent_slug, opened_at=breaker.opened_at.isoformat(), open_minutes=minutes)
    return _append(GUARD_BREAKER_CLOSED, breaker, payload, actor)
