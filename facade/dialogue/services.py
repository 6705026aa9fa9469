"""Writes of the dialogue app."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from http import HTTPStatus
from typing import Any, Literal, TypeVar

import psycopg
from django.conf import settings
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone

from approvals.contract import CLOSE_REASON, live_terms, removals_since
from facade.errors import ApplicationError
from facade.ratelimit import rate_limited_error
from facade.tenancy.identity import Principal
from facade.tenancy.models import AgentProfile, Customer, PeerCredential
from facade.tenancy.policy import AgentPolicy, NotFound
from facade.tenancy.rules import Audience, PostDecision, PrincipalType, may_post
from facade.tenancy.schemas import Actor
from guard.outgoing import RULESET_HASH
from knowledge.services import knowledge_hits_record

from . import events, rules, turn_sql
from .models import (
    CustomerRequest,
    DialogueSession,
    Message,
    Rating,
    Run,
    RunStatus,
    SessionStatus,
    Span,
    TrustChange,
)
from .push import session_push_on_commit
from .ratelimit import message_rate_check
from .schemas import OwnerReplyOut, RequestUpdateOut
from .selectors import owner_message_view, request_owner_acted, request_view, session_for_principal


class DialogueError(ApplicationError):
    """A refusal of the dialogue services (400 unless the raiser says otherwise)."""


def session_actor(session: DialogueSession) -> Actor:
    if session.principal_type == PrincipalType.USER:
        return Actor.human(session.user_id)
    if session.principal_type == PrincipalType.CUSTOMER:
        return Actor.customer(session.customer_id)
    return Actor.peer(session.peer_id)


@transaction.atomic
def session_open(
    *,
    agent: AgentProfile,
    audience: Audience,
    user: Any | None = None,
    customer: Customer | None = None,
    peer: PeerCredential | None = None,
    preview: bool = False,
    simulated: bool = False,
) -> DialogueSession:
    """Open a session whose audience the caller (the view) derived on the server.  A preview is
    a customer session whose principal is an owner of the agent trying the customer face (the
    view checks the ownership); it is left out of every metric and review input.  A simulated
    session is `rsi_simulate`'s scripted customer (never one a view opens)."""
    if preview:
        if audience != Audience.CUSTOMER or user is None:
            raise DialogueError("principal_mismatch", "a preview is a customer session opened by an owner")
        principal_type = PrincipalType.USER
    elif audience == Audience.OWNER and user is not None:
        principal_type = PrincipalType.USER
    elif audience == Audience.CUSTOMER and customer is not None and customer.tenant_id == agent.tenant_id:
        principal_type = PrincipalType.CUSTOMER
    elif audience == Audience.PEER and peer is not None and peer.agent_id == agent.pk:
        principal_type = PrincipalType.PEER
    else:
        raise DialogueError("principal_mismatch", "the principal does not fit the audience")
    session = DialogueSession.objects.create(
        tenant_id=agent.tenant_id,
        agent=agent,
        audience=audience.value,
        principal_type=principal_type.value,
        user=user if principal_type == PrincipalType.USER else None,
        customer=customer if principal_type == PrincipalType.CUSTOMER else None,
        peer=peer if principal_type == PrincipalType.PEER else None,
        preview=preview,
        simulated=simulated and audience == Audience.CUSTOMER,
        contract_version=live_terms(agent).version,
    )
    events.session_opened(session=session, actor=session_actor(session))
    return session


DECISION_MESSAGE_MINUTES = 15


def owner_decision_message(*, agent: AgentProfile, user: Any, text: str) -> Message:
    """The owner's own message deciding a change (`approve chg_…` / `reject chg_…`) in their
    owner-face session of the agent: the one they typed in the last minutes, else one stored now
    as theirs (the inbox card's button sends it on their behalf, from their signed-in,
    CSRF-checked request).  No run starts: the decision goes on through the token flow."""
    recent = timezone.now() - dt.timedelta(minutes=DECISION_MESSAGE_MINUTES)
    typed = (
        Message.objects.filter(
            session__agent=agent,
            session__audience=Audience.OWNER.value,
            session__user=user,
            role="principal",
            created_at__gte=recent,
            text__iexact=text,
        )
        .order_by("-created_at")
        .first()
    )
    if typed is not None:
        return typed
    with transaction.atomic():
        session = (
            DialogueSession.objects.select_for_update()
            .filter(agent=agent, audience=Audience.OWNER.value, user=user, status=SessionStatus.OPEN)
            .order_by("-last_activity_at")
            .first()
        ) or session_open(agent=agent, audience=Audience.OWNER, user=user)
        message = Message.objects.create(session=session, role="principal", text=text)
        DialogueSession.objects.filter(pk=session.pk).update(last_activity_at=timezone.now())
        events.message_posted(session=session, message=message, actor=session_actor(session))
    return message


def message_admit(
    *,
    principal: Principal,
    session_id: uuid.UUID | str,
    text: str,
    client_message_id: str = "",
    ip: str | None = None,
    held: DialogueSession | None = None,
) -> DialogueSession:
    """The one gate a message passes before its turn, asked alike by the HTTP API and the chat
    WebSocket; it returns the session as read now, and the turn goes on with that copy.  In order:

    - the session is the caller's — else 404 `not_found`, as for an id that does not exist;
    - its principal may still post in it — else 403 `no_longer_owner` (an owner since removed,
      asked of the database) or 409 `session_<status>`;
    - the message is one the session would store — else 400 `empty_message`,
      `message_too_long` or `invalid_client_message_id`;
    - the caller is within its rate limits (per customer and per IP, or per peer key) — else
      429 `rate_limited` with `retry_after`; the refusal writes nothing but the limits' counters.

    Its cost is the turn's: one read of the session (only its status and last activity when the
    caller passes the session it `held` since it was established as its principal), one more for
    an owner session, and one round trip to the cache for every limit together.  A session that
    has been idle too long is still open here; storing the message expires it (`run_start`)."""
    if held is not None and held.pk == session_id:
        session = _refreshed(held)
    else:
        session = session_for_principal(principal=principal, session_id=session_id)
    # An owner session, and a preview (whose principal is an owner), need the principal to be an
    # owner still; asked of the database only for those.
    by_owner = session.audience == Audience.OWNER or session.preview
    still_owner = (
        by_owner
        and principal.user_id is not None
        and AgentPolicy.still_owns(user_id=principal.user_id, agent=session.agent)
    )
    decision = may_post(audience=session.audience, status=session.status, caller_still_owner=still_owner)
    if decision == PostDecision.ALLOWED and session.preview and not still_owner:
        decision = PostDecision.NO_LONGER_OWNER
    if decision == PostDecision.NO_LONGER_OWNER:
        raise DialogueError("no_longer_owner", "you are no longer an owner of this agent", HTTPStatus.FORBIDDEN)
    if decision == PostDecision.SESSION_NOT_OPEN:
        if _ended_by_publish(session):
            raise _continued(session_continue(session=session))
        raise _not_open(session.status)
    if decision != PostDecision.ALLOWED:
        raise DialogueError(decision.value, "this session does not accept messages", HTTPStatus.CONFLICT)
    _message_check(text=text, client_message_id=client_message_id)
    limited = message_rate_check(
        customer_id=str(session.customer_id) if session.customer_id else None,
        peer_id=str(session.peer_id) if session.peer_id else None,
        ip=None if session.peer_id else ip,  # a peer is counted by its key, wherever it calls from
    )
    if limited is not None:
        # Nothing is written for a refusal but its counter: no message, and no loss of trust (the
        # limit may be one that others behind the same address used up).
        raise rate_limited_error(limited, "messages")
    return session


def _refreshed(session: DialogueSession) -> DialogueSession:
    """A session the caller already holds (the chat WebSocket, since it connected as the
    session's principal) with what can change while it is held read again: its status and last
    activity.  Its agent and principal are fixed for the session (a change to what the agent
    tells customers closes its sessions), so one narrow read will do."""
    row = (
        DialogueSession.objects.filter(pk=session.pk)
        .values_list("status", "last_activity_at", "closed_reason", "contract_version")
        .first()
    )
    if row is None:
        raise NotFound(str(session.pk))
    session.status, session.last_activity_at, session.closed_reason, session.contract_version = row
    return session


def _ended_by_publish(session: DialogueSession) -> bool:
    return (
        session.audience == Audience.CUSTOMER
        and session.status == SessionStatus.CLOSED
        and session.closed_reason == CLOSE_REASON
    )


def _continued(successor: DialogueSession) -> DialogueError:
    """The refusal of a message to a session a publish ended: `session` names the session that
    continues it, where the page sends the message again (its messages and requests are there)."""
    return DialogueError(
        "session_continued",
        "a change of what the agent may do ended this session; the conversation goes on in the session named",
        HTTPStatus.CONFLICT,
        extra={"session": str(successor.pk)},
    )


@transaction.atomic
def session_continue(*, session: DialogueSession) -> DialogueSession:
    """The session that continues `session`, a customer session ended by a publish that took
    away what it relied on (`approvals.contract.removals_since`): the one made before, else a
    new one made now for the same principal on the live contract version, with `session`'s
    requests moved to it (they stay registered, and the customer keeps seeing, withdrawing and
    amending them there) and a `session.continued` event.  Its history reads `session`'s messages
    too (`selectors.conversation_session_ids`), so nothing the customer said is lost — a request
    flow half filled in goes on from the answers given.  Any other session that is not open is
    refused as before (`session_<status>`)."""
    locked = DialogueSession.objects.select_for_update().select_related("agent").get(pk=session.pk)
    if not _ended_by_publish(locked):
        raise _not_open(locked.status)
    existing = DialogueSession.objects.filter(continues=locked).first()
    if existing is not None:
        return existing
    successor = DialogueSession.objects.create(
        tenant_id=locked.tenant_id,
        agent=locked.agent,
        audience=locked.audience,
        principal_type=locked.principal_type,
        user_id=locked.user_id,
        customer_id=locked.customer_id,
        peer_id=locked.peer_id,
        preview=locked.preview,
        simulated=locked.simulated,
        contract_version=live_terms(locked.agent).version,
        continues=locked,
    )
    moved = list(CustomerRequest.objects.filter(session=locked).order_by("pk").values_list("pk", flat=True))
    if moved:
        CustomerRequest.objects.filter(pk__in=moved).update(session=successor)
    actor = session_actor(successor)
    events.session_opened(session=successor, actor=actor)
    events.session_continued(session=successor, previous=locked, requests=moved, actor=actor)
    return successor


def _not_open(status: str) -> DialogueError:
    return DialogueError(
        f"session_{status}", "this session does not accept messages any more; open a new one", HTTPStatus.CONFLICT
    )


def text_check(text: str, *, field: str) -> None:
    """Refuse text no column or reply could hold (see `rules.text_problem`); the one check both
    edges pass, so HTTP and the WebSocket answer it with the same code."""
    problem = rules.text_problem(text)
    if problem is not None:
        raise DialogueError("invalid_text", f"{field} {problem}")


def _message_check(*, text: str, client_message_id: str) -> None:
    text_check(text, field="text")
    if rules.text_problem(client_message_id) is not None:
        raise DialogueError("invalid_client_message_id", "client_message_id must be plain text")
    if not text.strip():
        raise DialogueError("empty_message", "a message needs some text")
    limit = settings.FACADE_MESSAGE_MAX_CHARS
    if len(text) > limit:
        raise DialogueError("message_too_long", f"a message may have at most {limit} characters")
    if len(client_message_id) > 64:
        raise DialogueError("invalid_client_message_id", "client_message_id may have at most 64 characters")


def message_check(*, text: str, client_message_id: str) -> None:
    """The message checks of `message_admit`, for an edge that asks them before it opens the
    session the message will go to (the A2A binding: a refused message opens none)."""
    _message_check(text=text, client_message_id=client_message_id)


@dataclass(frozen=True)
class RunStart:
    """What `run_start` stored: the principal's message and its run.  `created` is False for a
    message the session already held (a resend by client_message_id): then nothing was written
    and `run` is None.  `counted` says whether the daily budget had room for the run's first
    model call."""

    message: Message
    run: Run | None
    created: bool
    counted: bool


@dataclass(frozen=True)
class RunIdentity:
    """What a new run records about how it will answer."""

    provider: str
    context_hash: str
    contract_version: int | None = None  # the contract version the run speaks by (None: the owner face)


def run_start(
    *,
    session: DialogueSession,
    text: str,
    client_message_id: str = "",
    provider: str,
    context_hash: str,
    contract_version: int | None = None,
) -> RunStart:
    """Store the principal's message and start the run that answers it, in one transaction with
    the first model call's count against the tenant's daily budget and the message's ledger
    event: a stored message always has its run, and a turn pays for one commit less.  A repeated
    client_message_id returns the message already stored (and writes nothing); a session idle for
    too long is marked expired (and stays so) before the message is refused.

    `contract_version` is the version the turn read its terms from.  A customer session on
    another version moves to it — unless that version took away what the conversation relies on:
    then the session ends (`contract_republished`), nothing is stored, and the refusal
    `session_continued` names the session that continues it (`session_continue`)."""
    return _message_store(
        session=session,
        text=text,
        client_message_id=client_message_id,
        run=RunIdentity(provider=provider, context_hash=context_hash, contract_version=contract_version),
    )


def _message_store(*, session: DialogueSession, text: str, client_message_id: str, run: RunIdentity) -> RunStart:
    _message_check(text=text, client_message_id=client_message_id)
    idle = settings.FACADE_SESSION_IDLE_MINUTES
    if session.status == SessionStatus.OPEN and rules.is_idle(session.last_activity_at, timezone.now(), idle):
        # The copy in hand may be stale (a WebSocket holds it for long): decide under the lock.
        with transaction.atomic():
            locked = DialogueSession.objects.select_for_update().get(pk=session.pk)
            if locked.status == SessionStatus.OPEN and rules.is_idle(locked.last_activity_at, timezone.now(), idle):
                _expire(locked)
            session.status, session.last_activity_at = locked.status, locked.last_activity_at
    with transaction.atomic():
        now = timezone.now()
        # Touching an open session takes its row lock, so one session's messages are stored one
        # after another (on PostgreSQL in the same statement that stores the message and starts
        # its run); a session that is not open is looked at under the lock below.
        started: RunStart | None
        if _one_statement():
            started = _run_start_pg(session=session, text=text, client_message_id=client_message_id, run=run, now=now)
        elif _open_on_version(session, run.contract_version).update(last_activity_at=now):
            started = _message_start_orm(session=session, text=text, client_message_id=client_message_id, run=run)
        else:
            started = None
        ended = False
        if started is None:
            locked = DialogueSession.objects.select_for_update().get(pk=session.pk)
            existing = _stored(locked, client_message_id)
            if existing is not None:
                return RunStart(existing, None, created=False, counted=False)
            if locked.status != SessionStatus.OPEN and not _ended_by_publish(locked):
                raise _not_open(locked.status)
            if locked.status == SessionStatus.OPEN and not _version_ends(locked, session.agent, run.contract_version):
                # A customer session on an older version, and the turn's version takes away
                # nothing it relies on: it moves on to it, and the message is stored (issue 26 §2).
                locked.last_activity_at = now
                locked.save(update_fields=["contract_version", "last_activity_at"])
                session.contract_version, session.status = locked.contract_version, locked.status
                started = _message_start_orm(session=session, text=text, client_message_id=client_message_id, run=run)
            else:
                ended = True
                if locked.status == SessionStatus.OPEN:  # the publish's batches have not reached it yet
                    locked.status, locked.closed_reason = SessionStatus.CLOSED, CLOSE_REASON
                    locked.save(update_fields=["status", "closed_reason"])
                session.status, session.closed_reason = locked.status, locked.closed_reason
        if started is not None:
            session.last_activity_at = now
            if started.created:
                events.message_posted(session=session, message=started.message, actor=session_actor(session))
            return started
    assert ended
    raise _continued(session_continue(session=session))


def _version_ends(locked: DialogueSession, agent: AgentProfile, version: int | None) -> bool:
    """Whether the open session `locked` (under its row lock) cannot move to `version`, because
    that version takes away what the conversation relies on; else it is moved (unsaved).  A turn
    that read an older version than the session's latest turn (a publish between two turns of
    two tabs), or none, speaks by it and leaves the session's version as it is."""
    current = locked.contract_version
    if version is None and current is not None:  # a caller that read no terms moves nothing
        return False
    if version is not None and current is not None and version < current:
        return False
    if removals_since(agent, current, version):
        return True
    locked.contract_version = version
    return False


def _open_on_version(session: DialogueSession, version: int | None) -> models.QuerySet[DialogueSession]:
    """The session, while it is open and (a customer's) on contract version `version` — the ORM
    form of the condition in turn_sql.START."""
    sessions = DialogueSession.objects.filter(pk=session.pk, status=SessionStatus.OPEN)
    if session.audience != Audience.CUSTOMER:
        return sessions
    return sessions.filter(contract_version=version) if version is not None else sessions.filter(contract_version=None)


def _stored(session: DialogueSession, client_message_id: str) -> Message | None:
    if not client_message_id:
        return None
    return Message.objects.filter(session=session, client_message_id=client_message_id).first()


def _message_start_orm(*, session: DialogueSession, text: str, client_message_id: str, run: RunIdentity) -> RunStart:
    existing = _stored(session, client_message_id)
    if existing is not None:
        return RunStart(existing, None, created=False, counted=False)
    message = Message.objects.create(session=session, role="principal", text=text, client_message_id=client_message_id)
    started = Run.objects.create(
        tenant_id=session.tenant_id,
        session=session,
        message=message,
        provider=run.provider,
        context_hash=run.context_hash,
        contract_version=run.contract_version,
    )
    return RunStart(message, started, created=True, counted=model_call_count(tenant_id=session.tenant_id))


def _run_start_pg(
    *, session: DialogueSession, text: str, client_message_id: str, run: RunIdentity, now: dt.datetime
) -> RunStart | None:
    """None when the session is not open (nothing was written)."""
    run_id = uuid.uuid4()
    row = turn_sql.execute(
        connection,
        turn_sql.START,
        {
            "session": session.pk,
            "tenant": session.tenant_id,
            "text": text,
            "cid": client_message_id,
            "now": now,
            "day": now.date(),
            "limit": settings.FACADE_DAILY_MODEL_CALLS,
            "run": run_id,
            "provider": run.provider,
            "context_hash": run.context_hash,
            "version": run.contract_version,
        },
    )
    assert row is not None  # the statement always answers one row
    if not row[0]:
        return None
    if row[1] is None:  # the session holds this client_message_id already
        existing = _stored(session, client_message_id)
        if existing is None:
            raise DialogueError("message_not_stored", "the message could not be stored; please send it again")
        return RunStart(existing, None, created=False, counted=False)
    message = _loaded(
        Message,
        id=row[1],
        session_id=session.pk,
        role="principal",
        text=text,
        client_message_id=client_message_id,
        reply_to_id=None,
        citations=[],
        stop_reason="",
        created_at=now,
    )
    message.session = session
    started = _loaded(
        Run,
        id=run_id,
        tenant_id=session.tenant_id,
        session_id=session.pk,
        message_id=message.pk,
        status=RunStatus.PLANNING,
        stop_reason="",
        needs_input=False,
        step_index=0,
        llm_call_count=0,
        tool_call_count=0,
        prompt_tokens=0,
        completion_tokens=0,
        provider=run.provider,
        context_hash=run.context_hash,
        contract_version=run.contract_version,
        guard_category="",
        started_at=now,
        finished_at=None,
    )
    started.session, started.message = session, message
    return RunStart(message, started, created=True, counted=bool(row[2]))


def _one_statement() -> bool:
    """Whether a turn's writes go as the single statements of `turn_sql` (PostgreSQL) or
    through the ORM (any other database; the tests compare the two)."""
    return connection.vendor == "postgresql"


_M = TypeVar("_M", bound=models.Model)


def _loaded(model: type[_M], **values: Any) -> _M:
    """A model instance for a row written by raw SQL, as if read from the database (so that a
    later save() updates it instead of inserting)."""
    instance = model(**values)
    instance._state.adding = False
    instance._state.db = "default"
    return instance


def model_call_count(*, tenant_id: int) -> bool:
    """Count one model call against the tenant's budget for today; False when it is spent.  One
    conditional upsert, so concurrent runs can't overshoot.  Inside a transaction it commits
    with it (a run's first call, with its message); outside, it is a statement of its own (a
    run's later calls), so that counting costs one round trip."""
    limit = settings.FACADE_DAILY_MODEL_CALLS
    if limit <= 0:
        return False
    params: dict[str, Any] = {"tenant": tenant_id, "day": timezone.now().date(), "limit": limit}
    if _one_statement():
        return turn_sql.execute(connection, turn_sql.COUNT, params) is not None
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO dialogue_dailyusage (tenant_id, day, model_calls) VALUES (%s, %s, 1) "
            "ON CONFLICT (tenant_id, day) DO UPDATE SET model_calls = dialogue_dailyusage.model_calls + 1 "
            "WHERE dialogue_dailyusage.model_calls < %s RETURNING model_calls",
            [params["tenant"], params["day"], limit],
        )
        return cursor.fetchone() is not None


@dataclass(frozen=True)
class RunRetry:
    """A run `run_retry` began again: its new attempt, and whether the daily budget had room for
    its first model call."""

    run: Run
    counted: bool


def run_stuck_since(now: dt.datetime) -> dt.datetime:
    """An unanswered run whose latest attempt began before this is stranded."""
    return now - dt.timedelta(seconds=settings.FACADE_RUN_STUCK_SECONDS)


def run_retry(
    *,
    session: DialogueSession,
    message: Message,
    provider: str,
    context_hash: str,
    broken: int | None = None,
    own_since: dt.datetime | None = None,
    contract_version: int | None = None,
) -> RunRetry | None:
    """Begin the run of a re-sent message again when it has no reply and no live attempt: its
    last attempt broke off (`run_interrupt`; or is attempt `broken`, which the caller saw break
    off and could not record; or is a first attempt begun at or after `own_since`, the caller's
    own store whose commit was acknowledged to nobody), or began more than
    FACADE_RUN_STUCK_SECONDS ago.  None when the run was answered or may still be answering (the
    caller reports a duplicate).

    Under the run's row lock, so that two re-sends at once begin one attempt: the second finds
    the first's fresh attempt and leaves it alone.  Should an attempt thought dead answer after
    all, the reply's unique `reply_to` keeps the message at one reply (`run_finish`)."""
    now = timezone.now()
    with transaction.atomic():
        run = Run.objects.select_for_update().filter(message=message).first()
        if run is None or run.finished_at is not None or Message.objects.filter(reply_to=message).exists():
            return None
        unacknowledged = own_since is not None and run.attempts == 1 and run.started_at >= own_since
        interrupted = run.status == RunStatus.FAILED or run.attempts == broken or unacknowledged
        if not interrupted and (run.attempted_at or run.started_at) > run_stuck_since(now):
            return None
        previous = run.status
        run.status, run.stop_reason, run.needs_input, run.guard_category = RunStatus.PLANNING, "", False, ""
        run.step_index = run.llm_call_count = run.tool_call_count = 0
        run.prompt_tokens = run.completion_tokens = 0
        run.provider, run.context_hash, run.contract_version = provider, context_hash, contract_version
        run.attempts += 1
        run.attempted_at = now
        run.save(
            update_fields=[
                "status",
                "stop_reason",
                "needs_input",
                "guard_category",
                "step_index",
                "llm_call_count",
                "tool_call_count",
                "prompt_tokens",
                "completion_tokens",
                "provider",
                "context_hash",
                "contract_version",
                "attempts",
                "attempted_at",
            ]
        )
        events.run_retried(session=session, run=run, previous_status=previous, actor=session_actor(session))
        counted = model_call_count(tenant_id=session.tenant_id)
    run.session, run.message = session, message
    return RunRetry(run=run, counted=counted)


def run_interrupt(*, run_id: uuid.UUID, attempt: int, reason: str) -> bool:
    """Record that attempt `attempt` of a run broke off without a reply (status `failed`, no
    `finished_at`), so that a re-send of its message runs it again at once instead of after
    FACADE_RUN_STUCK_SECONDS.  False when there was nothing to record: the run was answered,
    or another attempt has begun since."""
    with transaction.atomic():
        run = Run.objects.select_for_update(of=("self",)).select_related("session").filter(pk=run_id).first()
        if run is None or run.finished_at is not None or run.attempts != attempt or run.status == RunStatus.FAILED:
            return False
        run.status, run.stop_reason = RunStatus.FAILED, reason
        run.save(update_fields=["status", "stop_reason"])
        events.run_interrupted(session=run.session, run=run, reason=reason)
    return True


class AlreadyAnswered(Exception):
    """`run_finish` found the run's message answered already (by an attempt thought dead, or by
    the sweep of stranded runs): nothing of this attempt was stored."""

    def __init__(self, reply: Message) -> None:
        super().__init__(f"message {reply.reply_to_id} has its reply already")
        self.reply = reply


@dataclass(frozen=True)
class RewriteRecord:
    """A customer or peer reply the outgoing check blocked, and what its one rewrite came to:
    `outcome` is "sent" (the rewrite passed), "blocked" (it was blocked too), "not_text" (the
    model answered with tool calls or nothing), "token_budget" or "provider_error"."""

    category: str
    check: str
    rule: str | None
    outcome: str


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended, as `run_finish` records it."""

    status: RunStatus
    stop_reason: str
    needs_input: bool
    guard_category: str  # the guard's category when the reply was replaced, else ""
    text: str  # the reply the principal gets
    citations: list[dict[str, Any]]
    metadata: dict[str, Any] = dataclass_field(default_factory=dict)  # the owner face's cards
    taboo_entry: int | None = None  # the taboo lesson's entry when it was one that replaced the reply
    rewrite: RewriteRecord | None = None  # the first reply was blocked and the model asked once more
    guard_rule: str = ""  # the id of the guard rule that fired (guard/rules/), "" when none
    guard_reason: str = ""  # category `strict_refused`: why the strict composer refused the model's answer


def run_finish(
    *,
    session: DialogueSession,
    run: Run,
    outcome: RunOutcome,
    spans: list[Span],
    hits: list[int],
    agent: AgentProfile,
) -> Message:
    """Store the reply and the run's outcome, counters, spans and knowledge hits (`hits`: the
    ids of the approved versions the reply cited), with the `run.finished` ledger event —
    `guard.rewrite_requested` when a first reply was blocked and the model was asked once more,
    and `guard.blocked` when the reply was replaced — in one transaction.  A blocked reply costs
    the customer no trust: it was the agent's reply, not anything the customer did.

    A message has one reply (the unique `reply_to`): when another attempt or the sweep of
    stranded runs answered it first, nothing is stored and `AlreadyAnswered` carries that reply."""
    try:
        return _run_finish(session=session, run=run, outcome=outcome, spans=spans, hits=hits, agent=agent)
    except (IntegrityError, psycopg.errors.UniqueViolation):  # the latter raw, from turn_sql.FINISH
        reply = Message.objects.filter(reply_to_id=run.message_id).first()
        if reply is None:
            raise
        raise AlreadyAnswered(reply) from None


@transaction.atomic
def _run_finish(
    *,
    session: DialogueSession,
    run: Run,
    outcome: RunOutcome,
    spans: list[Span],
    hits: list[int],
    agent: AgentProfile,
) -> Message:
    now = timezone.now()
    # A customer's or peer's reply went through the outgoing check of this rule set (runtime/loop.py).
    ruleset_hash = RULESET_HASH if session.audience in (Audience.CUSTOMER, Audience.PEER) else ""
    run.status, run.stop_reason, run.needs_input = outcome.status, outcome.stop_reason, outcome.needs_input
    run.guard_category, run.finished_at = outcome.guard_category, now
    if _one_statement():
        row = turn_sql.execute(
            connection,
            turn_sql.FINISH,
            {
                "session": session.pk,
                "tenant": session.tenant_id,
                "text": outcome.text,
                "message": run.message_id,
                "citations": json.dumps(outcome.citations, ensure_ascii=False),
                "metadata": json.dumps(outcome.metadata, ensure_ascii=False),
                "ruleset_hash": ruleset_hash,
                "stop_reason": outcome.stop_reason,
                "now": now,
                "run": run.pk,
                "status": outcome.status.value,
                "needs_input": outcome.needs_input,
                "guard_category": outcome.guard_category,
                "step_index": run.step_index,
                "llm_call_count": run.llm_call_count,
                "tool_call_count": run.tool_call_count,
                "prompt_tokens": run.prompt_tokens,
                "completion_tokens": run.completion_tokens,
                "kinds": [s.kind for s in spans],
                "names": [s.name for s in spans],
                "outcomes": [s.outcome for s in spans],
                "starts": [s.started_at for s in spans],
                "durations": [float(s.duration_ms) for s in spans],
                "prompts": [s.prompt_tokens for s in spans],
                "completions": [s.completion_tokens for s in spans],
            },
        )
        assert row is not None  # an INSERT … RETURNING always returns its row
        reply = _loaded(
            Message,
            id=row[0],
            session_id=session.pk,
            role="agent",
            text=outcome.text,
            client_message_id="",
            reply_to_id=run.message_id,
            citations=outcome.citations,
            stop_reason=outcome.stop_reason,
            metadata=outcome.metadata,
            ruleset_hash=ruleset_hash,
            created_at=now,
        )
    else:
        reply = Message.objects.create(
            session=session,
            role="agent",
            text=outcome.text,
            reply_to_id=run.message_id,
            citations=outcome.citations,
            stop_reason=outcome.stop_reason,
            metadata=outcome.metadata,
            ruleset_hash=ruleset_hash,
        )
        run.save(
            update_fields=[
                "status",
                "stop_reason",
                "needs_input",
                "guard_category",
                "finished_at",
                "step_index",
                "llm_call_count",
                "tool_call_count",
                "prompt_tokens",
                "completion_tokens",
            ]
        )
        Span.objects.bulk_create(spans)
    if hits and not session.preview:  # a preview is left out of the knowledge-hit rate
        knowledge_hits_record(agent=agent, session_id=session.pk, version_ids=hits)
    events.run_finished(session=session, run=run, agent=agent, reply=reply, citations=len(outcome.citations))
    if outcome.rewrite is not None:
        events.guard_rewrite_requested(
            session=session,
            run=run,
            category=outcome.rewrite.category,
            check=outcome.rewrite.check,
            rule=outcome.rewrite.rule,
            outcome=outcome.rewrite.outcome,
        )
    if outcome.guard_category:
        events.guard_blocked(
            session=session,
            run=run,
            category=outcome.guard_category,
            audience=session.audience,
            entry_id=outcome.taboo_entry,
            rule=outcome.guard_rule,
            reason=outcome.guard_reason or None,
        )
    return reply


def _expire(session: DialogueSession) -> None:
    session.status = SessionStatus.EXPIRED
    session.save(update_fields=["status"])
    events.session_expired(session=session, idle_minutes=settings.FACADE_SESSION_IDLE_MINUTES)


def sessions_expire() -> int:
    """Mark every open session idle for longer than FACADE_SESSION_IDLE_MINUTES as expired (one
    transaction per session, so a busy session is never held up by the sweep)."""
    cutoff = timezone.now() - dt.timedelta(minutes=settings.FACADE_SESSION_IDLE_MINUTES)
    done = 0
    for pk in DialogueSession.objects.filter(status=SessionStatus.OPEN, last_activity_at__lte=cutoff).values_list(
        "pk", flat=True
    )[:5000]:
        with transaction.atomic():
            session = DialogueSession.objects.select_for_update().get(pk=pk)
            if session.status == SessionStatus.OPEN and rules.is_idle(
                session.last_activity_at, timezone.now(), settings.FACADE_SESSION_IDLE_MINUTES
            ):
                _expire(session)
                done += 1
    return done


# Each kind of request has its own event type (the auditor filters on them).
_SUBMITTED = {"request": events.request_submitted, "handoff": events.handoff_submitted}


@transaction.atomic
def request_submit(
    *,
    session: DialogueSession,
    summary: str,
    details: dict[str, str],
    kind: Literal["request", "handoff"] = "request",
    run: Any = None,
) -> CustomerRequest:
    """Register what a customer or peer wants done, in the first state of the agent's flow.
    Owners never submit requests (no ordering on a customer's behalf)."""
    submitted = _SUBMITTED[kind]
    if session.audience == Audience.OWNER:
        raise DialogueError("owners_do_not_submit", "owners cannot register requests on a customer's behalf")
    terms = live_terms(session.agent)  # the request keeps a copy of the live flow (`flow`)
    if kind == "request":
        if not str(details.get("need") or "").strip():
            details = {"need": summary, **details}  # the summary says what is needed
        request_fields_check(details=details, required=terms.clarification_order)
    flow = terms.request_flow
    request = CustomerRequest.objects.create(
        tenant_id=session.tenant_id,
        agent_id=session.agent_id,
        session=session,
        run=run,
        kind=kind,
        state=str(flow["initial"]),
        summary=summary.strip()[:300] or "(no summary)",
        details={str(k)[:40]: str(v)[:500] for k, v in list(details.items())[:10]},
        flow=flow,
    )
    submitted(session=session, request=request, actor=session_actor(session))
    # An owner trying the customer face, or rsi_simulate's scripted customer, is e-mailed to no one.
    if not session.preview and not session.simulated:
        from .tasks import request_notify_owners_task

        transaction.on_commit(lambda: request_notify_owners_task.delay(request.pk))
    return request


@transaction.atomic
def request_transition(*, request: CustomerRequest, to: str, actor: Actor) -> CustomerRequest:
    locked = CustomerRequest.objects.select_for_update().select_related("session").get(pk=request.pk)
    if not rules.request_can_move(locked.flow, locked.state, to):
        raise DialogueError("invalid_transition", f"a request in state {locked.state!r} cannot move to {to!r}")
    before = locked.state
    locked.state = to
    locked.save(update_fields=["state", "updated_at"])
    events.request_transitioned(request=locked, before=before, actor=actor)
    if to == "done" and locked.session.customer_id is not None:
        trust_adjust(customer_id=locked.session.customer_id, reason="request_completed")
    session_push_on_commit(session_id=locked.session_id, frame=RequestUpdateOut(request=request_view(locked)).frame())
    return locked


@transaction.atomic
def request_reply(*, request: CustomerRequest, text: str, actor: Actor) -> Message:
    """An owner's reply to a request, delivered into the customer's conversation: stored as a
    message of the request's session (so the customer finds it in the history) and pushed to
    the session's open chat after the commit.  The ledger records its id and length, never its
    text.  It is the business speaking, not the agent, so the commitment guard does not apply;
    it does not reopen or extend a session that has ended."""
    text_check(text, field="text")
    text = text.strip()
    if not text:
        raise DialogueError("empty_message", "a reply needs some text")
    limit = settings.FACADE_MESSAGE_MAX_CHARS
    if len(text) > limit:
        raise DialogueError("message_too_long", f"a reply may have at most {limit} characters")
    locked = CustomerRequest.objects.select_for_update().get(pk=request.pk)
    message = Message.objects.create(session_id=locked.session_id, role="owner", text=text, request=locked)
    events.request_replied(request=locked, message=message, actor=actor)
    frame = OwnerReplyOut(message=owner_message_view(message), request=request_view(locked)).frame()
    session_push_on_commit(session_id=locked.session_id, frame=frame)
    return message


@transaction.atomic
def trust_adjust(*, customer_id: Any, reason: str) -> int:
    """Move a customer's trust score for `reason`.  A score that does not move (already at the
    bound it would pass) writes nothing: no row and no event for a change of zero."""
    customer = Customer.objects.select_for_update().get(pk=customer_id)
    score = rules.trust_after(customer.trust, reason)
    delta = score - customer.trust
    if delta == 0:
        return score
    customer.trust = score
    customer.save(update_fields=["trust"])
    TrustChange.objects.create(tenant_id=customer.tenant_id, customer=customer, delta=delta, reason=reason, score=score)
    events.customer_trust_changed(customer=customer, reason=reason, delta=delta)
    return score


@transaction.atomic
def rating_record(*, session: DialogueSession, stars: int, comment: str = "") -> Rating:
    """The customer's rating of a conversation, once per session."""
    if session.audience != Audience.CUSTOMER:
        raise DialogueError("only_customers_rate", "only customers rate conversations")
    if session.preview:  # ratings are review input, and a preview is left out of every review
        raise DialogueError("preview_not_rated", "a preview is not rated")
    if not 1 <= int(stars) <= 5:
        raise DialogueError("invalid_rating", "a rating is a whole number from 1 to 5")
    if len(comment) > 2000:
        raise DialogueError("invalid_rating", "a comment may have at most 2000 characters")
    text_check(comment, field="comment")
    if Rating.objects.filter(session=session).exists():
        raise DialogueError("already_rated", "this conversation has been rated already", HTTPStatus.CONFLICT)
    rating = Rating.objects.create(
        session=session, tenant_id=session.tenant_id, stars=int(stars), comment=comment.strip()
    )
    events.session_rated(session=session, rating=rating, actor=session_actor(session))
    return rating


def request_fields_check(*, details: dict[str, str], required: list[str]) -> None:
    """Refuse a request whose fields are missing or are not what they claim to be (a contact
    that is no e-mail address or phone number, a date that is none), whoever filled them in:
    `400 invalid_fields`, the detail naming each field and what is wrong with it."""
    problems = {name: "missing" for name in required if not str(details.get(name) or "").strip()}
    for name, value in details.items():
        problem = rules.field_problem(str(name), str(value))
        if problem is not None and name not in problems:
            problems[str(name)] = problem
    if problems:
        raise DialogueError(
            "invalid_fields", "; ".join(f"{name}: {problem}" for name, problem in sorted(problems.items()))
        )


def _own_request(session: DialogueSession, request_id: int | None) -> CustomerRequest:
    """The session's request `request_id` (its latest one when None), locked; another session's
    request answers 404 as if it did not exist.  Only a customer changes its requests this way."""
    if session.audience != Audience.CUSTOMER:
        raise NotFound(str(request_id))
    mine = CustomerRequest.objects.select_for_update().filter(session=session)
    found = mine.filter(pk=request_id).first() if request_id is not None else mine.order_by("-pk").first()
    if found is None:
        raise NotFound(str(request_id))
    return found


def _may_change(session: DialogueSession, request: CustomerRequest) -> None:
    actor = session_actor(session)
    refusal = rules.customer_may_change(
        flow=request.flow,
        state=request.state,
        owner_acted=request_owner_acted(request, principal_actor_id=actor.id),
    )
    if refusal is not None:
        detail = {
            rules.ChangeRefusal.OWNER_HAS_ACTED: "the business has already acted on this request; ask them instead",
            rules.ChangeRefusal.ALREADY_WITHDRAWN: "this request has been withdrawn already",
            rules.ChangeRefusal.NOT_IN_FLOW: "this request's flow has no withdrawn state",
        }[refusal]
        raise DialogueError(refusal.value, detail, HTTPStatus.CONFLICT)


@transaction.atomic
def request_withdraw(*, session: DialogueSession, request_id: int | None) -> CustomerRequest:
    """The customer takes back a request of this session while it is still in its
    first state and nobody of the business has acted on it."""
    request = _own_request(session, request_id)
    _may_change(session, request)
    before = request.state
    request.state = rules.WITHDRAWN
    request.save(update_fields=["state", "updated_at"])
    events.request_withdrawn(request=request, before=before, actor=session_actor(session))
    return request


@transaction.atomic
def request_amend(
    *, session: DialogueSession, request_id: int | None, summary: str | None, details: dict[str, str]
) -> CustomerRequest:
    """The customer changes the summary or fields of a request of this session, on the
    same terms as withdrawing it; each changed field is checked as when it was first given."""
    for key, value in [*details.items(), ("summary", summary or "")]:
        text_check(str(key), field="a field name")
        text_check(str(value), field=str(key)[:40])
    request = _own_request(session, request_id)
    _may_change(session, request)
    changed = {str(k)[:40]: " ".join(str(v).split())[:500] for k, v in details.items()}
    merged = {**request.details, **changed}
    if len(merged) > 10:
        raise DialogueError("invalid_fields", "a request has at most 10 fields")
    request_fields_check(details=changed, required=[])
    names = sorted(k for k, v in changed.items() if request.details.get(k) != v)
    new_summary = " ".join((summary or "").split())[:300]
    if new_summary and new_summary != request.summary:
        names.insert(0, "summary")
        request.summary = new_summary
    if not names:
        raise DialogueError("nothing_to_change", "the request already holds these values")
    request.details = merged
    request.save(update_fields=["summary", "details", "updated_at"])
    events.request_amended(request=request, fields=names, actor=session_actor(session))
    return request
