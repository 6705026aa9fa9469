"""The nightly review and the morning observe, on Celery beat (issue 13).

Beat sends `rsi.tasks.tick` every few minutes.  A tick claims, for every agent, each run that is
due in its tenant's time zone (`schedule_rules.due_days`: the review at 03:30 for the previous
local day, observe at 05:00 for the day) by inserting its `RsiRun` row — unique per (agent, kind,
day), so two beats, two ticks or a tick and a hand-run never claim a day twice — and sends the
run's task with the row's id only and an expiry.  A run whose task expired unrun (no worker was
up) is sent again by a later tick.  The task runs the review or observe service, which is itself
idempotent per (agent, day)."""

from __future__ import annotations

import datetime as dt
import functools
import logging
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from facade.tenancy.models import AgentProfile

from .schedule_models import RsiRun, RunStatus
from .schedule_rules import RunKind, due_days, local_now

logger = logging.getLogger(__name__)

# A run's task expires unrun after this long; a later tick sends a queued run again after it.
RUN_EXPIRES = dt.timedelta(hours=2)
MAX_ATTEMPTS = 3


def tick(*, now: dt.datetime | None = None) -> list[RsiRun]:
    """Claim every due run of every agent and send its task (after the claim commits)."""
    now = now or timezone.now()
    claimed: list[RsiRun] = []
    for agent in AgentProfile.objects.select_related("tenant").order_by("pk"):
        zone = agent.tenant.time_zone
        first = local_now(agent.created_at, zone).date()
        for kind in RunKind:
            last = RsiRun.objects.filter(agent=agent, kind=kind).aggregate(last=Max("day"))["last"]
            for day in due_days(kind, now, zone, last_done=last, first_possible=first):
                run = run_claim(agent=agent, kind=kind, day=day, now=now)
                if run is not None:
                    claimed.append(run)
    claimed += _resend_expired(now)
    return claimed


def run_claim(*, agent: AgentProfile, kind: RunKind, day: dt.date, now: dt.datetime) -> RsiRun | None:
    """Insert the run's row (None when it exists already) and send its task once that commits."""
    with transaction.atomic():
        run, created = RsiRun.objects.get_or_create(
            agent=agent, kind=kind.value, day=day, defaults={"queued_at": now, "status": RunStatus.QUEUED}
        )
        if not created:
            return None
        transaction.on_commit(functools.partial(_send, run.pk))
    return run


def _resend_expired(now: dt.datetime) -> list[RsiRun]:
    stale = RsiRun.objects.filter(
        status=RunStatus.QUEUED, queued_at__lte=now - RUN_EXPIRES, attempts__lt=MAX_ATTEMPTS
    ).order_by("pk")[:100]
    resent = []
    for run in stale:
        with transaction.atomic():
            if RsiRun.objects.filter(pk=run.pk, status=RunStatus.QUEUED, queued_at=run.queued_at).update(queued_at=now):
                transaction.on_commit(functools.partial(_send, run.pk))
                resent.append(run)
    return resent


def _send(run_id: int) -> None:
    from .tasks import run_task

    run_task.apply_async(args=[run_id], expires=RUN_EXPIRES.total_seconds())


def run_execute(run_id: int) -> str:
    """Run one claimed run (the task's body): mark it running under its row lock — a run that is
    running or done already is left alone, so a task delivered twice runs once — call the
    service, and record how it ended (an exception's class only, never its text)."""
    with transaction.atomic():
        run = RsiRun.objects.select_for_update().select_related("agent").filter(pk=run_id).first()
        if run is None or run.status not in (RunStatus.QUEUED, RunStatus.FAILED):
            return "skipped"
        run.status = RunStatus.RUNNING
        run.attempts += 1
        run.save(update_fields=["status", "attempts"])
    try:
        _service(RunKind(run.kind))(agent_id=run.agent_id, day=run.day)
    except Exception as exc:
        logger.exception("rsi %s run %s failed", run.kind, run.pk)
        _finish(run, RunStatus.FAILED, type(exc).__name__)
        return "failed"
    _finish(run, RunStatus.DONE, "")
    return "done"


def _service(kind: RunKind) -> Any:
    if kind == RunKind.REVIEW:
        from .review import review_run

        return review_run
    from .observe import observe_run

    return observe_run


def _finish(run: RsiRun, status: RunStatus, error: str) -> None:
    RsiRun.objects.filter(pk=run.pk).update(status=status, error=error[:200], finished_at=timezone.now())
