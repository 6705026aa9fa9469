"""Rate limits on what anonymous callers can make the server do (messages, session opens,
searches), and the client address they are counted by.

Limits are fixed windows counted atomically in the cache, so concurrent web processes share one
count.  On Redis (production) every window of a request is counted in one pipelined round trip
(INCR + EXPIRE NX each); other caches (the embedded default) use `add` then `incr`.  A refusal
writes nothing but these counters.

While Redis cannot be reached a limit does not raise: the caller says what it means
(`when_unreachable`).  Chat messages are refused with 503 `temporarily_unavailable` and a
`Retry-After` (the page keeps them and sends them again; a turn also needs Redis for its cancel
flag and its pushes), and so are authorisation attempts (approvals.step_up: a limit on guessing
codes must not multiply by the number of processes).  Session opens and searches are counted by
a local, per-process fallback (`LocalWindows`) at the same rates, so each web process allows up
to the full rate on its own until Redis is back."""

from __future__ import annotations

import ipaddress
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from http import HTTPStatus
from typing import Literal

from django.conf import settings
from django.core.cache import cache, caches
from django.core.exceptions import ImproperlyConfigured
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from facade import dependencies
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
    """Forget the spent windows and the local fallback's counts (for tests, which clear the
    counters between cases)."""
    SPENT.reset()
    LOCAL.reset()


def refused_until(scope: str, ident: str) -> float | None:
    """When the `scope` window of `ident` that this process saw spent ends (a Unix time), or
    None."""
    return SPENT.until(scope, ident)


# What a cache that cannot be reached raises (redis-py wraps socket errors in these; a Redis
# still loading its data after a restart answers BusyLoadingError, a ConnectionError).
UNREACHABLE = (RedisConnectionError, RedisTimeoutError)
UNAVAILABLE_RETRY_AFTER = 5  # seconds a caller is told to wait while Redis is away


class LocalWindows:
    """Fixed-window counters in this process's memory: the limiter while Redis is away.  Each
    process counts on its own, so N web processes allow up to N times a rate.  Bounded like
    SpentWindows: past `bound`, windows that have ended are dropped, then the oldest."""

    def __init__(self, bound: int) -> None:
        self.bound = bound
        self._counts: OrderedDict[str, tuple[int, float]] = OrderedDict()
        self._lock = threading.Lock()

    def count(self, key: str, seconds: int) -> int:
        now = time.time()
        with self._lock:
            count, ends = self._counts.pop(key, (0, now + seconds))
            if ends <= now:
                count, ends = 0, now + seconds
            self._counts[key] = (count + 1, ends)
            if len(self._counts) > self.bound:
                for old in [k for k, (_c, until) in self._counts.items() if until <= now]:
                    del self._counts[old]
                while len(self._counts) > self.bound:
                    self._counts.popitem(last=False)
            return count + 1

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()


LOCAL = LocalWindows(50_000)


def temporarily_unavailable_error(what: str) -> ApplicationError:
    """The refusal while a dependency the request needs is away: 503 and when to try again."""
    return ApplicationError(
        "temporarily_unavailable",
        f"{what} cannot be taken right now; try again in {UNAVAILABLE_RETRY_AFTER} s",
        HTTPStatus.SERVICE_UNAVAILABLE,
        retry_after=UNAVAILABLE_RETRY_AFTER,
    )


def rate_check(
    limits: Sequence[tuple[str, str, str]], *, when_unreachable: Literal["local", "refuse"] = "local"
) -> Limited | None:
    """Count one request against each `(scope, identity, rate)` limit; the first one exceeded
    answers.  Every window is counted, refused requests included, so a caller who keeps trying
    stays refused until its windows turn over.

    Should Redis not answer, "local" counts in this process's memory (`LOCAL`) and "refuse"
    raises 503 `temporarily_unavailable`; either way the outage is noted for the owners' banner."""
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
        try:
            counts = backend.count_in_windows([key for *_, key in windows])
        except UNREACHABLE:
            dependencies.note_down(dependencies.REDIS)
            if when_unreachable == "refuse":
                raise temporarily_unavailable_error("this request") from None
            counts = [LOCAL.count(*key) for *_, key in windows]
        else:
            dependencies.note_up(dependencies.REDIS)
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
