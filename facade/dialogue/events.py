"""The dialogue app's ledger events: one payload model and one typed constructor per type.

The services and the runtime call these constructors inside their transaction; nothing else in
the app writes to the ledger.  Payloads carry ids, sizes, states and outcomes — never the text
of a message, a reply or a comment.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from facade.tenancy.models import AgentProfile, Customer
from facade.tenancy.schemas import Actor
from ledger.catalogue import EventPayload, EventType, register
from ledger.models import ActorType
from ledger.schemas import AppendedEvent
from ledger.services import ledger_append

from .models import CustomerRequest, DialogueSession, Message, Rating, Run

APP = "dialogue"


class SessionOpened(EventPayload):
    agent: str
    audience: str
    principal_type: str
    preview: bool = False  # an owner trying the customer face (left out of metrics and reviews)


class SessionContinued(EventPayload):
    continues: str  # the session a publish ended, which this one goes on from
    contract_version: int | None  # the version this one speaks by
    requests: list[int]  # the requests moved here from it


class SessionExpired(EventPayload):
    idle_minutes: int


class SessionRated(EventPayload):
    stars: int
    comment_chars: int


class MessagePosted(EventPayload):
    message_id: int
    chars: int


class RequestSubmitted(EventPayload):
    session: str
    state: str
    fields: list[str]


class RequestTransitioned(EventPayload):
    from_: str = Field(serialization_alias="from")  # "from" is a Python keyword
    to: str


class RequestReplied(EventPayload):
    session: str
    message_id: int
    chars: int


class RequestAmended(EventPayload):
    state: str
    fields: list[str]


class TrustChanged(EventPayload):
    reason: str
    delta: int
    score: int


class RunFinished(EventPayload):
    session: str
    message_id: int
    reply_id: int
    status: str
    stop_reason: str
    steps: int
    llm_calls: int
    tool_calls: int
    model_units: int
    provider: str
    context_hash: str
    reply_chars: int
    citations: int
    # The agent's contract version the turn spoke by (None for the owner face, and in events
    # written before it was recorded): a publish mid-conversation shows as the version changing
    # between two turns of one session (issue 26 §2).
    contract_version: int | None = None


class RunInterrupted(EventPayload):
    session: str
    message_id: int
    attempt: int
    stop_reason: str  # why the attempt broke off: "connection_lost" or "turn_error"


class RunRetried(EventPayload):
    session: str
    message_id: int
    attempt: int  # the try that begins now (2 for the first re-run)
    previous_status: str  # the unanswered run's status: "failed" (interrupted), "planning", "executing"


class RunStranded(EventPayload):
    session: str
    message_id: int
    reply_id: int
    attempts: int
    stuck_seconds: int  # since its latest attempt began
    stop_reason: str


class GuardBlocked(EventPayload):
    category: str
    audience: str
    # Category `taboo`: the approved taboo lesson the reply broke (its knowledge entry).
    entry_id: int | None = None
    # The id of the guard's rule that fired ("price.en.money", "quote.applied"); "" when the check
    # has no named rules (grounding, a taboo).  Never the text.
    rule: str = ""
    # Category `strict_refused`: why the strict composer refused the model's answer, a code of
    # facade/dialogue/runtime/strict.py REASONS (never the answer's text).
    reason: str | None = None


class GuardRewriteRequested(EventPayload):
    category: str
    check: str  # "guard", "grounding" or "taboo"
    rule: str | None = None
    audience: str
    outcome: str  # sent, blocked, not_text, token_budget, cancelled, provider_error


class ToolRefused(EventPayload):
    tool: str
    audience: str
    reason: str
    session: str


SESSION_OPENED = register(
    "session.opened",
    app=APP,
    entity_type="session",
    payload=SessionOpened,
    description="A conversation was opened; its audience and principal are fixed from here on.",
)
SESSION_CONTINUED = register(
    "session.continued",
    app=APP,
    entity_type="session",
    payload=SessionContinued,
    description=(
        "A customer session ended by a publish that took away what it relied on goes on in this new one: its "
        "messages stay its history and its requests were moved here."
    ),
)
SESSION_EXPIRED = register(
    "session.expired",
    app=APP,
    entity_type="session",
    payload=SessionExpired,
    description="A conversation idle for longer than the limit was closed to new messages.",
)
SESSION_RATED = register(
    "session.rated",
    app=APP,
    entity_type="session",
    payload=SessionRated,
    description="The customer rated the conversation (the comment's length only, not its text).",
)
MESSAGE_POSTED = register(
    "message.posted",
    app=APP,
    entity_type="session",
    payload=MessagePosted,
    description="The session's principal posted a message (its id and length, not its text).",
)
REQUEST_SUBMITTED = register(
    "request.submitted",
    app=APP,
    entity_type="request",
    payload=RequestSubmitted,
    description="A customer or peer request was registered in the first state of the agent's flow.",
)
HANDOFF_SUBMITTED = register(
    "handoff.submitted",
    app=APP,
    entity_type="request",
    payload=RequestSubmitted,
    description="The agent asked for a person to follow the conversation up.",
)
REQUEST_TRANSITIONED = register(
    "request.transitioned",
    app=APP,
    entity_type="request",
    payload=RequestTransitioned,
    description="A request moved from one state of its flow to another.",
)
REQUEST_REPLIED = register(
    "request.replied",
    app=APP,
    entity_type="request",
    payload=RequestReplied,
    description="An owner replied to a request in the customer's conversation (its id and length, not its text).",
)
REQUEST_WITHDRAWN = register(
    "request.withdrawn",
    app=APP,
    entity_type="request",
    payload=RequestTransitioned,
    description="The customer withdrew a request before the business acted on it.",
)
REQUEST_AMENDED = register(
    "request.amended",
    app=APP,
    entity_type="request",
    payload=RequestAmended,
    description="The customer changed a request before the business acted on it (the names of the fields changed).",
)
TRUST_CHANGED = register(
    "customer.trust_changed",
    app=APP,
    entity_type="customer",
    payload=TrustChanged,
    description="A customer's trust score changed, and why.",
)
RUN_FINISHED = register(
    "run.finished",
    app=APP,
    entity_type="run",
    payload=RunFinished,
    description="The agent's run for a message ended with a reply: outcome, counters and sizes.",
)
RUN_INTERRUPTED = register(
    "run.interrupted",
    app=APP,
    entity_type="run",
    payload=RunInterrupted,
    description=(
        "A run's attempt broke off without a reply (a dropped database connection, an error); re-sending its "
        "message runs it again."
    ),
)
RUN_RETRIED = register(
    "run.retried",
    app=APP,
    entity_type="run",
    payload=RunRetried,
    description="An unanswered run (interrupted, or stuck beyond the bound) was run again for its re-sent message.",
)
RUN_STRANDED = register(
    "run.stranded",
    app=APP,
    entity_type="run",
    payload=RunStranded,
    description=(
        "The sweep answered a run left without a reply beyond the bound with the honest sentence that its "
        "message is saved; the stop reason says so."
    ),
)
GUARD_BLOCKED = register(
    "guard.blocked",
    app=APP,
    entity_type="run",
    payload=GuardBlocked,
    description=(
        "The commitment guard, the grounding check, the quoting rule, an approved taboo lesson or the strict "
        "composer replaced a reply with the boundary sentence; or a reply that was no answer at all (category "
        "malformed_reply, rule: which kind) was replaced by the honest sentence that there is no good answer."
    ),
)
GUARD_REWRITE_REQUESTED = register(
    "guard.rewrite_requested",
    app=APP,
    entity_type="run",
    payload=GuardRewriteRequested,
    description=(
        "A customer or peer reply was blocked and the model was asked once more, told only the category; the "
        "outcome says whether the rewrite was sent (a second block is also recorded as guard.blocked)."
    ),
)
TOOL_REFUSED = register(
    "tool.refused",
    app=APP,
    entity_type="run",
    payload=ToolRefused,
    description="The tool registry refused a tool call the model asked for.",
)

# Actors that are parts of the platform rather than people or agents.
SESSIONS = Actor.platform("sessions")
TRUST = Actor.platform("trust")
GUARD = Actor.platform("guard")
RUNS = Actor.platform("runs")  # the turn machinery and the sweep of stranded runs


def _agent(agent: AgentProfile) -> Actor:
    return Actor(ActorType.AGENT, f"agent:{agent.pk}")


def _append(
    event_type: EventType, tenant_id: int, entity_id: Any, actor: Actor, payload: EventPayload
) -> AppendedEvent:
    return ledger_append(
        chain_id=tenant_id,
        event_type=event_type.name,
        entity_type=event_type.entity_type,
        entity_id=entity_id,
        actor_type=actor.type,
        actor_id=actor.id,
        payload=payload.model_dump(),
    )


def session_opened(*, session: DialogueSession, actor: Actor) -> AppendedEvent:
    payload = SessionOpened(
        agent=session.agent.slug,
        audience=session.audience,
        principal_type=session.principal_type,
        preview=session.preview,
    )
    return _append(SESSION_OPENED, session.tenant_id, session.pk, actor, payload)


def session_continued(
    *, session: DialogueSession, previous: DialogueSession, requests: list[int], actor: Actor
) -> AppendedEvent:
    payload = SessionContinued(continues=str(previous.pk), contract_version=session.contract_version, requests=requests)
    return _append(SESSION_CONTINUED, session.tenant_id, session.pk, actor, payload)


def session_expired(*, session: DialogueSession, idle_minutes: int) -> AppendedEvent:
    return _append(SESSION_EXPIRED, session.tenant_id, session.pk, SESSIONS, SessionExpired(idle_minutes=idle_minutes))


def session_rated(*, session: DialogueSession, rating: Rating, actor: Actor) -> AppendedEvent:
    payload = SessionRated(stars=rating.stars, comment_chars=len(rating.comment))
    return _append(SESSION_RATED, session.tenant_id, session.pk, actor, payload)


def message_posted(*, session: DialogueSession, message: Message, actor: Actor) -> AppendedEvent:
    payload = MessagePosted(message_id=message.pk, chars=len(message.text))
    return _append(MESSAGE_POSTED, session.tenant_id, session.pk, actor, payload)


def _submitted(
    event_type: EventType, session: DialogueSession, request: CustomerRequest, actor: Actor
) -> AppendedEvent:
    payload = RequestSubmitted(session=str(session.pk), state=request.state, fields=sorted(request.details))
    return _append(event_type, session.tenant_id, request.pk, actor, payload)


def request_submitted(*, session: DialogueSession, request: CustomerRequest, actor: Actor) -> AppendedEvent:
    return _submitted(REQUEST_SUBMITTED, session, request, actor)


def handoff_submitted(*, session: DialogueSession, request: CustomerRequest, actor: Actor) -> AppendedEvent:
    return _submitted(HANDOFF_SUBMITTED, session, request, actor)


def request_transitioned(*, request: CustomerRequest, before: str, actor: Actor) -> AppendedEvent:
    """`request` already holds its new state; `before` is the one it left."""
    payload = RequestTransitioned(from_=before, to=request.state)
    return _append(REQUEST_TRANSITIONED, request.tenant_id, request.pk, actor, payload)


def request_replied(*, request: CustomerRequest, message: Message, actor: Actor) -> AppendedEvent:
    payload = RequestReplied(session=str(message.session_id), message_id=message.pk, chars=len(message.text))
    return _append(REQUEST_REPLIED, request.tenant_id, request.pk, actor, payload)


def request_withdrawn(*, request: CustomerRequest, before: str, actor: Actor) -> AppendedEvent:
    """`request` already holds its new state; `before` is the one it left."""
    payload = RequestTransitioned(from_=before, to=request.state)
    return _append(REQUEST_WITHDRAWN, request.tenant_id, request.pk, actor, payload)


def request_amended(*, request: CustomerRequest, fields: list[str], actor: Actor) -> AppendedEvent:
    """`fields`: the names of what changed (never the values: they are the customer's words)."""
    payload = RequestAmended(state=request.state, fields=sorted(fields))
    return _append(REQUEST_AMENDED, request.tenant_id, request.pk, actor, payload)


def customer_trust_changed(*, customer: Customer, reason: str, delta: int) -> AppendedEvent:
    """`customer` already holds its new score."""
    payload = TrustChanged(reason=reason, delta=delta, score=customer.trust)
    return _append(TRUST_CHANGED, customer.tenant_id, customer.pk, TRUST, payload)


def run_finished(
    *, session: DialogueSession, run: Run, agent: AgentProfile, reply: Message, citations: int
) -> AppendedEvent:
    """`run` already holds its final status, stop reason and counters; `reply` is the message
    the run answered with."""
    payload = RunFinished(
        session=str(session.pk),
        message_id=run.message_id,
        reply_id=reply.pk,
        status=run.status,
        stop_reason=run.stop_reason,
        steps=run.step_index,
        llm_calls=run.llm_call_count,
        tool_calls=run.tool_call_count,
        model_units=run.prompt_tokens + run.completion_tokens,
        provider=run.provider,
        context_hash=run.context_hash,
        reply_chars=len(reply.text),
        citations=citations,
        contract_version=run.contract_version,
    )
    return _append(RUN_FINISHED, session.tenant_id, run.pk, _agent(agent), payload)


def run_interrupted(*, session: DialogueSession, run: Run, reason: str) -> AppendedEvent:
    payload = RunInterrupted(
        session=str(session.pk), message_id=run.message_id, attempt=run.attempts, stop_reason=reason
    )
    return _append(RUN_INTERRUPTED, session.tenant_id, run.pk, RUNS, payload)


def run_retried(*, session: DialogueSession, run: Run, previous_status: str, actor: Actor) -> AppendedEvent:
    """`run` holds its new attempt; `actor` is the session's principal, whose re-send it was (or
    the platform, when the server tried once more by itself)."""
    payload = RunRetried(
        session=str(session.pk), message_id=run.message_id, attempt=run.attempts, previous_status=previous_status
    )
    return _append(RUN_RETRIED, session.tenant_id, run.pk, actor, payload)


def run_stranded(*, session: DialogueSession, run: Run, reply: Message, stuck_seconds: int) -> AppendedEvent:
    payload = RunStranded(
        session=str(session.pk),
        message_id=run.message_id,
        reply_id=reply.pk,
        attempts=run.attempts,
        stuck_seconds=stuck_seconds,
        stop_reason=run.stop_reason,
    )
    return _append(RUN_STRANDED, session.tenant_id, run.pk, RUNS, payload)


def guard_blocked(
    *,
    session: DialogueSession,
    run: Run,
    category: str,
    audience: str,
    entry_id: int | None = None,
    rule: str = "",
    reason: str | None = None,
) -> AppendedEvent:
    payload = GuardBlocked(category=category, audience=audience, entry_id=entry_id, rule=rule, reason=reason)
    return _append(GUARD_BLOCKED, session.tenant_id, run.pk, GUARD, payload)


def guard_rewrite_requested(
    *, session: DialogueSession, run: Run, category: str, check: str, rule: str | None, outcome: str
) -> AppendedEvent:
    payload = GuardRewriteRequested(
        category=category, check=check, rule=rule, audience=session.audience, outcome=outcome
    )
    return _append(GUARD_REWRITE_REQUESTED, session.tenant_id, run.pk, GUARD, payload)


def tool_refused(
    *, session: DialogueSession, run: Run, agent: AgentProfile, tool: str, audience: str, reason: str
) -> AppendedEvent:
    """`tool` is the name as the runtime records it (a name-shaped string, never model text)."""
    payload = ToolRefused(tool=tool, audience=audience, reason=reason, session=str(session.pk))
    return _append(TOOL_REFUSED, session.tenant_id, run.pk, _agent(agent), payload)
