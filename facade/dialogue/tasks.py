from __future__ import annotations

import smtplib

from celery import shared_task

from .models import CustomerRequest
from .notify import notify_once, request_notify_owners
from .services import sessions_expire


@shared_task(name="facade.dialogue.tasks.sessions_expire")
def sessions_expire_task() -> int:
    """Expire sessions idle for longer than FACADE_SESSION_IDLE_MINUTES (harmless to run twice:
    each session is re-checked under its row lock)."""
    return sessions_expire()


@shared_task(name="facade.dialogue.tasks.runs_stranded_answer")
def runs_stranded_answer_task() -> int:
    """Answer runs left without a reply beyond FACADE_RUN_STUCK_SECONDS honestly (harmless to
    run twice: each run is re-checked under its row lock, and a message has one reply)."""
    from .runtime.stranded import runs_stranded_answer  # the runtime imports the services; tasks load early

    return runs_stranded_answer()


@shared_task(
    name="facade.dialogue.tasks.request_notify_owners",
    autoretry_for=(OSError, smtplib.SMTPException),
    retry_backoff=30,
    max_retries=5,
)
def request_notify_owners_task(request_id: int) -> int:
    """E-mail a new request's owners, once: a request already sent for is skipped (a redelivered
    task sends nothing twice); an SMTP server that is down is tried again with backoff."""
    created = CustomerRequest.objects.filter(pk=request_id).values_list("created_at", flat=True).first()
    return notify_once(f"dialogue:request-notified:{request_id}", created, lambda: request_notify_owners(request_id))
