"""Issue 16, point 2: `/healthz` answers while chat WebSockets are open, and answers within its
bound, with the dependency marked down, when a dependency is unreachable or silent.

Against real daphne processes (tests/test_chat_browser.py's `daphne`) on the test database and
Redis.  A "silent" server is a socket that listens and never accepts: connecting succeeds and
nothing ever answers, as a hung Redis or PostgreSQL would.  The waits are bounds that catch a
hang (HANG_S, well above FACADE_HEALTH_TIMEOUT), not speed assertions."""

from __future__ import annotations

import io
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.conf import settings
from django.core.management import call_command
from ports import free_port
from test_chat_browser import daphne
from websockets.sync.client import connect
from websockets.typing import Origin

from facade import health

pytestmark = pytest.mark.slow

HANG_S = 10.0  # /healthz not answering within this is a hang (its own bound is 2 s per check)


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port where connections are taken and never answered."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    try:
        yield int(listener.getsockname()[1])
    finally:
        listener.close()


def healthz(site: str) -> httpx.Response:
    try:
        return httpx.get(f"{site}/healthz", timeout=HANG_S)
    except httpx.TimeoutException:
        pytest.fail(f"/healthz did not answer within {HANG_S:.0f} s")


@pytest.fixture(scope="module")
def server(django_db_setup: Any, tmp_path_factory: Any) -> Iterator[str]:
    with daphne(tmp_path_factory.mktemp("daphne")) as url:
        yield url


@pytest.fixture
def shop(server: str, transactional_db: Any) -> str:
    """The seeded demo shop, committed so that the server process sees it."""
    call_command("seed_demo", stdout=io.StringIO())
    return server


@contextmanager
def open_chat(site: str, client: httpx.Client) -> Iterator[Any]:
    """A customer's session and its chat WebSocket, past the history frame."""
    opened = client.post(f"{site}/api/agents/demo-shop/sessions", json={})
    assert opened.status_code == 201, opened.text
    cookie = "; ".join(f"{name}={value}" for name, value in client.cookies.items())
    ws_url = site.replace("http://", "ws://") + f"/ws/sessions/{opened.json()['id']}/"
    with connect(ws_url, origin=Origin(site), additional_headers={"Cookie": cookie}, open_timeout=HANG_S) as ws:
        first = json.loads(ws.recv(timeout=HANG_S))
        assert first["type"] == "history", first
        yield ws


def assert_all_ok(response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "ok", body
    assert {name for name, check in body["checks"].items() if check["ok"]} == {"database", "broker", "channel_layer"}


def test_healthz_answers_with_idle_chat_websockets_open(shop: str) -> None:
    with httpx.Client() as first, httpx.Client() as second:
        with open_chat(shop, first) as idle, open_chat(shop, second) as other:
            assert_all_ok(healthz(shop))
            assert_all_ok(healthz(shop))  # and again: nothing the first check left holds the second up
            # The sockets were not disturbed: each still answers a message.
            for ws in (idle, other):
                question = {"type": "message", "text": "What are your opening hours?", "client_message_id": "h-1"}
                ws.send(json.dumps(question))
                frames: list[dict[str, Any]] = []
                while not frames or frames[-1]["type"] not in ("reply", "error"):
                    frames.append(json.loads(ws.recv(timeout=30)))
                assert frames[-1]["type"] == "reply" and frames[-1]["reply"]["text"], frames[-1]
        assert_all_ok(healthz(shop))


@pytest.mark.parametrize("redis", ["silent", "refused"])
def test_healthz_answers_within_its_bound_when_redis_is_unreachable(
    django_db_setup: Any, tmp_path: Path, silent_port: int, redis: str
) -> None:
    port = silent_port if redis == "silent" else free_port()
    with daphne(tmp_path, REDIS_URL=f"redis://127.0.0.1:{port}/0") as site:
        for _ in range(2):  # the second finds the first's checks of Redis possibly still waiting
            response = healthz(site)
            assert response.status_code == 503, response.text
            body = response.json()
            assert body["status"] == "down"
            checks = body["checks"]
            assert checks["database"]["ok"] is True, checks
            assert checks["broker"]["ok"] is False and checks["broker"]["error"], checks
            assert checks["channel_layer"]["ok"] is False and checks["channel_layer"]["error"], checks


def test_healthz_answers_within_its_bound_when_the_database_is_silent(
    django_db_setup: Any, tmp_path: Path, silent_port: int
) -> None:
    db = settings.DATABASES["default"]
    silent = f"postgres://{db['USER']}@127.0.0.1:{silent_port}/{db['NAME']}"
    with daphne(tmp_path, DATABASE_URL=silent) as site:
        response = healthz(site)
    assert response.status_code == 503, response.text
    checks = response.json()["checks"]
    assert checks["database"] == {"ok": False, "error": "TimeoutError", "ms": checks["database"]["ms"]}, checks
    assert checks["broker"]["ok"] is True and checks["channel_layer"]["ok"] is True, checks


def test_a_check_still_running_is_waited_for_not_started_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A dependency that hangs holds one thread, however often /healthz is asked."""
    release = threading.Event()
    calls: list[int] = []

    def hanging(budget: float) -> dict[str, Any]:
        calls.append(1)
        release.wait(30)
        return {"ok": True}

    monkeypatch.setitem(health.CHECKS, "database", hanging)
    monkeypatch.setitem(health.CHECKS, "broker", lambda budget: {"ok": True, "transport": "test"})
    monkeypatch.setitem(health.CHECKS, "channel_layer", lambda budget: {"ok": True, "backend": "test"})
    monkeypatch.setattr(health, "_running", {name: health._Slot() for name in health.CHECKS})
    try:
        for _ in range(3):
            results = health.check_all(0.2)
            assert results["database"]["ok"] is False and results["database"]["error"] == "TimeoutError"
            assert results["broker"]["ok"] is True and results["channel_layer"]["ok"] is True
        assert len(calls) == 1
    finally:
        release.set()
    future = health._running["database"].future
    assert future is not None
    future.result(timeout=5)
    assert health.check_all(1.0)["database"]["ok"] is True and len(calls) == 2
