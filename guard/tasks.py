from __future__ import annotations

import smtplib

from celery import shared_task
from django.core.cache import cache

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
    if opened is None:
        return 0
    # The opening time in the key: ids restart when a database is recreated, the cache may not.
    key = f"guard:breaker-notified:{breaker_id}:{opened.timestamp():.6f}"
    if cache.get(key):
        return 0
    sent = breaker_notify_owners(breaker_id)
    cache.set(key, 1, timeout=7 * 24 * 3600)
    return sent
