from __future__ import annotations

import smtplib

from celery import shared_task

from facade.dialogue.notify import notify_once

from .breaker import breaker_notify_owners
from .models import GuardBreaker


@shared_task(
    name="guard.tasks.breaker_notify_owners",
    autoretry_for=(OSError, smtplib.SMTPException),
    retry_backoff=30,
    max_retries=5,
)
def breaker_notify_owners_task(breaker_id: int) -> int:
    """E-mail the owners of an agent whose guard breaker opened, once per opening (a redelivered
    task sends nothing twice); an SMTP server that is down is tried again with backoff."""
    opened = GuardBreaker.objects.filter(pk=breaker_id).values_list("opened_at", flat=True).first()
    return notify_once(f"guard:breaker-notified:{breaker_id}", opened, lambda: breaker_notify_owners(breaker_id))
