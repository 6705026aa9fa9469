"""Message rate limits: fixed windows counted atomically in the cache (Redis in production:
`add` then `incr` are single Redis commands, so concurrent web processes share one count)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

from .rules import parse_rate


@dataclass(frozen=True)
class Limited:
    scope: str
    retry_after: int  # seconds until the window ends


def _hit(scope: str, ident: str, spec: str) -> Limited | None:
    limit, window = parse_rate(spec)
    now = int(time.time())
    start = now - now % window
    key = f"facade:rate:{scope}:{ident}:{start}"
    cache.add(key, 0, timeout=window + 5)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=window + 5)
        count = 1
    if count > limit:
        return Limited(scope, max(1, start + window - now))
    return None


def message_rate_check(*, customer_id: str | None = None, ip: str | None = None, peer_id: str | None = None) -> Limited | None:
    """Count one message against every limit that applies; the first one exceeded answers."""
    checks = []
    if peer_id:
        checks.append(("peer", peer_id, settings.FACADE_RATE_PEER))
    if customer_id:
        checks.append(("customer", customer_id, settings.FACADE_RATE_CUSTOMER))
    if ip:
        checks.append(("ip", ip, settings.FACADE_RATE_IP))
    for scope, ident, spec in checks:
        limited = _hit(scope, ident, spec)
        if limited is not None:
            return limited
    return None
