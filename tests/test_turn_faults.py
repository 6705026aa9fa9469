"""Issue 16, point 3: a turn stranded by a dropped database connection.  PostgreSQL backends of
the test database are terminated (`pg_terminate_backend`) during chat turns over the HTTP API and
the WebSocket; the customer sees an answer or a JSON/frame refusal (never HTML, never a 1011), a
re-send of a message whose turn broke off or is stuck runs it again, the sweep answers what stays
stranded honestly, and the connection pool hands out no dead connection.  Every typed message
ends with exactly one stored reply."""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import psycopg
import pytest
from channels.db import database_sync_to_async
from django.db import InterfaceError, OperationalError, connection
from django.utils import timezone
from test_chat_browser import daphne
from test_consumer import Chat, customer_session, run, say

from conftest import TenantWorld
from facade.dialogue import consumers
from facade.dialogue.models import Message, Run, RunStatus
from facade.dialogue.runtime import loop
from facade.dialogue.runtime.loop import HONEST, turn_handle
from facade.dialogue.runtime.providers.base import ModelReply, ProviderError
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.runtime.stranded import STRANDED, runs_stranded_answer
from facade.dialogue.services import run_start
from guard.outgoing import outgoing_check
from ledger.models import LedgerEvent

pytestmark = pytest.mark.django_db(transaction=True)

WAIT_GONE = 10.0  # seconds a terminated backend may take to leave pg_stat_activity


def _dsn() -> str:
    db = connection.settings_dict
    return f"host={db['HOST'] or '127.0.0.1'} port={db['PORT'] or 5432} user={db['USER']} dbname={db['NAME']}"


def terminate(pids: list[int]) -> None:
    """Terminate these backends of the test database from a connection of its own, and wait
    until they are gone."""
    with psycopg.connect(_dsn(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", [pids])
        deadline = time.monotonic() + WAIT_GONE
        while admin.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", [pids]).fetchone() != (0,):
            assert time.monotonic() < deadline, f"backends {pids} still there"
            time.sleep(0.05)


def terminate_all_but(keep: int | None = None) -> int:
    """Terminate every other backend of the test database (the app's and the test's alike)."""
    with psycopg.connect(_dsn(), autocommit=True) as admin:
        own = admin.execute("SELECT pg_backend_pid()").fetchone()
        assert own is not None
        pids = [
            int(row[0])
            for row in admin.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> %s AND pid <> %s",
                [own[0], keep or 0],
            ).fetchall()
        ]
    if pids:
        terminate(pids)
    return len(pids)


def killing(reply: ModelReply) -> Callable[[list[dict[str, Any]], list[Any]], ModelReply]:
    """A model step that terminates the backend of the connection the turn is using (in the
    turn's own thread), then answers: the turn's next query finds its connection dead."""

    def step(messages: list[dict[str, Any]], tools: list[Any]) -> ModelReply:
        connection.ensure_connection()
        terminate([connection.connection.info.backend_pid])
        return reply

    return step


def replies_of(message: Message) -> int:
    return Message.objects.filter(reply_to=message).count()


def every_message_answered_once() -> None:
    connection.close()  # the test's own connection may have been one of those terminated
    for message in Message.objects.filter(role="principal"):
        assert replies_of(message) == 1, f"message {message.pk} has {replies_of(message)} replies"


def events_of(event_type: str) -> list[LedgerEvent]:
    return [e for e in LedgerEvent.objects.order_by("chain_id", "seq") if e.event_type == event_type]


def event_count(event_type: str) -> int:
    return len(events_of(event_type))


def open_customer(api: Any, world: TenantWorld) -> str:
    response = api.post(f"/api/agents/{world.agent.slug}/sessions", {}, format="json")
    assert response.status_code == 201, response.content
    return str(response.json()["id"])


def post(api: Any, sid: str, text: str, cid: str) -> Any:
    return api.post(f"/api/sessions/{sid}/messages", {"text": text, "client_message_id": cid}, format="json")


@pytest.fixture(autouse=True)
def _chat_settings(settings: Any) -> None:
    # As tests/test_consumer.py: the WebSocket's Origin is matched exactly, and every test
    # client comes from one address.
    settings.FACADE_PUBLIC_URL = "http://localhost"
    settings.CSRF_TRUSTED_ORIGINS = []
    settings.FACADE_RATE_IP = "1000/60"


@pytest.fixture
def scripted(monkeypatch: Any) -> Callable[..., ScriptedProvider]:
    """The model of every HTTP and WebSocket turn: a script the test writes."""

    def use(*steps: Any) -> ScriptedProvider:
        provider = ScriptedProvider.of(*steps)
        monkeypatch.setattr(loop, "provider_for", lambda agent: provider)
        monkeypatch.setattr(consumers, "provider_factory", lambda agent: provider)
        return provider

    return use


# --- a connection terminated during a turn ---------------------------------------------------


def test_over_the_api_a_terminated_connection_mid_turn_costs_one_invisible_retry(
    api: Any, world_a: TenantWorld, scripted: Any
) -> None:
    sid = open_customer(api, world_a)
    provider = scripted(killing(say("We open at nine.")), say("We open at nine, every day."))
    response = post(api, sid, "When do you open?", "c-1")
    assert response.status_code == 201, response.content
    assert response.json()["reply"]["text"] == "We open at nine, every day."
    assert len(provider.calls) == 2  # the attempt that lost its connection, and the retry
    every_message_answered_once()
    run_row = Run.objects.get(message__client_message_id="c-1")
    assert (run_row.status, run_row.attempts) == (RunStatus.COMPLETED, 2)
    assert event_count("run.interrupted") == 1 and event_count("run.retried") == 1
    # A re-send now is a plain duplicate: the stored reply, nothing run again.
    again = post(api, sid, "When do you open?", "c-1")
    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert again.json()["reply"]["text"] == "We open at nine, every day."
    assert len(provider.calls) == 2


def test_a_store_whose_commit_was_not_acknowledged_is_answered_by_the_retry(
    world_a: TenantWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The message and its run were committed, but the connection went before the turn heard so:
    the one retry finds them and runs that first attempt again — an answer now, not a duplicate
    without a reply left to the sweep."""
    session, _ = customer_session(world_a)
    real_run_start = loop.run_start

    def acknowledgement_lost(**kwargs: Any) -> Any:
        real_run_start(**kwargs)  # committed
        terminate([connection.connection.info.backend_pid])
        with connection.cursor() as cursor:  # what the turn's next query finds
            cursor.execute("SELECT 1")
        raise AssertionError("the terminated connection answered")

    tries = []

    def first_acknowledgement_lost(**kwargs: Any) -> Any:
        tries.append(kwargs["client_message_id"])
        return acknowledgement_lost(**kwargs) if len(tries) == 1 else real_run_start(**kwargs)

    monkeypatch.setattr(loop, "run_start", first_acknowledgement_lost)
    model = ScriptedProvider.of(say("We open at nine."))
    result = turn_handle(session=session, text="When do you open?", client_message_id="a-1", provider=model)
    assert result.duplicate is False and result.reply is not None and result.reply.text == "We open at nine."
    assert len(model.calls) == 1 and tries == ["a-1", "a-1"]
    connection.close()
    message = Message.objects.get(client_message_id="a-1")
    assert replies_of(message) == 1
    assert Run.objects.get(message=message).attempts == 2
    assert event_count("run.retried") == 1


def test_over_the_api_a_second_loss_is_a_json_503_and_the_resend_is_answered_once(
    api: Any, world_a: TenantWorld, scripted: Any
) -> None:
    sid = open_customer(api, world_a)
    provider = scripted(killing(say("first")), killing(say("second")), say("Third time lucky."))
    response = post(api, sid, "Do you deliver?", "c-2")
    assert response.status_code == 503
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["error"] == "temporarily_unavailable" and response["Retry-After"] == "5"
    connection.close()
    message = Message.objects.get(client_message_id="c-2")
    assert replies_of(message) == 0
    assert Run.objects.get(message=message).status == RunStatus.FAILED  # interrupted, said so
    again = post(api, sid, "Do you deliver?", "c-2")
    # Run again and answered now: as a first send is (201; the message is the one stored before).
    assert again.status_code == 201, again.content
    assert again.json()["message"]["id"] == message.pk
    assert again.json()["reply"]["text"] == "Third time lucky."
    assert len(provider.calls) == 3
    every_message_answered_once()


def test_over_the_websocket_a_terminated_connection_mid_turn_is_answered(world_a: TenantWorld, scripted: Any) -> None:
    session, cookie = customer_session(world_a)
    scripted(killing(say("Hello!")), say("Hello there!"), killing(say("x")), killing(say("y")), say("Yes, we do."))

    async def scenario() -> None:
        chat = Chat(session.pk, cookie)
        assert (await chat.open())["type"] == "history"
        frames = await chat.ask("Hi", "w-1")
        assert frames[-1]["reply"]["text"] == "Hello there!"
        # Both attempts lose their connection: an error frame, and the socket stays open.
        await chat.send({"type": "message", "text": "Do you wrap gifts?", "client_message_id": "w-2"})
        frames = await chat.until("error")
        assert frames[-1]["code"] == "temporarily_unavailable" and frames[-1]["client_message_id"] == "w-2"
        frames = await chat.ask("Do you wrap gifts?", "w-2")  # the page re-sends it
        assert frames[-1]["reply"]["text"] == "Yes, we do."
        await chat.close()

    run(scenario)
    every_message_answered_once()
    assert Message.objects.filter(role="principal").count() == 2


# --- re-sending a message whose turn failed or is stuck --------------------------------------


def test_a_resend_after_a_failed_turn_runs_it_again_to_one_reply(world_a: TenantWorld) -> None:
    session, _ = customer_session(world_a)

    def broken(messages: list[dict[str, Any]], tools: list[Any]) -> ModelReply:
        raise RuntimeError("the process broke mid-turn")

    with pytest.raises(RuntimeError):
        turn_handle(
            session=session, text="Is parking free?", client_message_id="r-1", provider=ScriptedProvider.of(broken)
        )
    message = Message.objects.get(client_message_id="r-1")
    assert replies_of(message) == 0
    assert Run.objects.get(message=message).stop_reason == "turn_error"
    result = turn_handle(
        session=session, text="Is parking free?", client_message_id="r-1", provider=ScriptedProvider.of(say("Yes."))
    )
    assert result.message.pk == message.pk and result.reply is not None and result.reply.text == "Yes."
    assert replies_of(message) == 1
    # The model saw the message once, after the history before it — not twice.
    again = ScriptedProvider.of(say("never"))
    assert (
        turn_handle(session=session, text="Is parking free?", client_message_id="r-1", provider=again).reply
        == result.reply
    )
    assert again.calls == []
    assert Message.objects.filter(role="principal").count() == 1


def stuck_message(session: Any, cid: str, text: str = "Can I book for Friday?") -> Message:
    """A message stored with its run, whose process then died (nothing recorded it)."""
    return run_start(session=session, text=text, client_message_id=cid, provider="scripted", context_hash="x").message


def age(message: Message, seconds: int) -> None:
    Run.objects.filter(message=message).update(started_at=timezone.now() - dt.timedelta(seconds=seconds))


def test_a_resend_of_a_stuck_turn_runs_it_again_only_beyond_the_bound(world_a: TenantWorld, settings: Any) -> None:
    settings.FACADE_RUN_STUCK_SECONDS = 300
    session, _ = customer_session(world_a)
    message = stuck_message(session, "s-1")
    fresh = ScriptedProvider.of(say("never"))
    # Within the bound the first attempt may still be answering: a duplicate without a reply.
    early = turn_handle(session=session, text=message.text, client_message_id="s-1", provider=fresh)
    assert early.duplicate is True and early.reply is None and fresh.calls == []
    age(message, 301)
    late = turn_handle(
        session=session,
        text=message.text,
        client_message_id="s-1",
        provider=ScriptedProvider.of(say("Yes, Friday works for a visit.")),
    )
    assert late.reply is not None and replies_of(message) == 1
    assert Run.objects.get(message=message).attempts == 2


def test_two_resends_at_once_begin_one_attempt_and_store_one_reply(world_a: TenantWorld) -> None:
    session, _ = customer_session(world_a)
    message = stuck_message(session, "s-2")
    age(message, 10_000)
    answering = threading.Event()
    release = threading.Event()

    def slow(messages: list[dict[str, Any]], tools: list[Any]) -> ModelReply:
        answering.set()
        assert release.wait(10)
        return say("One answer.")

    results: dict[str, Any] = {}

    def resend(name: str, provider: ScriptedProvider) -> None:
        try:
            results[name] = turn_handle(session=session, text=message.text, client_message_id="s-2", provider=provider)
        finally:
            connection.close()

    first = threading.Thread(target=resend, args=("first", ScriptedProvider.of(slow)))
    first.start()
    assert answering.wait(10)
    second_model = ScriptedProvider.of(say("A second answer."))
    second = threading.Thread(target=resend, args=("second", second_model))
    second.start()
    second.join(10)
    release.set()
    first.join(10)
    assert results["second"].reply is None and results["second"].duplicate is True
    assert second_model.calls == []
    assert results["first"].reply.text == "One answer."
    assert replies_of(message) == 1 and event_count("run.retried") == 1


# --- the sweep of stranded runs --------------------------------------------------------------


@pytest.mark.parametrize(("text", "language"), [("Can I book for Friday?", "en"), ("周五可以预约吗？", "zh-hans")])
def test_the_sweep_answers_a_stranded_run_honestly_once(
    world_a: TenantWorld, settings: Any, text: str, language: str
) -> None:
    settings.FACADE_RUN_STUCK_SECONDS = 300
    session, _ = customer_session(world_a)
    stranded = stuck_message(session, "t-1", text)
    recent = stuck_message(session, "t-2", text)
    age(stranded, 301)
    assert runs_stranded_answer() == 1
    reply = Message.objects.get(reply_to=stranded)
    assert reply.text == str(HONEST[language][STRANDED])
    assert "saved" in reply.text if language == "en" else "已保存" in reply.text
    run_row = Run.objects.get(message=stranded)
    assert (run_row.status, run_row.stop_reason) == (RunStatus.FAILED, STRANDED)
    assert run_row.finished_at is not None
    (event,) = events_of("run.stranded")
    assert event.payload["stop_reason"] == STRANDED and event.payload["reply_id"] == reply.pk
    assert replies_of(recent) == 0  # within the bound: left alone
    assert runs_stranded_answer() == 0  # twice is harmless
    assert replies_of(stranded) == 1 and event_count("run.stranded") == 1
    # A re-send now gets that honest reply; nothing runs again.
    model = ScriptedProvider.of(say("never"))
    again = turn_handle(session=session, text=text, client_message_id="t-1", provider=model)
    assert again.reply == reply and model.calls == []


def test_an_open_chat_hears_the_sweeps_reply(world_a: TenantWorld, settings: Any) -> None:
    """The page waiting on a stranded message gets the sweep's honest reply as the turn's reply."""
    settings.FACADE_RUN_STUCK_SECONDS = 300
    session, cookie = customer_session(world_a)
    stranded = stuck_message(session, "o-1")
    age(stranded, 301)

    async def scenario() -> None:
        chat = Chat(session.pk, cookie)
        history = await chat.open()
        assert [m["client_message_id"] for m in history["messages"]] == ["o-1"]
        assert await database_sync_to_async(runs_stranded_answer)() == 1
        pushed = await chat.next()
        assert (pushed["type"], pushed["client_message_id"], pushed["duplicate"]) == ("reply", "o-1", False)
        assert pushed["message"]["id"] == stranded.pk
        assert pushed["reply"]["text"] == str(HONEST["en"][STRANDED])
        assert pushed["reply"]["stop_reason"] == STRANDED
        await chat.close()

    run(scenario)
    assert replies_of(stranded) == 1


def test_the_honest_replies_pass_the_outgoing_check() -> None:
    for language in ("en", "zh-hans"):
        for key in (STRANDED, "provider_error"):
            assert not outgoing_check(str(HONEST[language][key]), given=[], citations=[]).blocked


def test_a_late_attempt_finding_the_sweeps_reply_stores_nothing_more(world_a: TenantWorld, settings: Any) -> None:
    settings.FACADE_RUN_STUCK_SECONDS = 300
    session, _ = customer_session(world_a)

    def swept_meanwhile(messages: list[dict[str, Any]], tools: list[Any]) -> ModelReply:
        age(Message.objects.get(client_message_id="l-1"), 301)
        assert runs_stranded_answer() == 1
        return say("A late answer.")

    result = turn_handle(
        session=session, text="Hello?", client_message_id="l-1", provider=ScriptedProvider.of(swept_meanwhile)
    )
    message = Message.objects.get(client_message_id="l-1")
    assert replies_of(message) == 1
    assert result.duplicate is True and result.reply is not None
    assert result.reply.text == str(HONEST["en"][STRANDED])


def test_a_provider_error_still_answers_and_is_not_run_again(world_a: TenantWorld) -> None:
    session, _ = customer_session(world_a)
    turn_handle(
        session=session, text="Hi", client_message_id="p-1", provider=ScriptedProvider.of(ProviderError("timeout"))
    )
    model = ScriptedProvider.of(say("never"))
    again = turn_handle(session=session, text="Hi", client_message_id="p-1", provider=model)
    assert again.reply is not None and model.calls == []


def test_a_database_error_that_is_not_a_lost_connection_is_not_run_again_unseen(world_a: TenantWorld) -> None:
    """A statement timeout (an OperationalError like a lost connection, but the connection is
    fine) fails the turn once: no second model call, the run stopped as a turn error."""
    session, _ = customer_session(world_a)

    def timing_out(messages: list[dict[str, Any]], tools: list[Any]) -> ModelReply:
        with connection.cursor() as cursor:
            cursor.execute("SET statement_timeout = 20")
            try:
                cursor.execute("SELECT pg_sleep(1)")
            finally:
                cursor.execute("SET statement_timeout = 0")
        return say("never")(messages, tools)

    model = ScriptedProvider.of(timing_out, say("a second call, unseen"))
    with pytest.raises(OperationalError) as raised:
        turn_handle(session=session, text="Is parking free?", client_message_id="t-1", provider=model)
    assert isinstance(raised.value.__cause__, psycopg.errors.QueryCanceled)
    assert len(model.calls) == 1
    run = Run.objects.get(message__client_message_id="t-1")
    assert (run.attempts, run.stop_reason) == (1, "turn_error")
    assert event_count("run.interrupted") == 1 and event_count("run.retried") == 0


def test_what_counts_as_a_lost_connection() -> None:
    def wrapped(error: psycopg.Error, django_type: type[Exception] = OperationalError) -> Exception:
        try:
            raise django_type(str(error)) from error
        except Exception as exc:  # noqa: BLE001 - the exception as Django hands it on
            return exc

    assert loop.connection_lost(wrapped(psycopg.errors.AdminShutdown("terminating connection")))
    assert loop.connection_lost(psycopg.errors.AdminShutdown("raw, from the turn's own statements"))
    assert loop.connection_lost(wrapped(psycopg.OperationalError("the connection is closed")))
    assert loop.connection_lost(wrapped(psycopg.errors.ConnectionFailure("08006")))
    assert loop.connection_lost(InterfaceError("connection already closed"))
    assert not loop.connection_lost(wrapped(psycopg.errors.QueryCanceled("statement timeout")))
    assert not loop.connection_lost(wrapped(psycopg.errors.DeadlockDetected("deadlock")))
    assert not loop.connection_lost(wrapped(psycopg.errors.DiskFull("no space"), OperationalError))
    assert not loop.connection_lost(OperationalError("database is locked"))  # SQLite's, no psycopg cause
    assert not loop.connection_lost(RuntimeError("the process broke mid-turn"))


# --- the connection pool -------------------------------------------------------------------


def test_with_the_pool_terminated_backends_cost_the_next_request_nothing(tmp_path: Any, world_a: TenantWorld) -> None:
    """DB_POOL as compose sets it: after every backend of the database is terminated, each next
    request is answered (the pool checks a connection before handing it out)."""
    slug = world_a.agent.slug
    with daphne(tmp_path, DB_POOL="8") as site, httpx.Client(base_url=site, timeout=120) as client:
        headers = {"Origin": site, "Referer": f"{site}/"}
        page = client.get(f"/c/{slug}/")
        assert page.status_code == 200
        headers["X-CSRFToken"] = client.cookies.get("csrftoken", "")
        opened = client.post(f"/api/agents/{slug}/sessions", json={}, headers=headers)
        assert opened.status_code == 201, opened.text
        sid = opened.json()["id"]
        for round_ in range(3):
            # Warm the pool (several connections in it), then terminate them all.
            for i in range(4):
                answered = client.post(
                    f"/api/sessions/{sid}/messages",
                    json={"text": f"hello {round_}.{i}", "client_message_id": f"k-{round_}.{i}"},
                    headers=headers,
                )
                assert answered.status_code == 201, answered.text
            assert terminate_all_but() >= 1
            after = client.post(
                f"/api/sessions/{sid}/messages",
                json={"text": "still there?", "client_message_id": f"after-{round_}"},
                headers=headers,
            )
            assert after.status_code == 201, after.text
            assert after.json()["reply"]["text"]
            assert client.get(f"/api/sessions/{sid}/messages").status_code in (200, 405)
    every_message_answered_once()
