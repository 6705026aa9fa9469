"""Which of the services the web process depends on is away right now, for the owners' banner.

Two sources, either enough: what the process itself ran into (`note_down` by the rate limiter and
the chat WebSocket when Redis did not answer, `note_up` when it answered again), and a probe of
Redis with a short timeout, asked at most once every PROBE_EVERY seconds per process so a page
view never waits on it for longer than PROBE_TIMEOUT.  Only Redis is watched here (the cache,
the chat's channel layer and the task queue's broker); the database failing fails the page
itself, and `/healthz` is the place for a full report.

The state is the process's own and never leaves it; it names a dependency, nothing about callers."""

from __future__ import annotations

import threading
import time
from typing import Any

from django.conf import settings
from django.http import HttpRequest

from facade import model_health

REDIS = "redis"
PROBE_EVERY = 5.0  # seconds between probes of one process
PROBE_TIMEOUT = 0.5  # seconds a probe may take (connect and answer each)
NOTED_FOR = 30.0  # seconds a failure the process ran into counts as "down" without a probe saying so


class _Watch:
    """What the process knows of each dependency.  Keyed by dependency name (a handful), so
    bounded by construction."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.noted_down: dict[str, float] = {}  # dependency → when the process last ran into it being away
        self.probed: dict[str, tuple[float, bool]] = {}  # dependency → (when probed, whether it answered)


_watch = _Watch()


def note_down(name: str) -> None:
    with _watch.lock:
        _watch.noted_down[name] = time.monotonic()


def note_up(name: str) -> None:
    if name in _watch.noted_down:
        with _watch.lock:
            _watch.noted_down.pop(name, None)
            _watch.probed.pop(name, None)


def forget() -> None:
    """Forget everything noted and probed (for tests)."""
    with _watch.lock:
        _watch.noted_down.clear()
        _watch.probed.clear()


def _redis_answers() -> bool:
    import redis

    cache = settings.CACHES["default"]
    if cache["BACKEND"] != "facade.cache.RedisCache":
        return True  # the embedded default has no Redis to lose
    url = str(cache["LOCATION"])
    client = redis.Redis.from_url(url, socket_connect_timeout=PROBE_TIMEOUT, socket_timeout=PROBE_TIMEOUT)
    try:
        return bool(client.ping())
    except (redis.exceptions.RedisError, OSError):
        return False
    finally:
        client.close()


def _probe(name: str) -> bool:
    now = time.monotonic()
    with _watch.lock:
        seen = _watch.probed.get(name)
        if seen is not None and now - seen[0] < PROBE_EVERY:
            return seen[1]
        _watch.probed[name] = (now, seen[1] if seen else True)  # others read the last answer meanwhile
    answered = _redis_answers()
    with _watch.lock:
        _watch.probed[name] = (time.monotonic(), answered)
        if answered:
            _watch.noted_down.pop(name, None)
    return answered


def down() -> list[str]:
    """The dependencies away now, as far as this process can tell (a probe at most every few
    seconds; a failure it ran into counts until a probe or a call finds the dependency back)."""
    away = []
    answered = _probe(REDIS)
    with _watch.lock:
        noted = _watch.noted_down.get(REDIS)
    if not answered or (noted is not None and time.monotonic() - noted < NOTED_FOR):
        away.append(REDIS)
    return away


def context(request: HttpRequest) -> dict[str, Any]:
    """Template context: `dependencies_down` for the banner of base.html.  Asked only for a
    signed-in user (owners, operators, auditors); a customer's page never probes."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"dependencies_down": down(), "model_down": model_health.state() if model_health.down() else None}
