"""Message rate limits, counted with the project's rate-limit machinery (`facade.ratelimit`)."""

from __future__ import annotations

from django.conf import settings

from facade.ratelimit import Limited, rate_check


def message_rate_check(
    *, customer_id: str | None = None, ip: str | None = None, peer_id: str | None = None
) -> Limited | None:
    """Count one message against every limit that applies; the first one exceeded answers.
    While Redis cannot be reached a message is refused with 503 `temporarily_unavailable`
    rather than counted locally: its turn needs Redis too (the cancel flag, the pushes)."""
    limits = []
    if peer_id:
        limits.append(("peer", peer_id, settings.FACADE_RATE_PEER))
    if customer_id:
        limits.append(("customer", customer_id, settings.FACADE_RATE_CUSTOMER))
    if ip:
        limits.append(("ip", ip, settings.FACADE_RATE_IP))
    return rate_check(limits, when_unreachable="refuse")
