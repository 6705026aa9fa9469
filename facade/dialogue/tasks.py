from __future__ import annotations

from celery import shared_task

from .services import sessions_expire


@shared_task(name="facade.dialogue.tasks.sessions_expire")
def sessions_expire_task() -> int:
    """Expire sessions idle for longer than FACADE_SESSION_IDLE_MINUTES (harmless to run twice:
    each session is re-checked under its row lock)."""
    return sessions_expire()
