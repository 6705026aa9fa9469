"""Rate limits on what anonymous callers can make the server do (messages, session opens,
searches), and the client address they are counted by.

Limits are fixed windows counted atomically in the cache, so concurrent web processes share one
count.  On Redis (production) every window of a request is counted in one pipelined round trip
(INCR + EXPIRE NX each); other caches (the embedded default) use `add` then `incr`.  A refusal
writes nothing but these counters."""

from __future__ import annotations

import ipaddress
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from http import HTTPStatus

from django.conf import settings
from django.core.cache import cache, caches
from django.core.exceptions import ImproperlyConfigured

from facade.cache import RedisCache
from facade.errors import ApplicationError

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Limited:
    scope: str
    retry_after: int  # seconds until the window ends


def parse_rate(spec: str) -> tuple[int, int]:
    """ "20/60" → (20 requests, per 60 seconds)."""
    count, _, seconds = spec.partition("/")
    limit, window = int(count), int(seconds or 60)
    if limit < 1 or window < 1:
        raise ValueError(f"rate {spec!r} must be COUNT/SECONDS with both at least 1")
    return limit, window


def _count(key: str, seconds: int) -> int:
    cache.add(key, 0, timeout=seconds)
    try:
        return int(cache.incr(key))
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=seconds)
        return 1


class SpentWindows:
    """The rate windows this process saw spent, and when each ends: the gate in front of Django
    (facade/gate.py) refuses from here without counting, since a spent window cannot turn over
    sooner.  Bounded: past `bound`, windows that have ended are dropped, then the oldest."""

    def __init__(self, bound: int) -> None:
        self.bound = bound
        self._until: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, scope: str, ident: str, ends: float) -> None:
        with self._lock:
            self._until.pop((scope, ident), None)
            self._until[(scope, ident)] = ends
            if len(self._until) > self.bound:
                now = time.time()
                for key in [key for key, until in self._until.items() if until <= now]:
                    del self._until[key]
                while len(self._until) > self.bound:
                    self._until.popitem(last=False)

    def until(self, scope: str, ident: str) -> float | None:
        return self._until.get((scope, ident))

    def reset(self) -> None:
        with self._lock:
            self._until.clear()

    def __len__(self) -> int:
        return len(self._until)


SPENT = SpentWindows(50_000)


def forget_spent() -> None:
    """Forget the spent windows (for tests, which clear the counters between cases)."""
    SPENT.reset()


def refused_until(scope: str, ident: str) -> float | None:
    """When the `scope` window of `ident` that this process saw spent ends (a Unix time), or
    None."""
    return SPENT.until(scope, ident)


def rate_check(limits: Sequence[tuple[str, str, str]]) -> Limited | None:
    """Count one request against each `(scope, identity, rate)` limit; the first one exceeded
    answers.  Every window is counted, refused requests included, so a caller who keeps trying
    stays refused until its windows turn over."""
    now = int(time.time())
    windows: list[tuple[str, int, int, tuple[str, int]]] = []  # scope, limit, window end, (key, lifetime)
    ident_of = {scope: ident for scope, ident, _spec in limits}
    for scope, ident, spec in limits:
        limit, window = parse_rate(spec)
        start = now - now % window
        windows.append((scope, limit, start + window, (f"facade:rate:{scope}:{ident}:{start}", window + 5)))
    if not windows:
        return None
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        counts = backend.count_in_windows([key for *_, key in windows])
    else:
        counts = [_count(*key) for *_, key in windows]
    refused = None
    for (scope, limit, ends, _key), count in zip(windows, counts, strict=True):
        if count > limit:
            SPENT.remember(scope, ident_of[scope], ends)
            refused = refused or Limited(scope, max(1, ends - now))
    return refused


def rate_limited_error(limited: Limited, what: str) -> ApplicationError:
    """The one refusal every limit answers with: 429 `rate_limited` and when to try again."""
    return ApplicationError(
        "rate_limited",
        f"too many {what}; try again in {limited.retry_after} s",
        HTTPStatus.TOO_MANY_REQUESTS,
        retry_after=limited.retry_after,
    )


def anonymous_rate_check(action: str, *, caller: str | None, ip: str | None) -> Limited | None:
    """Count a session open (`action` "session") or a search ("search") against the caller's
    limit (a customer id or a peer key id, when there is one) and the client address's."""
    rates = {
        "session": (settings.FACADE_RATE_SESSION, settings.FACADE_RATE_SESSION_IP),
        "search": (settings.FACADE_RATE_SEARCH, settings.FACADE_RATE_SEARCH_IP),
    }
    per_caller, per_ip = rates[action]
    limits = []
    if caller:
        limits.append((f"{action}:caller", caller, per_caller))
    if ip:
        limits.append((f"{action}:ip", ip, per_ip))
    return rate_check(limits)


# --- the client address -------------------------------------------------------------------


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    try:
        return tuple(ipaddress.ip_network(entry, strict=False) for entry in entries)
    except ValueError as exc:
        raise ImproperlyConfigured(f"FACADE_TRUSTED_PROXIES: {exc}") from exc


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def client_ip(peer: str | None, forwarded_for: Iterable[str] = ()) -> str:
    """The address a request came from, as far as it can be believed.

    `peer` is the address of the connection; `forwarded_for` the values of its X-Forwarded-For
    headers.  Those are believed only from a proxy listed in FACADE_TRUSTED_PROXIES (addresses or
    CIDR networks; none by default, so without a proxy the header is the client's own word and is
    ignored).  Each trusted proxy appends the address it was connected from, so the header is read
    from the right: the first address that is not a trusted proxy is the client.  Entries left of
    it were written by the client and are never read."""
    fallback = peer or "unknown"
    trusted = _networks(tuple(settings.FACADE_TRUSTED_PROXIES))
    current = _address(fallback)
    if current is None or not trusted or not any(current in net for net in trusted):
        return str(current) if current is not None else fallback
    hops = [hop for value in forwarded_for for hop in value.split(",") if hop.strip()]
    for hop in reversed(hops):
        address = _address(hop)
        if address is None:
            break  # a trusted proxy would not write this; believe nothing further left
        current = address
        if not any(current in net for net in trusted):
            break
    return str(current)


def request_client_ip(meta: dict[str, object]) -> str:
    """`client_ip` of a Django request, from its META."""
    forwarded = meta.get("HTTP_X_FORWARDED_FOR")
    return client_ip(str(meta.get("REMOTE_ADDR") or ""), [forwarded] if isinstance(forwarded, str) else [])


def scope_client_ip(scope: dict[str, object]) -> str:
    """`client_ip` of an ASGI scope (the chat WebSocket)."""
    client = scope.get("client")
    peer = str(client[0]) if isinstance(client, list | tuple) and client and client[0] else ""
    headers = scope.get("headers") or []
    forwarded = [
        value.decode("latin1")
        for name, value in headers  # type: ignore[attr-defined]
        if name.lower() == b"x-forwarded-for"
    ]
    return client_ip(peer, forwarded)
