"""Governance by exception's ledger events (issue 13): an agent's proposing paused because its
escalation budget ran out, and resumed once the owner cleared the inbox.  One payload model and
one typed constructor per type (see ledger/catalogue.py); counts and ids only."""

from __future__ import annotations

from facade.tenancy.schemas import Actor
from ledger.catalogue import EventPayload, EventType, register
from ledger.schemas import AppendedEvent
from ledger.services import ledger_append

from .governance_models import EscalationBudget

APP = "rsi"
ENTITY = "escalation_budget"


class ReviewPaused(EventPayload):
    agent: str
    report: str  # the review that found no token left
    day: str
    capacity: int
    refill_per_day: int
    pending: int  # the proposals of model origins waiting in the owner's inbox


class ReviewResumed(EventPayload):
    agent: str
    report: str  # the review that found the inbox cleared
    day: str
    paused_day: str  # the day whose review paused it
    capacity: int  # the bucket is full again: this many proposals


def _type(name: str, payload: type[EventPayload], description: str) -> EventType:
    return register(name, app=APP, entity_type=ENTITY, payload=payload, description=description)


REVIEW_PAUSED = _type(
    "review.paused",
    ReviewPaused,
    "An agent's daily review would have sent a proposal with its escalation budget spent: it proposes nothing "
    "more until the owner has decided every pending proposal a model made for it.",
)
REVIEW_RESUMED = _type(
    "review.resumed",
    ReviewResumed,
    "The owner cleared the inbox of an agent whose proposing was paused: its review proposes again, with a full "
    "escalation budget.",
)


def _append(event_type: EventType, budget: EscalationBudget, payload: EventPayload, actor: Actor) -> AppendedEvent:
    return ledger_append(
        chain_id=budget.tenant_id,
        event_type=event_type.name,
        entity_type=ENTITY,
        entity_id=str(budget.agent_id),
        actor_type=actor.type,
        actor_id=actor.id,
        payload=payload.model_dump(),
    )


def review_paused(
    *,
    budget: EscalationBudget,
    agent_slug: str,
    report: str,
    day: str,
    capacity: int,
    refill_per_day: int,
    pending: int,
    actor: Actor,
) -> AppendedEvent:
    payload = ReviewPaused(
        agent=agent_slug, report=report, day=day, capacity=capacity, refill_per_day=refill_per_day, pending=pending
    )
    return _append(REVIEW_PAUSED, budget, payload, actor)


def review_resumed(
    *, budget: EscalationBudget, agent_slug: str, report: str, day: str, paused_day: str, capacity: int, actor: Actor
) -> AppendedEvent:
    payload = ReviewResumed(agent=agent_slug, report=report, day=day, paused_day=paused_day, capacity=capacity)
    return _append(REVIEW_RESUMED, budget, payload, actor)
