"""The chat WebSocket (`ws/sessions/<uuid>/`): one connection per session, for its principal.

A thin layer over the same selector and services as the HTTP API.  On connect the caller must
be the session's principal — the signed-in user of an owner session, or the customer whose
tenant-scoped signed cookie matches a customer session; peers use HTTP only.  Anyone else is
refused exactly like a session id that does not exist: accepted, then closed with 4404 (a close
before the handshake reaches a browser only as 1006), so the code never tells which ids exist.
Every message passes `message_admit`, the gate the HTTP API uses, and a refusal is an `error`
frame with the code the HTTP API would answer.

A message runs `turn_handle` in a worker thread as a background task, so that a `cancel`
frame arriving meanwhile is handled at once.  Progress frames come from the runtime's callback;
the reply, already guarded by the runtime, is then streamed in a few `delta` frames and closed
by a `reply` frame.  Messages of one connection run one after another, in the order sent.

Redis being away (the channel layer, the cache the rate limits count in) is an expected
condition here, not a crash: the connection stays open, a message is refused with an `error`
frame `temporarily_unavailable` and its `retry_after` (the page keeps it and sends it again),
and the layer is asked again with a growing pause until it answers, when the connection rejoins
its session's group.  Pushes sent meanwhile are lost; what they carried is in the history.
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
from typing import Any

from channels.db import DatabaseSyncToAsync, database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from pydantic import ValidationError

from audit.access import is_auditor_only
from facade import dependencies
from facade.accounts.devices import two_step_of
from facade.accounts.rules import TwoStep
from facade.errors import ApplicationError
from facade.ratelimit import UNREACHABLE, scope_client_ip, temporarily_unavailable_error
from facade.tenancy.identity import Principal
from facade.tenancy.models import AgentProfile
from facade.tenancy.policy import AgentPolicy, NotFound
from facade.tenancy.rules import Audience

from .models import DialogueSession
from .push import session_group
from .rules import text_problem
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
from .selectors import message_view, reply_view, session_for_principal, session_history
from .services import message_admit, rating_record

log = logging.getLogger(__name__)

CLOSE_NOT_FOUND = 4404  # no such session for this caller: unknown and someone else's alike
CLOSE_TWO_STEP = 4401  # an owner whose sign-in lacks the authenticator step it needs (after an error frame)
DELTA_CHARS = 40  # a reply is streamed in pieces of at least about this size …
DELTA_MAX = 3  # … and in at most this many (each frame costs the server a write; the text is complete)
DELTA_PAUSE = 0.0  # seconds between pieces (the text is complete and guarded already; no artificial delay)
DUPLICATE_WAIT = 60.0  # seconds a resent message waits for a reply another connection is writing
DUPLICATE_POLL = 0.5
LAYER_RETRY_FIRST = 0.5  # seconds before the channel layer is asked again after it failed …
LAYER_RETRY_MAX = 5.0  # … doubling up to this
# What the channel layer raises while Redis is away (redis-py's errors, or a socket's own).
LAYER_DOWN = (*UNREACHABLE, OSError)

# The model behind the chat: None means the runtime's configured provider.  Tests put a
# scripted one here (a callable taking the agent).
provider_factory: Callable[[AgentProfile], Provider] | None = None


@functools.lru_cache(maxsize=1)
def turn_executor() -> ThreadPoolExecutor:
    """The threads that run turns.  asyncio's default pool has min(32, cores + 4) threads, which
    would let a handful of turns waiting on a slow model hold up every other sync call."""
    return ThreadPoolExecutor(max_workers=settings.FACADE_TURN_THREADS, thread_name_prefix="facade-turn")


def scope_principal(scope: dict[str, Any]) -> Principal:
    """The caller of a WebSocket: the user the auth middleware signed in and the cookies sent
    with the handshake.  Never a peer — peers have no key to show here."""
    return Principal.of(user=scope.get("user"), cookies=scope.get("cookies") or {})


def session_or_none(principal: Principal, session_id: Any) -> DialogueSession | None:
    try:
        return session_for_principal(principal=principal, session_id=session_id)
    except NotFound:
        return None


def two_step_refusal(scope: dict[str, Any]) -> ApplicationError | None:
    """The owner face over the WebSocket holds a signed-in user to the two-step rules that
    TwoStepGate applies to pages and the API: a user with an authenticator whose session never
    gave a code, or an owner whose tenant requires one and who has none, is refused."""
    user = scope.get("user")
    if user is None or not user.is_authenticated:
        return None
    verdict = two_step_of(user, scope.get("session"))
    if verdict is TwoStep.MUST_SIGN_IN_AGAIN:
        return ApplicationError("two_step_required", "sign in again with your authenticator code", 401)
    if verdict is TwoStep.MUST_ENROL:
        return ApplicationError("two_step_enrolment_required", "your business requires an authenticator app", 403)
    return None


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


class ChatConsumer(AsyncJsonWebsocketConsumer):
    principal: Principal
    session: DialogueSession
    ip: str
    group: str
    in_group = False  # whether the channel layer has this connection in its session's group

    # Channels' consumer sets `channel_receive` to the layer's own receive and lets what it raises
    # end the connection (a 1011 close while Redis is away, in a loop as the page reconnects).
    # The property keeps the layer's receive and hands Channels one that waits out an outage.
    @property
    def channel_receive(self) -> Callable[[], Any]:
        return self._layer_receive_patiently

    @channel_receive.setter
    def channel_receive(self, receive: Callable[[], Any]) -> None:
        self._layer_receive = receive

    async def _layer_receive_patiently(self) -> dict[str, Any]:
        """The next message from the channel layer; while it cannot be reached, ask again after a
        pause that doubles up to LAYER_RETRY_MAX, and rejoin the session's group once it answers
        (a restarted Redis may have lost the membership)."""
        pause = LAYER_RETRY_FIRST
        while True:
            try:
                await self._join()
                message: dict[str, Any] = await self._layer_receive()
                return message
            except LAYER_DOWN as exc:
                if self.in_group or pause == LAYER_RETRY_FIRST:
                    log.warning("chat channel layer unreachable (%s); waiting for it", type(exc).__name__)
                dependencies.note_down(dependencies.REDIS)
                self.in_group = False
                await asyncio.sleep(pause)
                pause = min(pause * 2, LAYER_RETRY_MAX)

    async def _join(self) -> None:
        """Join the session's group unless in it already (or not connected to a session)."""
        if not self.in_group and getattr(self, "group", None) is not None and not self.closed:
            await self.channel_layer.group_add(self.group, self.channel_name)
            self.in_group = True
            dependencies.note_up(dependencies.REDIS)

    async def _join_patiently(self) -> None:
        """Join the session's group after the join at connect failed, asking again with a pause that
        doubles up to LAYER_RETRY_MAX.  The layer's receive may well be answering meanwhile (it
        fails and rejoins on its own only when the layer is away while it waits), so without this a
        connection that missed its join would never hear a push."""
        pause = LAYER_RETRY_FIRST
        while not self.in_group and not self.closed:
            await asyncio.sleep(pause)
            pause = min(pause * 2, LAYER_RETRY_MAX)
            try:
                await self._join()
            except LAYER_DOWN:
                dependencies.note_down(dependencies.REDIS)

    async def connect(self) -> None:
        self.closed = False
        self.joining: asyncio.Task[None] | None = None
        self.queue: asyncio.Queue[MessageFrame | None] = asyncio.Queue()
        self.worker: asyncio.Task[None] | None = None
        self.cancel_event: threading.Event | None = None
        self.progress_sent: asyncio.Future[None] | None = None
        self.principal = scope_principal(self.scope)
        # A signed-in auditor reads and changes nothing here either (audit/readonly.py): not as
        # the customer their cookie names, not in a session of their own.
        self.read_only = await database_sync_to_async(is_auditor_only)(self.scope.get("user"))
        session = await database_sync_to_async(session_or_none)(
            self.principal, self.scope["url_route"]["kwargs"]["session_id"]
        )
        await self.accept()
        if session is None:
            self.closed = True
            await self.close(code=CLOSE_NOT_FOUND)
            return
        if session.user_id is not None:  # the owner face, and an owner's preview of the customer face
            refusal = await database_sync_to_async(two_step_refusal)(self.scope)
            if refusal is not None:  # as TwoStepGate refuses the owner's pages and API
                await self._refuse(refusal)
                self.closed = True
                await self.close(code=CLOSE_TWO_STEP)
                return
        self.session = session
        self.ip = scope_client_ip(self.scope)  # behind a trusted proxy, the client it names
        # Before the history is read, so that an owner's reply stored meanwhile is in one or the other.
        self.group = session_group(session.pk)
        try:
            await self._join()
        except LAYER_DOWN:  # joined when the layer answers again, by a task of its own
            dependencies.note_down(dependencies.REDIS)
            self.joining = asyncio.create_task(self._join_patiently())
        history = await database_sync_to_async(session_history)(session)
        await self._send(HistoryOut(audience=session.audience, **history).frame())
        self.worker = asyncio.create_task(self._work())

    async def disconnect(self, code: int) -> None:
        self.closed = True
        if self.joining is not None:
            self.joining.cancel()
        group = getattr(self, "group", None)
        if group is not None and self.in_group:
            try:
                await self.channel_layer.group_discard(group, self.channel_name)
            except LAYER_DOWN:  # the membership expires in the layer on its own
                dependencies.note_down(dependencies.REDIS)
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
        except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
            raw = None
        if not isinstance(raw, dict):
            await self._refuse(ApplicationError("malformed_frame", "a frame is a JSON object with a type"))
            return
        try:
            frame = in_frame.validate_python(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'frame'}: {e['msg']}" for e in exc.errors()[:3]
            )
            await self._refuse(ApplicationError("malformed_frame", problems[:300]), client_message_id=_cid(raw))
            return
        if self.read_only:
            refusal = ApplicationError("read_only", "auditors change nothing: sign out to chat as a customer", 403)
            await self._refuse(refusal, client_message_id=_cid(raw))
            return
        if isinstance(frame, MessageFrame):
            try:
                await database_sync_to_async(self._admit)(frame)
            except ApplicationError as exc:
                await self._refuse(exc, client_message_id=_cid(raw))
                return
            self.queue.put_nowait(frame)
        elif isinstance(frame, CancelFrame):  # run_cancel does not raise while Redis is away
            runs = await database_sync_to_async(run_cancel)(session=self.session)
            if self.cancel_event is not None:
                # The turn may not have created its run yet; it cancels itself at its next step.
                self.cancel_event.set()
            await self._send(CancelAckOut(runs=runs).frame())
        elif isinstance(frame, RateFrame):
            try:
                stars = await database_sync_to_async(self._rate)(frame)
            except ApplicationError as exc:
                await self._refuse(exc)
                return
            await self._send(RatedOut(stars=stars).frame())

    def _still_owner(self) -> bool:
        """Asked again before every owner tool call, from the database."""
        user_id = self.principal.user_id
        return user_id is not None and AgentPolicy.still_owns(user_id=user_id, agent=self.session.agent)

    def _admit(self, frame: MessageFrame) -> None:
        """The gate of the HTTP endpoint; the session as it reads now is the one the turn uses."""
        self.session = message_admit(
            principal=self.principal,
            session_id=self.session.pk,
            text=frame.text,
            client_message_id=frame.client_message_id,
            ip=self.ip,
            held=self.session,
        )

    def _rate(self, frame: RateFrame) -> int:
        # The audience never changes and the service reads whether it was rated: the copy in hand will do.
        return rating_record(session=self.session, stars=frame.stars, comment=frame.comment).stars

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
            except ApplicationError as exc:
                await self._refuse(exc, client_message_id=frame.client_message_id)
            except UNREACHABLE:  # Redis went away during the turn: the page sends it again
                dependencies.note_down(dependencies.REDIS)
                await self._refuse(temporarily_unavailable_error("messages"), client_message_id=frame.client_message_id)
            except Exception:  # one broken turn must not end the connection
                log.exception("chat turn failed", extra={"session": str(self.session.pk)})
                await self._refuse(
                    ApplicationError("internal_error", "something went wrong; please try again"),
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
            # On the turn executor too: a re-send of a broken turn runs it again here, model
            # calls and all, and must not hold the process's shared database thread.
            result = await DatabaseSyncToAsync(handle, thread_sensitive=False, executor=turn_executor())()
        if result["reply"] is not None and not result["duplicate"]:
            for piece in reply_chunks(result["reply"]["text"]):
                await self._send(DeltaOut(client_message_id=cid, text=piece).frame())
                await asyncio.sleep(DELTA_PAUSE)
        await self._send(ReplyOut(client_message_id=cid, **result).frame())

    # --- frames out ------------------------------------------------------------------------

    async def session_push(self, event: dict[str, Any]) -> None:
        """A frame another process sent to this session's connections (`push.session_push`):
        an owner's reply to a request, or a request that moved."""
        await self._send(event["frame"])

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

    async def _refuse(self, error: ApplicationError, client_message_id: str | None = None) -> None:
        """The one writer of `error` frames: the code, detail and retry_after the HTTP API would
        answer (its status has no place in a frame), and the message refused, if any."""
        frame = ErrorOut(
            code=error.code,
            detail=_sendable(error.detail),  # a validation detail may quote what the frame held
            client_message_id=client_message_id,
            retry_after=error.retry_after,
            session=str(error.extra["session"]) if "session" in error.extra else None,
        )
        await self._send(frame.frame())

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
    """The client_message_id to name in an error frame: only one the page could have sent and
    can read back (text with no NUL or lone surrogate, which could not be sent at all)."""
    value = raw.get("client_message_id")
    return value if isinstance(value, str) and text_problem(value) is None else None


def _sendable(text: str) -> str:
    """Text that can go out in a frame: a lone surrogate cannot be encoded as UTF-8."""
    return text.encode("utf-8", "replace").decode("utf-8")
