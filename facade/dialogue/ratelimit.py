"""Message rate limits: fixed windows counted atomically in the cache, so concurrent web
processes share one count.  On Redis (production) every window of a message is counted in one
pipelined round trip (INCR + EXPIRE NX each); other caches (the embedded default) use `add`
then `incr`."""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache, caches

from facade.cache import RedisCache

from .rules import parse_rate


@dataclass(frozen=True)
class Limited:
    scope: str
    retry_after: int  # seconds until the window ends


def _count(key: str, seconds: int) -> int:
    cache.add(key, 0, timeout=seconds)
    try:
        return int(cache.incr(key))
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=seconds)
        return 1


def message_rate_check(
    *, customer_id: str | None = None, ip: str | None = None, peer_id: str | None = None
) -> Limited | None:
    """Count one message against every limit that applies; the first one exceeded answers."""
    checks = []
    if peer_id:
        checks.append(("peer", peer_id, settings.FACADE_RATE_PEER))
    if customer_id:
        checks.append(("customer", customer_id, settings.FACADE_RATE_CUSTOMER))
    if ip:
        checks.append(("ip", ip, settings.FACADE_RATE_IP))
    now = int(time.time())
    windows: list[tuple[str, int, int, tuple[str, int]]] = []  # scope, limit, window end, (key, lifetime)
    for scope, ident, spec in checks:
        limit, window = parse_rate(spec)
        start = now - now % window
        windows.append((scope, limit, start + window, (f"facade:rate:{scope}:{ident}:{start}", window + 5)))
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        counts = backend.count_in_windows([key for *_, key in windows])
    else:
        counts = [_count(*key) for *_, key in windows]
    for (scope, limit, ends, _key), count in zip(windows, counts, strict=True):
        if count > limit:
            return Limited(scope, max(1, ends - now))
    return None
