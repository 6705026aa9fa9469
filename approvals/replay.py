"""The replay preview (issue 13): before the owner decides a proposal that changes what customers
are told, the server replays it on the past days' customer turns it concerns, and the card shows
counts only.

`proposal_replay_run(proposal_id=…)` (the Celery task `approvals.tasks.proposal_replay` sends it
after a qualifying proposal is created or edited; `manage.py proposal_replay <id>` by hand):

1. picks the turns: the customer and peer messages of the last `FACADE_REPLAY_DAYS` days (never
   an owner's preview), the newest `FACADE_REPLAY_SCAN_MAX` scanned; the ones the proposal
   concerns (`_concerned`, at most `FACADE_REPLAY_AFFECTED_MAX`) and the newest others (at most
   `FACADE_REPLAY_ELSEWHERE_MAX`, the "elsewhere" sample);
2. replays each turn twice with the agent's own model (`provider_for`: the offline model by
   default, the configured OpenAI-compatible one otherwise) — against the live state, and against
   the state with the proposal applied hypothetically: a contract change as a `ContractTerms` in
   memory, a knowledge draft as a version inserted inside a transaction that is rolled back, so no
   customer ever sees it.  A replayed turn runs the model and the read-only knowledge search only:
   nothing is stored, no message, run, miss, hit or ledger event, no model call is counted
   against the tenant's budget, and a tool that would write (a request, a hand-off) is answered
   "not run in a replay";
3. compares and counts (`replay_rules.tally`) and stores the counts, the pointers (message and
   session ids) and the model in a `ProposalReplay` row with its `proposal.replayed` event.

Its result never decides anything: the owner decides with or without it.  The customer's words
are read in memory to replay them and are never stored, logged or shown."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from django.apps import apps
from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from facade.clock import task_expires
from facade.dialogue.runtime.builtin_tools import knowledge_found
from facade.dialogue.runtime.loop import HISTORY, HONEST, REPLY_TOKENS, reply_blocked
from facade.dialogue.runtime.prompts import conversation_language, customer_prompt
from facade.dialogue.runtime.providers import Provider, ProviderError, provider_for
from facade.dialogue.runtime.tools import SearchArgs, registry
from facade.tenancy.models import AgentProfile
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from guard.context import turn_context
from knowledge.text import query_terms, search_text

from . import events, published, replay_rules, targets
from .contract import ContractTerms, live_content, live_terms
from .models import ChangeProposal, ProposalReplay, ProposalStatus, ReplayStatus
from .schemas import REVIEW_DRAFT_PLACEHOLDER, Kind
from .skills import skill_tools

logger = logging.getLogger(__name__)

ACTOR = Actor.platform("proposal_replay")
NOT_RUN = json.dumps({"outcome": "refused", "error": "not_run_in_replay", "detail": "a replay writes nothing"})
# A hypothetical knowledge version is numbered far above any real one, so that its row never
# waits on (or holds up) a real new version of the same entry.
HYPOTHETICAL_NUMBER = 1_000_000
# A replay left `running` this long after its start (a worker that died) may be taken over: 30
# minutes, or twice FACADE_REPLAY_SECONDS when that is longer (`stale_after`).
STALE_AFTER = timedelta(minutes=30)
SWEEP_LIMIT = 50  # replays the sweep sends at most per run
REPLAY_EXPIRES = 15 * 60  # seconds on the wall clock: a task not started by then is dropped (the sweep sends another)


class Rollback(Exception):
    """Raised at the end of a hypothetical turn: nothing of it may be committed."""

    def __init__(self, outcome: replay_rules.TurnOutcome) -> None:
        super().__init__("rolled back")
        self.outcome = outcome


@dataclass(frozen=True)
class Turn:
    """One customer turn, in memory only while it is replayed."""

    message_id: int
    session_id: str
    audience: str
    text: str
    concerned: bool = False


# --- sending ------------------------------------------------------------------------------------


def replay_wanted(proposal: ChangeProposal) -> bool:
    return proposal.status == ProposalStatus.PENDING and replay_rules.replayed(proposal.kind)


def replay_send_on_commit(proposal: ChangeProposal) -> None:
    """After the proposal's transaction commits, send its replay (a pending proposal that
    changes what customers are told); each new version is replayed again."""
    if replay_wanted(proposal):
        proposal_id = proposal.pk
        transaction.on_commit(lambda: _send(proposal_id))


def _send(proposal_id: str) -> None:
    from .tasks import proposal_replay_task

    try:
        proposal_replay_task.apply_async(args=[proposal_id], expires=task_expires(REPLAY_EXPIRES))
    except Exception:  # noqa: BLE001 - a broker that is down must not fail the owner's change
        logger.warning("proposal replay not sent for %s", proposal_id, exc_info=True)


def stale_after() -> timedelta:
    return max(STALE_AFTER, timedelta(seconds=2 * settings.FACADE_REPLAY_SECONDS))


def replays_due(*, now: Any = None) -> list[str]:
    """Pending proposals of a replayed kind whose current version has no finished replay: never
    sent (the broker was down at the commit) or left running past `stale_after` (a worker that
    died).  Oldest first, at most SWEEP_LIMIT."""
    now = now or timezone.now()
    versions = ProposalReplay.objects.filter(proposal=OuterRef("pk"), proposal_version=OuterRef("version"))
    alive = versions.exclude(status=ReplayStatus.RUNNING, started_at__lt=now - stale_after())
    due = (
        ChangeProposal.objects.filter(
            status=ProposalStatus.PENDING, kind__in=list(replay_rules.REPLAYED_KINDS), expires_at__gt=now
        )
        .exclude(Exists(alive))
        .order_by("created_at")
        .values_list("pk", flat=True)
    )
    return list(due[:SWEEP_LIMIT])


def replays_sweep(*, now: Any = None) -> int:
    """Send the replays `replays_due` finds (the beat's `approvals.tasks.proposal_replays_sweep`);
    a replay sent twice runs once (`_claim`)."""
    due = replays_due(now=now)
    for proposal_id in due:
        _send(proposal_id)
    return len(due)


# --- the service --------------------------------------------------------------------------------


def proposal_replay_run(*, proposal_id: str, provider: Provider | None = None) -> ProposalReplay | None:
    """Replay the proposal's current version (see the module's docstring) and store the result.
    Harmless to run twice: a version replayed already (or being replayed) is returned as it is.
    None when the proposal does not exist, is no longer pending or is of a kind not replayed."""
    proposal = ChangeProposal.objects.select_related("agent", "tenant").filter(pk=proposal_id).first()
    if proposal is None or not replay_wanted(proposal):
        return None
    replay, mine = _claim(proposal)
    if not mine:
        return replay
    agent = proposal.agent
    provider = provider or provider_for(agent)
    try:
        if _unwritten(proposal):
            return _finish(replay, status=ReplayStatus.SKIPPED, model=_model_name(provider))
        counts, timed_out = _replay(proposal, agent, provider)
    except Exception as exc:  # noqa: BLE001 - a replay that breaks says so on its card, and nothing else moves
        # The class only: a message could quote what a customer wrote.
        logger.error("proposal replay %s failed: %s", replay.pk, type(exc).__name__)
        return _finish(replay, status=ReplayStatus.FAILED, model=_model_name(provider), error=type(exc).__name__)
    return _finish(
        replay,
        status=ReplayStatus.DONE,
        model=_model_name(provider),
        counts=counts,
        timed_out=timed_out,
    )


def _claim(proposal: ChangeProposal) -> tuple[ProposalReplay, bool]:
    """The replay row of the proposal's current version and whether this caller runs it: a new
    row is created `running` and is ours; a row left running by a worker that died is taken
    over after `stale_after`; any other row (finished, or running now) is someone else's."""
    with transaction.atomic():
        replay, created = ProposalReplay.objects.select_for_update().get_or_create(
            proposal=proposal,
            proposal_version=proposal.version,
            defaults={"days": settings.FACADE_REPLAY_DAYS},
        )
        if created:
            return replay, True
        if replay.status == ReplayStatus.RUNNING and replay.started_at < timezone.now() - stale_after():
            replay.started_at = timezone.now()
            replay.save(update_fields=["started_at"])
            return replay, True
        return replay, False


def replay_locked(replay_id: Any) -> ProposalReplay:
    """The replay row, locked; its proposal and agent read along, unlocked."""
    return ProposalReplay.objects.select_for_update(of=("self",)).select_related("proposal__agent").get(pk=replay_id)


def _finish(
    replay: ProposalReplay,
    *,
    status: ReplayStatus,
    model: str,
    counts: replay_rules.Counts | None = None,
    timed_out: bool = False,
    error: str = "",
) -> ProposalReplay:
    with transaction.atomic():
        # Only the replay row is locked (of "self"), not the proposal and agent rows it joins:
        # see `services._locked` for the lock order.
        replay = replay_locked(replay.pk)
        replay.status = status
        replay.model = model[:120]
        replay.counts = counts.figures() if counts is not None else {}
        replay.pointers = counts.pointers if counts is not None else {}
        replay.timed_out = timed_out
        replay.error = error[:64]
        replay.computed_at = timezone.now()
        replay.save(update_fields=["status", "model", "counts", "pointers", "timed_out", "error", "computed_at"])
        events.proposal_replayed(replay=replay, actor=ACTOR)
    return replay


def _model_name(provider: Provider) -> str:
    model = getattr(provider, "model", "")
    return f"{provider.name}:{model}" if model else provider.name


def _unwritten(proposal: ChangeProposal) -> bool:
    return proposal.kind == Kind.KNOWLEDGE_DRAFT and str(proposal.payload.get("text", "")).strip() == (
        REVIEW_DRAFT_PLACEHOLDER
    )


# --- picking the turns --------------------------------------------------------------------------


def _window(agent: AgentProfile) -> list[Turn]:
    """The newest customer and peer turns of the window, at most FACADE_REPLAY_SCAN_MAX."""
    message_model = apps.get_model("dialogue", "Message")
    since = timezone.now() - timedelta(days=settings.FACADE_REPLAY_DAYS)
    rows = (
        message_model.objects.filter(
            session__agent=agent,
            session__audience__in=[Audience.CUSTOMER, Audience.PEER],
            session__preview=False,
            role="principal",
            created_at__gte=since,
        )
        .order_by("-pk")
        .values_list("pk", "session_id", "session__audience", "text")[: settings.FACADE_REPLAY_SCAN_MAX]
    )
    return [Turn(pk, str(session), audience, text) for pk, session, audience, text in rows]


def _concerned(proposal: ChangeProposal, window: list[Turn]) -> set[int]:
    """The message ids of the turns the proposal is about, before anything is replayed."""
    kind = Kind(proposal.kind)
    if kind == Kind.KNOWLEDGE_DRAFT:
        # Questions whose words meet the draft's title: the replay tells whether it now answers them.
        draft = query_terms(str(proposal.payload.get("title", "")), 40)
        return {t.message_id for t in window if replay_rules.terms_meet(query_terms(t.text), draft)}
    if kind in (Kind.PRICING, Kind.DELIVERY):
        # The questions about prices (or delivery) of the live list or the proposed one.
        field = targets.FIELD_OF[kind]
        contents = [live_content(proposal.agent), {field: targets.value_of(kind, proposal.payload)}]
        return {t.message_id for t in window if any(published.asks_about(field, t.text, c) for c in contents)}
    if kind == Kind.CLARIFICATION_ORDER:
        # The turns of conversations that went into a request: where the questions are asked.
        sessions = _request_sessions(proposal.agent, {t.session_id for t in window})
        return {t.message_id for t in window if t.session_id in sessions}
    # Wording: the turns whose stored reply says the sentence it replaces (the rest are found by
    # the replay itself, `replay_rules.affected`).
    before = (proposal.diff or {}).get("before")
    if not isinstance(before, str) or not before:
        return set()
    message_model = apps.get_model("dialogue", "Message")
    said = message_model.objects.filter(
        reply_to_id__in=[t.message_id for t in window], text__contains=before
    ).values_list("reply_to_id", flat=True)
    return set(said)


def _request_sessions(agent: AgentProfile, sessions: set[str]) -> set[str]:
    request_model = apps.get_model("dialogue", "CustomerRequest")
    span_model = apps.get_model("dialogue", "Span")
    asked = set(request_model.objects.filter(agent=agent, session_id__in=sessions).values_list("session_id", flat=True))
    asked |= set(
        span_model.objects.filter(run__session_id__in=sessions, kind="tool", name="submit_request").values_list(
            "run__session_id", flat=True
        )
    )
    return {str(s) for s in asked}


def turns_for(proposal: ChangeProposal) -> list[Turn]:
    """The turns to replay: the concerned ones, then the sample of the others (each list newest
    first, each capped)."""
    window = _window(proposal.agent)
    concerned = _concerned(proposal, window)
    mine = [replace(t, concerned=True) for t in window if t.message_id in concerned]
    others = [t for t in window if t.message_id not in concerned]
    return mine[: settings.FACADE_REPLAY_AFFECTED_MAX] + others[: settings.FACADE_REPLAY_ELSEWHERE_MAX]


# --- replaying ----------------------------------------------------------------------------------


def _replay(proposal: ChangeProposal, agent: AgentProfile, provider: Provider) -> tuple[replay_rules.Counts, bool]:
    turns = turns_for(proposal)
    deadline = time.monotonic() + settings.FACADE_REPLAY_SECONDS
    live = live_terms(agent)
    after_terms = _terms_after(proposal, live)
    before_probe, after_probe = _probes(proposal)
    before_provider = provider_for(agent, live) if provider.name == "offline" else provider
    after_provider = provider_for(agent, after_terms) if provider.name == "offline" else provider
    # Half the time for each pass; turns past the deadline are left out of both.
    half = time.monotonic() + settings.FACADE_REPLAY_SECONDS / 2
    before: dict[int, replay_rules.TurnOutcome] = {}
    for turn in turns:
        if time.monotonic() > half:
            break
        before[turn.message_id] = _simulate(agent, before_provider, turn, live, before_probe)
    after: dict[int, replay_rules.TurnOutcome] = {}
    for turn in turns:
        if turn.message_id not in before or time.monotonic() > deadline:
            break
        after[turn.message_id] = _hypothetically(proposal, agent, after_provider, turn, after_terms, after_probe)
    pairs = [
        replay_rules.TurnPair(t.message_id, t.session_id, before[t.message_id], after[t.message_id], t.concerned)
        for t in turns
        if t.message_id in after
    ]
    return replay_rules.tally(proposal.kind, pairs), len(pairs) < len(turns)


def _hypothetically(
    proposal: ChangeProposal, agent: AgentProfile, provider: Provider, turn: Turn, terms: ContractTerms, probe: str
) -> replay_rules.TurnOutcome:
    """One turn against the state with the proposal applied.  A contract change is all in
    `terms`; a knowledge draft is inserted for this one turn inside a transaction that is always
    rolled back — one turn at a time, so that (on SQLite: the database's write lock; on
    PostgreSQL: the served row of an entry the draft replaces) is held for one turn, never for
    the whole pass."""
    if proposal.kind != Kind.KNOWLEDGE_DRAFT:
        return _simulate(agent, provider, turn, terms, probe)
    try:
        with transaction.atomic():
            _knowledge_hypothetical(proposal, agent)
            raise Rollback(_simulate(agent, provider, turn, terms, probe))
    except Rollback as rolled_back:
        return rolled_back.outcome


def _terms_after(proposal: ChangeProposal, live: ContractTerms) -> ContractTerms:
    """The live terms with a contract change written at its target, in memory."""
    if not proposal.target:
        return live
    field = proposal.target["field"]
    value = targets.written(live_content(proposal.agent), proposal.target, (proposal.diff or {}).get("after"))
    if field == "wording":
        return replace(live, wording={str(k): dict(v) for k, v in (value or {}).items()})
    if field == "boundary_wording":
        return replace(live, boundary_wording=dict(value or {}))
    if field == "clarification_order":
        return replace(live, clarification_order=[str(f) for f in value or []])
    # The proposed price list or delivery options are what the search publishes in the replay, so
    # the preview answers as customers would be answered once it is published.
    if field == "pricing":
        return replace(live, pricing=dict(value or {}))
    if field == "delivery":
        return replace(live, delivery=[dict(option) for option in value or []])
    return live


def _probes(proposal: ChangeProposal) -> tuple[str, str]:
    """The sentence a wording change replaces and the one it puts in its place (a reply that
    says it is one the change is about)."""
    if proposal.kind not in (Kind.WORDING, Kind.BOUNDARY_WORDING):
        return "", ""
    diff = proposal.diff or {}
    before, after = diff.get("before"), diff.get("after")
    return (before if isinstance(before, str) else ""), (after if isinstance(after, str) else "")


def _knowledge_hypothetical(proposal: ChangeProposal, agent: AgentProfile) -> None:
    """The draft as an approved, served version, inside the caller's transaction, which is always
    rolled back: the rows exist only for this connection's searches and are never committed (no ledger
    event, no knowledge service: nothing of it takes effect)."""
    entry_model = apps.get_model("knowledge", "KnowledgeEntry")
    version_model = apps.get_model("knowledge", "EntryVersion")
    title, text = str(proposal.payload["title"]), str(proposal.payload["text"])
    entry_id = proposal.payload.get("entry_id")
    entry = entry_model.objects.filter(pk=entry_id, agent=agent).first() if entry_id else None
    if entry is None:
        entry = entry_model.objects.create(tenant_id=agent.tenant_id, agent=agent, kind="fact", subject="")
    else:
        version_model.objects.filter(entry=entry, served=True).update(served=False)
    version_model.objects.create(
        entry=entry,
        agent=agent,
        number=HYPOTHETICAL_NUMBER + entry.latest_number + 1,
        title=title,
        body=text,
        source_type="owner_dialogue",
        source_ref=f"replay:{proposal.pk}",
        source_version=str(proposal.version),
        confidence=1,
        status="approved",
        decision_reasons=["replay"],
        actor_type=ACTOR.type,
        actor_id=ACTOR.id,
        questions=[],
        search_text=search_text(title, text),
        served=True,
    )


def _history(turn: Turn) -> list[dict[str, Any]]:
    message_model = apps.get_model("dialogue", "Message")
    rows = list(
        message_model.objects.filter(session_id=turn.session_id, pk__lt=turn.message_id)
        .order_by("-pk")
        .values_list("role", "text")[:HISTORY]
    )
    return [{"role": "user" if role == "principal" else "assistant", "content": text} for role, text in reversed(rows)]


def _simulate(
    agent: AgentProfile, provider: Provider, turn: Turn, terms: ContractTerms, probe: str
) -> replay_rules.TurnOutcome:
    """One turn through the model with the read-only search, and the checks every customer
    reply passes (`reply_blocked`); nothing is written."""
    audience = Audience(turn.audience)
    history = _history(turn)
    language = conversation_language([turn.text, *(m["content"] for m in reversed(history) if m["role"] == "user")])
    granted = skill_tools(terms.skill_ids)
    tools = [tool for tool in registry.for_audience(audience) if tool.name in granted]
    prompt = customer_prompt(agent, language, [tool.name for tool in tools], audience, terms)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": prompt.system},
        *history,
        {"role": "user", "content": turn.text},
    ]
    specs = [tool.spec() for tool in tools]
    citations: list[dict[str, Any]] = []
    text = ""
    for _ in range(max(1, agent.max_steps)):
        try:
            reply = provider.complete(messages=messages, tools=specs, max_tokens=REPLY_TOKENS, audience=audience)
        except ProviderError:
            return replay_rules.TurnOutcome(failed=True)
        if not reply.tool_calls:
            text = reply.text.strip()
            break
        messages.append(
            {
                "role": "assistant",
                "content": reply.text or None,
                "tool_calls": [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in reply.tool_calls
                ],
            }
        )
        for call in reply.tool_calls:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "content": _tool(agent, audience, call, citations, terms, language),
                }
            )
    text = text or HONEST[language]["max_steps"]
    context = turn_context(messages, citations)
    # The same check a real reply passes: the owner's approved taboos, then the outgoing check.
    verdict = reply_blocked(text, audience, prompt.taboos, citations, list(context.given), list(context.customer))
    blocked = verdict.category if verdict is not None else ""
    return replay_rules.TurnOutcome(
        # The knowledge entries it cites (a published price list or delivery options is none).
        cited=frozenset() if blocked else frozenset(int(c["entry_id"]) for c in citations if c.get("entry_id")),
        blocked=blocked,
        says_changed=bool(probe) and probe in text,
        digest=hashlib.sha256((blocked or text).encode()).hexdigest(),
    )


def _tool(
    agent: AgentProfile,
    audience: Audience,
    call: Any,
    citations: list[dict[str, Any]],
    terms: ContractTerms,
    language: str,
) -> str:
    """The search runs (read only, no miss recorded) with what `terms` publishes, as in a live
    turn; every other tool is answered "not run"."""
    if call.name != "search_knowledge":
        return NOT_RUN
    try:
        args = SearchArgs.model_validate(json.loads(call.arguments or "{}"))
    except ValueError:
        return json.dumps({"outcome": "invalid_arguments", "error": "invalid_arguments"})
    content = knowledge_found(
        agent=agent, audience=audience, query=args.query, citations=citations, terms=terms, language=language
    )
    return json.dumps({"outcome": "ok", **content}, ensure_ascii=False)
