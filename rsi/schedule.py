"""The nightly re-check, the nightly review and the morning observe, on Celery beat (issues 13
and 15).

Beat sends `rsi.tasks.tick` every few minutes.  A tick claims, for every agent, each run that is
due in its tenant's time zone (`schedule_rules.due_days`: the re-check of delivered replies at
03:00 and the review at 03:30 for the previous local day, observe at 05:00 for the day) by
inserting its `RsiRun` row — unique per (agent, kind, day), so two beats, two ticks or a tick
and a hand-run never claim a day twice — and sends the run's task with the row's id only and an
expiry.  A run whose task expired unrun (no worker was
up) is sent again by a later tick.  The task runs the re-check, review or observe service, which
is itself idempotent per (agent, day).  A review first re-checks its day too (one aggregate query
when the re-check has run), so a review whose re-check's task was late still sees the day's
delivered violations.

A run's task holds a lease on its row while it works (facade/leases.py): a run whose worker died
is found by the next tick once its lease runs out and runs again from the start, once
(`rsi.run_retried`); when its retry's worker dies too, the run ends failed with `worker_lost`
(`rsi.run_lost`).  The services a run calls are idempotent per (agent, day) and write in one
transaction, so a run cut short left nothing half-applied."""

from __future__ import annotations

import datetime as dt
import functools
import logging

from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from facade.clock import task_expires
from facade.leases import WORKER_LOST, Leased, Verdict, lease_kept, lease_until, lease_verdict, leases_expired
from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor

from . import schedule_events
from .run_progress import step_clear, step_record
from .schedule_models import RsiRun, RunStatus
from .schedule_rules import RunKind, due_days, local_now

logger = logging.getLogger(__name__)

# A run's task expires unrun after this long; a later tick sends a queued run again after it.
RUN_EXPIRES = dt.timedelta(hours=2)
MAX_ATTEMPTS = 3
LEASED = Leased(RsiRun, "status", RunStatus.RUNNING)
TICK_ACTOR = Actor.platform("rsi_schedule")


def tick(*, now: dt.datetime | None = None) -> list[RsiRun]:
    """Claim every due run of every agent and send its task (after the claim commits)."""
    now = now or timezone.now()
    claimed: list[RsiRun] = []
    for agent in AgentProfile.objects.select_related("tenant").order_by("pk"):
        zone = agent.tenant.time_zone
        first = local_now(agent.created_at, zone).date()
        for kind in RunKind:
            # A partial run (an owner reviewed a day still under way) does not count as the day's
            # run: the day is claimed again once it is over.
            last = RsiRun.objects.filter(agent=agent, kind=kind, partial=False).aggregate(last=Max("day"))["last"]
            for day in due_days(kind, now, zone, last_done=last, first_possible=first):
                run = run_claim(agent=agent, kind=kind, day=day, now=now)
                if run is not None:
                    claimed.append(run)
    claimed += _resend_expired(now)
    claimed += runs_lost(now=now)
    return claimed


def runs_lost(*, now: dt.datetime | None = None) -> list[RsiRun]:
    """Judge the running runs whose lease ran out (their worker died): each runs again from the
    start once — queued again and sent after the commit, with `rsi.run_retried` — and one whose
    retry's worker died too ends failed (`worker_lost`, with `rsi.run_lost`).  Returns the runs
    sent again."""
    now = now or timezone.now()
    again = []
    with transaction.atomic():
        for run in leases_expired(LEASED, now=now).select_related("agent"):
            run.lease_expires_at = None
            if lease_verdict(run.runs_started) == Verdict.RETRY:
                run.status, run.queued_at = RunStatus.QUEUED, now
                run.save(update_fields=["status", "queued_at", "lease_expires_at"])
                schedule_events.rsi_run_retried(run=run, actor=TICK_ACTOR, reason=WORKER_LOST)
                transaction.on_commit(functools.partial(_send, run.pk))
                again.append(run)
                continue
            run.status, run.error, run.finished_at = RunStatus.FAILED, WORKER_LOST, now
            run.save(update_fields=["status", "error", "finished_at", "lease_expires_at"])
            schedule_events.rsi_run_lost(run=run, actor=TICK_ACTOR, reason=WORKER_LOST)
    return again


def run_claim(*, agent: AgentProfile, kind: RunKind, day: dt.date, now: dt.datetime) -> RsiRun | None:
    """Insert the run's row (None when it exists already) and send its task once that commits.
    A partial run of the day (an owner's, while the day was under way) that has ended is claimed
    again, now for the whole day; one still queued or running is left to a later tick."""
    with transaction.atomic():
        run, created = RsiRun.objects.get_or_create(
            agent=agent, kind=kind.value, day=day, defaults={"queued_at": now, "status": RunStatus.QUEUED}
        )
        if not created:
            whole = RsiRun.objects.filter(pk=run.pk, partial=True, status__in=(RunStatus.DONE, RunStatus.FAILED))
            if not whole.update(
                partial=False, status=RunStatus.QUEUED, queued_at=now, attempts_base=F("attempts"), error=""
            ):
                return None
            run.refresh_from_db()
        transaction.on_commit(functools.partial(_send, run.pk))
    return run


def _resend_expired(now: dt.datetime) -> list[RsiRun]:
    stale = RsiRun.objects.filter(
        status=RunStatus.QUEUED, queued_at__lte=now - RUN_EXPIRES, attempts__lt=F("attempts_base") + MAX_ATTEMPTS
    ).order_by("pk")[:100]
    resent = []
    for run in stale:
        with transaction.atomic():
            if RsiRun.objects.filter(pk=run.pk, status=RunStatus.QUEUED, queued_at=run.queued_at).update(queued_at=now):
                transaction.on_commit(functools.partial(_send, run.pk))
                resent.append(run)
    return resent


def run_send(run_id: int) -> None:
    """Send a claimed run's task (its id only, with the expiry); called after the claim commits."""
    _send(run_id)


def _send(run_id: int) -> None:
    from .tasks import run_task

    run_task.apply_async(args=[run_id], expires=task_expires(RUN_EXPIRES.total_seconds()))


def run_execute(run_id: int) -> str:
    """Run one claimed run (the task's body): mark it running under its row lock, with a lease its
    worker renews while it works (facade/leases.py) — a run that is running or done already is
    left alone, so a task delivered twice runs once, and so is one given up after its workers
    died twice — call the service, and record how it ended (an exception's class only, never
    its text), only while this run still holds the row."""
    with transaction.atomic():
        run = RsiRun.objects.select_for_update().select_related("agent").filter(pk=run_id).first()
        if run is None or run.status not in (RunStatus.QUEUED, RunStatus.FAILED):
            return "skipped"
        if run.status == RunStatus.FAILED and run.error == WORKER_LOST:
            return "skipped"  # a late delivery of the lost run's task: its one retry was spent
        run.status = RunStatus.RUNNING
        run.attempts += 1
        run.lease_expires_at = lease_until()
        run.save(update_fields=["status", "attempts", "lease_expires_at"])
    held = LEASED.held(run.pk, run.attempts)
    with lease_kept(LEASED, run.pk, run.attempts):
        try:
            partial = _service(run)
        except Exception as exc:
            logger.exception("rsi %s run %s failed", run.kind, run.pk)
            _failed(run, type(exc).__name__)
            return "failed"
        finally:
            step_clear(run)
    finished = held.update(
        status=RunStatus.DONE, error="", finished_at=timezone.now(), partial=partial, lease_expires_at=None
    )
    return "done" if finished else "superseded"


def _service(run: RsiRun) -> bool:
    """Run the run's service; whether what it made is partial (a review of a day under way)."""
    if run.kind == RunKind.RECHECK:
        from guard.recheck import recheck_day

        recheck_day(agent_id=run.agent_id, day=run.day)
        return False
    if run.kind == RunKind.REVIEW:
        from .review import review_run

        _recheck_before_review(run)

        report = review_run(agent_id=run.agent_id, day=run.day, progress=functools.partial(step_record, run))
        return report.partial
    from .observe import observe_run

    observe_run(agent_id=run.agent_id, day=run.day)
    return False


def _recheck_before_review(run: RsiRun) -> None:
    """Re-check the review's day first (a no-op when the 03:00 re-check has run).  A re-check that
    fails leaves the review to run all the same; the re-check's own run records its failure."""
    from guard.recheck import recheck_day

    try:
        recheck_day(agent_id=run.agent_id, day=run.day)
    except Exception:
        logger.exception("rsi review run %s: the re-check of its day failed", run.pk)


def _failed(run: RsiRun, error: str) -> None:
    """Mark the run failed, with a review's `review.run_failed` in the same transaction; should
    that not be written (the database is what failed), the run is marked failed all the same so
    that it can be run again."""
    failed = LEASED.held(run.pk, run.attempts)
    fields = {"status": RunStatus.FAILED, "error": error[:200], "finished_at": timezone.now(), "lease_expires_at": None}
    try:
        with transaction.atomic():
            if not failed.update(**fields):
                return  # no longer this run's (its lease ran out and the tick took it over)
            if run.kind == RunKind.REVIEW:
                from . import review_events

                review_events.review_run_failed(
                    run=run,
                    tenant_id=run.agent.tenant_id,
                    agent_slug=run.agent.slug,
                    error=error,
                    actor=Actor.platform("rsi_schedule"),
                )
    except Exception:
        logger.exception("rsi run %s: its failure could not be recorded in the ledger", run.pk)
        failed.update(**fields)
