"""Issue 33 §2: an A2A task never stays WORKING for ever.  A streamed or non-blocking turn runs in
the web process; when that process dies mid-turn, the sweep of stranded tasks
(facade/peers/stranded.py, Celery beat every minute) ends the task once it is stuck beyond
FACADE_RUN_STUCK_SECONDS: FAILED with the stranded run's honest reply, or — its message never
stored — FAILED saying so; a task answered meanwhile keeps its answer's state.

The first test kills a real daphne in the middle of a real turn (its model hangs) and lets a real
Celery worker run the sweep; the rest drive the sweep in-process over each case."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.conf import settings as django_settings
from django.utils import timezone
from llm_server import Canned, LLMServer, text_reply
from ports import free_port
from test_a2a import SLUG, Peer, reply_text
from test_chat_browser import ROOT, daphne, demo_seeded, hosted_model
from worker_support import celery_workers

from facade.dialogue.models import Message, Run, RunStatus
from facade.dialogue.runtime.loop import HONEST
from facade.dialogue.services import run_start, session_open
from facade.peers.models import PeerTask, PeerTaskTurn
from facade.peers.rules import STRANDED, TaskState
from facade.peers.selectors import NOT_SAVED, task_view
from facade.peers.services import _turn_link
from facade.peers.stranded import tasks_stranded_end
from facade.tenancy.models import PeerCredential
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from facade.tenancy.services import peer_key_create
from ledger.models import LedgerEvent

SWEEP_TASK = "facade.peers.tasks.tasks_stranded_end"
WAIT_S = 60  # a real worker picking up the task and writing; an outcome polled for, never a race


# --- a real process dies mid-turn; a real worker sweeps ----------------------------------------


@pytest.fixture
def hanging_model() -> Iterator[tuple[LLMServer, threading.Event]]:
    """A model server that is asked, says so, and never answers (until the server stops)."""
    asked = threading.Event()

    def hang(request: Any) -> Canned:
        asked.set()
        return Canned(body=text_reply("too late").body, delay=600)

    with LLMServer(responder=hang, strict=False) as server:
        yield server, asked


def _serve(log_dir: Path, **extra_env: str) -> tuple[subprocess.Popen[bytes], str]:
    """Daphne as tests/test_chat_browser.daphne starts it, with its process, so that it can be
    killed as a crash kills it (SIGKILL: no shutdown, nothing recorded)."""
    db = django_settings.DATABASES["default"]
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "facade.test_settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "FACADE_RATE_IP": "1000/60",
        "FACADE_PUBLIC_URL": f"http://127.0.0.1:{port}",
        **extra_env,
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    with (log_dir / "daphne.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "facade.asgi:application"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + 30
    while True:
        assert process.poll() is None, (log_dir / "daphne.log").read_text(errors="replace")[-3000:]
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
            return process, f"http://127.0.0.1:{port}"
        except httpx.TransportError:
            assert time.monotonic() < deadline, "daphne did not listen within 30 s"
            time.sleep(0.2)


def _rpc(site: str, key: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(
        f"{site}/a2a/{SLUG}/jsonrpc",
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        headers={"A2A-Version": "1.0", "X-API-Key": key},
        timeout=30,
    )
    body = response.json()
    assert "result" in body, body
    return body["result"]


def test_a_task_whose_web_process_died_mid_turn_is_ended_by_a_real_worker(
    transactional_db: Any, tmp_path: Path, hanging_model: tuple[LLMServer, threading.Event]
) -> None:
    model, asked = hanging_model
    demo_seeded()
    from facade.tenancy.models import AgentProfile

    agent = AgentProfile.objects.get(slug=SLUG)
    owner = agent.owners.first()
    assert owner is not None
    issued = peer_key_create(agent=agent, name="supplier", actor=Actor.human(owner.pk))
    env = {**hosted_model(model.url), "FACADE_LLM_TIMEOUT": "600", "FACADE_LLM_PROVIDER": "openai"}
    process, site = _serve(tmp_path, **env)
    try:
        message = {"messageId": "m-dies", "role": "ROLE_USER", "parts": [{"text": "When are you open on Sunday?"}]}
        immediately = {"returnImmediately": True}
        shown = _rpc(site, issued.key, "SendMessage", {"message": message, "configuration": immediately})
        assert shown["task"]["status"]["state"] == "TASK_STATE_WORKING"
        task_id = shown["task"]["id"]
        assert asked.wait(WAIT_S), "the turn never reached the model"
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # the web process dies mid-turn
        process.wait(timeout=30)
    task = PeerTask.objects.get(pk=task_id)
    assert task.state == TaskState.WORKING and task.pending_message_id == "m-dies"
    stored = Message.objects.get(session=task.session, client_message_id="m-dies")
    assert Run.objects.get(message=stored).finished_at is None  # nothing recorded the death

    # A real worker runs the sweep; its bound is 0 s, so the task and its run are stuck already.
    from facade.celery import app

    with celery_workers([SWEEP_TASK], FACADE_RUN_STUCK_SECONDS="0"):
        app.send_task(SWEEP_TASK)
        deadline = time.monotonic() + WAIT_S
        while PeerTask.objects.filter(pk=task_id, state=TaskState.WORKING).exists():
            assert time.monotonic() < deadline, "the worker did not end the stranded task"
            time.sleep(0.2)
    task.refresh_from_db()
    assert task.state == TaskState.FAILED and task.stop_reason == STRANDED
    run = Run.objects.get(message=stored)
    assert run.status == RunStatus.FAILED and run.stop_reason == "stranded"
    (event,) = [e for e in LedgerEvent.objects.of_type("a2a_task.stranded") if e.entity_id == task_id]
    assert event.payload["state"] == "TASK_STATE_FAILED" and event.payload["message_id"] == stored.pk
    assert event.actor_type == "platform"

    # The peer, over the SDK against a new process, reads the end and its reason.
    (tmp_path / "again").mkdir()
    with daphne(tmp_path / "again", **env) as again:

        async def read() -> Any:
            async with Peer(again, issued.key) as peer:
                return await peer.get(task_id)

        ended = asyncio.run(read())
    assert ended.status.state == 4  # TASK_STATE_FAILED
    assert reply_text(ended) == str(HONEST["en"]["stranded"])
    assert [m.parts[0].text for m in ended.history][0] == "When are you open on Sunday?"


# --- each case, in-process -------------------------------------------------------------------


def _working_task(world: Any, *, text: str | None, message_id: str = "m-1", language: str = "en") -> PeerTask:
    """A WORKING task whose turn's process died: its message stored with its run (`text`), or
    never stored (`text` None)."""
    issued = peer_key_create(agent=world.agent, name="supplier", actor=Actor.human(world.owner.pk))
    credential = PeerCredential.objects.get(pk=issued.credential_id)
    session = session_open(agent=world.agent, audience=Audience.PEER, peer=credential)
    if text is not None:
        run_start(session=session, text=text, client_message_id=message_id, provider="scripted", context_hash="x")
    return PeerTask.objects.create(
        tenant=world.tenant,
        agent=world.agent,
        peer=credential,
        session=session,
        state=TaskState.WORKING.value,
        pending_message_id=message_id,
        language=language,
        updated_at=timezone.now(),
    )


def _age(task: PeerTask, seconds: int) -> None:
    before = timezone.now() - dt.timedelta(seconds=seconds)
    PeerTask.objects.filter(pk=task.pk).update(updated_at=before)
    Run.objects.filter(session=task.session).update(started_at=before)


@pytest.mark.django_db
def test_within_the_bound_a_working_task_is_left_be(world_a: Any, settings: Any) -> None:
    settings.FACADE_RUN_STUCK_SECONDS = 300
    task = _working_task(world_a, text="Do you deliver?")
    _age(task, 299)
    assert tasks_stranded_end() == 0
    task.refresh_from_db()
    assert task.state == TaskState.WORKING
    assert not Message.objects.filter(session=task.session, role="agent").exists()


@pytest.mark.django_db
def test_a_stranded_turn_ends_the_task_failed_with_the_honest_reply_once(world_a: Any, settings: Any) -> None:
    settings.FACADE_RUN_STUCK_SECONDS = 300
    task = _working_task(world_a, text="Do you deliver on Sunday?")
    _age(task, 301)
    assert tasks_stranded_end() == 1
    task.refresh_from_db()
    assert task.state == TaskState.FAILED and task.stop_reason == STRANDED
    view = task_view(task)
    assert view["status"]["state"] == "TASK_STATE_FAILED"
    assert view["status"]["message"]["parts"][0]["text"] == str(HONEST["en"]["stranded"])
    assert [m["role"] for m in view["history"]] == ["ROLE_USER", "ROLE_AGENT"]
    assert PeerTaskTurn.objects.filter(task=task).count() == 1
    assert tasks_stranded_end() == 0  # twice is harmless
    assert LedgerEvent.objects.of_type("a2a_task.stranded").count() == 1


@pytest.mark.parametrize(("language", "expected"), [("en", "was not saved"), ("zh-hans", "没有保存")])
@pytest.mark.django_db
def test_a_message_never_stored_ends_the_task_failed_saying_so(
    world_a: Any, settings: Any, language: str, expected: str
) -> None:
    settings.FACADE_RUN_STUCK_SECONDS = 300
    task = _working_task(world_a, text=None, language=language)
    _age(task, 301)
    assert tasks_stranded_end() == 1
    task.refresh_from_db()
    assert task.state == TaskState.FAILED and task.stop_reason == STRANDED
    said = task_view(task)["status"]["message"]["parts"][0]["text"]
    assert expected in said
    if language == "en":
        assert said == str(NOT_SAVED)
    (event,) = LedgerEvent.objects.of_type("a2a_task.stranded")
    assert event.payload["message_id"] is None


@pytest.mark.django_db
def test_a_turn_answered_before_its_process_died_keeps_its_answer(world_a: Any, settings: Any) -> None:
    """The process died after the answer was stored and before the task heard of it."""
    from facade.dialogue.services import RunOutcome, run_finish

    settings.FACADE_RUN_STUCK_SECONDS = 300
    task = _working_task(world_a, text="When do you open?")
    run = Run.objects.get(session=task.session)
    outcome = RunOutcome(
        status=RunStatus.COMPLETED,
        stop_reason="",
        needs_input=False,
        guard_category="",
        text="We open at nine.",
        citations=[],
    )
    run_finish(session=task.session, run=run, outcome=outcome, spans=[], hits=[], agent=world_a.agent)
    _age(task, 301)
    assert tasks_stranded_end() == 1
    task.refresh_from_db()
    assert task.state == TaskState.COMPLETED and task.stop_reason == ""
    assert task_view(task)["status"]["message"]["parts"][0]["text"] == "We open at nine."


@pytest.mark.django_db
def test_a_resend_answering_within_the_bound_is_left_be(world_a: Any, settings: Any) -> None:
    settings.FACADE_RUN_STUCK_SECONDS = 300
    task = _working_task(world_a, text="Do you deliver?")
    _age(task, 301)
    Run.objects.filter(session=task.session).update(attempted_at=timezone.now())  # a re-send began it again
    assert tasks_stranded_end() == 0
    task.refresh_from_db()
    assert task.state == TaskState.WORKING


@pytest.mark.django_db
def test_a_late_answer_after_the_sweep_does_not_reopen_the_task(world_a: Any, settings: Any) -> None:
    settings.FACADE_RUN_STUCK_SECONDS = 300
    task = _working_task(world_a, text=None, message_id="m-late")
    _age(task, 301)
    assert tasks_stranded_end() == 1
    # The turn's process was not dead after all: it stores its message and answer, then links it.
    started = run_start(
        session=task.session, text="Hello?", client_message_id="m-late", provider="scripted", context_hash="x"
    )
    linked = _turn_link(task=task, message=started.message, run=started.run, actor=Actor.peer(task.peer_id))
    assert linked.state == TaskState.FAILED
    assert PeerTask.objects.get(pk=task.pk).state == TaskState.FAILED


def test_the_sweep_is_on_celery_beat_every_minute() -> None:
    from facade.celery import app

    (entry,) = [e for e in app.conf.beat_schedule.values() if e["task"] == SWEEP_TASK]
    assert entry["schedule"] == 60
