"""The tools of this step.  Each runs only after the registry's checks; each write goes through
a named service (which appends its ledger event in the same transaction)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from facade.tenancy.rules import Audience
from knowledge.extract import ExtractError, extract_text
from knowledge.ingest import ingest_material as knowledge_ingest
from knowledge.models import EntryVersion, SourceType, Status
from knowledge.schemas import SourceIn
from knowledge.selectors import knowledge_search, pending_versions
from knowledge.services import KnowledgeError, entry_propose, knowledge_miss_record

from ..selectors import request_view
from ..services import request_submit, session_actor
from .tools import (
    CUSTOMER_FACING,
    OWNER_ONLY,
    HandoffArgs,
    InboxArgs,
    IngestArgs,
    LessonArgs,
    Outcome,
    RequestArgs,
    Risk,
    SearchArgs,
    Tool,
    ToolContext,
    ToolResult,
    registry,
)

RESULTS = 3


def search_knowledge(ctx: ToolContext, args: SearchArgs) -> ToolResult:
    """Customers and peers get approved knowledge valid now; owners also see pending material,
    except customer candidates, whose text is customer text and never reaches the owner face."""
    results = knowledge_search(agent=ctx.agent, query=args.query, audience=ctx.audience, limit=RESULTS + 2)
    hidden = 0
    if ctx.audience == Audience.OWNER:
        kept = [r for r in results if r.source.get("type") != SourceType.CUSTOMER]
        hidden, results = len(results) - len(kept), kept
    results = results[:RESULTS]
    if not results and ctx.audience != Audience.OWNER:
        knowledge_miss_record(
            agent=ctx.agent, session_id=ctx.session.pk, query=args.query, asker=ctx.session.principal_id
        )
    found = [
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
        if item["status"] == Status.APPROVED and all(c["version_id"] != item["version_id"] for c in ctx.citations):
            ctx.citations.append({k: item[k] for k in ("entry_id", "version", "version_id", "title")})
    content: dict[str, Any] = {"results": found}
    if hidden:
        content["customer_candidates_hidden"] = hidden
    return ToolResult(Outcome.OK, content)


def submit_request(ctx: ToolContext, args: RequestArgs) -> ToolResult:
    request = request_submit(
        session=ctx.session, summary=args.summary, details=args.details, kind="request", run=ctx.run
    )
    ctx.request = request_view(request)
    return ToolResult(Outcome.OK, {"request": ctx.request})


def request_handoff(ctx: ToolContext, args: HandoffArgs) -> ToolResult:
    request = request_submit(
        session=ctx.session, summary=args.reason or "a person should follow up", details={}, kind="handoff", run=ctx.run
    )
    ctx.request = request_view(request)
    return ToolResult(Outcome.OK, {"request": ctx.request})


def ingest_material(ctx: ToolContext, args: IngestArgs) -> ToolResult:
    try:
        extracted = extract_text(args.title, args.text)
        with transaction.atomic():
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
            "created": [{"entry_id": v.entry_id, "version": v.number, "status": v.status} for v in outcome.created],
            "unchanged": outcome.unchanged,
        },
    )


def remember_lesson(ctx: ToolContext, args: LessonArgs) -> ToolResult:
    try:
        version = entry_propose(
            agent=ctx.agent,
            title=args.title,
            body=args.text,
            kind=args.kind,
            actor=session_actor(ctx.session),
            source=SourceIn(
                type=SourceType.OWNER_DIALOGUE, ref=f"session:{ctx.session.pk}", version=f"run:{ctx.run.pk}"
            ),
        )
    except KnowledgeError as exc:
        return ToolResult(Outcome.FAILED, {"error": exc.code, "detail": str(exc)[:200]})
    return ToolResult(Outcome.OK, {"entry_id": version.entry_id, "version": version.number, "status": version.status})


def read_owner_inbox(ctx: ToolContext, args: InboxArgs) -> ToolResult:
    """Counts and titles of what waits for the owner.  Customer candidates appear as a count and
    pointers only: their text is customer text."""
    pending: list[EntryVersion] = list(pending_versions(ctx.agent)[:50])
    from_customers = [v for v in pending if v.source_type == SourceType.CUSTOMER]
    owned = [v for v in pending if v.source_type != SourceType.CUSTOMER]
    return ToolResult(
        Outcome.OK,
        {
            "pending_knowledge": [
                {"entry_id": v.entry_id, "version": v.number, "title": v.title, "kind": v.entry.kind}
                for v in owned[:20]
            ],
            "customer_candidates": {
                "count": len(from_customers),
                "entry_ids": [v.entry_id for v in from_customers[:20]],
            },
        },
    )


# The registry holds these from the moment this module is imported (the run loop imports it).
# Only built tools are registered: `propose_change` and `decide_change` arrive with the approvals
# step, and until then a model that names them gets the refusal of any unknown tool.
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
        "Register what the customer wants done, once the clarified fields are known.",
        CUSTOMER_FACING,
        RequestArgs,
        Risk.WRITE,
        submit_request,
        "registering_request",
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
        "ingest_material",
        "Add the owner's material (a title and text) to the knowledge base.",
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
        "Record a lesson from the owner: a preference, a wording or a taboo.",
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
        "What waits for the owner: pending knowledge and lessons (counts and titles).",
        OWNER_ONLY,
        InboxArgs,
        Risk.RSI,
        read_owner_inbox,
        "reading_inbox",
    )
)
