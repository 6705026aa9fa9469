"""`/healthz`: is the database, the broker and the channel layer reachable?

Each dependency is checked in a thread of its own, all three at once, and the answer waits for
them at most `FACADE_HEALTH_TIMEOUT` seconds: a dependency that has not answered by then is
reported down (`"error": "TimeoutError"`), whatever it is doing, so the endpoint answers within
that bound plus the time to write the JSON.  A check still running when the next request comes
is waited for again rather than started twice, so a dependency that hangs holds one thread, not
one per request.

The channel layer is checked by a round trip on a channel of its own with a plain name, on an
event loop of the check's own.  It used to use a process-local channel (`new_channel()`, a name
with `!`), and a Redis channel layer reads all of a process's local channels through one
receive lock: an open chat WebSocket's consumer holds it while it waits for its next message,
so with any WebSocket open the health check waited behind it for as long as the socket stayed
idle (issue 16, point 2)."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_safe

from facade import model_health

Check = Callable[[float], dict[str, Any]]

# One channel per process, named without `!` so that no consumer's receive stands in its way.
# A ping left on it by a check that timed out is read and dropped by the next one.
_CHANNEL = f"healthz.{uuid.uuid4().hex}"


def _check_database(budget: float) -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        return {"ok": True, "vendor": connection.vendor}
    finally:
        connection.close()  # this thread's connection (or back to the pool); the next check opens one


def _check_broker(budget: float) -> dict[str, Any]:
    from facade.celery import app

    options = {
        **(app.conf.broker_transport_options or {}),
        # Redis: no connect or read may outlast the check (other transports ignore these).
        "socket_connect_timeout": budget,
        "socket_timeout": budget,
    }
    with app.connection_for_write(connect_timeout=budget, transport_options=options) as conn:
        conn.ensure_connection(max_retries=1, timeout=budget)
        transport = conn.transport_cls
    return {"ok": True, "transport": str(transport)}


def _check_channel_layer(budget: float) -> dict[str, Any]:
    layer = get_channel_layer()
    if layer is None:
        raise RuntimeError("no channel layer configured")

    async def roundtrip() -> None:
        already = asyncio.all_tasks()
        token = uuid.uuid4().hex
        await layer.send(_CHANNEL, {"type": "healthz.ping", "token": token})
        while (await layer.receive(_CHANNEL)).get("token") != token:
            pass  # an earlier check's ping
        # What the layer started meanwhile (channels_redis clears its in-flight copy of the
        # message) finishes before the loop closes, or it would leave a key behind in Redis.
        started = asyncio.all_tasks() - already
        if started:
            await asyncio.wait(started)

    # A loop of this thread's own: the check shares no lock, loop or connection with the server's.
    asyncio.run(asyncio.wait_for(roundtrip(), budget))
    return {"ok": True, "backend": type(layer).__name__}


CHECKS: dict[str, Check] = {
    "database": _check_database,
    "broker": _check_broker,
    "channel_layer": _check_channel_layer,
}


class _Slot:
    """The check of one dependency under way, if any."""

    future: Future[dict[str, Any]] | None = None


# One slot per dependency: bounded by CHECKS, never grown.
_running: dict[str, _Slot] = {name: _Slot() for name in CHECKS}
_running_lock = threading.Lock()


def _run(check: Check, budget: float) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        result = check(budget)
    except Exception as exc:  # any failure means "down", reported by type only
        result = {"ok": False, "error": type(exc).__name__}
    result["ms"] = round((time.perf_counter() - started) * 1000, 1)
    return result


def _started(name: str, budget: float) -> Future[dict[str, Any]]:
    """The check of `name` under way, started now unless one still is."""
    with _running_lock:
        slot = _running[name]
        future = slot.future
        if future is None or future.done():
            future = slot.future = Future()
            check = CHECKS[name]
            # A daemon thread: one stuck in a dependency's connect never holds up the server's exit.
            threading.Thread(
                target=lambda: future.set_result(_run(check, budget)), name=f"healthz-{name}", daemon=True
            ).start()
        return future


def check_all(budget: float) -> dict[str, dict[str, Any]]:
    """Every dependency's state, in at most about `budget` seconds."""
    started = time.perf_counter()
    deadline = time.monotonic() + budget
    futures = {name: _started(name, budget) for name in CHECKS}
    results: dict[str, dict[str, Any]] = {}
    for name, future in futures.items():
        try:
            results[name] = dict(future.result(timeout=max(0.0, deadline - time.monotonic())))
        except FutureTimeout:
            waited = round((time.perf_counter() - started) * 1000, 1)
            results[name] = {"ok": False, "error": "TimeoutError", "ms": waited}
    return results


@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    budget = float(settings.FACADE_HEALTH_TIMEOUT)
    results = check_all(budget)
    healthy = all(result["ok"] for result in results.values())
    body = {"status": "ok" if healthy else "down", "timeout_s": budget, "checks": results}
    # The model server on a line of its own (issue 29): down, it never makes the site unhealthy —
    # the run loop still answers honestly without it.  Read from the cache, never probed here.
    body["model"] = model_health.state()
    return JsonResponse(body, status=200 if healthy else 503)
