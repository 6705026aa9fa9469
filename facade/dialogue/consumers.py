"""The chat WebSocket (`ws/sessions/<uuid>/`): one connection per session, for its principal.

A thin layer over the same selector, rules and services as the HTTP API.  On connect the
caller must be the session's principal — the signed-in user of an owner session, or the
customer whose tenant-scoped signed cookie matches a customer session; peers use HTTP only.
Refusals accept and then close with a code the page can act on (4404 unknown session, 4403
not yours), since a close before the handshake reaches a browser only as 1006.

A message runs `turn_handle` in a worker thread as a background task, so that a `cancel`
frame arriving meanwhile is handled at once.  Progress frames come from the runtime's callback;
the reply, already guarded by the runtime, is then streamed in a few `delta` frames and closed
by a `reply` frame.  Messages of one connection run one after another, in the order sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from channels.db import DatabaseSyncToAsync, database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from pydantic import ValidationError

from facade.tenancy.models import AgentProfile
from facade.tenancy.policy import AgentPolicy, NotFound
from facade.tenancy.rules import Audience, PostDecision, may_post

from .models import DialogueSession, Message
from .ratelimit import message_rate_check
from .runtime.loop import TurnResult, run_cancel, turn_handle
from .runtime.providers import Provider
from .schemas import (
    CancelAckOut,
    CancelFrame,
    DeltaOut,
    ErrorOut,
    HistoryOut,
    MessageFrame,
    ProgressOut,
    RatedOut,
    RateFrame,
    ReplyOut,
    in_frame,
)
from .selectors import session_for_caller, session_history
from .services import DialogueError, rating_record, trust_adjust

log = logging.getLogger(__name__)

CLOSE_FORBIDDEN = 4403
CLOSE_UNKNOWN = 4404
DELTA_CHARS = 40  # a reply is streamed in pieces of at least about this size …
DELTA_MAX = 3  # … and in at most this many (each frame costs the server a write; the text is complete)
DELTA_PAUSE = 0.0  # seconds between pieces (the text is complete and guarded already; no artificial delay)
DUPLICATE_WAIT = 60.0  # seconds a resent message waits for a reply another connection is writing
DUPLICATE_POLL = 0.5

# The model behind the chat: None means the runtime's configured provider.  Tests put a
# scripted one here (a callable taking the agent).
provider_factory: Callable[[AgentProfile], Provider] | None = None


@functools.lru_cache(maxsize=1)
def turn_executor() -> ThreadPoolExecutor:
    """The threads that run turns.  asyncio's default pool has min(32, cores + 4) threads, which
    would let a handful of turns waiting on a slow model hold up every other sync call."""
    return ThreadPoolExecutor(max_workers=settings.FACADE_TURN_THREADS, thread_name_prefix="facade-turn")


@dataclass
class ScopeCaller:
    """What the session selector reads from a request, taken from a WebSocket scope.  It never
    carries a peer credential: peers don't use the WebSocket."""

    user: Any
    COOKIES: dict[str, str] = field(default_factory=dict)
    auth: None = None


def session_for_scope(scope: dict[str, Any], session_id: Any) -> tuple[DialogueSession | None, int | None]:
    """The session and None, or None and the close code: unknown session, or not the caller's."""
    if not DialogueSession.objects.filter(pk=session_id).exists():
        return None, CLOSE_UNKNOWN
    caller = ScopeCaller(user=scope.get("user") or AnonymousUser(), COOKIES=dict(scope.get("cookies") or {}))
    try:
        session = session_for_caller(request=caller, session_id=session_id)
    except NotFound:
        return None, CLOSE_FORBIDDEN
    if session.audience == Audience.PEER:  # unreachable without a key; refused all the same
        return None, CLOSE_FORBIDDEN
    return session, None


def reply_chunks(text: str) -> list[str]:
    """The reply in a few pieces, cut after a space where there is one nearby; joined they give
    the text back exactly."""
    pieces_wanted = max(1, min(DELTA_MAX, -(-len(text) // DELTA_CHARS)))
    size = -(-len(text) // pieces_wanted)
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            space = text.rfind(" ", start + 1, end)
            if space > start + size // 2:
                end = space + 1
        pieces.append(text[start:end])
        start = end
    return pieces


def reply_view(reply: Message | None) -> dict[str, Any] | None:
    if reply is None:
        return None
    return {"id": reply.pk, "text": reply.text, "citations": reply.citations, "stop_reason": reply.stop_reason}


def message_view(message: Message) -> dict[str, Any]:
    return {
        "id": message.pk,
        "role": message.role,
        "text": message.text,
        "client_message_id": message.client_message_id,
        "created_at": message.created_at.isoformat(),
    }


class ChatConsumer(AsyncJsonWebsocketConsumer):
    session: DialogueSession
    user_id: int | None
    ip: str

    async def connect(self) -> None:
        self.closed = False
        self.queue: asyncio.Queue[MessageFrame | None] = asyncio.Queue()
        self.worker: asyncio.Task[None] | None = None
        self.cancel_event: threading.Event | None = None
        self.progress_sent: asyncio.Future[None] | None = None
        session, refusal = await database_sync_to_async(session_for_scope)(
            self.scope, self.scope["url_route"]["kwargs"]["session_id"]
        )
        await self.accept()
        if session is None:
            self.closed = True
            await self.close(code=refusal)
            return
        self.session = session
        self.user_id = session.user_id
        client = self.scope.get("client") or ("unknown", 0)
        self.ip = str(client[0] or "unknown")
        history = await database_sync_to_async(session_history)(session)
        await self._send(HistoryOut(audience=session.audience, **history).frame())
        self.worker = asyncio.create_task(self._work())

    async def disconnect(self, code: int) -> None:
        self.closed = True
        if self.worker is None:
            return
        # A running turn finishes in its thread and stores its reply (a reconnect finds it in
        # the history); queued messages were not stored yet and are re-sent by the page.
        self.queue.put_nowait(None)
        await asyncio.shield(self.worker)  # should the server stop waiting, the turn goes on

    # --- frames in -------------------------------------------------------------------------

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any) -> None:
        if self.closed:
            return
        try:
            raw = json.loads(text_data) if text_data is not None else None
        except ValueError:
            raw = None
        if not isinstance(raw, dict):
            await self._error("malformed_frame", "a frame is a JSON object with a type")
            return
        try:
            frame = in_frame.validate_python(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'frame'}: {e['msg']}" for e in exc.errors()[:3]
            )
            await self._error("malformed_frame", problems[:300], client_message_id=_cid(raw))
            return
        if isinstance(frame, MessageFrame):
            refusal = await database_sync_to_async(self._admit)(frame)
            if refusal is not None:
                await self._send(refusal.frame())
                return
            self.queue.put_nowait(frame)
        elif isinstance(frame, CancelFrame):
            runs = await database_sync_to_async(run_cancel)(session=self.session)
            if self.cancel_event is not None:
                # The turn may not have created its run yet; it cancels itself at its next step.
                self.cancel_event.set()
            await self._send(CancelAckOut(runs=runs).frame())
        elif isinstance(frame, RateFrame):
            try:
                stars = await database_sync_to_async(self._rate)(frame)
            except DialogueError as exc:
                await self._error(exc.code, exc.detail)
                return
            await self._send(RatedOut(stars=stars).frame())

    def _fresh(self) -> DialogueSession:
        return DialogueSession.objects.select_related("agent__tenant", "tenant").get(pk=self.session.pk)

    def _current(self) -> DialogueSession:
        """The connection's session with its status and last activity read again: what may change
        while the socket is open.  The agent and principal were read at connect and are fixed for
        the session (a change of the agent's published behaviour closes its sessions)."""
        row = DialogueSession.objects.filter(pk=self.session.pk).values_list("status", "last_activity_at").first()
        if row is not None:
            self.session.status, self.session.last_activity_at = row
        return self.session

    def _still_owner(self) -> bool:
        """Asked again at every message and before every owner tool call, from the database."""
        if self.user_id is None:
            return False
        user = get_user_model().objects.filter(pk=self.user_id, is_active=True).first()
        return user is not None and AgentPolicy.is_owner(user, self.session.agent)

    def _admit(self, frame: MessageFrame) -> ErrorOut | None:
        """The checks of the HTTP endpoint, in the same order: may the principal still post,
        then the rate limits (a customer who hits one loses some trust)."""
        session = self._current()
        decision = may_post(
            audience=session.audience,
            status=session.status,
            caller_still_owner=session.audience == Audience.OWNER and self._still_owner(),
        )
        cid = frame.client_message_id
        if decision == PostDecision.NO_LONGER_OWNER:
            return ErrorOut(
                code="no_longer_owner", detail="you are no longer an owner of this agent", client_message_id=cid
            )
        if decision == PostDecision.SESSION_NOT_OPEN:
            return ErrorOut(
                code=f"session_{session.status}",
                detail="this session does not accept messages any more; open a new one",
                client_message_id=cid,
            )
        if decision != PostDecision.ALLOWED:
            return ErrorOut(code=decision.value, detail="this session does not accept messages", client_message_id=cid)
        limited = message_rate_check(customer_id=str(session.customer_id) if session.customer_id else None, ip=self.ip)
        if limited is None:
            return None
        if session.customer_id is not None:
            trust_adjust(customer_id=session.customer_id, reason="rate_limited")
        return ErrorOut(
            code="rate_limited",
            detail=f"too many messages; try again in {limited.retry_after} s",
            client_message_id=cid,
            retry_after=limited.retry_after,
        )

    def _rate(self, frame: RateFrame) -> int:
        return rating_record(session=self._fresh(), stars=frame.stars, comment=frame.comment).stars

    # --- turns -----------------------------------------------------------------------------

    async def _work(self) -> None:
        while True:
            frame = await self.queue.get()
            if frame is None:
                return
            if self.closed:
                continue
            self.cancel_event = threading.Event()
            try:
                await self._turn(frame, self.cancel_event)
            except DialogueError as exc:
                await self._error(exc.code, exc.detail, client_message_id=frame.client_message_id)
            except Exception:  # one broken turn must not end the connection
                log.exception("chat turn failed", extra={"session": str(self.session.pk)})
                await self._error(
                    "internal_error",
                    "something went wrong; please try again",
                    client_message_id=frame.client_message_id,
                )
            finally:
                self.cancel_event = None

    async def _turn(self, frame: MessageFrame, cancel: threading.Event) -> None:
        loop = asyncio.get_running_loop()
        cid = frame.client_message_id

        def progress(state: str) -> None:  # runs in the turn's thread
            if cancel.is_set():
                run_cancel(session=self.session)
            # Handed to the event loop without waiting for it: a slow or gone browser never holds
            # the turn up, and a state costs no round trip between threads.
            loop.call_soon_threadsafe(self._progress, ProgressOut(client_message_id=cid, state=state).frame())

        def handle() -> dict[str, Any]:
            # The session and agent as `_admit` read them when the frame arrived (a turn that waited
            # in the queue is re-checked under the session's lock when its message is stored).
            session = self.session
            result = turn_handle(
                session=session,
                text=frame.text,
                client_message_id=cid,
                provider=provider_factory(session.agent) if provider_factory is not None else None,
                progress=progress,
                still_owner=self._still_owner if session.audience == Audience.OWNER else None,
            )
            return _result_view(result)

        result = await DatabaseSyncToAsync(handle, thread_sensitive=False, executor=turn_executor())()
        # The turn's progress frames were queued before its result arrived: they go out first.
        if self.progress_sent is not None:
            await self.progress_sent
        waited = 0.0
        while result["duplicate"] and result["reply"] is None and waited < DUPLICATE_WAIT and not self.closed:
            # Sent again (after a reconnect) while the first connection's turn is still running.
            await asyncio.sleep(DUPLICATE_POLL)
            waited += DUPLICATE_POLL
            result = await database_sync_to_async(handle)()
        if result["reply"] is not None and not result["duplicate"]:
            for piece in reply_chunks(result["reply"]["text"]):
                await self._send(DeltaOut(client_message_id=cid, text=piece).frame())
                await asyncio.sleep(DELTA_PAUSE)
        await self._send(ReplyOut(client_message_id=cid, **result).frame())

    # --- frames out ------------------------------------------------------------------------

    def _progress(self, frame: dict[str, Any]) -> None:
        """Send a progress frame after those queued before it (called on the event loop)."""
        self.progress_sent = asyncio.ensure_future(self._send_after(self.progress_sent, frame))

    async def _send_after(self, previous: asyncio.Future[None] | None, frame: dict[str, Any]) -> None:
        if previous is not None:
            with contextlib.suppress(Exception):  # a frame that could not be sent holds up no other
                await previous
        await self._send(frame)

    async def _send(self, frame: dict[str, Any]) -> None:
        if self.closed:
            return
        await self.send_json(frame)

    async def _error(self, code: str, detail: str, client_message_id: str | None = None) -> None:
        await self._send(ErrorOut(code=code, detail=detail, client_message_id=client_message_id).frame())

    @classmethod
    async def encode_json(cls, content: Any) -> str:
        return json.dumps(content, ensure_ascii=False)


def _result_view(result: TurnResult) -> dict[str, Any]:
    return {
        "message": message_view(result.message),
        "reply": reply_view(result.reply),
        "request": result.request,
        "duplicate": result.duplicate,
    }


def _cid(raw: dict[str, Any]) -> str | None:
    value = raw.get("client_message_id")
    return value if isinstance(value, str) else None
