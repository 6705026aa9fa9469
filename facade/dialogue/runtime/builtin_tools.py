"""The tools of this step.  Each runs only after the registry's checks; each write goes through
a named service (which appends its ledger event in the same transaction)."""

from __future__ import annotations

import json
from typing import Any

from django.db import transaction

from approvals.contract import ContractTerms, live_terms
from approvals.knowledge_proposals import from_owner_chat
from approvals.published import found_in
from approvals.selectors import knowledge_proposal_ids
from facade.tenancy.policy import NotFound
from facade.tenancy.rules import Audience
from knowledge.extract import ExtractError, extract_text
from knowledge.ingest import ingest_material as knowledge_ingest
from knowledge.models import EntryVersion, Kind, SourceType, Status
from knowledge.schemas import SourceIn
from knowledge.selectors import knowledge_search, pending_versions, unanswered_count, unanswered_for_owner_face
from knowledge.services import KnowledgeError, entry_propose, knowledge_miss_record

from .. import rules
from ..intents import decision_asked
from ..models import Message
from ..selectors import agent_text_before, open_requests_for_owner, request_view, requests_for_status
from ..services import (
    DialogueError,
    request_amend,
    request_fields_check,
    request_submit,
    request_withdraw,
    session_actor,
)
from .small_talk import small_talk
from .summary import normalised, request_summaries, request_summary
from .tools import (
    CUSTOMER_FACING,
    OWNER_ONLY,
    AmendArgs,
    DecideArgs,
    DraftArgs,
    HandoffArgs,
    InboxArgs,
    IngestArgs,
    LessonArgs,
    ListArgs,
    Outcome,
    ProposeArgs,
    RequestArgs,
    Risk,
    SearchArgs,
    StatusArgs,
    Tool,
    ToolContext,
    ToolResult,
    WithdrawArgs,
    registry,
)

RESULTS = 3


def search_knowledge(ctx: ToolContext, args: SearchArgs) -> ToolResult:
    """Customers and peers get approved knowledge valid now; owners also see pending material,
    except customer candidates, whose text is customer text and never reaches the owner face."""
    terms = live_terms(ctx.agent) if ctx.audience != Audience.OWNER else None
    content = knowledge_found(
        agent=ctx.agent,
        audience=ctx.audience,
        query=args.query,
        citations=ctx.citations,
        terms=terms,
        language=ctx.language,
    )
    # A preview's questions are the owner's own: never an unanswered customer question.  Small talk
    # ("thanks, bye!") is not a question nobody could answer, whatever a model searched; nor is a
    # discount, a special price or a promise asked for: a decision only the business can make.  A
    # price the published list does not name is still a question nobody answered.
    if (
        not [r for r in content["results"] if r.get("matched", True)]
        and ctx.audience != Audience.OWNER
        and not ctx.session.preview
        and not _small_talk(args.query, ctx)
        and decision_asked(ctx.run.message.text) is None
    ):
        knowledge_miss_record(
            agent=ctx.agent, session_id=ctx.session.pk, query=args.query, asker=ctx.session.principal_id
        )
    return ToolResult(Outcome.OK, content)


def knowledge_found(
    *,
    agent: Any,
    audience: Audience,
    query: str,
    citations: list[dict[str, Any]],
    terms: ContractTerms | None = None,
    language: str = "en",
) -> dict[str, Any]:
    """What `search_knowledge` answers the model, read only (the proposal replay runs it without
    recording a miss): the results, each approved one numbered by its place among `citations`,
    which it extends.  For a customer or a peer, `terms` (the contract they are answered by) adds
    what it publishes that the question asks about — the price list, the delivery options — first,
    cited as that part of the contract version (approvals/published.py)."""
    found = _published_found(query, audience=audience, terms=terms, language=language, citations=citations)
    results = knowledge_search(agent=agent, query=query, audience=audience, limit=RESULTS + 2)
    hidden = 0
    if audience == Audience.OWNER:
        kept = [r for r in results if r.source.get("type") != SourceType.CUSTOMER]
        hidden, results = len(results) - len(kept), kept
    results = results[:RESULTS]
    found += [
        {
            "entry_id": r.entry_id,
            "version": r.version,
            "version_id": r.version_id,
            "title": r.title,
            "snippet": r.snippet,
            "status": r.status,
        }
        for r in results
    ]
    for item in found:
        if item["status"] != Status.APPROVED or item.get("published"):
            continue
        known = next((n for n, c in enumerate(citations, 1) if c["version_id"] == item["version_id"]), None)
        if known is None:
            # The snippet is kept for the quoting check (guard/quoting.py): what the reply may quote.
            citations.append({k: item[k] for k in ("entry_id", "version", "version_id", "title", "snippet")})
            known = len(citations)
        item["cite"] = known  # the number a reply cites it by: its place among the run's citations
    content: dict[str, Any] = {"results": found}
    if hidden:
        content["customer_candidates_hidden"] = hidden
    return content


def _published_found(
    query: str,
    *,
    audience: Audience,
    terms: ContractTerms | None,
    language: str,
    citations: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """The published parts the question asks about, as search results: each numbered by its
    citation (one per part and version, added to `citations` with the whole part as what may
    be quoted); `matched` says whether it answers the question (`published.found_in`)."""
    if terms is None or audience == Audience.OWNER:
        return []
    found = []
    for part in found_in(query, content=terms.published(), version=terms.version, language=language):
        cited = part.citation()
        known = next(
            (
                n
                for n, c in enumerate(citations, 1)
                if (c.get("published"), c.get("version"), c.get("title")) == (part.part, part.version, part.title)
            ),
            None,
        )
        if known is None:
            citations.append(cited)
            known = len(citations)
        # The items asked, each its own result with its line's number in the list (`part`: "n.k"
        # quotes it alone in strict composition), or the whole list as one.
        asked = part.matched and len(part.units) < len(part.every_unit)
        found += [
            {
                "entry_id": None,
                "version": part.version,
                "version_id": None,
                "title": part.title,
                "snippet": unit,
                "status": Status.APPROVED,
                "published": part.part,
                "matched": part.matched,
                "cite": known,
                **({"part": part.every_unit.index(unit) + 1} if asked else {}),
            }
            for unit in (part.units if asked else [part.snippet])
        ]
    return found


def _small_talk(query: str, ctx: ToolContext) -> bool:
    return small_talk(query) is not None or small_talk(ctx.run.message.text) is not None


def submit_request(ctx: ToolContext, args: RequestArgs) -> ToolResult:
    """Registers only what the customer confirmed: the fields must be what they claim to be, and
    the agent's message the customer just answered must end with the summary of exactly these
    fields, answered with a plain yes.  Otherwise nothing is written and the model is told what
    to do: ask again for a field, or show the summary (`needs_confirmation`) and wait."""
    if ctx.request is not None:
        return ToolResult(Outcome.FAILED, {"error": "already_registered", "detail": "one request per message"})
    summary, details = normalised(args.summary, args.details)
    if not details.get("need"):
        details = {"need": summary, **details}
    try:
        request_fields_check(details=details, required=live_terms(ctx.agent).clarification_order)
    except DialogueError as exc:
        return ToolResult(Outcome.FAILED, {"error": exc.code, "detail": exc.detail})
    shown = agent_text_before(session=ctx.session, message_id=ctx.run.message_id)
    if not rules.confirms(
        shown=shown, reply=ctx.run.message.text, summaries=request_summaries(summary=summary, details=details)
    ):
        return ToolResult(
            Outcome.NEEDS_CONFIRMATION,
            {
                "error": "needs_confirmation",
                "detail": "show the customer this summary, word for word, at the end of your reply, and call "
                "submit_request again with the same fields once they answer yes",
                "summary": request_summary(summary=summary, details=details, language=ctx.language),
            },
        )
    try:
        request = request_submit(session=ctx.session, summary=summary, details=details, kind="request", run=ctx.run)
    except DialogueError as exc:
        return ToolResult(Outcome.FAILED, {"error": exc.code, "detail": exc.detail})
    ctx.request = request_view(request)
    return ToolResult(Outcome.OK, {"request": ctx.request})


def withdraw_request(ctx: ToolContext, args: WithdrawArgs) -> ToolResult:
    try:
        request = request_withdraw(session=ctx.session, request_id=args.request_id)
    except NotFound:
        return ToolResult(Outcome.FAILED, {"error": "not_found", "detail": "no such request in this conversation"})
    except DialogueError as exc:
        return ToolResult(Outcome.FAILED, {"error": exc.code, "detail": exc.detail, "request_id": args.request_id})
    ctx.request = request_view(request)
    return ToolResult(Outcome.OK, {"request": ctx.request})


def amend_request(ctx: ToolContext, args: AmendArgs) -> ToolResult:
    try:
        request = request_amend(
            session=ctx.session, request_id=args.request_id, summary=args.summary, details=args.details
        )
    except NotFound:
        return ToolResult(Outcome.FAILED, {"error": "not_found", "detail": "no such request in this conversation"})
    except DialogueError as exc:
        return ToolResult(Outcome.FAILED, {"error": exc.code, "detail": exc.detail, "request_id": args.request_id})
    ctx.request = request_view(request)
    return ToolResult(Outcome.OK, {"request": ctx.request})


def request_handoff(ctx: ToolContext, args: HandoffArgs) -> ToolResult:
    """A person of the business follows up; `details`: what the customer gave so far (a request
    flow passed on to the owner, issue 26 §3), shown to the owner with the follow-up."""
    details = {str(k)[:40]: str(v) for k, v in args.details.items() if str(v).strip()}
    request = request_submit(
        session=ctx.session,
        summary=args.reason or "a person should follow up",
        details=details,
        kind="handoff",
        run=ctx.run,
    )
    ctx.request = request_view(request)
    return ToolResult(Outcome.OK, {"request": ctx.request})


def read_request_status(ctx: ToolContext, args: StatusArgs) -> ToolResult:
    """Where the session's requests stand (the named one, or the latest few): state, who acts
    next, and whether anyone of the business has acted on it.  Read only; another session's
    request is not found."""
    found = requests_for_status(
        session=ctx.session, principal_actor_id=session_actor(ctx.session).id, request_id=args.request_id
    )
    if not found:
        return ToolResult(Outcome.FAILED, {"error": "not_found", "detail": "no such request in this conversation"})
    ctx.request = {k: v for k, v in found[0].items() if k != "owner_acted"}
    return ToolResult(Outcome.OK, {"requests": found})


def _malformed(problem: rules.TeachProblem) -> ToolResult:
    """The refusal of a malformed teaching, with the form that works."""
    return ToolResult(
        Outcome.FAILED,
        {"error": "malformed_teach", "problem": problem.value, "detail": f"write it as: {rules.TEACH_FORM}"},
    )


def ingest_material(ctx: ToolContext, args: IngestArgs) -> ToolResult:
    """Checked here and not only by the model that called it: a title that is the command line
    itself, or the text again, names nothing.  Whatever the text, each version it makes waits for
    the owner's decision on its proposal (a model wrote it: knowledge.rules.l1_decide), and the
    reply shows their cards — a model's call never tells customers anything by itself."""
    problem = rules.teach_problem(args.title, args.text)
    if problem is not None:
        return _malformed(problem)
    try:
        extracted = extract_text(args.title, args.text)
        # What waits is filed as a proposal from the owner's chat (origin owner_dialogue).
        with transaction.atomic(), from_owner_chat(ctx.session.pk):
            outcome = knowledge_ingest(
                agent=ctx.agent,
                extracted=extracted,
                document=args.title,
                actor=session_actor(ctx.session),
                source_type=SourceType.OWNER_DIALOGUE,
            )
    except (ExtractError, KnowledgeError) as exc:
        return ToolResult(Outcome.FAILED, {"error": getattr(exc, "code", "invalid_input"), "detail": str(exc)[:200]})
    return ToolResult(
        Outcome.OK,
        {
            "created": [_waiting(ctx, v) for v in outcome.created],
            "unchanged": outcome.unchanged,
            "title": args.title,
        },
    )


WAITS = "it waits for the owner's approval on its card; customers are not told it until then"


def _waiting(ctx: ToolContext, version: EntryVersion) -> dict[str, Any]:
    """A version a tool wrote, as the model is told of it: it waits (a model's writing always
    does, knowledge.rules.l1_decide), with the card of the proposal that decides it, shown to the
    owner with the reply."""
    from approvals.models import ChangeProposal, ProposalStatus

    shown: dict[str, Any] = {
        "entry_id": version.entry_id,
        "version": version.number,
        "status": version.status,
        "title": version.title,
    }
    proposal = ChangeProposal.objects.filter(
        agent=ctx.agent, status=ProposalStatus.PENDING, payload__version_id=version.pk
    ).first()
    if proposal is not None:
        shown["change_id"] = proposal.pk
        shown["card"] = show_card(ctx, proposal)
        shown["detail"] = WAITS
    return shown


def _owner_version(ctx: ToolContext, *, title: str, text: str, kind: str, phrase: str = "") -> EntryVersion:
    """A knowledge version from the owner face (source: this owner dialogue and run).  What waits
    is filed as an L1 proposal from the owner's chat (origin owner_dialogue).  `phrase`: what a
    taboo forbids (knowledge.rules.taboo_phrase reads it from the title when it is empty)."""
    with from_owner_chat(ctx.session.pk):
        return entry_propose(
            agent=ctx.agent,
            title=title,
            body=text,
            kind=kind,
            taboo_phrase=phrase,
            actor=session_actor(ctx.session),
            source=SourceIn(
                type=SourceType.OWNER_DIALOGUE, ref=f"session:{ctx.session.pk}", version=f"run:{ctx.run.pk}"
            ),
        )


def _owner_entry(ctx: ToolContext, *, title: str, text: str, kind: str) -> ToolResult:
    """A fact from the owner face: a model wrote it down, so it waits for the owner's decision on
    its proposal, whose card the reply shows (issue 28 §1)."""
    try:
        version = _owner_version(ctx, title=title, text=text, kind=kind)
    except KnowledgeError as exc:
        return ToolResult(Outcome.FAILED, {"error": exc.code, "detail": str(exc)[:200]})
    return ToolResult(Outcome.OK, _waiting(ctx, version))


def remember_lesson(ctx: ToolContext, args: LessonArgs) -> ToolResult:
    """A lesson always waits for the owner, whatever the model wrote: the knowledge services never
    approve a lesson by the L1 rule (knowledge/rules.py), and its L1 proposal, filed in the same
    transaction, is decided only through the token flow.  The answer carries the proposal's card."""
    from approvals.models import ChangeProposal, ProposalStatus
    from approvals.schemas import Kind as ChangeKind

    try:
        with transaction.atomic():
            version = _owner_version(ctx, title=args.title, text=args.text, kind=args.kind, phrase=args.phrase)
            proposal = ChangeProposal.objects.get(
                agent=ctx.agent, status=ProposalStatus.PENDING, kind=ChangeKind.LESSON, payload__version_id=version.pk
            )
    except KnowledgeError as exc:
        return ToolResult(Outcome.FAILED, {"error": exc.code, "detail": str(exc)[:200]})
    return ToolResult(
        Outcome.OK,
        {
            "entry_id": version.entry_id,
            "version": version.number,
            "status": version.status,
            "title": version.title,
            "card": show_card(ctx, proposal),
            "detail": "the lesson waits for the owner's approval in their inbox; nothing changes until then",
        },
    )


def add_confirmed_knowledge(ctx: ToolContext, args: DraftArgs) -> ToolResult:
    """Add a fact the owner stated, once they have said yes to its draft.  The model proposes;
    the evidence is the owner's: the agent's previous message in this conversation showed this
    title and text, and the owner's message of this turn is a yes.  Anything else is refused and
    nothing is written.  What is created is an owner-dialogue version that waits, like anything a
    model wrote, for the owner's decision on its card: the yes says "file it", the card's button
    says "tell customers" (issue 28 §1)."""
    problem = rules.teach_problem(args.title, args.text)
    if problem is not None:
        return _malformed(problem)
    shown = (
        Message.objects.filter(session=ctx.session, role="agent", pk__lt=ctx.run.message_id)
        .order_by("-pk")
        .values_list("text", flat=True)
        .first()
    )
    if not shown or args.title not in shown or args.text not in shown:
        return ToolResult(Outcome.FAILED, {"error": "draft_not_shown", "detail": "show the owner the draft first"})
    if not rules.owner_says_yes(ctx.run.message.text):
        return ToolResult(Outcome.FAILED, {"error": "not_confirmed", "detail": "the owner has not said yes"})
    return _owner_entry(ctx, title=args.title, text=args.text, kind=Kind.FACT)


def read_customer_requests(ctx: ToolContext, args: ListArgs) -> ToolResult:
    """Open requests: number, kind, state, who acts next, when.  Never the customer's words."""
    shown, count = open_requests_for_owner(agent=ctx.agent)
    return ToolResult(Outcome.OK, {"count": count, "requests": shown})


def read_unanswered_questions(ctx: ToolContext, args: ListArgs) -> ToolResult:
    """Topics of questions no approved knowledge answered, with counts, as the owner's Unanswered
    questions page lists them (enough distinct customers asked).  Never the questions."""
    return ToolResult(Outcome.OK, {"topics": unanswered_for_owner_face(ctx.agent)})


INBOX_CARDS = 5


def read_owner_inbox(ctx: ToolContext, args: InboxArgs) -> ToolResult:
    """Counts and titles of what waits for the owner: change proposals waiting for a decision
    (the first few also as cards), pending knowledge, open customer requests and unanswered
    questions.  Customer candidates appear as a count and pointers only: their text is customer
    text."""
    from approvals.selectors import pending_count, pending_proposals

    proposals = list(pending_proposals(agent=ctx.agent, limit=20))
    for proposal in proposals[:INBOX_CARDS]:
        show_card(ctx, proposal)
    pending: list[EntryVersion] = list(pending_versions(ctx.agent)[:50])
    from_customers = [v for v in pending if v.source_type == SourceType.CUSTOMER]
    owned = [v for v in pending if v.source_type != SourceType.CUSTOMER]
    # Each is decided as its L1 proposal (`approve <change_id>`), never here.
    changes = knowledge_proposal_ids(agent=ctx.agent, version_ids=[v.pk for v in owned[:20]])
    return ToolResult(
        Outcome.OK,
        {
            "pending_changes": {
                "count": pending_count(agent=ctx.agent),
                "changes": [{"id": p.pk, "kind": p.kind, "level": p.level, "summary": p.summary} for p in proposals],
            },
            "pending_knowledge": [
                {
                    "entry_id": v.entry_id,
                    "version": v.number,
                    "title": v.title,
                    "kind": v.entry.kind,
                    "change_id": changes.get(v.pk),
                }
                for v in owned[:20]
            ],
            "customer_candidates": {
                "count": len(from_customers),
                "entry_ids": [v.entry_id for v in from_customers[:20]],
            },
            "open_requests": open_requests_for_owner(agent=ctx.agent, limit=0)[1],
            "unanswered_topics": unanswered_count(ctx.agent),
        },
    )


def show_card(ctx: ToolContext, proposal: Any) -> dict[str, Any]:
    """The proposal's card (approvals.selectors.proposal_card), also kept for the reply's
    metadata, where the owner chat shows it with its buttons; each proposal once per reply."""
    from approvals.selectors import proposal_card

    card = proposal_card(proposal)
    if all(shown["id"] != card["id"] for shown in ctx.cards):
        ctx.cards.append(card)
    return card


def _claims(**claimed: Any) -> dict[str, str]:
    """What a model claimed about who decides, as short text.  A token or code it wrote is never
    kept, not even in part: only that one was given (`authorisation_given`)."""
    found: dict[str, str] = {}
    given = [name for name in ("token", "code") if claimed.pop(name, None) is not None]
    for name, value in claimed.items():
        if value is not None:
            found[name] = json.dumps(value, ensure_ascii=False)[:40]
    if given:
        found["authorisation_given"] = "+".join(given)
    return found


def propose_change(ctx: ToolContext, args: ProposeArgs) -> ToolResult:
    """A proposal the model made: whatever it claims, the platform assigns the level and it waits
    for the owner (origin `owner_dialogue`)."""
    from approvals.events import latest_seq
    from approvals.rules import Origin
    from approvals.services import ProposalError, proposal_create

    try:
        proposal = proposal_create(
            agent=ctx.agent,
            kind=args.kind,
            payload=args.payload,
            summary=args.summary,
            evidence=args.evidence,
            origin=Origin.OWNER_DIALOGUE,
            actor=session_actor(ctx.session),
            claimed=_claims(level=args.level, requires=args.requires, confirm=args.confirm),
            # the owner's message this run answers: where the change started
            caused_by=latest_seq(ctx.session.tenant_id, "session", str(ctx.session.pk)),
        )
    except ProposalError as exc:
        return ToolResult(Outcome.FAILED, {"error": exc.code, "detail": exc.detail[:300]})
    return ToolResult(
        Outcome.OK, {"card": show_card(ctx, proposal), "detail": "the owner decides this proposal; it waits for them"}
    )


def decide_change(ctx: ToolContext, args: DecideArgs) -> ToolResult:
    """Never decides: answers that the proposal waits for the owner's confirmation, with its card.
    A token, code or `confirm` the model wrote is ignored and recorded as an override."""
    from approvals.events import proposal_override_recorded
    from approvals.models import ChangeProposal

    proposal = ChangeProposal.objects.filter(agent=ctx.agent, pk=str(args.proposal_id)).first()
    if proposal is None:
        return ToolResult(Outcome.FAILED, {"error": "not_found", "detail": "no such proposal"})
    claimed = _claims(confirm=args.confirm, token=args.token, code=args.code)
    if claimed:
        with transaction.atomic():
            proposal_override_recorded(proposal=proposal, claimed=claimed, actor=session_actor(ctx.session))
    return ToolResult(
        Outcome.NEEDS_CONFIRMATION,
        {
            "waiting_for": "owner_confirmation",
            "detail": "only the owner decides, with their own confirmation; show them the card",
            "card": show_card(ctx, proposal),
        },
    )


# The registry holds these from the moment this module is imported (the run loop imports it).
registry.register(
    Tool(
        "search_knowledge",
        "Search the agent's knowledge for an answer. Returns snippets with their sources.",
        CUSTOMER_FACING | OWNER_ONLY,
        SearchArgs,
        Risk.READ,
        search_knowledge,
        "searching_knowledge",
    )
)
registry.register(
    Tool(
        "submit_request",
        "Register what the customer wants done, once the clarified fields are known. The first call "
        "answers with a summary to show the customer; the request is registered when they answer yes to it.",
        CUSTOMER_FACING,
        RequestArgs,
        Risk.WRITE,
        submit_request,
        "registering_request",
    )
)
registry.register(
    Tool(
        "withdraw_request",
        "Withdraw a request the customer registered in this conversation (the latest when no id is given), "
        "while the business has not acted on it.",
        frozenset({Audience.CUSTOMER}),
        WithdrawArgs,
        Risk.WRITE,
        withdraw_request,
        "withdrawing_request",
    )
)
registry.register(
    Tool(
        "amend_request",
        "Change the summary or fields of a request the customer registered in this conversation, while the "
        "business has not acted on it.",
        frozenset({Audience.CUSTOMER}),
        AmendArgs,
        Risk.WRITE,
        amend_request,
        "amending_request",
    )
)
registry.register(
    Tool(
        "request_handoff",
        "Ask a person of the business to follow up with the customer.",
        frozenset({Audience.CUSTOMER}),
        HandoffArgs,
        Risk.WRITE,
        request_handoff,
        "handing_off",
    )
)
registry.register(
    Tool(
        "read_request_status",
        "Tell the customer where their request stands (a request of this conversation: the named one, or the "
        "latest): its state, who acts next. It promises nothing beyond that.",
        frozenset({Audience.CUSTOMER}),
        StatusArgs,
        Risk.READ,
        read_request_status,
        "reading_request",
    )
)
registry.register(
    Tool(
        "ingest_material",
        "Add the owner's material (a title and text) to the knowledge base. It waits for the owner's approval on "
        "its card.",
        OWNER_ONLY,
        IngestArgs,
        Risk.RSI,
        ingest_material,
        "ingesting",
    )
)
registry.register(
    Tool(
        "remember_lesson",
        "Record a lesson from the owner: a preference, a wording or a taboo. It waits for the owner's approval.",
        OWNER_ONLY,
        LessonArgs,
        Risk.RSI,
        remember_lesson,
        "remembering",
    )
)
registry.register(
    Tool(
        "read_owner_inbox",
        "What waits for the owner: change proposals to decide, pending knowledge and lessons (counts and titles).",
        OWNER_ONLY,
        InboxArgs,
        Risk.RSI,
        read_owner_inbox,
        "reading_inbox",
    )
)
registry.register(
    Tool(
        "read_customer_requests",
        "Customers' open requests: number, state and who acts next (never what the customer wrote).",
        OWNER_ONLY,
        ListArgs,
        Risk.READ,
        read_customer_requests,
        "reading_inbox",
    )
)
registry.register(
    Tool(
        "read_unanswered_questions",
        "Topics of customers' questions the knowledge could not answer, with counts (never the questions).",
        OWNER_ONLY,
        ListArgs,
        Risk.READ,
        read_unanswered_questions,
        "reading_inbox",
    )
)
registry.register(
    Tool(
        "propose_change",
        "Propose a change for the owner to decide (kind, payload, one-line summary, evidence pointers). "
        "The platform assigns its level; it always waits for the owner.",
        OWNER_ONLY,
        ProposeArgs,
        Risk.RSI,
        propose_change,
        "proposing",
    )
)
registry.register(
    Tool(
        "decide_change",
        "Show the owner a proposal waiting for their decision. It never decides: only the owner does.",
        OWNER_ONLY,
        DecideArgs,
        Risk.RSI,
        decide_change,
        "proposing",
    )
)
registry.register(
    Tool(
        "add_confirmed_knowledge",
        "Add a fact the owner stated, after showing them the draft (title and text) and getting their yes. It "
        "waits for the owner's approval on its card.",
        OWNER_ONLY,
        DraftArgs,
        Risk.RSI,
        add_confirmed_knowledge,
        "ingesting",
    )
)
