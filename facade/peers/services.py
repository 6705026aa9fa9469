"""Writes of the A2A binding: a peer's message starts or continues a task, and a peer cancels one.

A task is carried by the dialogue app: the peer's session is its context, each of its messages
is admitted (`message_admit`: the caller's session, limits per key, bounded text) and answered
(`turn_handle`: the same run loop, tools and outgoing check as a customer's) exactly as over the
peer's HTTP API.  The audience is the session's, and a peer's session is opened only from its
key (`session_open` with the key, audience derived by `derive_audience`); nothing a message
carries is asked."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus

from django.db import transaction
from django.utils import timezone

from facade.dialogue.models import DialogueSession, Message, Run
from facade.dialogue.runtime.loop import run_cancel, turn_handle
from facade.dialogue.runtime.prompts import conversation_language
from facade.dialogue.runtime.tools import Outcome
from facade.dialogue.selectors import session_for_principal
from facade.dialogue.services import message_admit, message_check, session_open
from facade.errors import ApplicationError
from facade.ratelimit import anonymous_rate_check, rate_limited_error
from facade.tenancy.identity import Principal
from facade.tenancy.models import AgentProfile, PeerCredential
from facade.tenancy.policy import NotFound
from facade.tenancy.rules import CallerFacts, derive_audience
from facade.tenancy.schemas import Actor

from . import events
from .models import PeerTask, PeerTaskTurn
from .protocol import (
    A2AError,
    InternalError,
    InvalidParamsError,
    RateLimitedError,
    SendMessageRequest,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from .rules import TaskState, is_terminal, task_state


def peer_task(*, credential: PeerCredential, task_id: str) -> PeerTask:
    """The task, if this key's peer opened it; otherwise TaskNotFoundError, alike for a task
    that does not exist and another's (section 3.3.2: never reveal what the caller may not see)."""
    try:
        key = uuid.UUID(task_id)
    except ValueError:
        raise TaskNotFoundError(metadata={"taskId": task_id[:64]}) from None
    task = PeerTask.objects.select_related("session").filter(pk=key, peer=credential).first()
    if task is None:
        raise TaskNotFoundError(metadata={"taskId": task_id[:64]})
    return task


def _peer_session(agent: AgentProfile, credential: PeerCredential) -> DialogueSession:
    """A new session for the key's peer; its audience derived from the key alone."""
    audience = derive_audience(
        CallerFacts(has_valid_peer_key=True, is_authenticated=False, is_agent_owner=False, is_platform_operator=False)
    )
    limited = anonymous_rate_check("session", caller=str(credential.pk), ip=None)
    if limited is not None:
        raise as_a2a(rate_limited_error(limited, "tasks opened"))
    return session_open(agent=agent, audience=audience, peer=credential)


def as_a2a(error: ApplicationError) -> A2AError:
    """A dialogue refusal in the binding's terms."""
    if error.http_status == HTTPStatus.TOO_MANY_REQUESTS:
        limited = RateLimitedError(error.detail)
        if error.retry_after:
            limited.headers["Retry-After"] = str(error.retry_after)
        return limited
    if error.http_status == HTTPStatus.CONFLICT:
        metadata = {"reason": error.code}
        if "session" in error.extra:
            metadata["contextId"] = str(error.extra["session"])
        return UnsupportedOperationError(
            f"this conversation takes no more messages ({error.code}); start a new task without a contextId"
            + (", or send it in the context named" if "session" in error.extra else ""),
            metadata=metadata,
        )
    if error.http_status == HTTPStatus.BAD_REQUEST:
        return InvalidParamsError(error.detail, violations=[("message.parts", error.code)])
    if error.http_status == HTTPStatus.NOT_FOUND:
        return InvalidParamsError("no such conversation", violations=[("message.contextId", "not_found")])
    unavailable = InternalError(error.detail)
    if error.retry_after:
        unavailable.headers["Retry-After"] = str(error.retry_after)
    return unavailable


def _state_of(run: Run | None, *, canceled: bool) -> TaskState:
    if run is None:
        return task_state(run_status=None, stop_reason="", needs_input=False, canceled=canceled)
    refused = run.spans.filter(kind="tool", outcome=Outcome.REFUSED.value).exists()
    return task_state(
        run_status=run.status,
        stop_reason=run.stop_reason,
        needs_input=run.needs_input,
        canceled=canceled,
        refused=refused,
    )


@dataclass(frozen=True)
class Begun:
    """A peer's message admitted to a task, before its turn: the task (created working, taken
    from input-required to working, or — `task` None — a new one that `task_answer` makes in
    the answer's transaction), its session, and the state it goes back to if the turn gives no
    answer.  `seen`: the message was answered before; the task is as it stands."""

    task: PeerTask | None  # None: a new task, made with the answer to its first message
    session: DialogueSession
    resume: TaskState
    agent: AgentProfile
    seen: bool = False


def task_send(
    *, agent: AgentProfile, credential: PeerCredential, request: SendMessageRequest, text: str, ip: str | None
) -> PeerTask:
    """Answer a peer's message in a task (`task_begin`, then `task_answer`).  A new task is
    written with its first answer (one transaction, one ledger event): nobody can ask for it
    before this call returns its id."""
    begun = task_begin(agent=agent, credential=credential, request=request, text=text, ip=ip, persist=False)
    if begun.seen and begun.task is not None:
        return begun.task
    return task_answer(begun=begun, credential=credential, text=text, message_id=request.message.message_id)


def task_begin(
    *,
    agent: AgentProfile,
    credential: PeerCredential,
    request: SendMessageRequest,
    text: str,
    ip: str | None,
    persist: bool = True,
) -> Begun:
    """Admit a peer's message to a task: a new one (a new conversation, or a new task in one of
    the peer's conversations, `contextId`), or the task named by `taskId`, which must be waiting
    for input.  A message id sent again in the same conversation names the task it went to.
    Every refusal is raised here, before the turn (and, for a new conversation, before its
    session is opened).  A new task is written now (`persist`: a stream shows it before the
    answer) or with its answer."""
    message = request.message
    principal = Principal(peer_id=credential.pk)
    actor = Actor.peer(credential.pk)
    task: PeerTask | None = None
    context: uuid.UUID | None = None
    session: DialogueSession | None
    if message.task_id:
        task = peer_task(credential=credential, task_id=message.task_id)
        if message.context_id and message.context_id != str(task.session_id):
            raise InvalidParamsError(
                "contextId is not the task's", violations=[("message.contextId", "does not match the task's context")]
            )
        session = task.session
    elif message.context_id:
        try:
            context = uuid.UUID(message.context_id)
            # A stream shows its task first, so a message sent again is looked for now; otherwise
            # `message_admit` reads the session, and the answer finds the task it went to.
            session = session_for_principal(principal=principal, session_id=context) if persist else None
        except (ValueError, NotFound):
            raise InvalidParamsError(
                "no such conversation of yours", violations=[("message.contextId", "not_found")]
            ) from None
    else:
        session = None
    if session is not None:
        seen = (
            PeerTaskTurn.objects.select_related("task__session")
            .filter(message__session=session, message__client_message_id=message.message_id)
            .first()
        )
        if seen is not None:  # the same message again: its task, not a second run
            return Begun(task=seen.task, session=session, resume=TaskState(seen.task.state), agent=agent, seen=True)
    if task is not None and is_terminal(TaskState(task.state)):
        raise UnsupportedOperationError(
            f"the task is {task.state} and takes no more messages", metadata={"taskId": str(task.pk)}
        )
    try:
        if session is None and context is None:
            message_check(text=text, client_message_id=message.message_id)  # before a session is opened
            session = _peer_session(agent, credential)
        # A session just read (or opened) as this key's is admitted as held: its status read again.
        session = message_admit(
            principal=principal,
            session_id=session.pk if session is not None else str(context),
            text=text,
            client_message_id=message.message_id,
            ip=ip,
            held=session,
        )
    except ApplicationError as refused:
        raise as_a2a(refused) from None
    if task is None:
        if not persist:
            return Begun(task=None, session=session, resume=TaskState.FAILED, agent=agent)
        with transaction.atomic():
            task = PeerTask.objects.create(
                tenant_id=session.tenant_id,
                agent=agent,
                peer=credential,
                session=session,
                state=TaskState.WORKING.value,
                pending_message_id=message.message_id,
                language=conversation_language([text]),
                updated_at=timezone.now(),
            )
            events.a2a_task_opened(task=task, agent_slug=agent.slug, message_id=None, actor=actor)
        return Begun(task=task, session=session, resume=TaskState.FAILED, agent=agent)
    # One answer at a time: only a task that asks for input takes the message (compare and set).
    taken = PeerTask.objects.filter(pk=task.pk, state=TaskState.INPUT_REQUIRED.value).update(
        state=TaskState.WORKING.value,
        pending_message_id=message.message_id,
        language=conversation_language([text]),
        updated_at=timezone.now(),
    )
    if not taken:
        raise UnsupportedOperationError(
            "the task is being answered; send again when it asks for input", metadata={"taskId": str(task.pk)}
        )
    task.refresh_from_db()
    return Begun(task=task, session=session, resume=TaskState.INPUT_REQUIRED, agent=agent)


def task_answer(
    *,
    begun: Begun,
    credential: PeerCredential,
    text: str,
    message_id: str,
    progress: Callable[[str], None] | None = None,
) -> PeerTask:
    """Run the turn that answers the message (`progress` hears what the run is doing, as the
    chat's status line does) and give the task the state its run ended in."""
    task = begun.task
    try:
        result = turn_handle(session=begun.session, text=text, client_message_id=message_id, progress=progress)
    except BaseException as broke:
        # No answer: the task is as it was before this message (a new one has failed).
        if task is not None:
            PeerTask.objects.filter(pk=task.pk, state=TaskState.WORKING.value).update(state=begun.resume.value)
        if isinstance(broke, ApplicationError):
            raise as_a2a(broke) from None
        raise
    actor = Actor.peer(credential.pk)
    if task is None:
        return _task_open(
            begun=begun,
            credential=credential,
            message=result.message,
            run=result.run,
            actor=actor,
            duplicate=result.duplicate,
        )
    return _turn_link(task=task, message=result.message, run=result.run, actor=actor)


@transaction.atomic
def _task_open(
    *, begun: Begun, credential: PeerCredential, message: Message, run: Run | None, actor: Actor, duplicate: bool
) -> PeerTask:
    """A new task with its first message answered: the task, its turn and one event.  A message
    sent again (`duplicate`: the turn found it stored) names the task it went to."""
    if duplicate:
        turn = PeerTaskTurn.objects.filter(message=message).select_related("task").first()
        if turn is not None:
            return turn.task
    if run is None:
        run = Run.objects.filter(message=message).first()
    task = PeerTask.objects.create(
        tenant_id=begun.session.tenant_id,
        agent=begun.agent,
        peer=credential,
        session=begun.session,
        state=_state_of(run, canceled=False).value,
        pending_message_id=message.client_message_id,
        updated_at=timezone.now(),
    )
    PeerTaskTurn.objects.create(task=task, message=message)
    events.a2a_task_opened(task=task, agent_slug=begun.agent.slug, message_id=message.pk, actor=actor)
    return task


@transaction.atomic
def _turn_link(*, task: PeerTask, message: Message, run: Run | None, actor: Actor) -> PeerTask:
    locked = PeerTask.objects.select_for_update().get(pk=task.pk)
    turn = PeerTaskTurn.objects.filter(message=message).select_related("task").first()
    if turn is not None:
        return turn.task
    PeerTaskTurn.objects.create(task=locked, message=message)
    if is_terminal(TaskState(locked.state)):
        # Ended meanwhile (canceled, or by the sweep of stranded tasks): the turn is kept in its
        # history, and an ended task's state is final.
        events.a2a_task_message_received(task=locked, message_id=message.pk, actor=actor)
        return locked
    if run is None:
        run = Run.objects.filter(message=message).first()
    locked.state = _state_of(run, canceled=locked.canceled_at is not None).value
    locked.updated_at = timezone.now()
    locked.save(update_fields=["state", "updated_at"])
    events.a2a_task_message_received(task=locked, message_id=message.pk, actor=actor)
    return locked


def task_cancel(*, credential: PeerCredential, task_id: str) -> PeerTask:
    """Cancel a task that has not ended: a turn still running is asked to stop, as the chat's
    cancel does (`run_cancel`), and the task is CANCELED.  An ended task: TaskNotCancelableError."""
    found = peer_task(credential=credential, task_id=task_id)
    with transaction.atomic():
        task = PeerTask.objects.select_for_update().get(pk=found.pk)
        if is_terminal(TaskState(task.state)):
            raise TaskNotCancelableError(metadata={"taskId": str(task.pk), "state": task.state})
        stopped = run_cancel(session=task.session) if task.state == TaskState.WORKING else 0
        task.canceled_at = task.updated_at = timezone.now()
        task.state = TaskState.CANCELED.value
        task.save(update_fields=["canceled_at", "updated_at", "state"])
        events.a2a_task_canceled(task=task, runs_stopped=stopped, actor=Actor.peer(credential.pk))
    return task
