"""The chat WebSocket against the real ASGI application (origin check, auth middleware, routing)
with the Redis channel layer: who may connect, what a turn sends, and every refusal keeping the
connection open."""

from __future__ import annotations

import datetime as dt
import gc
import itertools
import json
import threading
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.http import HttpResponse
from django.test import Client
from django.utils import timezone

from conftest import TenantWorld
from facade.asgi import application
from facade.dialogue import consumers
from facade.dialogue.models import DialogueSession, Message, Rating, Run, RunStatus, Span, TrustChange
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.base import ModelReply, ToolCall
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.services import session_open
from facade.tenancy.identity import customer_cookie_name, set_customer_cookie
from facade.tenancy.models import Customer, PeerCredential
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from facade.tenancy.services import agent_owner_remove, customer_create, peer_key_create
from knowledge.schemas import SourceIn
from knowledge.services import entry_propose
from ledger.models import LedgerEvent

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = (b"origin", b"http://localhost")
NOT_FOUND = 4404  # the one close code of a session that is not the caller's, whether or not it exists
WAIT = 10  # seconds for a frame: a turn touches the database a good few times
_ips = itertools.count(1)


@pytest.fixture(autouse=True)
def _own_ip_limit(settings: Any) -> None:
    # The IP window is shared through Redis with other runs on this machine; the per-test IPs
    # below keep them apart, this keeps a busy test clear of it.
    settings.FACADE_RATE_IP = "1000/60"


@pytest.fixture(autouse=True)
def _site_origin(settings: Any) -> None:
    # The site these tests' pages come from: the WebSocket's Origin is matched exactly.
    settings.FACADE_PUBLIC_URL = "http://localhost"
    settings.CSRF_TRUSTED_ORIGINS = []


# --- helpers ------------------------------------------------------------------------------


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    async_to_sync(scenario)()
    # The communicator stops Channels from closing database connections (to spare the test's
    # own); the turn threads' connections are closed when their threads end and their locals
    # are collected — so the turn pool is wound down after each scenario.
    from facade.dialogue.consumers import turn_executor

    turn_executor().shutdown(wait=True)
    turn_executor.cache_clear()
    gc.collect()


def customer_of(world: TenantWorld) -> tuple[Customer, str]:
    """A customer and the cookie header the server would have issued to its browser."""
    customer = customer_create(tenant=world.tenant)
    response = HttpResponse()
    set_customer_cookie(response, world.tenant, customer)
    name = customer_cookie_name(world.tenant)
    return customer, f"{name}={response.cookies[name].value}"


def customer_session(world: TenantWorld) -> tuple[DialogueSession, str]:
    customer, cookie = customer_of(world)
    return session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer), cookie


def signed_in(user: Any) -> str:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}"


def owner_session(world: TenantWorld) -> tuple[DialogueSession, str]:
    return session_open(agent=world.agent, audience=Audience.OWNER, user=world.owner), signed_in(world.owner)


def teach(world: TenantWorld, title: str, body: str) -> Any:
    return entry_propose(
        agent=world.agent,
        title=title,
        body=body,
        actor=Actor.human(world.owner.pk),
        source=SourceIn(type="owner_dialogue", ref="chat:1", version="1"),
    )


def say(text: str) -> ModelReply:
    return ModelReply(text=text, prompt_tokens=10, completion_tokens=5)


def call(name: str, arguments: dict[str, Any]) -> ModelReply:
    return ModelReply(
        tool_calls=[ToolCall(id=f"c-{name}", name=name, arguments=json.dumps(arguments))],
        prompt_tokens=10,
        completion_tokens=5,
    )


class Chat:
    """A WebSocket client of one session."""

    def __init__(self, session_id: Any, cookie: str = "", origin: tuple[bytes, bytes] | None = ORIGIN) -> None:
        headers = [h for h in (origin, (b"cookie", cookie.encode()) if cookie else None) if h is not None]
        self.ws = WebsocketCommunicator(application, f"/ws/sessions/{session_id}/", headers=headers)
        self.ws.scope["client"] = (f"10.9.{next(_ips) % 250}.{threading.get_ident() % 250}", 50000)

    async def open(self) -> dict[str, Any]:
        connected, _ = await self.ws.connect(timeout=WAIT)
        assert connected
        return await self.next()

    async def refused_with(self) -> int | None:
        """Connect, expecting the server to accept and close at once: the close code."""
        connected, code = await self.ws.connect(timeout=WAIT)
        if not connected:
            return code
        closing = await self.ws.receive_output(timeout=WAIT)
        assert closing["type"] == "websocket.close", closing
        return closing.get("code")

    async def send(self, frame: Any) -> None:
        await self.ws.send_to(text_data=frame if isinstance(frame, str) else json.dumps(frame))

    async def next(self) -> dict[str, Any]:
        return await self.ws.receive_json_from(timeout=WAIT)

    async def until(self, kind: str) -> list[dict[str, Any]]:
        """Frames up to and including the first of `kind`."""
        frames = [await self.next()]
        while frames[-1]["type"] != kind:
            frames.append(await self.next())
        return frames

    async def ask(self, text: str, client_message_id: str) -> list[dict[str, Any]]:
        await self.send({"type": "message", "text": text, "client_message_id": client_message_id})
        return await self.until("reply")

    async def close(self) -> None:
        assert await self.ws.receive_nothing(timeout=0.2)
        await self.ws.disconnect()


# --- who may connect ----------------------------------------------------------------------


def test_a_foreign_or_missing_origin_is_refused(world_a: TenantWorld) -> None:
    session, cookie = customer_session(world_a)

    async def scenario() -> None:
        foreign = Chat(session.pk, cookie, origin=(b"origin", b"https://evil.example"))
        assert (await foreign.ws.connect(timeout=WAIT))[0] is False
        assert (await Chat(session.pk, cookie, origin=None).ws.connect(timeout=WAIT))[0] is False
        mine = Chat(session.pk, cookie)
        assert (await mine.open())["type"] == "history"
        await mine.close()

    run(scenario)


@pytest.mark.parametrize(
    "origin",
    [
        "http://127.0.0.1:9999",  # another port on the same machine is another site
        "https://127.0.0.1",  # so is https next to http …
        "https://127.0.0.1:8102",
        "http://[::1]:8102",  # … and another name for the same machine
        "http://localhost:8102",
        "http://127.0.0.1",
        "http://shop.example",
        "http://127.0.0.1:8102/chat",  # not an origin at all
        "null",
        "",
    ],
)
def test_only_the_sites_exact_origin_may_open_the_websocket(world_a: TenantWorld, settings: Any, origin: str) -> None:
    """The owner's cookies go along with every page's WebSocket, so the Origin is matched on
    scheme, host and port; a refused handshake reaches no consumer (nothing is taught)."""
    settings.FACADE_PUBLIC_URL = "http://127.0.0.1:8102"
    settings.CSRF_TRUSTED_ORIGINS = ["https://shop.example"]
    session, cookie = owner_session(world_a)

    async def scenario() -> None:
        foreign = Chat(session.pk, cookie, origin=(b"origin", origin.encode()))
        assert await foreign.ws.connect(timeout=WAIT) == (False, 1000), origin

    run(scenario)


@pytest.mark.parametrize("origin", ["http://127.0.0.1:8102", "HTTP://127.0.0.1:8102", "https://shop.example:443"])
def test_the_sites_own_origins_open_the_websocket(world_a: TenantWorld, settings: Any, origin: str) -> None:
    settings.FACADE_PUBLIC_URL = "http://127.0.0.1:8102/"
    settings.CSRF_TRUSTED_ORIGINS = ["https://shop.example"]
    session, cookie = owner_session(world_a)

    async def scenario() -> None:
        chat = Chat(session.pk, cookie, origin=(b"origin", origin.encode()))
        assert (await chat.open())["type"] == "history"
        await chat.close()

    run(scenario)


def test_a_websocket_to_an_unrouted_path_is_denied_cleanly(world_a: TenantWorld) -> None:
    _, cookie = customer_session(world_a)

    async def scenario() -> None:
        for path in ("/ws/nothing/", "/ws/sessions/not-a-uuid/", "/"):
            ws = WebsocketCommunicator(application, path, headers=[ORIGIN, (b"cookie", cookie.encode())])
            assert await ws.connect(timeout=WAIT) == (False, 1000), path

    run(scenario)


def test_only_the_principal_connects(world_a: TenantWorld, world_b: TenantWorld) -> None:
    owned, owner_cookie = owner_session(world_a)
    mine, my_cookie = customer_session(world_a)
    _, other_cookie = customer_of(world_a)
    _, foreign_tenant_cookie = customer_of(world_b)
    issued = peer_key_create(agent=world_a.agent, name="partner", actor=Actor.human(world_a.owner.pk))
    peer = session_open(
        agent=world_a.agent, audience=Audience.PEER, peer=PeerCredential.objects.get(pk=issued.credential_id)
    )
    member_cookie = signed_in(world_a.member)
    other_owner_cookie = signed_in(world_b.owner)

    async def scenario() -> None:
        # Owner sessions: the anonymous, another member and another tenant's owner are refused.
        for cookie in ("", member_cookie, other_owner_cookie, my_cookie):
            assert await Chat(owned.pk, cookie).refused_with() == NOT_FOUND, cookie
        # Customer sessions: another customer's cookie, a cookie of another tenant, none at all,
        # and even the agent's owner.
        for cookie in (other_cookie, foreign_tenant_cookie, "", owner_cookie, f"{my_cookie}x"):
            assert await Chat(mine.pk, cookie).refused_with() == NOT_FOUND, cookie
        # Peers don't use the WebSocket, whatever cookies come along.
        assert await Chat(peer.pk, f"{owner_cookie}; {my_cookie}").refused_with() == NOT_FOUND
        assert await Chat("6f1c3c8e-1111-4222-8333-944455556666", my_cookie).refused_with() == NOT_FOUND
        # The principals themselves are let in.
        for session_id, cookie in ((owned.pk, owner_cookie), (mine.pk, my_cookie)):
            chat = Chat(session_id, cookie)
            assert (await chat.open())["type"] == "history"
            await chat.close()

    run(scenario)


def test_an_unknown_session_and_someone_elses_are_refused_alike(world_a: TenantWorld, world_b: TenantWorld) -> None:
    """Nothing the server sends tells a stranger which session ids exist: an unknown id, another
    customer's session and another tenant's owner session get the same handshake and close."""
    mine, _ = customer_session(world_a)
    owned, _ = owner_session(world_b)
    _, stranger = customer_of(world_a)

    async def seen_by_stranger(session_id: Any) -> list[dict[str, Any]]:
        chat = Chat(session_id, stranger)
        connected, _ = await chat.ws.connect(timeout=WAIT)
        frames = [{"connected": connected}, await chat.ws.receive_output(timeout=WAIT)]
        assert await chat.ws.receive_nothing(timeout=0.2)
        return frames

    async def scenario() -> None:
        unknown = await seen_by_stranger(uuid.uuid4())
        assert unknown == [{"connected": True}, {"type": "websocket.close", "code": NOT_FOUND}]
        for session_id in (mine.pk, owned.pk):
            assert await seen_by_stranger(session_id) == unknown

    run(scenario)


def test_connecting_sends_the_history(world_a: TenantWorld) -> None:
    session, cookie = customer_session(world_a)
    first = turn_handle(session=session, text="Hello", client_message_id="m-1")
    provider = ScriptedProvider.of(call("request_handoff", {"reason": "a cake"}), say("Someone will call."))
    second = turn_handle(session=session, text="a cake please", client_message_id="m-2", provider=provider)

    async def scenario() -> None:
        chat = Chat(session.pk, cookie)
        history = await chat.open()
        assert history["type"] == "history" and history["audience"] == "customer" and history["status"] == "open"
        assert [(m["role"], m["client_message_id"]) for m in history["messages"]] == [
            ("principal", "m-1"),
            ("agent", ""),
            ("principal", "m-2"),
            ("agent", ""),
        ]
        assert [m["id"] for m in history["messages"]] == [
            first.message.pk,
            first.reply.pk,
            second.message.pk,
            second.reply.pk,
        ]
        assert history["requests"] == [second.request] and history["rated"] is False
        await chat.close()

    run(scenario)


# --- a turn -------------------------------------------------------------------------------


def test_a_question_is_answered_from_approved_knowledge_with_progress_deltas_and_citations(
    world_a: TenantWorld,
) -> None:
    entry = teach(
        world_a, "Opening hours", "The shop is open Monday to Saturday, nine in the morning to six in the evening."
    )
    session, cookie = customer_session(world_a)

    async def scenario() -> None:
        chat = Chat(session.pk, cookie)
        await chat.open()
        frames = await chat.ask("When is the shop open?", "q-1")
        kinds = [f["type"] for f in frames]
        progress = [f["state"] for f in frames if f["type"] == "progress"]
        assert progress[0] == "thinking" and "searching_knowledge" in progress and progress[-1] == "done"
        assert kinds.index("delta") > max(i for i, k in enumerate(kinds) if k == "progress")  # streamed after the run
        reply = frames[-1]
        assert reply["client_message_id"] == "q-1" and reply["duplicate"] is False and reply["request"] is None
        assert reply["message"]["text"] == "When is the shop open?" and reply["message"]["client_message_id"] == "q-1"
        deltas = [f for f in frames if f["type"] == "delta"]
        assert len(deltas) >= 2 and all(d["client_message_id"] == "q-1" for d in deltas)
        assert "".join(d["text"] for d in deltas) == reply["reply"]["text"]
        assert "Monday to Saturday" in reply["reply"]["text"]
        assert reply["reply"]["citations"] == [
            {"entry_id": entry.entry_id, "version": entry.number, "title": "Opening hours"}
        ]
        assert reply["reply"]["stop_reason"] == ""
        await chat.close()

        # A reconnect resumes from the stored history: each message once.
        again = Chat(session.pk, cookie)
        history = await again.open()
        assert [m["role"] for m in history["messages"]] == ["principal", "agent"]
        assert history["messages"][1]["id"] == reply["reply"]["id"]
        assert history["messages"][1]["citations"] == reply["reply"]["citations"]
        await again.close()

    run(scenario)
    stored = Message.objects.get(session=session, role="agent")
    assert stored.citations[0]["entry_id"] == entry.entry_id


def test_a_repeated_client_message_id_returns_the_stored_reply_without_a_second_run(
    world_a: TenantWorld, monkeypatch: Any
) -> None:
    provider = ScriptedProvider.of(say("We are a small bakery."))
    monkeypatch.setattr(consumers, "provider_factory", lambda agent: provider)
    session, cookie = customer_session(world_a)

    async def scenario() -> None:
        chat = Chat(session.pk, cookie)
        await chat.open()
        first = (await chat.ask("Who are you?", "same-id"))[-1]
        again = await chat.ask("Who are you?", "same-id")
        assert [f["type"] for f in again] == ["reply"]  # no progress, no deltas: nothing ran
        assert again[0]["duplicate"] is True
        assert again[0]["reply"] == first["reply"] and again[0]["message"]["id"] == first["message"]["id"]
        await chat.close()

    run(scenario)
    assert len(provider.calls) == 1
    assert Run.objects.filter(session=session).count() == 1
    assert Message.objects.filter(session=session).count() == 2


def test_a_duplicate_sent_while_the_first_turn_still_runs_waits_for_its_reply(
    world_a: TenantWorld, monkeypatch: Any
) -> None:
    """After a reconnect the page re-sends what was not acknowledged; if the first connection's
    turn is still running, the new connection waits for that reply instead of starting another."""
    release = threading.Event()

    def slow(messages: Any, tools: Any) -> ModelReply:
        release.wait(WAIT)
        return say("Here you are.")

    provider = ScriptedProvider.of(slow)
    monkeypatch.setattr(consumers, "provider_factory", lambda agent: provider)
    monkeypatch.setattr(consumers, "DUPLICATE_POLL", 0.1)
    session, cookie = customer_session(world_a)

    async def scenario() -> None:
        first = Chat(session.pk, cookie)
        await first.open()
        await first.send({"type": "message", "text": "Anything?", "client_message_id": "slow-1"})
        assert (await first.until("progress"))[-1]["state"] == "thinking"
        second = Chat(session.pk, cookie)
        await second.open()
        await second.send({"type": "message", "text": "Anything?", "client_message_id": "slow-1"})
        assert await second.ws.receive_nothing(timeout=0.5)
        release.set()
        original = (await first.until("reply"))[-1]
        resent = (await second.until("reply"))[-1]
        assert resent["duplicate"] is True and resent["reply"] == original["reply"] is not None
        await first.close()
        await second.close()

    run(scenario)
    assert Run.objects.filter(session=session).count() == 1


# --- refusals keep the connection open ----------------------------------------------------


def test_malformed_frames_are_answered_and_the_connection_keeps_working(world_a: TenantWorld, monkeypatch: Any) -> None:
    monkeypatch.setattr(consumers, "provider_factory", lambda agent: ScriptedProvider.of(say("Still here.")))
    session, cookie = customer_session(world_a)

    async def scenario() -> None:
        chat = Chat(session.pk, cookie)
        await chat.open()
        for bad in (
            "not json",
            "[1, 2]",
            '"message"',
            "null",
            {"type": "dance"},
            {"text": "no type"},
            {"type": "message", "text": 5},
            {"type": "message"},
            {"type": "rate", "stars": "5"},
            {"type": "message", "text": "hi", "client_message_id": 7},
        ):
            await chat.send(bad)
            error = await chat.next()
            assert error["type"] == "error" and error["code"] == "malformed_frame", (bad, error)
            assert error["detail"]
        await chat.ws.send_to(bytes_data=b"\x00\x01")
        assert (await chat.next())["code"] == "malformed_frame"
        reply = (await chat.ask("Are you there?", "after-errors"))[-1]
        assert reply["reply"]["text"] == "Still here."
        await chat.close()

    run(scenario)
    assert Message.objects.filter(session=session).count() == 2


def test_frames_the_http_api_would_refuse_are_refused_alike_and_the_connection_keeps_working(
    world_a: TenantWorld, monkeypatch: Any
) -> None:
    """A NUL or a lone surrogate in a message, its client_message_id or a rating's comment, and
    JSON nested past any sense: each gets an `error` frame with a code, nothing is stored, and
    the next good frame is answered."""
    monkeypatch.setattr(consumers, "provider_factory", lambda agent: ScriptedProvider.of(say("Still fine.")))
    session, cookie = customer_session(world_a)
    deep = "[" * 5000 + "]" * 5000

    async def scenario() -> None:
        chat = Chat(session.pk, cookie)
        await chat.open()
        for raw, code, cid in (
            ('{"type": "message", "text": "a\\u0000b", "client_message_id": "nul-1"}', "invalid_text", "nul-1"),
            ('{"type": "message", "text": "bad \\ud800 half", "client_message_id": "sur-1"}', "invalid_text", "sur-1"),
            ('{"type": "message", "text": "\\udfff", "client_message_id": "sur-2"}', "invalid_text", "sur-2"),
            ('{"type": "message", "text": "hi", "client_message_id": "c\\u0000"}', "invalid_client_message_id", None),
            ('{"type": "message", "text": "hi", "client_message_id": "\\ud83d"}', "invalid_client_message_id", None),
            (deep, "malformed_frame", None),
            (
                '{"type": "message", "text": "hi", "client_message_id": "d-1", "x": ' + deep + "}",
                "malformed_frame",
                None,
            ),
            ('{"type": "rate", "stars": 4, "comment": "good\\u0000"}', "invalid_text", None),
            ('{"type": "rate", "stars": 4, "comment": "\\ud800"}', "invalid_text", None),
        ):
            await chat.send(raw)
            error = await chat.next()
            assert (error["type"], error["code"], error.get("client_message_id")) == ("error", code, cid), raw
            assert error["detail"]
        reply = (await chat.ask("Are you there?", "after-bad-text"))[-1]
        assert reply["reply"]["text"] == "Still fine."
        await chat.send({"type": "rate", "stars": 4, "comment": "ok"})
        assert await chat.next() == {"type": "rated", "stars": 4}
        await chat.close()

    run(scenario)
    assert list(Message.objects.filter(session=session).values_list("text", flat=True).order_by("pk")) == [
        "Are you there?",
        "Still fine.",
    ]
    assert list(Rating.objects.filter(session=session).values_list("comment", flat=True)) == ["ok"]


def test_empty_and_over_long_messages_are_refused_with_the_services_codes(
    world_a: TenantWorld, settings: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(consumers, "provider_factory", lambda agent: ScriptedProvider.of(say("Fine.")))
    session, cookie = customer_session(world_a)

    async def scenario() -> None:
        chat = Chat(session.pk, cookie)
        await chat.open()
        for text, code in (
            ("", "empty_message"),
            ("  \n\t ", "empty_message"),
            ("x" * (settings.FACADE_MESSAGE_MAX_CHARS + 1), "message_too_long"),
        ):
            await chat.send({"type": "message", "text": text, "client_message_id": f"bad-{code}-{len(text)}"})
            error = await chat.next()
            assert (error["type"], error["code"], error["client_message_id"]) == (
                "error",
                code,
                f"bad-{code}-{len(text)}",
            )
        await chat.send({"type": "message", "text": "ok", "client_message_id": "x" * 65})
        assert (await chat.next())["code"] == "invalid_client_message_id"
        assert (await chat.ask("x" * settings.FACADE_MESSAGE_MAX_CHARS, "longest"))[-1]["reply"]["text"] == "Fine."
        await chat.close()

    run(scenario)
    assert Message.objects.filter(session=session).count() == 2


def test_the_customer_rate_limit_answers_with_retry_after_and_costs_no_trust(
    world_a: TenantWorld, settings: Any, monkeypatch: Any
) -> None:
    settings.FACADE_RATE_CUSTOMER = "2/3600"  # an hour: the window never turns over mid-test
    monkeypatch.setattr(consumers, "provider_factory", lambda agent: ScriptedProvider.of(say("Yes."), repeat_last=True))
    session, cookie = customer_session(world_a)

    async def scenario() -> None:
        chat = Chat(session.pk, cookie)
        await chat.open()
        for n in (1, 2):
            assert (await chat.ask(f"question {n}", f"r-{n}"))[-1]["type"] == "reply"
        await chat.send({"type": "message", "text": "question 3", "client_message_id": "r-3"})
        error = await chat.next()
        assert (error["type"], error["code"], error["client_message_id"]) == ("error", "rate_limited", "r-3")
        assert isinstance(error["retry_after"], int) and 1 <= error["retry_after"] <= 3600
        # The connection stays open: a cancel is still answered.
        await chat.send({"type": "cancel"})
        assert (await chat.next()) == {"type": "cancelling", "runs": 0}
        await chat.close()

    run(scenario)
    assert not Message.objects.filter(session=session, text="question 3").exists()
    # A refusal writes nothing but its counter (issue 10).
    assert not TrustChange.objects.filter(customer_id=session.customer_id).exists()


def test_an_expired_session_refuses_messages(world_a: TenantWorld, settings: Any) -> None:
    session, cookie = customer_session(world_a)
    DialogueSession.objects.filter(pk=session.pk).update(
        last_activity_at=timezone.now() - dt.timedelta(minutes=settings.FACADE_SESSION_IDLE_MINUTES + 1)
    )

    async def scenario() -> None:
        chat = Chat(session.pk, cookie)
        assert (await chat.open())["status"] == "open"  # idle, not yet swept
        await chat.send({"type": "message", "text": "hello?", "client_message_id": "late-1"})
        error = await chat.next()
        assert (error["code"], error["client_message_id"]) == ("session_expired", "late-1")
        # It stays expired: the consumer now refuses before the runtime is asked at all.
        await chat.send({"type": "message", "text": "hello again?", "client_message_id": "late-2"})
        assert (await chat.next())["code"] == "session_expired"
        await chat.close()

    run(scenario)
    assert DialogueSession.objects.get(pk=session.pk).status == "expired"
    assert not Message.objects.filter(session=session).exists()


# --- cancel -------------------------------------------------------------------------------


def test_cancel_stops_a_running_turn_before_its_next_step(world_a: TenantWorld, monkeypatch: Any) -> None:
    teach(world_a, "Opening hours", "Open Monday to Saturday.")
    release = threading.Event()

    def slow(messages: Any, tools: Any) -> ModelReply:
        release.wait(WAIT)  # the model is "thinking" while the customer presses Stop
        return call("search_knowledge", {"query": "opening hours"})

    provider = ScriptedProvider.of(slow, say("never said"))
    monkeypatch.setattr(consumers, "provider_factory", lambda agent: provider)
    session, cookie = customer_session(world_a)

    async def scenario() -> None:
        chat = Chat(session.pk, cookie)
        await chat.open()
        await chat.send({"type": "message", "text": "When are you open?", "client_message_id": "c-1"})
        assert (await chat.until("progress"))[-1]["state"] == "thinking"
        await chat.send({"type": "cancel"})
        assert await chat.next() == {"type": "cancelling", "runs": 1}  # handled while the turn runs
        release.set()
        frames = await chat.until("reply")
        assert "searching_knowledge" not in [f.get("state") for f in frames]
        reply = frames[-1]
        assert reply["reply"]["stop_reason"] == "cancelled" and reply["reply"]["text"] == "Stopped."
        assert reply["reply"]["citations"] == []
        await chat.close()

    run(scenario)
    assert len(provider.calls) == 1
    run_row = Run.objects.get(session=session)
    assert run_row.status == RunStatus.CANCELLED and run_row.tool_call_count == 0
    assert not Span.objects.filter(run=run_row, kind="tool").exists()


# --- owners -------------------------------------------------------------------------------


def test_an_owner_removed_while_connected_is_refused_at_the_next_message(world_a: TenantWorld) -> None:
    session, cookie = owner_session(world_a)

    async def scenario() -> None:
        chat = Chat(session.pk, cookie)
        assert (await chat.open())["audience"] == "owner"
        assert (await chat.ask("inbox", "o-1"))[-1]["reply"]["text"].startswith("Waiting for you")
        await database_sync_to_async(agent_owner_remove)(
            agent=world_a.agent, user=world_a.owner, actor=Actor.platform("t")
        )
        await chat.send({"type": "message", "text": "inbox", "client_message_id": "o-2"})
        error = await chat.next()
        assert (error["type"], error["code"], error["client_message_id"]) == ("error", "no_longer_owner", "o-2")
        await chat.close()

    run(scenario)
    assert not Message.objects.filter(session=session, client_message_id="o-2").exists()


def test_an_owner_removed_during_a_turn_has_the_owner_tool_refused(world_a: TenantWorld, monkeypatch: Any) -> None:
    def removed_then_asks(messages: Any, tools: Any) -> ModelReply:
        agent_owner_remove(agent=world_a.agent, user=world_a.owner, actor=Actor.platform("t"))
        return call("remember_lesson", {"kind": "preference", "title": "Tone", "text": "Be brief."})

    provider = ScriptedProvider.of(removed_then_asks, say("Noted."))
    monkeypatch.setattr(consumers, "provider_factory", lambda agent: provider)
    session, cookie = owner_session(world_a)

    async def scenario() -> None:
        chat = Chat(session.pk, cookie)
        await chat.open()
        await chat.ask("remember: be brief", "o-1")
        await chat.close()

    run(scenario)
    [refused] = LedgerEvent.objects.of_type("tool.refused")
    assert refused.payload["tool"] == "remember_lesson" and refused.payload["reason"] == "no_longer_owner"
    from knowledge.models import EntryVersion

    assert not EntryVersion.objects.filter(agent=world_a.agent).exists()


def test_an_owners_correction_over_the_websocket_waits_as_a_lesson_until_approved(world_a: TenantWorld) -> None:
    """The real offline model hears "we never say cheap": a pending taboo, its L1 card in the reply;
    only the owner's decision through the token flow makes it served (issue 13, Learn)."""
    from rest_framework.test import APIClient

    from approvals.models import ChangeProposal
    from knowledge.models import EntryVersion
    from knowledge.selectors import knowledge_search

    session, cookie = owner_session(world_a)
    frames: list[dict[str, Any]] = []

    async def scenario() -> None:
        chat = Chat(session.pk, cookie)
        await chat.open()
        frames.extend(await chat.ask("we never say cheap", "o-1"))
        await chat.close()

    run(scenario)
    [change] = ChangeProposal.objects.filter(agent=world_a.agent)
    reply = frames[-1]["reply"]
    assert "waits for your approval in your inbox" in reply["text"] and change.pk in reply["text"]
    assert [(c["id"], c["kind"], c["status"]) for c in reply["cards"]] == [(change.pk, "lesson", "pending")]
    [version] = EntryVersion.objects.filter(agent=world_a.agent)
    assert (version.entry.kind, version.status, version.title) == ("taboo", "pending", "Never say ‘cheap’")
    assert not knowledge_search(agent=world_a.agent, query="never say cheap", audience=Audience.CUSTOMER)

    client = APIClient()
    client.force_login(world_a.owner)
    base = f"/api/agents/{world_a.agent.slug}/changes/{change.pk}"
    token = client.post(f"{base}/authorize", {"decision": "approve"}, format="json").json()["token"]
    body = {"token": token, "decision": "approve", "expected_version": 1}
    assert client.post(f"{base}/decide", body, format="json").json()["status"] == "applied"
    version.refresh_from_db()
    assert version.status == "approved"
    found = knowledge_search(agent=world_a.agent, query="never say cheap", audience=Audience.CUSTOMER)
    assert [hit.version_id for hit in found] == [version.pk]


# --- rating -------------------------------------------------------------------------------


def test_a_customer_rates_once_and_owners_not_at_all(world_a: TenantWorld) -> None:
    session, cookie = customer_session(world_a)
    owned, owner_cookie = owner_session(world_a)

    async def scenario() -> None:
        chat = Chat(session.pk, cookie)
        await chat.open()
        for frame, code in (
            ({"type": "rate", "stars": 0}, "invalid_rating"),
            ({"type": "rate", "stars": 6}, "invalid_rating"),
            ({"type": "rate", "stars": 3, "comment": "x" * 2001}, "invalid_rating"),
        ):
            await chat.send(frame)
            assert (await chat.next())["code"] == code
        await chat.send({"type": "rate", "stars": 4, "comment": "Quick and clear."})
        assert await chat.next() == {"type": "rated", "stars": 4}
        await chat.send({"type": "rate", "stars": 5})
        assert (await chat.next())["code"] == "already_rated"
        await chat.close()
        again = Chat(session.pk, cookie)
        assert (await again.open())["rated"] is True
        await again.close()
        owner = Chat(owned.pk, owner_cookie)
        await owner.open()
        await owner.send({"type": "rate", "stars": 5})
        assert (await owner.next())["code"] == "only_customers_rate"
        await owner.close()

    run(scenario)
    rating = Rating.objects.get()
    assert (rating.session_id, rating.stars, rating.comment) == (session.pk, 4, "Quick and clear.")


def test_frames_of_a_turn_are_json_objects_with_a_type(world_a: TenantWorld) -> None:
    """Chinese text travels as it is (not \\u-escaped) and the reply frame has the documented keys."""
    session, cookie = customer_session(world_a)

    async def scenario() -> None:
        chat = Chat(session.pk, cookie)
        await chat.open()
        await chat.send({"type": "message", "text": "你好", "client_message_id": "zh-1"})
        raw = ""
        while '"type": "reply"' not in raw:
            raw = await chat.ws.receive_from(timeout=WAIT)
        assert "您好" in raw
        assert set(json.loads(raw)) == {"type", "client_message_id", "message", "reply", "request", "duplicate"}
        await chat.close()

    run(scenario)


# --- two-step sign-in holds on the owner face too ------------------------------------------


def signed_in_with_code(user: Any, device: Any) -> str:
    """A session that gave its code, as the sign-in's code step leaves it."""
    from django_otp import DEVICE_ID_SESSION_KEY

    client = Client()
    client.force_login(user)
    session = client.session
    session[DEVICE_ID_SESSION_KEY] = device.persistent_id
    session.save()
    return f"sessionid={client.cookies['sessionid'].value}"


def test_the_owner_face_holds_to_two_step_sign_in(world_a: TenantWorld) -> None:
    """As TwoStepGate holds pages and the API: an owner with an authenticator whose session never
    gave a code, or whose tenant requires one they lack, is refused with an error frame and 4401."""
    from django_otp.plugins.otp_totp.models import TOTPDevice

    session = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    before_enrolling = signed_in(world_a.owner)
    world_a.tenant.owners_require_totp = True
    world_a.tenant.save(update_fields=["owners_require_totp"])

    async def refused(cookie: str) -> tuple[dict[str, Any], int | None]:
        chat = Chat(session.pk, cookie)
        assert (await chat.ws.connect(timeout=WAIT))[0] is True
        frame = await chat.ws.receive_json_from(timeout=WAIT)
        closing = await chat.ws.receive_output(timeout=WAIT)
        assert closing["type"] == "websocket.close"
        return frame, closing.get("code")

    async def must_enrol() -> None:
        frame, code = await refused(before_enrolling)
        assert (frame["type"], frame["code"], code) == ("error", "two_step_enrolment_required", 4401)

    run(must_enrol)
    device = TOTPDevice.objects.create(user=world_a.owner, name="phone", confirmed=True)
    with_code = signed_in_with_code(world_a.owner, device)

    async def must_sign_in_again() -> None:
        frame, code = await refused(before_enrolling)  # a session from before the device
        assert (frame["type"], frame["code"], code) == ("error", "two_step_required", 4401)
        chat = Chat(session.pk, with_code)
        assert (await chat.open())["type"] == "history"
        await chat.close()

    run(must_sign_in_again)
