"""Reads of the A2A binding: a peer's tasks as the specification's `Task` objects (ProtoJSON),
scoped to the key that asks — a peer never reads another's task, nor a customer's."""

from __future__ import annotations

import base64
import datetime as dt
import uuid
from typing import Any

from django.db.models import Q
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from facade.dialogue.models import CustomerRequest, Message
from facade.dialogue.runtime.prompts import conversation_language
from facade.tenancy.models import PeerCredential

from .models import PeerTask
from .protocol import DEFAULT_PAGE, InvalidParamsError, ListTasksRequest
from .rules import STRANDED

# What a task the sweep of stranded tasks ended says when its message was never stored.
NOT_SAVED = _(
    "I couldn't answer this because of a technical problem, and your message was not saved; please send it again."
)


def timestamp(moment: dt.datetime) -> str:
    """ISO 8601 in UTC, as the specification writes timestamps (section 5.6.1)."""
    return moment.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _message(message: Message, *, task: PeerTask, agent: bool) -> dict[str, Any]:
    own_id = message.client_message_id if not agent and message.client_message_id else f"msg-{message.pk}"
    return {
        "messageId": own_id,
        "contextId": str(task.session_id),
        "taskId": str(task.pk),
        "role": "ROLE_AGENT" if agent else "ROLE_USER",
        "parts": [{"text": message.text, "mediaType": "text/plain"}],
    }


def _artifact(request: CustomerRequest) -> dict[str, Any]:
    """A request the task registered: its id and where it stands, as data (never its owner's notes)."""
    return {
        "artifactId": f"request-{request.pk}",
        "name": "request",
        "description": "The request registered for the business to act on, and where it stands.",
        "parts": [
            {
                "data": {
                    "requestId": request.pk,
                    "kind": request.kind,
                    "state": request.state,
                    "nextActor": request.next_actor,
                },
                "mediaType": "application/json",
            }
        ],
    }


def task_view(task: PeerTask, *, history_length: int | None = None, include_artifacts: bool = True) -> dict[str, Any]:
    """The task as the specification's `Task`: its status (state, the agent's latest reply,
    when), the requests its turns registered as artifacts, and its messages as history
    (`history_length`: the latest that many; 0 leaves the history out, section 3.2.4)."""
    said = list(Message.objects.filter(Q(a2a_turn__task=task) | Q(reply_to__a2a_turn__task=task)).order_by("pk"))
    asked = [m for m in said if m.reply_to_id is None]
    replies = {m.reply_to_id: m for m in said if m.reply_to_id is not None}
    history: list[dict[str, Any]] = []
    for message in asked:
        history.append(_message(message, task=task, agent=False))
        if message.pk in replies:
            history.append(_message(replies[message.pk], task=task, agent=True))
    latest = next((replies[m.pk] for m in reversed(asked) if m.pk in replies), None)
    status: dict[str, Any] = {"state": task.state, "timestamp": timestamp(task.updated_at)}
    if latest is not None:
        status["message"] = _message(latest, task=task, agent=True)
    if task.stop_reason == STRANDED and (not asked or asked[-1].pk not in replies):
        # Ended by the sweep with no turn's answer: its message was never stored.
        with translation.override(task.language or conversation_language([m.text for m in reversed(asked)])):
            words = str(NOT_SAVED)
        status["message"] = {
            "messageId": f"status-{task.pk}",
            "contextId": str(task.session_id),
            "taskId": str(task.pk),
            "role": "ROLE_AGENT",
            "parts": [{"text": words, "mediaType": "text/plain"}],
        }
    view: dict[str, Any] = {"id": str(task.pk), "contextId": str(task.session_id), "status": status}
    if include_artifacts:
        requests = CustomerRequest.objects.filter(run__message__in=asked).order_by("pk")
        view["artifacts"] = [_artifact(r) for r in requests]
    if history_length != 0:
        view["history"] = history if history_length is None else history[-history_length:]
    return view


def _cursor(task: PeerTask) -> str:
    return base64.urlsafe_b64encode(f"{task.updated_at.isoformat()}|{task.pk}".encode()).decode()


def _after_cursor(token: str) -> Q:
    try:
        moment, _, pk = base64.urlsafe_b64decode(token.encode()).decode().partition("|")
        when, key = dt.datetime.fromisoformat(moment), uuid.UUID(pk)
    except (ValueError, UnicodeDecodeError):
        raise InvalidParamsError(
            "pageToken is not one this server gave", violations=[("pageToken", "invalid")]
        ) from None
    return Q(updated_at__lt=when) | Q(updated_at=when, pk__lt=key)


def tasks_list(*, credential: PeerCredential, request: ListTasksRequest) -> dict[str, Any]:
    """The key's own tasks, most recently updated first, a page at a time (section 3.1.4)."""
    tasks = PeerTask.objects.filter(peer=credential)
    if request.context_id:
        context = _uuid(request.context_id)
        tasks = tasks.filter(session_id=context) if context is not None else tasks.none()
    if request.status != "TASK_STATE_UNSPECIFIED":
        tasks = tasks.filter(state=request.status)
    if request.status_timestamp_after:
        try:
            after = dt.datetime.fromisoformat(request.status_timestamp_after.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidParamsError(violations=[("statusTimestampAfter", "not an ISO 8601 timestamp")]) from None
        tasks = tasks.filter(updated_at__gt=after)
    total = tasks.count()
    size = request.page_size or DEFAULT_PAGE
    page = tasks.order_by("-updated_at", "-pk")
    if request.page_token:
        page = page.filter(_after_cursor(request.page_token))
    rows = list(page[: size + 1])
    more = len(rows) > size
    rows = rows[:size]
    return {
        "tasks": [
            task_view(t, history_length=request.history_length, include_artifacts=request.include_artifacts)
            for t in rows
        ],
        "nextPageToken": _cursor(rows[-1]) if more else "",
        "pageSize": size,
        "totalSize": total,
    }


def _uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None
