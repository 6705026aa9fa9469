from __future__ import annotations

from celery import shared_task


@shared_task(name="facade.peers.tasks.tasks_stranded_end")
def tasks_stranded_end_task() -> int:
    """End A2A tasks left WORKING beyond FACADE_RUN_STUCK_SECONDS (harmless to run twice: each
    task is re-checked under its row lock)."""
    from .stranded import tasks_stranded_end  # the runtime imports the services; tasks load early

    return tasks_stranded_end()
