from __future__ import annotations

from celery import shared_task

from .services import proposals_expire


@shared_task(name="approvals.tasks.proposals_expire")
def proposals_expire_task() -> int:
    """Mark pending proposals past their expiry `expired`.  Harmless to run twice."""
    return proposals_expire()


@shared_task(name="approvals.tasks.proposal_replay")
def proposal_replay_task(proposal_id: str) -> str:
    """Replay one proposal's current version (approvals/replay.py); harmless to deliver twice."""
    from .replay import proposal_replay_run

    replay = proposal_replay_run(proposal_id=proposal_id)
    return replay.status if replay is not None else "not_replayed"


@shared_task(name="approvals.tasks.proposal_replays_sweep")
def proposal_replays_sweep_task() -> int:
    """Send the replays that were never sent or whose worker died (approvals/replay.py)."""
    from .replay import replays_sweep

    return replays_sweep()
