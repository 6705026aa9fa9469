"""Redis away for a while, against real processes: a redis-server of the test's own (stopped and
started again by the test) behind a Daphne serving the real application on the test database.

What the customer sees is asserted, and what is stored: during the outage a message is refused
with a JSON 503 `temporarily_unavailable` and a Retry-After over HTTP, and with an error frame
over the WebSocket (which stays open: no 1011, no reconnect loop); sent again by its
client_message_id once Redis is back, every message typed ends with exactly one stored reply."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from asgiref.sync import async_to_sync
from channels_redis.core import RedisChannelLayer
from redis_support import OwnRedis, own_redis, turns_of
from test_chat_browser import daphne, demo_seeded
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from facade.dialogue.push import PUSH_TYPE, session_group

pytestmark = pytest.mark.django_db(transaction=True)

WAIT = 90  # seconds for a turn's frames or an answer: a bound on a hang (the first turn loads the guard), not a speed


class Customer:
    """One browser's worth of cookies against the server, over HTTP and the WebSocket."""

    def __init__(self, site: str) -> None:
        self.site = site
        self.http = httpx.Client(base_url=site, headers={"Origin": site}, timeout=WAIT)
        assert self.http.get("/c/demo-shop/").status_code == 200  # the CSRF cookie

    def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        return self.http.post(path, json=body, headers={"X-CSRFToken": self.http.cookies.get("csrftoken") or ""})

    def open_session(self) -> str:
        response = self.post("/api/agents/demo-shop/sessions", {})
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    def socket(self, session_id: str) -> ClientConnection:
        cookie = "; ".join(f"{name}={value}" for name, value in self.http.cookies.items())
        ws_url = self.site.replace("http://", "ws://") + f"/ws/sessions/{session_id}/"
        return connect(ws_url, additional_headers={"Origin": self.site, "Cookie": cookie}, open_timeout=WAIT)


def frame_of(ws: ClientConnection, kind: str, timeout: float = WAIT) -> dict[str, Any]:
    """The next frame of type `kind` (progress and delta frames on the way are skipped)."""
    deadline = time.monotonic() + timeout
    while True:
        frame = json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
        if frame["type"] == kind:
            return dict(frame)
        assert frame["type"] in {"progress", "delta"}, frame


def still_open(ws: ClientConnection, seconds: float) -> None:
    """Nothing arrives for `seconds` and the connection is not closed meanwhile."""
    try:
        frame = ws.recv(timeout=seconds)
    except TimeoutError:
        return
    except ConnectionClosed as exc:
        pytest.fail(f"the WebSocket was closed during the outage: {exc.rcvd}")
    pytest.fail(f"unexpected frame during the outage: {frame!r}")


@pytest.fixture
def outage_site(transactional_db: Any, tmp_path: Path) -> Any:
    demo_seeded()
    with own_redis(tmp_path) as redis, daphne(tmp_path, REDIS_URL=redis.url) as site:
        yield site, redis, tmp_path / "daphne.log"


def test_http_messages_during_an_outage_get_a_json_503_and_are_answered_once_when_sent_again(
    outage_site: tuple[str, OwnRedis, Path],
) -> None:
    site, redis, log = outage_site
    customer = Customer(site)
    session_id = customer.open_session()
    first = customer.post(f"/api/sessions/{session_id}/messages", {"text": "hello", "client_message_id": "c-before"})
    assert first.status_code == 201, first.text

    redis.stop()
    typed = [f"c-during-{n}" for n in range(3)]
    for cid in typed:
        refused = customer.post(
            f"/api/sessions/{session_id}/messages", {"text": f"opening hours? {cid}", "client_message_id": cid}
        )
        assert refused.status_code == 503, refused.text
        assert refused.headers["content-type"].startswith("application/json")
        assert refused.json()["error"] == "temporarily_unavailable"
        assert int(refused.headers["Retry-After"]) == refused.json()["retry_after"] >= 1
    # Opening a session and reading the history do not need Redis (a local limiter counts opens).
    assert customer.http.get(f"/api/sessions/{session_id}/messages").status_code == 200
    assert Customer(site).open_session()
    principal, replies = turns_of(session_id)
    assert [cid for cid, _status in principal] == ["c-before"]  # a refusal stores nothing

    redis.start()
    reply_ids = {}
    for cid in typed:  # what the page does: the same text, the same client_message_id
        body = {"text": f"opening hours? {cid}", "client_message_id": cid}
        answered = customer.post(f"/api/sessions/{session_id}/messages", body)
        assert answered.status_code == 201, answered.text
        assert answered.json()["reply"]["text"]
        reply_ids[cid] = answered.json()["reply"]["id"]
        again = customer.post(f"/api/sessions/{session_id}/messages", body)  # a second re-send
        assert again.status_code == 200 and again.json()["duplicate"] is True
        assert again.json()["reply"]["id"] == reply_ids[cid]

    principal, replies = turns_of(session_id)
    assert [cid for cid, _status in principal] == ["c-before", *typed]
    assert {status for _cid, status in principal} == {"completed"}
    assert replies == len(principal)  # exactly one reply each
    assert "Traceback" not in log.read_text(errors="replace")


def test_the_websocket_answers_an_outage_with_an_error_frame_and_stays_open(
    outage_site: tuple[str, OwnRedis, Path],
) -> None:
    site, redis, log = outage_site
    customer = Customer(site)
    session_id = customer.open_session()
    with customer.socket(session_id) as ws:
        assert frame_of(ws, "history")["messages"] == []
        ws.send(json.dumps({"type": "message", "text": "hello", "client_message_id": "w-before"}))
        assert frame_of(ws, "reply")["reply"]["text"]

        redis.stop()
        ws.send(json.dumps({"type": "message", "text": "are you open on sunday?", "client_message_id": "w-during"}))
        error = frame_of(ws, "error")
        assert error["code"] == "temporarily_unavailable"
        assert error["client_message_id"] == "w-during" and error["retry_after"] >= 1
        still_open(ws, 4)  # was: closed with 1011 about a second after connecting, again and again

        # A connection made during the outage gets its history and stays open too.
        with customer.socket(session_id) as during:
            assert len(frame_of(during, "history")["messages"]) == 2
            still_open(during, 3)

        redis.start()
        ws.send(json.dumps({"type": "message", "text": "are you open on sunday?", "client_message_id": "w-during"}))
        reply = frame_of(ws, "reply")
        assert reply["client_message_id"] == "w-during" and reply["duplicate"] is False and reply["reply"]["text"]
        ws.send(json.dumps({"type": "message", "text": "are you open on sunday?", "client_message_id": "w-during"}))
        again = frame_of(ws, "reply")
        assert again["duplicate"] is True and again["reply"]["id"] == reply["reply"]["id"]

        # The connection rejoined its session's group: a push from another process reaches it
        # again (the restarted Redis had forgotten the membership).
        layer = RedisChannelLayer(hosts=[redis.url], prefix="facade")
        frame = {"type": "request", "request": None, "marker": uuid.uuid4().hex}
        deadline = time.monotonic() + WAIT
        while True:
            async_to_sync(layer.group_send)(session_group(session_id), {"type": PUSH_TYPE, "frame": frame})
            try:
                pushed = json.loads(ws.recv(timeout=1))
            except TimeoutError:
                assert time.monotonic() < deadline, "no push reached the connection after Redis came back"
                continue
            assert pushed == frame
            break

    principal, replies = turns_of(session_id)
    assert [cid for cid, _status in principal] == ["w-before", "w-during"]
    assert replies == 2
    text = log.read_text(errors="replace")
    assert "Task was destroyed but it is pending" not in text
    assert "Traceback" not in text  # was: the layer's ConnectionError ending each connection


# --- the limits while Redis is away, in this process --------------------------------------


@pytest.fixture
def redis_away(settings: Any) -> Any:
    """The cache pointed at a port where nothing listens (a stopped Redis)."""
    from ports import free_port

    from facade import dependencies
    from facade.ratelimit import forget_spent

    settings.CACHES = {
        "default": {"BACKEND": "facade.cache.RedisCache", "LOCATION": f"redis://127.0.0.1:{free_port()}/0"}
    }
    forget_spent()
    dependencies.forget()
    yield settings
    forget_spent()
    dependencies.forget()


def test_while_redis_is_away_messages_are_refused_and_opens_are_counted_in_this_process(redis_away: Any) -> None:
    from facade import dependencies
    from facade.dialogue.ratelimit import message_rate_check
    from facade.errors import ApplicationError
    from facade.ratelimit import anonymous_rate_check

    with pytest.raises(ApplicationError) as refused:
        message_rate_check(customer_id="c-1", ip="10.9.9.9")
    assert refused.value.code == "temporarily_unavailable"
    assert refused.value.http_status == 503 and refused.value.retry_after

    redis_away.FACADE_RATE_SESSION = "2/60"
    redis_away.FACADE_RATE_SESSION_IP = "100/60"
    assert anonymous_rate_check("session", caller="c-1", ip="10.9.9.9") is None
    assert anonymous_rate_check("session", caller="c-1", ip="10.9.9.9") is None
    limited = anonymous_rate_check("session", caller="c-1", ip="10.9.9.9")  # the local count holds
    assert limited is not None and limited.scope == "session:caller"
    assert anonymous_rate_check("session", caller="c-2", ip="10.9.9.9") is None  # per caller, as ever
    assert dependencies.down() == [dependencies.REDIS]
