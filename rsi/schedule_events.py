"""Ledger events of the scheduled runs themselves (rsi/schedule.py): a run whose worker died (its
lease ran out, facade/leases.py) is run again once, or, when its retry's worker died too, failed.
One payload model and one typed constructor per type; ids, kinds and counts only."""

from __future__ import annotations

from facade.tenancy.schemas import Actor
from ledger.catalogue import EventPayload, register
from ledger.schemas import AppendedEvent
from ledger.services import ledger_append

from .schedule_models import RsiRun

APP = "rsi"
ENTITY = "rsi_run"


class RunLost(EventPayload):
    agent: str
    run: int
    kind: str  # recheck | review | observe
    day: str
    attempts: int  # runs started so far, the lost one included, over every claim of the day's run
    reason: str  # worker_lost


RUN_RETRIED = register(
    "rsi.run_retried",
    app=APP,
    entity_type=ENTITY,
    payload=RunLost,
    description="The worker running a re-check, review or observe run died (its lease ran out); the tick queued "
    "the run again from the start, once.",
)
RUN_LOST = register(
    "rsi.run_lost",
    app=APP,
    entity_type=ENTITY,
    payload=RunLost,
    description="The worker running a re-check, review or observe run died on its retry too; the run ended "
    "failed (worker_lost).",
)


def _append(name: str, run: RsiRun, actor: Actor, reason: str) -> AppendedEvent:
    payload = RunLost(
        agent=run.agent.slug, run=run.pk, kind=run.kind, day=run.day.isoformat(), attempts=run.attempts, reason=reason
    )
    return ledger_append(
        chain_id=run.agent.tenant_id,
        event_type=name,
        entity_type=ENTITY,
        entity_id=run.pk,
        entity_version=run.attempts,
        actor_type=actor.type,
        actor_id=actor.id,
        payload=payload.model_dump(),
    )


def rsi_run_retried(*, run: RsiRun, actor: Actor, reason: str) -> AppendedEvent:
    return _append(RUN_RETRIED.name, run, actor, reason)


def rsi_run_lost(*, run: RsiRun, actor: Actor, reason: str) -> AppendedEvent:
    return _append(RUN_LOST.name, run, actor, reason)
