"""The product's ASGI application plus three baselines for bench/chat.py (bench only): a bare echo
consumer at `ws/echo/`, a storing echo at `ws/echo-store/<session>/` and the chat with its
governance taken out at `ws/ungoverned/<session>/`.

bench/chat.py runs this under daphne so that the chat and the echo consumer share one server
process, one event loop, the same origin check and the same auth middleware: the only
difference between the two loads is the consumer.  The echo answers each `message` frame with
a `reply` frame carrying the same text — no session, no database, no model.  The storing echo
is the chat consumer itself (same session check, rate limits, worker thread, frames) with the
agent taken out: it stores the message and an echo reply in one transaction, without a run,
model, tools, guard or ledger event — the difference to the chat is the agent and its
governance.  The ungoverned chat is the chat consumer and runtime unchanged, except that
during its turns the commitment guard and the grounding check let everything pass, the tool
registry's execution check
allows every call and no ledger event is appended: the difference to the chat is exactly the
governance work the issue names (the audience check at connect and the audience's tool list
stay; they are a dictionary lookup).  The switch is a context variable set by that consumer
only, so the chat's turns in the same process keep every check.
"""

from __future__ import annotations

import json
import time
from contextvars import ContextVar
from typing import Any

import psycopg
from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async  # noqa: E402
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.routing import URLRouter  # noqa: E402
from django.db import transaction  # noqa: E402
from django.urls import path  # noqa: E402

from facade.asgi import application as product  # sets Django up before anything else
from facade.dialogue import events as dialogue_events  # noqa: E402
from facade.dialogue.consumers import ChatConsumer, message_view  # noqa: E402
from facade.dialogue.models import DialogueSession, Message  # noqa: E402
from facade.dialogue.runtime import tools  # noqa: E402
from facade.dialogue.schemas import ReplyOut  # noqa: E402
from facade.dialogue.selectors import reply_view  # noqa: E402
from facade.origins import OriginValidator  # noqa: E402
from guard import outgoing  # noqa: E402
from guard.engine import GuardVerdict  # noqa: E402
from knowledge import events as knowledge_events  # noqa: E402
from ledger.schemas import AppendedEvent  # noqa: E402

ECHO_PATH = "/ws/echo/"

GOVERNANCE_OFF: ContextVar[bool] = ContextVar("bench_governance_off", default=False)
# What each governance step answers while it is switched off: everything passes, nothing is recorded.
# Every ledger event a turn appends goes through the event constructors of its app (the dialogue's:
# message, run, guard, tool refusal, request, trust; the knowledge's: a lesson an owner's turn
# records), and each constructor calls the ledger_append its own module imported: that is the
# name to switch.
UNGOVERNED = (
    (outgoing, "guard_check", GuardVerdict(blocked=False, category=None)),
    (outgoing, "unsourced_figures", set()),
    (tools, "may_execute", None),
    (dialogue_events, "ledger_append", AppendedEvent(0, 0, b"")),
    (knowledge_events, "ledger_append", AppendedEvent(0, 0, b"")),
)


def _switchable(fn: Any, off: Any, name: str) -> Any:
    def step(*args: Any, **kwargs: Any) -> Any:
        if GOVERNANCE_OFF.get():
            return off
        started = time.thread_time()  # CPU of this thread only: waiting for PostgreSQL is not counted
        try:
            return fn(*args, **kwargs)
        finally:
            GOVERNANCE_CPU[name] = GOVERNANCE_CPU.get(name, 0.0) + time.thread_time() - started

    return step


# CPU time the governed chat's governance steps took in the server, per step (seconds).
GOVERNANCE_CPU: dict[str, float] = {}
for _module, _name, _off in UNGOVERNED:
    setattr(_module, _name, _switchable(getattr(_module, _name), _off, _name))


class EchoConsumer(AsyncJsonWebsocketConsumer):
    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "message":
            cid = content.get("client_message_id", "")
            await self.send_json(
                {"type": "reply", "client_message_id": cid, "reply": {"text": content.get("text", "")}}
            )

    @classmethod
    async def encode_json(cls, content: Any) -> str:
        return json.dumps(content, ensure_ascii=False)  # as the chat consumer encodes its frames


class StoringEchoConsumer(ChatConsumer):
    async def _turn(self, frame: Any, cancel: Any) -> None:
        def handle() -> dict[str, Any]:
            # Read again as the echo always has (the consumer's `_fresh` of old), so that its
            # figures stay comparable with earlier runs.
            session = DialogueSession.objects.select_related("agent__tenant", "tenant").get(pk=self.session.pk)
            with transaction.atomic():
                message = Message.objects.create(
                    session=session, role="principal", text=frame.text, client_message_id=frame.client_message_id
                )
                reply = Message.objects.create(session=session, role="agent", text=frame.text, reply_to=message)
            return {"message": message_view(message), "reply": reply_view(reply), "request": None, "duplicate": False}

        result = await database_sync_to_async(handle, thread_sensitive=False)()
        await self._send(ReplyOut(client_message_id=frame.client_message_id, **result).frame())


class UngovernedChatConsumer(ChatConsumer):
    """The chat consumer; its turns run with the governance steps switched off (the context
    variable reaches the turn's worker thread: asgiref copies the context into it)."""

    async def _turn(self, frame: Any, cancel: Any) -> None:
        token = GOVERNANCE_OFF.set(True)
        try:
            await super()._turn(frame, cancel)
        finally:
            GOVERNANCE_OFF.reset(token)


# The same middleware facade/asgi.py puts in front of the chat's URL router.
echo = OriginValidator(AuthMiddlewareStack(EchoConsumer.as_asgi()))
store = OriginValidator(
    AuthMiddlewareStack(
        URLRouter(
            [
                path("ws/echo-store/<uuid:session_id>/", StoringEchoConsumer.as_asgi()),
                path("ws/ungoverned/<uuid:session_id>/", UngovernedChatConsumer.as_asgi()),
            ]
        )
    )
)


# What the server sent to PostgreSQL, for statements per turn: every statement a psycopg cursor
# executed (Django's and the raw ones alike) and every transaction committed.  A statement run
# outside a transaction (autocommit) is counted as a statement only.
STATS = {"statements": 0, "transactions": 0}
_execute, _executemany, _commit = psycopg.Cursor.execute, psycopg.Cursor.executemany, psycopg.Connection.commit


def _counted(original: Any, key: str) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        STATS[key] += 1
        return original(*args, **kwargs)

    return call


psycopg.Cursor.execute = _counted(_execute, "statements")  # type: ignore[method-assign]
psycopg.Cursor.executemany = _counted(_executemany, "statements")  # type: ignore[method-assign]
psycopg.Connection.commit = _counted(_commit, "transactions")  # type: ignore[method-assign]
STATS_PATH = "/bench/stats"


async def _stats(send: Any) -> None:
    body = json.dumps({**STATS, "governance_cpu": GOVERNANCE_CPU}).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "http" and scope["path"] == STATS_PATH:
        await _stats(send)
    elif scope["type"] == "websocket" and scope["path"] == ECHO_PATH:
        await echo(scope, receive, send)
    elif scope["type"] == "websocket" and scope["path"].startswith(("/ws/echo-store/", "/ws/ungoverned/")):
        await store(scope, receive, send)
    else:
        await product(scope, receive, send)
