"""An owner asks for the daily review of a day and watches it run (issue 13: "the owner can also
trigger a review from the UI and watch its progress").

`review_request` claims the day's review run — the same `RsiRun` row the nightly schedule claims,
unique per (agent, kind, day) — and sends `rsi.tasks.run` with the run's id once the claim
commits.  A click while that run waits or runs queues nothing (two tabs, a double click: one run);
a day whose report is final (a past day, reviewed whole) queues nothing either; today's run that
has ended is queued again (today's report is partial and updated in place), and so is a failed
one.  `review_progress` reads where the day's review stands: the run's status, the step the
worker is at (rsi/run_progress.py) and, once finished, the report's counts."""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from enum import StrEnum
from http import HTTPStatus

from django.db import transaction
from django.utils import timezone

from facade.errors import ApplicationError
from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor

from . import review_events as events
from .review_input import local_today
from .review_models import ReviewReport
from .run_progress import step_read
from .schedule import run_send
from .schedule_models import RsiRun, RunStatus
from .schedule_rules import RunKind

ACTIVE = (RunStatus.QUEUED, RunStatus.RUNNING)


class Phase(StrEnum):
    NONE = "none"  # no review of the day yet
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"


def phase_of(run_status: str | None, report_finished: bool, *, report_final: bool = False) -> Phase:
    """Where a day's review stands, from its run's status (None: no run), whether its report is
    finished and whether that report is final (a past day reviewed whole: an earlier failure of
    the run no longer matters).  A report left unfinished with no run behind it (a run that failed
    before the schedule's row existed, or one under way through the API) is not shown as running:
    nothing would ever move it on."""
    if run_status == RunStatus.QUEUED:
        return Phase.QUEUED
    if run_status == RunStatus.RUNNING:
        return Phase.RUNNING
    if run_status == RunStatus.FAILED and not report_final:
        return Phase.FAILED
    return Phase.FINISHED if report_finished or report_final else Phase.NONE


@dataclass(frozen=True)
class Requested:
    run: RsiRun | None
    queued: bool  # False: the day's run was already waiting or running, or its report is final


def review_request(*, agent: AgentProfile, day: dt.date, actor: Actor, now: dt.datetime | None = None) -> Requested:
    """Queue the review of the agent's local `day` (see the module's docstring).  A future day is
    refused (`future_day`)."""
    now = now or timezone.now()
    today = local_today(agent.tenant, now)
    if day > today:
        raise ApplicationError("future_day", "a day that has not begun cannot be reviewed", HTTPStatus.BAD_REQUEST)
    partial = day == today
    with transaction.atomic():
        existing = RsiRun.objects.filter(agent=agent, kind=RunKind.REVIEW, day=day).first()
        if ReviewReport.objects.filter(
            agent=agent, day=day, status=ReviewReport.Status.FINISHED, partial=False
        ).exists() and (existing is None or existing.status not in ACTIVE):
            return Requested(run=existing, queued=False)
        run, created = RsiRun.objects.get_or_create(
            agent=agent,
            kind=RunKind.REVIEW.value,
            day=day,
            defaults={"queued_at": now, "status": RunStatus.QUEUED, "partial": partial},
        )
        if not created:
            run = RsiRun.objects.select_for_update().get(pk=run.pk)
            if run.status in ACTIVE:
                return Requested(run=run, queued=False)
            run.status, run.queued_at, run.partial = RunStatus.QUEUED, now, partial
            run.attempts_base, run.error, run.finished_at = run.attempts, "", None
            run.save(update_fields=["status", "queued_at", "partial", "attempts_base", "error", "finished_at"])
        events.review_requested(
            run=run, tenant_id=agent.tenant_id, agent_slug=agent.slug, rerun=not created, actor=actor
        )
        transaction.on_commit(functools.partial(run_send, run.pk))
    return Requested(run=run, queued=True)


@dataclass(frozen=True)
class Progress:
    day: dt.date
    phase: Phase
    step: str  # while running: one of rsi.run_progress.STEPS, or "" before the first
    partial: bool  # the day is (or was, when its report was made) still under way
    final: bool  # the day's report is complete: asking again shows it, runs nothing
    queued_at: dt.datetime | None
    finished_at: dt.datetime | None
    error: str  # a failed run's exception class
    counts: dict[str, int] | None  # a finished report's: wins, misses, gaps, proposals, held back, dropped
    retry: bool = False  # waiting or running again because the worker of its first run died


def is_retry(run: RsiRun | None) -> bool:
    """The run waits or runs again after its worker died (rsi.schedule.runs_lost queued it)."""
    if run is None:
        return False
    return (run.status == RunStatus.QUEUED and run.runs_started >= 1) or (
        run.status == RunStatus.RUNNING and run.runs_started >= 2
    )


def report_counts(report: ReviewReport) -> dict[str, int]:
    return {
        "wins": len(report.wins),
        "misses": len(report.misses),
        "gaps": len(report.gaps),
        "proposals": len(report.proposals),
        "held_back": report.held_back,
        "dropped_claims": len(report.dropped_claims),
    }


def review_progress(agent: AgentProfile, day: dt.date) -> Progress:
    run = RsiRun.objects.filter(agent=agent, kind=RunKind.REVIEW, day=day).first()
    report = ReviewReport.objects.filter(agent=agent, day=day).first()
    finished = report is not None and report.status == ReviewReport.Status.FINISHED
    final = bool(finished and report and not report.partial)
    phase = phase_of(run.status if run else None, finished, report_final=final)
    return Progress(
        day=day,
        phase=phase,
        step=step_read(run) if run is not None and phase == Phase.RUNNING else "",
        partial=report.partial if finished and report else day == local_today(agent.tenant),
        final=final,
        queued_at=run.queued_at if run else None,
        finished_at=(report.finished_at if report else None) if phase == Phase.FINISHED else None,
        error=run.error if run and phase == Phase.FAILED else "",
        counts=report_counts(report) if phase == Phase.FINISHED and report else None,
        retry=phase in (Phase.QUEUED, Phase.RUNNING) and is_retry(run),
    )


def active_review(agent: AgentProfile) -> RsiRun | None:
    """The agent's review run that waits or runs, if any (the latest day's)."""
    return RsiRun.objects.filter(agent=agent, kind=RunKind.REVIEW, status__in=ACTIVE).order_by("-day").first()
