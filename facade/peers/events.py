"""The peers app's ledger events: one payload model and one typed constructor per type.

An A2A task is a view over a peer's session (facade/peers/models.py): the peer's messages, the
runs and the requests are recorded by the dialogue app as the peer's (actor `peer:<key id>`).
What is recorded here is only what the task adds — that it was opened on a session, which
messages continued it and that it was canceled — with ids only, never the peer's words."""

from __future__ import annotations

from typing import Any

from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor
from ledger.catalogue import EventPayload, EventType, register
from ledger.schemas import AppendedEvent
from ledger.services import ledger_append

from .models import PeerTask

APP = "peers"
SWEEP = Actor.platform("a2a-tasks")  # the sweep of stranded tasks (peers/stranded.py)


class A2ATaskOpened(EventPayload):
    agent: str
    session: str
    # The first message, when the task is written with its answer (SendMessage); None when it is
    # written before (a stream shows it first): its answer is `a2a_task.message_received`.
    message_id: int | None
    state: str


class A2ATaskMessageReceived(EventPayload):
    message_id: int
    state: str  # the task's state once the run answered it


class A2ATaskCanceled(EventPayload):
    runs_stopped: int


class A2AListingChanged(EventPayload):
    agent: str
    listed: bool


class A2ATaskStranded(EventPayload):
    # The message the task was answering (None: the process died before storing it).
    message_id: int | None
    state: str  # the final state the sweep gave it
    stuck_seconds: int


A2A_TASK_OPENED = register(
    "a2a_task.opened",
    app=APP,
    entity_type="a2a_task",
    payload=A2ATaskOpened,
    description="A peer agent's message over A2A started a task in one of its sessions with the agent (with the "
    "first message and the state its answer gave, unless the task was shown before the answer).",
)
A2A_TASK_MESSAGE_RECEIVED = register(
    "a2a_task.message_received",
    app=APP,
    entity_type="a2a_task",
    payload=A2ATaskMessageReceived,
    description="A peer agent's message (the first, or an answer to a task that asked for input) was answered "
    "in the task; the state the answer gave the task is recorded.",
)
A2A_TASK_CANCELED = register(
    "a2a_task.canceled",
    app=APP,
    entity_type="a2a_task",
    payload=A2ATaskCanceled,
    description="A peer agent canceled one of its tasks (a running turn is asked to stop, as the chat's cancel).",
)
A2A_TASK_STRANDED = register(
    "a2a_task.stranded",
    app=APP,
    entity_type="a2a_task",
    payload=A2ATaskStranded,
    description="A task left working beyond FACADE_RUN_STUCK_SECONDS (the process answering it died) was ended "
    "by the sweep: with its run's honest reply, or failed when its message was never stored.",
)
A2A_LISTING_CHANGED = register(
    "a2a_listing.changed",
    app=APP,
    entity_type="agent",
    payload=A2AListingChanged,
    description="An owner put the agent on the platform's list of A2A agents (/a2a/agents), or took it off.",
)


def _append(event_type: EventType, task: PeerTask, actor: Actor, payload: EventPayload) -> AppendedEvent:
    entity: Any = task.pk
    return ledger_append(
        chain_id=task.tenant_id,
        event_type=event_type.name,
        entity_type=event_type.entity_type,
        entity_id=str(entity),
        actor_type=actor.type,
        actor_id=actor.id,
        payload=payload.model_dump(),
    )


def a2a_task_opened(*, task: PeerTask, agent_slug: str, message_id: int | None, actor: Actor) -> AppendedEvent:
    payload = A2ATaskOpened(agent=agent_slug, session=str(task.session_id), message_id=message_id, state=task.state)
    return _append(A2A_TASK_OPENED, task, actor, payload)


def a2a_task_message_received(*, task: PeerTask, message_id: int, actor: Actor) -> AppendedEvent:
    payload = A2ATaskMessageReceived(message_id=message_id, state=task.state)
    return _append(A2A_TASK_MESSAGE_RECEIVED, task, actor, payload)


def a2a_task_canceled(*, task: PeerTask, runs_stopped: int, actor: Actor) -> AppendedEvent:
    return _append(A2A_TASK_CANCELED, task, actor, A2ATaskCanceled(runs_stopped=runs_stopped))


def a2a_task_stranded(*, task: PeerTask, message_id: int | None, stuck_seconds: int) -> AppendedEvent:
    payload = A2ATaskStranded(message_id=message_id, state=task.state, stuck_seconds=stuck_seconds)
    return _append(A2A_TASK_STRANDED, task, SWEEP, payload)


def a2a_listing_changed(*, agent: AgentProfile, listed: bool, actor: Actor) -> AppendedEvent:
    payload = A2AListingChanged(agent=agent.slug, listed=listed)
    return ledger_append(
        chain_id=agent.tenant_id,
        event_type=A2A_LISTING_CHANGED.name,
        entity_type=A2A_LISTING_CHANGED.entity_type,
        entity_id=agent.slug,
        actor_type=actor.type,
        actor_id=actor.id,
        payload=payload.model_dump(),
    )
