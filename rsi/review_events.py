"""The daily review's ledger events: one payload model and one typed constructor per type (see
ledger/catalogue.py).  Counts, ids, reasons and hashes only — never a customer's words nor a
topic label (a topic appears as its hashed aggregate key)."""

from __future__ import annotations

from facade.tenancy.schemas import Actor
from ledger.catalogue import EventPayload, EventType, register
from ledger.schemas import AppendedEvent
from ledger.services import ledger_append

from .review_models import ReviewReport
from .schedule_models import RsiRun

APP = "rsi"
ENTITY = "review_report"


class ReviewStarted(EventPayload):
    agent: str
    report: str
    day: str
    partial: bool
    run: int  # how many times this report has been run, this one included


class ReviewFinished(EventPayload):
    agent: str
    report: str
    day: str
    partial: bool
    input_digest: str
    reviewer: str
    wins: int
    misses: int
    gaps: int
    proposals: int
    held_back: int
    dropped_claims: int
    overrides: int
    # daily_cap | owner_preference | paused → count (held_back is their sum)
    held_back_reasons: dict[str, int] = {}
    paused: bool = False  # proposing is paused: the escalation budget ran out


class ReviewClaimDropped(EventPayload):
    agent: str
    report: str
    reviewer: str
    kind: str  # win | miss | gap | unknown
    reason: str
    index: int


class ReviewProposalMade(EventPayload):
    agent: str
    report: str
    proposal: str  # the change proposal's id
    kind: str
    sessions_affected: int
    evidence: int  # how many pointers it carries


class ReviewRequested(EventPayload):
    agent: str
    run: int  # the RsiRun claimed (or claimed again) for the day
    day: str
    partial: bool  # the day is still under way: its report will be partial
    rerun: bool  # the day's run existed (done, or failed) and was queued again


class ReviewRunFailed(EventPayload):
    agent: str
    run: int
    day: str
    attempts: int
    error: str  # the exception's class, never its text


def _type(name: str, payload: type[EventPayload], description: str) -> EventType:
    return register(name, app=APP, entity_type=ENTITY, payload=payload, description=description)


REVIEW_STARTED = _type("review.started", ReviewStarted, "A daily review of an agent's local day started (or re-ran).")
REVIEW_FINISHED = _type(
    "review.finished",
    ReviewFinished,
    "A daily review finished: its input digest, how many wins, misses, gaps and proposals, the claims dropped "
    "by the gate and the proposals held back (counts only).",
)
REVIEW_CLAIM_DROPPED = _type(
    "review.claim_dropped",
    ReviewClaimDropped,
    "The review's gate dropped a reviewer's claim (no evidence, a pointer that does not resolve, a wrong figure…).",
)
REVIEW_PROPOSAL_MADE = _type(
    "review.proposal_made",
    ReviewProposalMade,
    "A daily review turned a claim into a pending change proposal (origin review_report) for the owner's decision.",
)

RUN_ENTITY = "rsi_run"
REVIEW_REQUESTED = register(
    "review.requested",
    app=APP,
    entity_type=RUN_ENTITY,
    payload=ReviewRequested,
    description="An owner asked for the daily review of a day from the owner overview; its run was queued "
    "(a click while that day's run waits or runs queues nothing and writes nothing).",
)
REVIEW_RUN_FAILED = register(
    "review.run_failed",
    app=APP,
    entity_type=RUN_ENTITY,
    payload=ReviewRunFailed,
    description="A review run (scheduled or requested) ended in an error; nothing of it was stored and it may "
    "be run again.",
)


def _append(event_type: EventType, report: ReviewReport, payload: EventPayload, actor: Actor) -> AppendedEvent:
    return ledger_append(
        chain_id=report.tenant_id,
        event_type=event_type.name,
        entity_type=ENTITY,
        entity_id=str(report.pk),
        entity_version=report.runs,
        actor_type=actor.type,
        actor_id=actor.id,
        payload=payload.model_dump(),
    )


def review_started(*, report: ReviewReport, agent_slug: str, actor: Actor) -> AppendedEvent:
    payload = ReviewStarted(
        agent=agent_slug, report=str(report.pk), day=report.day.isoformat(), partial=report.partial, run=report.runs
    )
    return _append(REVIEW_STARTED, report, payload, actor)


def review_finished(*, report: ReviewReport, agent_slug: str, actor: Actor) -> AppendedEvent:
    payload = ReviewFinished(
        agent=agent_slug,
        report=str(report.pk),
        day=report.day.isoformat(),
        partial=report.partial,
        input_digest=report.input_digest,
        reviewer=report.reviewer,
        wins=len(report.wins),
        misses=len(report.misses),
        gaps=len(report.gaps),
        proposals=len(report.proposals),
        held_back=report.held_back,
        dropped_claims=len(report.dropped_claims),
        overrides=report.overrides,
        held_back_reasons={str(k): int(v) for k, v in report.held_back_reasons.items()},
        paused=report.paused,
    )
    return _append(REVIEW_FINISHED, report, payload, actor)


def review_claim_dropped(
    *, report: ReviewReport, agent_slug: str, reviewer: str, kind: str, reason: str, index: int, actor: Actor
) -> AppendedEvent:
    payload = ReviewClaimDropped(
        agent=agent_slug, report=str(report.pk), reviewer=reviewer, kind=kind, reason=reason, index=index
    )
    return _append(REVIEW_CLAIM_DROPPED, report, payload, actor)


def review_proposal_made(
    *,
    report: ReviewReport,
    agent_slug: str,
    proposal_id: str,
    kind: str,
    sessions_affected: int,
    evidence: int,
    actor: Actor,
) -> AppendedEvent:
    payload = ReviewProposalMade(
        agent=agent_slug,
        report=str(report.pk),
        proposal=proposal_id,
        kind=kind,
        sessions_affected=sessions_affected,
        evidence=evidence,
    )
    return _append(REVIEW_PROPOSAL_MADE, report, payload, actor)


def _append_run(
    event_type: EventType, run: RsiRun, tenant_id: int, payload: EventPayload, actor: Actor
) -> AppendedEvent:
    return ledger_append(
        chain_id=tenant_id,
        event_type=event_type.name,
        entity_type=RUN_ENTITY,
        entity_id=str(run.pk),
        actor_type=actor.type,
        actor_id=actor.id,
        payload=payload.model_dump(),
    )


def review_requested(*, run: RsiRun, tenant_id: int, agent_slug: str, rerun: bool, actor: Actor) -> AppendedEvent:
    payload = ReviewRequested(agent=agent_slug, run=run.pk, day=run.day.isoformat(), partial=run.partial, rerun=rerun)
    return _append_run(REVIEW_REQUESTED, run, tenant_id, payload, actor)


def review_run_failed(*, run: RsiRun, tenant_id: int, agent_slug: str, error: str, actor: Actor) -> AppendedEvent:
    payload = ReviewRunFailed(
        agent=agent_slug, run=run.pk, day=run.day.isoformat(), attempts=run.attempts, error=error[:200]
    )
    return _append_run(REVIEW_RUN_FAILED, run, tenant_id, payload, actor)
