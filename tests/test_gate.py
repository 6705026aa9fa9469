"""Issue 10, the abuse load: what anonymous callers can make the server do is refused or queued
in front of Django (facade/gate.py), so a flood of refused requests does not take a chatting
customer's share of the server.  These drive the gate as daphne does, with ASGI messages, in
front of the real Django application; bench/abuse.py measures what it buys."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pytest
from django.core.asgi import get_asgi_application
from django.core.cache import cache, caches

from conftest import TenantWorld
from facade.gate import RequestGate
from facade.ratelimit import SpentWindows
from facade.tenancy.models import Customer
from ledger.models import LedgerEvent

ADDRESS = "203.0.113.7"
OTHER = "203.0.113.8"


class Recorder:
    """The application behind the gate, counting the requests that reached it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.reached: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.reached.append(scope["path"])
        await self.app(scope, receive, send)


def http_scope(method: str, path: str, headers: list[tuple[bytes, bytes]], query: bytes = b"") -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "headers": [(b"host", b"localhost"), *headers],
        "client": ("127.0.0.1", 40000),
        "server": ("localhost", 80),
    }


async def call(app: Any, scope: dict[str, Any], body: bytes = b"") -> tuple[int, dict[str, str], dict[str, Any]]:
    """One request through `app`; status, headers and the JSON body.  The body is handed over
    only if the application asks for it."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if pending:
            return pending.pop()
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    payload = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], headers, json.loads(payload) if payload else {}


def json_headers(address: str = ADDRESS, *extra: tuple[bytes, bytes]) -> list[tuple[bytes, bytes]]:
    return [(b"content-type", b"application/json"), (b"x-forwarded-for", address.encode()), *extra]


@pytest.fixture
def gated(settings: Any) -> tuple[RequestGate, Recorder]:
    cache.clear()
    settings.FACADE_TRUSTED_PROXIES = ["127.0.0.1"]
    recorder = Recorder(get_asgi_application())
    return RequestGate(recorder), recorder


@pytest.mark.django_db
def test_a_body_over_its_views_limit_is_refused_unread_before_django(gated: tuple[RequestGate, Recorder]) -> None:
    gate, recorder = gated
    headers = json_headers(ADDRESS, (b"content-length", str(10 * 1024 * 1024).encode()))
    read: list[int] = []

    async def run() -> tuple[int, dict[str, str], dict[str, Any]]:
        scope = http_scope("POST", "/api/agents/any/sessions", headers)

        async def receive() -> dict[str, Any]:
            read.append(1)
            return {"type": "http.request", "body": b"", "more_body": False}

        sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await gate(scope, receive, send)
        start = sent[0]
        return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, json.loads(sent[1]["body"])

    status, headers_out, body = asyncio.run(run())
    assert status == 413 and body["error"] == "body_too_large" and "2048 bytes" in body["detail"]
    assert headers_out["content-type"] == "application/json" and headers_out["x-content-type-options"] == "nosniff"
    assert recorder.reached == [] and read == []  # Django never saw it, nobody read the body
    # Under the limit, the same path goes on to Django.
    small = http_scope("POST", "/api/agents/any/sessions", json_headers(ADDRESS, (b"content-length", b"2")))
    status, _h, body = asyncio.run(call(gate, small, b"{}"))
    assert recorder.reached == ["/api/agents/any/sessions"] and (status, body["error"]) == (404, "not_found")


@pytest.mark.django_db(transaction=True)
def test_an_address_whose_window_is_spent_is_refused_at_the_gate(
    gated: tuple[RequestGate, Recorder], world_a: TenantWorld, settings: Any
) -> None:
    gate, recorder = gated
    settings.FACADE_RATE_SESSION_IP = "2/3600"
    path = f"/api/agents/{world_a.agent.slug}/sessions"

    def open_from(address: str, *extra: tuple[bytes, bytes]) -> tuple[int, dict[str, str], dict[str, Any]]:
        scope = http_scope("POST", path, json_headers(address, (b"content-length", b"2"), *extra))
        return asyncio.run(call(gate, scope, b"{}"))

    assert [open_from(ADDRESS)[0] for _ in range(2)] == [201, 201]
    status, _h, body = open_from(ADDRESS)  # the view counts it and refuses: the window is spent
    assert (status, body["error"], len(recorder.reached)) == (429, "rate_limited", 3)
    customers, events = Customer.objects.count(), LedgerEvent.objects.count()
    for _ in range(5):
        status, headers, body = open_from(ADDRESS)
        assert (status, body["error"]) == (429, "rate_limited")
        assert 1 <= int(headers["retry-after"]) <= 3600 and body["retry_after"] == int(headers["retry-after"])
        assert "sessions opened" in body["detail"]
    assert len(recorder.reached) == 3  # the gate answered the five itself, from what the view decided
    assert (Customer.objects.count(), LedgerEvent.objects.count()) == (customers, events)
    # Another address is the view's to judge; so is a caller the view may not count by address
    # (a signed-in owner's session cookie, a peer's key): the gate cannot tell them apart.
    assert open_from(OTHER)[0] == 201
    open_from(ADDRESS, (b"cookie", b"sessionid=whoever"))
    open_from(ADDRESS, (b"authorization", b"Bearer nobody"))
    assert len(recorder.reached) == 6


@pytest.mark.django_db(transaction=True)
def test_searches_from_a_spent_address_are_refused_at_the_gate(
    gated: tuple[RequestGate, Recorder], world_a: TenantWorld, settings: Any
) -> None:
    gate, recorder = gated
    settings.FACADE_RATE_SEARCH_IP = "1/3600"
    scope = http_scope("GET", f"/api/agents/{world_a.agent.slug}/knowledge/search", json_headers(), b"q=hours")
    assert [asyncio.run(call(gate, dict(scope)))[0] for _ in range(4)] == [200, 429, 429, 429]
    assert len(recorder.reached) == 2


def test_public_work_waits_for_a_place_and_is_answered_503_past_the_queue(settings: Any) -> None:
    settings.FACADE_PUBLIC_CONCURRENCY = 1
    settings.FACADE_PUBLIC_QUEUE = 1
    started: list[str] = []

    async def run() -> list[int]:
        gate_open = asyncio.Event()

        async def slow(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["path"].endswith("/search"):
                started.append(scope["query_string"].decode())
                await gate_open.wait()
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"{}"})

        gate = RequestGate(slow)

        def search(n: int) -> dict[str, Any]:
            return http_scope("GET", "/api/agents/any/knowledge/search", json_headers(), f"q={n}".encode())

        first = asyncio.create_task(call(gate, search(1)))
        second = asyncio.create_task(call(gate, search(2)))
        await asyncio.sleep(0.05)
        assert started == ["q=1"]  # one place: the second waits for it
        busy = await call(gate, search(3))  # one waiting already: the queue is full
        assert busy[2]["error"] == "server_busy" and busy[1]["retry-after"] == "1"
        # An owner's page or a message is not public work: it does not wait for a place.
        other = await asyncio.wait_for(call(gate, http_scope("GET", "/healthz", [])), 5)
        gate_open.set()
        done = await asyncio.gather(first, second)
        assert started == ["q=1", "q=2"]
        return [busy[0], other[0], *(d[0] for d in done)]

    assert asyncio.run(run()) == [503, 200, 200, 200]


def test_the_redis_pool_is_the_processes_not_each_threads() -> None:
    """Django makes a cache object per thread and each request runs in a thread of its own:
    a pool per object was a new connection per request."""
    clients = []

    def grab() -> None:
        clients.append(caches["default"]._cache.get_client(write=True))  # type: ignore[attr-defined]

    threads = [threading.Thread(target=grab) for _ in range(3)]
    for thread in threads:
        thread.start()
        thread.join()
    assert len(clients) == 3 and clients[0] is clients[1] is clients[2]


def test_the_spent_windows_are_bounded_ended_ones_first() -> None:
    spent = SpentWindows(3)
    now = time.time()
    spent.remember("ip", "a", now - 1)  # already over
    spent.remember("ip", "b", now + 60)
    spent.remember("ip", "c", now + 60)
    spent.remember("ip", "d", now + 60)  # over the bound: the ended window goes first
    assert len(spent) == 3 and spent.until("ip", "a") is None and spent.until("ip", "b") == now + 60
    spent.remember("ip", "e", now + 60)  # nothing has ended: the oldest goes
    assert len(spent) == 3 and spent.until("ip", "b") is None and spent.until("ip", "e") == now + 60
    spent.reset()
    assert len(spent) == 0
