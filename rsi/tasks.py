"""The rsi app's Celery tasks: the tick beat sends, and one claimed run (its id only)."""

from __future__ import annotations

from celery import shared_task

from .schedule import run_execute, tick


@shared_task(name="rsi.tasks.tick")
def tick_task() -> int:
    """Claim and send every due re-check, review and observe run (see rsi/schedule.py)."""
    return len(tick())


@shared_task(name="rsi.tasks.run")
def run_task(run_id: int) -> str:
    """Run one claimed re-check, review or observe run; harmless to deliver twice."""
    return run_execute(run_id)
