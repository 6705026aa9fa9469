"""Where a review run has got to, for the owner watching it (issue 13: "trigger a review from the
UI and watch its progress").  The review writes everything in one transaction, so its steps are
not in the database until it ends; the worker records the current step in the cache (Redis, or
the embedded default's file cache — both shared between the web and worker processes) and the
status endpoint reads it.  Cosmetic by design: a step that cannot be recorded is not an error."""

from __future__ import annotations

import logging

from django.core.cache import cache

from .schedule_models import RsiRun

logger = logging.getLogger(__name__)

# The review's steps, in order: building its input from aggregates, the reviewers speaking, the
# evidence gate, filing the proposals.
STEPS = ("input", "reviewers", "gate", "proposals")
STEP_SECONDS = 2 * 60 * 60


def _key(run: RsiRun) -> str:
    # The queue time makes each request of the same day's run a key of its own.
    return f"rsi:run-step:{run.pk}:{int(run.queued_at.timestamp() * 1_000_000)}"


def step_record(run: RsiRun, step: str) -> None:
    try:
        cache.set(_key(run), step, timeout=STEP_SECONDS)
    except Exception:  # noqa: BLE001 - progress is shown, never needed
        logger.warning("could not record step %s of rsi run %s", step, run.pk, exc_info=True)


def step_read(run: RsiRun) -> str:
    try:
        step = cache.get(_key(run))
    except Exception:  # noqa: BLE001
        logger.warning("could not read the step of rsi run %s", run.pk, exc_info=True)
        return ""
    return step if step in STEPS else ""


def step_clear(run: RsiRun) -> None:
    try:
        cache.delete(_key(run))
    except Exception:  # noqa: BLE001
        logger.warning("could not clear the step of rsi run %s", run.pk, exc_info=True)
