"""Server-sent events of the JSON-RPC binding (A2A 1.0 §3.1.2, §3.1.6, §9.4.2): each event is
`data: <a JSON-RPC response whose result is a StreamResponse>`, and an error is sent as an event
named `error`, as a2a-sdk's server does.

`SendStreamingMessage` begins the task before the response starts (so every refusal is a plain
JSON-RPC error), then streams: the task, a WORKING status update for each thing the run does (the
progress the browser chat shows on its status line), the artifacts of the requests the turn
registered, and the status update with the agent's reply and the task's new state, which ends the
stream.  The turn runs on to its end whether or not the peer still listens: a dropped stream loses
nothing, `GetTask` or `SubscribeToTask` returns the reply.

`SubscribeToTask` streams the task as it stands and, while a turn is answering it, the status
update its answer gives, read from the database (another process may be running the turn)."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections, connections
from django.http import StreamingHttpResponse
from django.utils import translation
from django.utils.translation import gettext, gettext_noop

from facade.dialogue.runtime.prompts import conversation_language
from facade.tenancy.models import PeerCredential

from . import selectors, services
from .models import PeerTask
from .protocol import A2AError, InternalError, UnsupportedOperationError
from .rules import TaskState, is_terminal

log = logging.getLogger(__name__)

POLL_SECONDS = 0.25
SUBSCRIBE_SECONDS = 600  # a subscription to a task nobody answers ends after this long

# What the run is doing, in the words of the chat's status line (facade/web.py chat_texts: the
# same message ids, so the same translations).
PROGRESS = {
    "thinking": gettext_noop("Thinking…"),
    "searching_knowledge": gettext_noop("Searching knowledge…"),
    "registering_request": gettext_noop("Registering your request…"),
    "handing_off": gettext_noop("Asking a person to follow up…"),
    "withdrawing_request": gettext_noop("Withdrawing your request…"),
    "amending_request": gettext_noop("Updating your request…"),
    "reading_request": gettext_noop("Looking up your request…"),
    "working": gettext_noop("Working…"),
}


def event(request_id: Any, result: dict[str, Any]) -> bytes:
    body = {"jsonrpc": "2.0", "id": request_id, "result": result}
    return b"data: " + json.dumps(body, ensure_ascii=False).encode() + b"\n\n"


def error_event(request_id: Any, error: A2AError) -> bytes:
    return b"event: error\ndata: " + json.dumps(error.body(request_id), ensure_ascii=False).encode() + b"\n\n"


def response(events: AsyncIterator[bytes]) -> StreamingHttpResponse:
    streamed = StreamingHttpResponse(events, content_type="text/event-stream")
    streamed["Cache-Control"] = "no-cache"
    streamed["X-Accel-Buffering"] = "no"  # a proxy in front must pass each event on at once
    return streamed


def _progress_update(task: PeerTask, state: str, language: str) -> dict[str, Any]:
    with translation.override(language):
        words = gettext(PROGRESS.get(state, PROGRESS["working"]))
    status = {
        "state": TaskState.WORKING.value,
        "message": {
            "messageId": f"progress-{task.pk}-{state}",
            "contextId": str(task.session_id),
            "taskId": str(task.pk),
            "role": "ROLE_AGENT",
            "parts": [{"text": words, "mediaType": "text/plain"}],
        },
    }
    return {
        "statusUpdate": {
            "taskId": str(task.pk),
            "contextId": str(task.session_id),
            "status": status,
            "metadata": {"progress": state},
        }
    }


def _closing(view: dict[str, Any]) -> list[dict[str, Any]]:
    """The artifacts of the task, then its status: the last events of a stream."""
    ids = {"taskId": view["id"], "contextId": view["contextId"]}
    closing: list[dict[str, Any]] = [
        {"artifactUpdate": {**ids, "artifact": artifact, "lastChunk": True}} for artifact in view.get("artifacts", [])
    ]
    closing.append({"statusUpdate": {**ids, "status": view["status"]}})
    return closing


async def send_stream(
    *,
    request_id: Any,
    begun: services.Begun,
    credential: PeerCredential,
    text: str,
    message_id: str,
    history_length: int | None,
) -> AsyncIterator[bytes]:
    shown = begun.task
    if shown is None:  # task_begin writes a streamed task before its answer; never None here
        yield error_event(request_id, InternalError())
        return
    first = await sync_to_async(selectors.task_view)(shown, history_length=history_length)
    yield event(request_id, {"task": first})
    if begun.seen:  # answered before: the task as it stands is all there is to say
        return
    loop = asyncio.get_running_loop()
    heard: asyncio.Queue[str] = asyncio.Queue()
    language = conversation_language([text])

    def progress(state: str) -> None:  # runs in the turn's thread
        loop.call_soon_threadsafe(heard.put_nowait, state)

    # The turn runs in a thread of its own, not the request's: if the peer goes away, the request
    # ends without waiting for it (the request's thread would hold the event loop until it did).
    answer = asyncio.ensure_future(
        sync_to_async(_answer_detached, thread_sensitive=False)(
            begun=begun, credential=credential, text=text, message_id=message_id, progress=progress
        )
    )
    while not answer.done() or not heard.empty():
        if not heard.empty():
            yield event(request_id, _progress_update(shown, heard.get_nowait(), language))
            continue
        listening = asyncio.ensure_future(heard.get())
        done, _ = await asyncio.wait({answer, listening}, return_when=asyncio.FIRST_COMPLETED)
        if listening in done:
            yield event(request_id, _progress_update(shown, listening.result(), language))
        else:
            listening.cancel()
    try:
        task = answer.result()
    except A2AError as refused:
        yield error_event(request_id, refused)
        return
    except Exception:
        log.exception("a2a: a streamed turn failed", extra={"task": str(shown.pk)})
        yield error_event(request_id, InternalError())
        return
    view = await sync_to_async(selectors.task_view)(task)
    for closing in _closing(view):
        yield event(request_id, closing)


def _answer_detached(**kwargs: Any) -> PeerTask:
    """`task_answer` in a worker thread, with the database connections that thread opens closed
    when it is done (no request ends for it, so nothing else would close them)."""
    close_old_connections()
    try:
        return services.task_answer(**kwargs)
    finally:
        connections.close_all()


def answer_in_background(*, begun: services.Begun, credential: PeerCredential, text: str, message_id: str) -> None:
    """Answer a task's message in a daemon thread (a non-blocking SendMessage).  A process that
    dies meanwhile leaves the run to the sweep of stranded runs (runtime/stranded.py), which
    answers the conversation, and the sweep of stranded tasks (peers/stranded.py) ends the task."""

    def run() -> None:
        try:
            _answer_detached(begun=begun, credential=credential, text=text, message_id=message_id)
        except Exception:
            log.exception("a2a: a background turn failed", extra={"task": str(begun.task.pk if begun.task else "")})

    threading.Thread(target=run, name="a2a-answer", daemon=True).start()


def _fresh(task: PeerTask) -> PeerTask:
    return PeerTask.objects.select_related("session").get(pk=task.pk)


async def subscribe_stream(*, request_id: Any, task: PeerTask) -> AsyncIterator[bytes]:
    view = await sync_to_async(selectors.task_view)(task)
    yield event(request_id, {"task": view})
    if task.state != TaskState.WORKING:
        return  # waiting for the peer's input: nothing will happen until it answers
    waited = 0.0
    while waited < SUBSCRIBE_SECONDS:
        await asyncio.sleep(POLL_SECONDS)
        waited += POLL_SECONDS
        task = await sync_to_async(_fresh)(task)
        if task.state != TaskState.WORKING:
            break
    view = await sync_to_async(selectors.task_view)(task)
    for closing in _closing(view):
        yield event(request_id, closing)


def refuse_ended(task: PeerTask) -> None:
    """SubscribeToTask on an ended task is an unsupported operation (§3.1.6)."""
    if is_terminal(TaskState(task.state)):
        raise UnsupportedOperationError(f"the task is {task.state}", metadata={"taskId": str(task.pk)})
