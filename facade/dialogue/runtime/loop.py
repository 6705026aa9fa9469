"""The run loop: one bounded run per principal message.

planning → (executing → planning)* → completed | waiting_input, or a stop: failed, cancelled,
over_budget.  Before every model call the loop checks cancellation, `max_steps`, the turn's
token budget and the tenant's daily model-call budget; after the model answers it checks
every tool call through the registry.  Whatever the model wrote, an outgoing customer or peer
reply passes the commitment guard and the owner's approved taboos (taboo.py), and a run that
stops early still answers — briefly and honestly.  Spans and ledger events carry ids, sizes
and outcomes, never message text.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import psycopg
from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, InterfaceError, connection
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from approvals.contract import ContractTerms, live_terms
from approvals.published import recorded
from approvals.rules import decision_words
from approvals.selectors import proposal_get
from approvals.skills import skill_tools
from facade import dependencies
from facade.i18n import Phrasebook
from facade.ratelimit import UNREACHABLE
from facade.tenancy.models import AgentProfile
from facade.tenancy.policy import AgentPolicy, NotFound
from facade.tenancy.rules import Audience, skills_for_trust
from guard.breaker import breaker_trip_quietly
from guard.context import turn_context
from guard.outgoing import UNSOURCED_FIGURE, outgoing_check
from guard.quoting import APPLIED_QUOTE
from knowledge.models import EntryVersion
from knowledge.selectors import Taboo

from ..intents import OWNER_DECISION, decision_asked
from ..models import CustomerRequest, DialogueSession, Message, Run, RunStatus, Span
from ..selectors import conversation_session_ids, recent_messages, request_view
from ..services import (
    AlreadyAnswered,
    DialogueError,
    RewriteRecord,
    RunOutcome,
    model_call_count,
    run_finish,
    run_interrupt,
    run_retry,
    run_start,
)
from .builtin_tools import registry, show_card
from .malformed import EMPTY, MALFORMED, JunkCheck
from .prompts import Prompt, conversation_language, customer_prompt, owner_prompt
from .providers import Provider, ProviderError, provider_for
from .providers.base import ModelReply
from .strict import STRICT, STRICT_REFUSED, Composed, compose, composition_mode, instructions
from .taboo import taboo_hit
from .tools import Outcome, Tool, ToolContext, recorded_name

log = logging.getLogger(__name__)

HISTORY = 20
TABOO = "taboo"  # the category of a reply that said what an approved taboo lesson forbids
REPLY_TOKENS = 800
CUSTOMER_MESSAGES = 500  # the customer's messages a strict reply's slots are looked up in

# What the agent says when a run ends without a reply of the model's, and after a blocked one.
# Read as HONEST[language][key] (facade/i18n.py); the Chinese is in locale/.
_CANT_FINISH = _("I couldn't finish this within my limits. Your message is saved; shall I ask a person to follow up?")
HONEST = Phrasebook(
    max_steps=_CANT_FINISH,
    token_budget=_CANT_FINISH,
    daily_budget=_("I can't answer more today. Your message is saved and a person can follow up."),
    provider_error=_(
        "I can't answer right now because of a technical problem. Your message is saved; please try again in a moment."
    ),
    invalid_tool_arguments=_(
        "Something went wrong on my side. Your message is saved; shall I ask a person to follow up?"
    ),
    cancelled=_("Stopped."),
    offer=_("Shall I register a request so that the owner can confirm it with you?"),
    # A reply that was not an answer, twice (malformed.py): said as it is, not as a technical problem.
    malformed_reply=_("I don't have a good answer to that; shall I pass it to the owner?"),
    malformed_owner=_("I don't have a good answer to that. Could you put it another way?"),
    # The sweep's answer to a message whose run was left without a reply (runtime/stranded.py).
    stranded=_(
        "I couldn't finish answering this because of a technical problem. Your message is saved; "
        "please ask again, or a person can follow up."
    ),
)


@dataclass
class TurnResult:
    message: Message
    reply: Message | None
    run: Run | None
    request: dict[str, Any] | None
    duplicate: bool


def cancel_key(run_id: Any) -> str:
    return f"facade:run-cancel:{run_id}"


def run_cancel(*, session: DialogueSession) -> int:
    """Ask the running turns of a session to stop: no model or tool call starts after this."""
    running = list(
        Run.objects.filter(session=session, status__in=[RunStatus.PLANNING, RunStatus.EXECUTING]).values_list(
            "pk", flat=True
        )
    )
    for pk in running:
        try:
            cache.set(cancel_key(pk), 1, timeout=3600)
        except UNREACHABLE:  # Redis away: only a turn of the asking WebSocket (its own event) stops
            dependencies.note_down(dependencies.REDIS)
            log.warning("cancel flag not set: Redis unreachable", extra={"run": pk})
    return len(running)


def _build_prompt(
    session: DialogueSession,
    agent: AgentProfile,
    language: str,
    tool_names: list[str],
    terms: ContractTerms | None = None,
) -> Prompt:
    audience = Audience(session.audience)
    if audience == Audience.OWNER:
        pending = EntryVersion.objects.filter(agent=agent, status="pending").count()
        return owner_prompt(agent, language, tool_names, pending)
    return customer_prompt(agent, language, tool_names, audience, terms)


def _history(session: DialogueSession) -> list[dict[str, Any]]:
    """The session's latest messages, read before the new one is stored."""
    rows = recent_messages(session=session, limit=HISTORY)
    return [{"role": "user" if role == "principal" else "assistant", "content": text} for role, text in rows]


def turn_handle(
    *,
    session: DialogueSession,
    text: str,
    client_message_id: str = "",
    provider: Provider | None = None,
    progress: Callable[[str], None] | None = None,
    still_owner: Callable[[], bool] | None = None,
) -> TurnResult:
    """Store the principal's message and answer it.  A repeated client_message_id returns the
    stored message and its reply instead of running again — unless the message has no reply and
    its run broke off or is stranded: then the run is run again (`run_retry`), still to one reply.

    The run starts in the message's own transaction (its row and the first model call's count
    against the daily budget): a stored message always has its run, and a turn pays for one
    commit less.

    A database connection lost during the turn (a restart of PostgreSQL, a terminated backend)
    costs one retry on a fresh connection that the customer does not see: the attempt that broke
    off is recorded (`run_interrupt`) and its message answered by the next.  A second loss is
    `503 temporarily_unavailable`; the message, if stored, is answered when it is sent again."""
    turn = _Turn(
        session=session,
        text=text,
        client_message_id=client_message_id,
        provider=provider or provider_for(session.agent),
        progress=progress,
        still_owner=still_owner,
    )
    try:
        return turn.answer()
    except BaseException as failed:
        if not connection_lost(failed):
            turn.broke_off(TURN_ERROR)
            raise
        turn.broke_off(CONNECTION_LOST, lost=True)
        if turn.message is None and turn.storing:
            if not client_message_id:
                # The message may or may not have been stored, and nothing names it: a second try
                # could store it twice.  The customer sends it again (the page gives it an id).
                raise unavailable() from failed
            # Stored perhaps, with its run, and only the commit's acknowledgement lost: the second
            # try finds the message, and a run begun since this turn began storing is its own.
            turn.lost_while_storing = True
    log.warning("chat turn lost its database connection; trying once more", extra={"session": str(session.pk)})
    try:
        return turn.answer()
    except BaseException as again:
        lost_again = connection_lost(again)
        turn.broke_off(CONNECTION_LOST if lost_again else TURN_ERROR, lost=lost_again)
        if lost_again:
            raise unavailable() from again
        raise


# The SQLSTATEs of a connection that went: class 08 (connection exception) and the server's
# shutdowns — pg_terminate_backend and a restart (57P01), a crash (57P02), still starting (57P03).
CONNECTION_GONE_STATES = ("57P01", "57P02", "57P03")


def connection_lost(exc: BaseException) -> bool:
    """Whether `exc` says the turn's database connection went (so one more try, on a fresh
    connection, is worth it) — not any other database error: a statement timeout, a deadlock or
    a full disk is the turn's failure, recorded and raised, never run again unseen.

    psycopg's error is read as Django wraps it (its `__cause__`) or raw (the turn's own prepared
    statements, turn_sql.py, and the ledger's append): an operational or interface error with a
    connection SQLSTATE, or with none at all (the client's own "the connection is closed",
    "server closed the connection unexpectedly").  Django's InterfaceError without a psycopg
    cause is its own "connection already closed"."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, psycopg.Error):
        cause = cause.__cause__
    if cause is None:
        return isinstance(exc, InterfaceError)
    if not isinstance(cause, (psycopg.OperationalError, psycopg.InterfaceError)):
        return False
    state = cause.sqlstate
    return state is None or state.startswith("08") or state in CONNECTION_GONE_STATES


CONNECTION_LOST = "connection_lost"
TURN_ERROR = "turn_error"


def unavailable() -> DialogueError:
    return DialogueError(
        "temporarily_unavailable",
        "the service is briefly unavailable; your message is kept and answered when you send it again",
        HTTPStatus.SERVICE_UNAVAILABLE,
        retry_after=5,
    )


@dataclass
class _Turn:
    """One principal message on its way to a reply, tried at most twice by `turn_handle`."""

    session: DialogueSession
    text: str
    client_message_id: str
    provider: Provider
    progress: Callable[[str], None] | None
    still_owner: Callable[[], bool] | None
    message: Message | None = None  # stored (by this turn, or before it: a re-send)
    run: Run | None = None  # the attempt this turn is making, once it has begun one
    storing: bool = False  # the message's transaction was under way
    broken: int | None = None  # the attempt of the run this turn saw break off
    store_began: dt.datetime | None = None  # when this turn first tried to store its message
    lost_while_storing: bool = False  # the connection went before the store's commit was acknowledged

    def answer(self) -> TurnResult:
        session, agent = self.session, self.session.agent
        counted = False
        history = _history(session) if self.message is None else _history_before(session, self.message)
        language = conversation_language([self.text, *(m["content"] for m in reversed(history) if m["role"] == "user")])
        tools = registry.for_audience(Audience(session.audience))
        terms = None
        if session.audience != Audience.OWNER:  # the customer face does what its contract's skills grant
            terms = live_terms(agent)
            skill_ids = terms.skill_ids
            if session.peer is not None:  # and a peer's, what its key's trust leaves (issue 33 §3)
                skill_ids = skills_for_trust(session.peer.trust, skill_ids)
            granted = skill_tools(skill_ids)
            tools = [tool for tool in tools if tool.name in granted]
        prompt = _build_prompt(session, agent, language, [tool.name for tool in tools], terms)
        if self.message is None:
            self.store_began = self.store_began or timezone.now()
            self.storing = True
            started = run_start(
                session=session,
                text=self.text,
                client_message_id=self.client_message_id,
                provider=self.provider.name,
                context_hash=prompt.context_hash,
                contract_version=terms.version if terms is not None else None,
            )
            self.storing = False
            self.message = started.message
            if started.created and started.run is not None:
                self.run, counted = started.run, started.counted
            else:
                history = _history_before(session, started.message)
        if self.run is None:
            message = self.message
            reply = Message.objects.filter(reply_to=message).first()
            retried = None
            if reply is None:
                retried = run_retry(
                    session=session,
                    message=message,
                    provider=self.provider.name,
                    context_hash=prompt.context_hash,
                    broken=self.broken,
                    own_since=self.store_began if self.lost_while_storing else None,
                    contract_version=terms.version if terms is not None else None,
                )
            if retried is None:
                run = Run.objects.filter(message=message).first()
                return TurnResult(message, reply, run, _request_of(run), duplicate=True)
            self.run, counted = retried.run, retried.counted
        return run_turn(
            session=session,
            message=self.message,
            run=self.run,
            first_call_counted=counted,
            provider=self.provider,
            history=history,
            language=language,
            tools=tools,
            prompt=prompt,
            progress=self.progress,
            still_owner=self.still_owner,
            terms=terms,
        )

    def broke_off(self, reason: str, *, lost: bool = False) -> None:
        """Record that this turn's attempt ended without a reply, if it began one, on a fresh
        connection; the attempt is forgotten, so a second try begins another.  Quietly: with the
        database still away this records nothing, and the run is stranded until a re-send or the
        sweep (runtime/stranded.py) answers it."""
        run, self.run = self.run, None
        if run is not None:
            self.broken = run.attempts
        if lost and not connection.in_atomic_block:
            connection.close()  # the broken connection goes (a pooled one back to its pool, to be checked)
        if run is None:
            return
        try:
            run_interrupt(run_id=run.pk, attempt=run.attempts, reason=reason)
        except (DatabaseError, psycopg.Error):
            log.warning("could not record an interrupted run", extra={"run": str(run.pk)})
            if not connection.in_atomic_block:
                connection.close()


def _history_before(session: DialogueSession, message: Message) -> list[dict[str, Any]]:
    """The history a stored message was answered with: the messages before it (a re-run is rare,
    so the ORM will do)."""
    chain = conversation_session_ids(session)  # a session that continues another reads its messages too
    rows = list(
        Message.objects.filter(session_id__in=chain, pk__lt=message.pk)
        .order_by("-pk")
        .values_list("role", "text")[:HISTORY]
    )
    return [{"role": "user" if role == "principal" else "assistant", "content": text} for role, text in reversed(rows)]


def _decision_card(ctx: ToolContext, text: str) -> None:
    """The owner typed "approve chg_…" / "reject chg_…": the reply carries that proposal's card
    with its buttons, whatever the model makes of the words.  Only the card decides (a token, or
    the e-mailed code for L3); neither these words nor the model do."""
    words = decision_words(text)
    if words is None:
        return
    try:
        proposal = proposal_get(agent=ctx.agent, proposal_id=words[1])
    except NotFound:
        return
    show_card(ctx, proposal)


def _request_of(run: Run | None) -> dict[str, Any] | None:
    if run is None:
        return None
    request = run.requests.order_by("pk").first()
    return request_view(request) if request is not None else None


def run_turn(
    *,
    session: DialogueSession,
    message: Message,
    run: Run,
    first_call_counted: bool,
    provider: Provider,
    history: list[dict[str, Any]],
    language: str,
    tools: list[Tool],
    prompt: Prompt,
    progress: Callable[[str], None] | None = None,
    still_owner: Callable[[], bool] | None = None,
    terms: ContractTerms | None = None,
) -> TurnResult:
    """The loop of a run `turn_handle` started with its message; `first_call_counted` is whether
    the daily budget had room for the first model call (counted in the message's transaction).
    `terms`: the live contract a customer or peer run speaks by (read by `turn_handle`)."""
    agent = session.agent
    audience = Audience(session.audience)
    if audience != Audience.OWNER and terms is None:
        terms = live_terms(agent)
    # Strict composition (strict.py): the model chooses parts, the server composes the reply.
    strict = terms is not None and audience != Audience.OWNER and composition_mode(agent, terms) == STRICT
    report = progress or (lambda state: None)
    specs = [tool.spec() for tool in tools]
    if still_owner is None:
        user = session.user

        def still_owner() -> bool:
            return user is not None and AgentPolicy.is_owner(user, agent)

    ctx = ToolContext(
        session=session,
        run=run,
        agent=agent,
        still_owner=still_owner,
        language=language,
        progress=report,
        offered=frozenset(tool.name for tool in tools),
    )
    if run.attempts > 1:
        # Begun again after an attempt that broke off: a request that attempt registered stays
        # the message's one request (submit_request refuses a second), and the reply reports it.
        ctx.request = _request_of(run)
    if audience == Audience.OWNER:
        _decision_card(ctx, message.text)
    system = prompt.system
    if strict and terms is not None:
        system = f"{system}\n\n{instructions(agent, terms, language)}"
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        *history,
        {"role": "user", "content": message.text},
    ]
    # Issue 29: text that is not an answer, for every audience (malformed.py).
    junk = JunkCheck.of(
        tool_names=registry.names(),
        system=system,
        principal_said=[*(m["content"] for m in history if m["role"] == "user"), message.text],
    )
    spans: list[Span] = []
    token_limit = settings.FACADE_TURN_TOKEN_LIMIT
    repairs = 0
    text = ""
    needs_input = False
    guess_input = True  # whether the model left it to the text's last character
    status, stop_reason = RunStatus.PLANNING, ""

    def span(kind: str, name: str, outcome: str, started: float, wall: Any, reply: ModelReply | None = None) -> None:
        spans.append(
            Span(
                tenant_id=session.tenant_id,
                run=run,
                kind=kind,
                name=name[:64],
                outcome=outcome[:32],
                started_at=wall,
                duration_ms=(time.perf_counter() - started) * 1000,
                prompt_tokens=reply.prompt_tokens if reply else 0,
                completion_tokens=reply.completion_tokens if reply else 0,
            )
        )

    def cancelled() -> bool:
        try:
            return bool(cache.get(cancel_key(run.pk)))
        except UNREACHABLE:  # Redis went away mid-turn: the turn goes on to its reply
            dependencies.note_down(dependencies.REDIS)
            return False

    while True:
        if cancelled():
            status, stop_reason = RunStatus.CANCELLED, "cancelled"
            break
        if run.step_index >= agent.max_steps:
            status, stop_reason = RunStatus.OVER_BUDGET, "max_steps"
            break
        if run.prompt_tokens + run.completion_tokens >= token_limit:
            status, stop_reason = RunStatus.OVER_BUDGET, "token_budget"
            break
        if run.llm_call_count == 0:
            counted = first_call_counted  # the first call was counted with the message
        else:
            counted = model_call_count(tenant_id=session.tenant_id)
        if not counted:
            status, stop_reason = RunStatus.OVER_BUDGET, "daily_budget"
            break
        report("thinking")
        if provider.remote and not connection.in_atomic_block:
            connection.close()  # back to the pool while the model thinks; reopened on the next query
        started, wall = time.perf_counter(), timezone.now()
        try:
            reply = provider.complete(
                messages=messages,
                tools=specs,
                max_tokens=min(REPLY_TOKENS, max(1, token_limit - run.prompt_tokens - run.completion_tokens)),
                audience=audience,
                # Only in strict mode, so a provider written before the mode existed keeps working.
                **({"composition": STRICT} if strict else {}),
            )
        except ProviderError as exc:
            run.llm_call_count += 1
            span("model", provider.name, exc.reason, started, wall)
            status, stop_reason = RunStatus.FAILED, "provider_error"
            break
        run.llm_call_count += 1
        run.prompt_tokens += reply.prompt_tokens
        run.completion_tokens += reply.completion_tokens
        span("model", provider.name, "tool_calls" if reply.tool_calls else "text", started, wall, reply)
        if run.prompt_tokens + run.completion_tokens > token_limit:
            status, stop_reason = RunStatus.OVER_BUDGET, "token_budget"
            break
        if not reply.tool_calls:
            text = reply.text.strip()
            guess_input = reply.needs_input is None
            needs_input = reply.needs_input if reply.needs_input is not None else text.rstrip().endswith(("?", "？"))
            status = RunStatus.WAITING_INPUT if needs_input else RunStatus.COMPLETED
            break
        status = RunStatus.EXECUTING
        messages.append(
            {
                "role": "assistant",
                # "" and never null: strict servers (llama.cpp's) refuse a null content.
                "content": reply.text or "",
                "tool_calls": [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in reply.tool_calls
                ],
            }
        )
        invalid = False
        for call in reply.tool_calls:
            if cancelled():
                break
            started, wall = time.perf_counter(), timezone.now()
            result = registry.execute(ctx, call)
            span("tool", recorded_name(call.name), result.outcome.value, started, wall)
            if result.outcome == Outcome.OK:
                run.tool_call_count += 1
            invalid = invalid or result.outcome == Outcome.INVALID
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result.for_model()})
        if invalid:
            repairs += 1
            if repairs > 1:
                status, stop_reason = RunStatus.FAILED, "invalid_tool_arguments"
                break
        else:
            run.step_index += 1
        status = RunStatus.PLANNING

    from_model = bool(text)
    if not text and stop_reason:  # an empty answer of the model's is checked (and named) below
        text = HONEST[language].get(stop_reason) or HONEST[language]["provider_error"]
        needs_input = False
    context = turn_context(messages, ctx.citations)
    given, customer = list(context.given), list(context.customer)
    cited = list(ctx.citations)
    blocked: Blocked | None = None
    if strict and terms is not None and from_model:
        # The server composes the reply from the model's structured choice (strict.py); what it
        # composes still goes through the taboos and the whole outgoing check below.
        composed = _composed(text, session=session, agent=agent, terms=terms, language=language, ctx=ctx, spans=spans)
        if composed.text is None:
            blocked = Blocked(category=STRICT_REFUSED, check="strict", reason=composed.reason)
        else:
            text, cited = composed.text, [ctx.citations[i] for i in composed.cited]
            if guess_input:
                needs_input = composed.asks
            if needs_input and status == RunStatus.COMPLETED:
                status = RunStatus.WAITING_INPUT
    if blocked is None:
        blocked = reply_blocked(text, audience, prompt.taboos, cited, given, customer, junk=junk)
    rewrite: RewriteRecord | None = None
    # In strict mode there is no rewrite: the model chose parts, and a refusal is final.
    if blocked is not None and provider.rewrites and not stop_reason and not strict:
        # One bounded rewrite: the model is told the category that was blocked — not the rule,
        # not the words — and answers once more, as text, within the same budgets.
        if (
            not cancelled()
            and run.step_index < agent.max_steps
            and run.prompt_tokens + run.completion_tokens < token_limit
            and model_call_count(tenant_id=session.tenant_id)
        ):
            first = blocked
            report("thinking")
            if provider.remote and not connection.in_atomic_block:
                connection.close()
            started, wall = time.perf_counter(), timezone.now()
            outcome = "blocked"
            try:
                reply = provider.complete(
                    messages=[
                        *messages,
                        {"role": "assistant", "content": text},
                        {"role": "system", "content": rewrite_note(first.category)},
                    ],
                    tools=[],
                    max_tokens=min(REPLY_TOKENS, max(1, token_limit - run.prompt_tokens - run.completion_tokens)),
                    audience=audience,
                )
            except ProviderError as exc:
                run.llm_call_count += 1
                span("model", provider.name, exc.reason, started, wall)
                outcome = "provider_error"
            else:
                run.llm_call_count += 1
                run.prompt_tokens += reply.prompt_tokens
                run.completion_tokens += reply.completion_tokens
                rewritten = reply.text.strip()
                if reply.tool_calls or not rewritten:
                    outcome = "not_text"  # a rewrite is an answer, not another round of tools
                elif run.prompt_tokens + run.completion_tokens > token_limit:
                    outcome = "token_budget"
                elif cancelled():
                    outcome = "cancelled"  # stopped while the model rewrote: nothing of it is sent
                else:
                    blocked = reply_blocked(
                        rewritten, audience, prompt.taboos, ctx.citations, given, customer, junk=junk
                    )
                    if blocked is None:
                        outcome = "sent"
                        text = rewritten
                        needs_input = reply.needs_input if reply.needs_input is not None else text.endswith(("?", "？"))
                        status = RunStatus.WAITING_INPUT if needs_input else RunStatus.COMPLETED
                span("model", provider.name, f"rewrite_{outcome}", started, wall, reply)
            rewrite = RewriteRecord(category=first.category, check=first.check, rule=first.rule, outcome=outcome)
    if blocked is not None and blocked.category == MALFORMED and not stop_reason:
        stop_reason = EMPTY if blocked.rule == "empty" else MALFORMED  # issue 29: the run says what happened

    if audience != Audience.OWNER and not stop_reason and decision_asked(message.text) is not None:
        # Asked for a discount, a special price or a promise: recorded as such (issue 26 §3), a
        # decision the business makes — not a question the knowledge failed to answer.
        stop_reason = OWNER_DECISION
    return _finish(
        run=run,
        session=session,
        agent=agent,
        audience=audience,
        language=language,
        text=text,
        status=status,
        stop_reason=stop_reason,
        needs_input=needs_input,
        spans=spans,
        ctx=ctx,
        report=report,
        blocked=blocked,
        rewrite=rewrite,
        cited=cited,
    )


# What the model is told when its customer or peer reply was not sent: the category only, never
# the rule that fired, the words it fired on or how the check could be passed.
_BLOCKED_BECAUSE = {
    "price": "it stated a price",
    "deadline": "it committed to a deadline or a time",
    "outcome": "it promised an outcome",
    "conclusion": "it stated a conclusion on the customer's case (such as eligibility, an approval or a refund)",
    UNSOURCED_FIGURE: "it gave a figure (an amount, a duration or a date) that you were not given",
    APPLIED_QUOTE: "it applied a quoted entry to the customer's own case",
    TABOO: "it said something the owner has asked never to be said",
}


def rewrite_note(category: str) -> str:
    """The note the model gets with its one rewrite."""
    if category == MALFORMED:
        return (
            "Your reply was not sent because it was not an answer (it was empty, wrote a tool call or your "
            "instructions as text, or was in another language). Answer the last message again in plain words, in "
            "the language it was written in. Answer with text only."
        )
    because = _BLOCKED_BECAUSE.get(category, "it made a commitment")
    return (
        f"Your reply was not sent because {because}. Answer again without committing to a price, deadline "
        "or conclusion; offer to ask the owner instead. Answer with text only."
    )


@dataclass(frozen=True)
class Blocked:
    """Why a customer or peer reply is not sent: `check` is "guard", "grounding", "taboo" or "strict";
    `rule` the named rule when the check has one; `taboo_entry` the broken taboo lesson's entry."""

    category: str
    check: str
    rule: str | None = None
    taboo_entry: int | None = None
    reason: str | None = None  # category `strict_refused`: the strict composer's reason code


def reply_blocked(
    text: str,
    audience: Audience,
    taboos: tuple[Taboo, ...],
    citations: list[dict[str, Any]],
    given: list[str],
    customer: list[str] | None = None,
    *,
    junk: Callable[[str], str | None] | None = None,
) -> Blocked | None:
    """What commits (`commitment_blocked`), then text that is not an answer at all (`junk`,
    malformed.py, issue 29 — on every face, the owner's too); None when the reply may be sent."""
    blocked = commitment_blocked(text, audience, taboos, citations, given, customer)
    if blocked is None and junk is not None and (broke := junk(text)) is not None:
        return Blocked(category=MALFORMED, check="malformed", rule=broke)
    return blocked


def commitment_blocked(
    text: str,
    audience: Audience,
    taboos: tuple[Taboo, ...],
    citations: list[dict[str, Any]],
    given: list[str],
    customer: list[str] | None = None,
) -> Blocked | None:
    """The owner's approved taboos (the whole reply, quotes included — the owner never says it),
    then the whole outgoing check; None when the reply may be sent (always for the owner face)."""
    if audience not in (Audience.CUSTOMER, Audience.PEER):
        return None
    broken = taboo_hit(text, taboos)
    if broken is not None:
        return Blocked(category=TABOO, check=TABOO, taboo_entry=broken.entry_id)
    verdict = outgoing_check(text, given=given, citations=citations, customer=customer or [])
    if not verdict.blocked:
        return None
    return Blocked(category=verdict.category or "unknown", check=verdict.check or "guard", rule=verdict.rule)


def _finish(
    *,
    run: Run,
    session: DialogueSession,
    agent: AgentProfile,
    audience: Audience,
    language: str,
    text: str,
    status: RunStatus,
    stop_reason: str,
    needs_input: bool,
    spans: list[Span],
    ctx: ToolContext,
    report: Callable[[str], None],
    blocked: Blocked | None,
    rewrite: RewriteRecord | None = None,
    cited: list[dict[str, Any]] | None = None,
) -> TurnResult:
    """Record the run's reply: a blocked one is replaced by the contract's boundary wording and
    an offer (`blocked`: the verdict on the text as it stands; `cited`: the search results the
    reply quotes, all of the run's unless a strict reply was composed from some of them)."""
    cited = list(ctx.citations) if cited is None else cited
    if blocked is not None and blocked.category == MALFORMED:
        # Not an answer, even on its rewrite: said honestly (issue 29), the owner's offer on the outward faces.
        text = HONEST[language]["malformed_owner" if audience == Audience.OWNER else "malformed_reply"]
        needs_input = True
        if status == RunStatus.COMPLETED:
            status = RunStatus.WAITING_INPUT
    elif blocked is not None:
        text = f"{live_terms(agent).boundary(language)} {HONEST[language]['offer']}"
        needs_input = True
        if status == RunStatus.COMPLETED:
            status = RunStatus.WAITING_INPUT
    guarded = blocked.category if blocked is not None else ""
    citations = [recorded(c) for c in cited] if not guarded else []
    # A knowledge version's hit; a published price list or delivery options is no entry.
    hits = [c["version_id"] for c in cited if c.get("version_id")] if audience != Audience.OWNER and not guarded else []
    outcome = RunOutcome(
        status=status,
        stop_reason=stop_reason,
        needs_input=needs_input,
        guard_category=guarded,
        taboo_entry=blocked.taboo_entry if blocked is not None else None,
        guard_rule=(blocked.rule or "") if blocked is not None else "",
        guard_reason=(blocked.reason or "") if blocked is not None else "",
        text=text,
        citations=citations,
        metadata={"cards": ctx.cards} if ctx.cards and audience == Audience.OWNER else {},
        rewrite=rewrite,
    )
    try:
        reply = run_finish(session=session, run=run, outcome=outcome, spans=spans, hits=hits, agent=agent)
    except AlreadyAnswered as answered:
        # An attempt thought dead, or the sweep of stranded runs, answered first: that reply is
        # the message's one reply, and this attempt's is dropped.
        report("done")
        return TurnResult(run.message, answered.reply, run, ctx.request, duplicate=True)
    if guarded and not session.preview:
        breaker_trip_quietly(agent=agent)  # after the reply is recorded: it never fails the turn
    if status == RunStatus.CANCELLED:
        with contextlib.suppress(*UNREACHABLE):  # the flag expires on its own
            cache.delete(cancel_key(run.pk))
    report("done")
    return TurnResult(run.message, reply, run, ctx.request, duplicate=False)


def _composed(
    raw: str,
    *,
    session: DialogueSession,
    agent: AgentProfile,
    terms: ContractTerms,
    language: str,
    ctx: ToolContext,
    spans: list[Span],
) -> Composed:
    """The strict reply the server composes from the model's answer (strict.py), drawing on this
    run's citations and request, and on the customer's own messages of the session."""

    def customer_said() -> list[str]:
        return list(
            Message.objects.filter(session=session, role="principal")
            .order_by("-pk")
            .values_list("text", flat=True)[:CUSTOMER_MESSAGES]
        )

    def session_request(number: int) -> dict[str, Any] | None:
        request = CustomerRequest.objects.filter(session=session, pk=number).first()
        return request_view(request) if request is not None else None

    return compose(
        raw,
        agent=agent,
        terms=terms,
        language=language,
        citations=ctx.citations,
        customer_said=customer_said,
        request=ctx.request,
        tools_done=[s.name for s in spans if s.kind == "tool" and s.outcome == Outcome.OK.value],
        session_request=session_request,
    )
