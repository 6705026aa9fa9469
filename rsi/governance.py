"""Governance by exception (issue 13, DESIGN.md "at most a few proposals a day reach the inbox
…; an agent over its escalation budget stops proposing until the inbox is cleared"): the writes
of an agent's escalation budget, called by `review_run` inside its transaction.

Which proposals count: the escalations are the proposals the agent's own daily review sends to
the owner's inbox (origin `review_report`); each takes one token.  Observe's candidates and the
customers' knowledge candidates have their own limits (per digest, the L1 rule) and take none,
and the owner's own proposals never do.  Clearing the inbox, though, means every pending
proposal a model made for the agent (rules.MODEL_ORIGINS) is decided (or expired): the owner
has then looked at all of it."""

from __future__ import annotations

import datetime as dt

from django.conf import settings

from approvals.selectors import pending_from_models
from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor

from . import governance_events as events
from .governance_models import EscalationBudget
from .governance_rules import Bucket, bucket_full, bucket_refill, bucket_take
from .review_models import ReviewReport


def escalation_capacity() -> int:
    return int(settings.FACADE_REVIEW_ESCALATION_CAPACITY)


def escalation_refill_per_day() -> int:
    return int(settings.FACADE_REVIEW_ESCALATION_REFILL_PER_DAY)


def _bucket(budget: EscalationBudget) -> Bucket:
    return Bucket(tokens=budget.tokens, at=budget.refilled_at)


def _store(budget: EscalationBudget, bucket: Bucket) -> None:
    budget.tokens, budget.refilled_at = bucket.tokens, bucket.at


def budget_lock(*, agent: AgentProfile, now: dt.datetime) -> EscalationBudget:
    """The agent's budget, row-locked until the caller's transaction ends (a new agent's starts
    full).  Two reviews of the same agent — of different days, in different processes — take
    their tokens one after the other."""
    EscalationBudget.objects.get_or_create(
        agent=agent,
        defaults={"tenant_id": agent.tenant_id, "tokens": float(escalation_capacity()), "refilled_at": now},
    )
    return EscalationBudget.objects.select_for_update().get(agent=agent)


def budget_resume(
    *, budget: EscalationBudget, agent: AgentProfile, report: ReviewReport, now: dt.datetime, actor: Actor
) -> bool:
    """A paused agent whose owner has decided every pending proposal a model made for it
    proposes again, with a full bucket (`review.resumed`).  Whether it did."""
    if not budget.paused or pending_from_models(agent=agent, now=now):
        return False
    paused_day = budget.paused_day.isoformat() if budget.paused_day else ""
    _store(budget, bucket_full(now=now, capacity=escalation_capacity()))
    budget.paused, budget.paused_at, budget.paused_day = False, None, None
    budget.save(update_fields=["tokens", "refilled_at", "paused", "paused_at", "paused_day", "updated_at"])
    events.review_resumed(
        budget=budget,
        agent_slug=agent.slug,
        report=str(report.pk),
        day=report.day.isoformat(),
        paused_day=paused_day,
        capacity=int(budget.tokens),
        actor=actor,
    )
    return True


def budget_spend(
    *, budget: EscalationBudget, agent: AgentProfile, report: ReviewReport, now: dt.datetime, actor: Actor
) -> bool:
    """Take one token for a proposal about to be sent.  None left: the agent's proposing pauses
    (`review.paused`, once) and stays paused — False for this proposal and every later one."""
    if budget.paused:
        return False
    capacity, per_day = escalation_capacity(), escalation_refill_per_day()
    bucket, taken = bucket_take(_bucket(budget), now=now, capacity=capacity, per_day=per_day)
    _store(budget, bucket)
    if not taken:
        budget.paused, budget.paused_at, budget.paused_day = True, now, report.day
    budget.save(update_fields=["tokens", "refilled_at", "paused", "paused_at", "paused_day", "updated_at"])
    if not taken:
        events.review_paused(
            budget=budget,
            agent_slug=agent.slug,
            report=str(report.pk),
            day=report.day.isoformat(),
            capacity=capacity,
            refill_per_day=per_day,
            pending=pending_from_models(agent=agent, now=now),
            actor=actor,
        )
    return taken


def budget_refund(*, budget: EscalationBudget, now: dt.datetime) -> None:
    """Give back the token of a proposal the approvals refused to create (nothing was sent)."""
    capacity = escalation_capacity()
    bucket = bucket_refill(_bucket(budget), now=now, capacity=capacity, per_day=escalation_refill_per_day())
    _store(budget, Bucket(tokens=min(float(capacity), bucket.tokens + 1.0), at=bucket.at))
    budget.save(update_fields=["tokens", "refilled_at", "updated_at"])
