from __future__ import annotations

from celery import shared_task

from .services import proposals_expire


@shared_task(name="approvals.tasks.proposals_expire")
def proposals_expire_task() -> int:
    """Mark pending proposals past their expiry `expired`.  Harmless to run twice."""
    return proposals_expire()
