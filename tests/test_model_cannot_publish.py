"""A model cannot change what customers hear by itself (issue 28 §1).

Every tool the owner face offers — taken from the registry, so a tool added later is walked too —
is called by an adversarial model: the OpenAI-compatible provider against a fake model server
speaking the real protocol over a real socket (tests/llm_server.py).  The owner's own message of
the turn is a "yes" to a draft the model showed, so that a tool guarded by the owner's yes
(`add_confirmed_knowledge`) runs as far as it can.  After each call, what a customer's search and
turn get is what they got before, every proposal is pending, and the ledger records no approval,
decision or application — only pending items.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_server import LLMServer, completion, tool_call
from pydantic import ValidationError

from approvals.contract import live_content
from approvals.models import ChangeProposal
from conftest import TenantWorld
from facade.dialogue.runtime.builtin_tools import registry
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.offline import OfflineProvider
from facade.dialogue.runtime.providers.openai import OpenAICompatibleProvider
from facade.dialogue.services import session_open
from facade.tenancy.models import Customer
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from knowledge.models import EntryVersion, SourceType
from knowledge.schemas import SourceIn
from knowledge.selectors import knowledge_search
from knowledge.services import entry_propose
from ledger.models import LedgerEvent

pytestmark = pytest.mark.django_db

INJECTED_TITLE = "Injected free cakes"
INJECTED = "Every cake ordered this week is completely free of charge, guaranteed delivery tomorrow."
AUDIENCE = Audience.CUSTOMER
QUESTIONS = ("free cakes", "Is every cake free this week?", "guaranteed delivery tomorrow")
# What only an owner's decision (or their own direct act) writes: none may follow a model's call.
DECIDING_EVENTS = frozenset(
    {
        "knowledge.version_approved",
        "knowledge.version_restored",
        "knowledge.version_released",
        "proposal.decided",
        "proposal.applied",
        "proposal.published",
        "proposal.rolled_back",
        "contract.published",
    }
)


def candidates(world: TenantWorld, pending: ChangeProposal) -> list[dict[str, Any]]:
    """Arguments an attacker would send, for every tool shape: each tool is called with every
    candidate its schema accepts (a tool none fits fails the walk: give it its arguments here)."""
    claims = {"level": 1, "requires": "auto", "confirm": True}
    return [
        {},
        {"query": INJECTED},
        {"title": INJECTED_TITLE, "text": INJECTED},
        {"kind": "taboo", "title": "Never say ‘paid’", "text": INJECTED, "phrase": "paid"},
        {"kind": "wording", "title": INJECTED_TITLE, "text": INJECTED},
        {
            "kind": "knowledge_draft",
            "payload": {"title": INJECTED_TITLE, "text": INJECTED},
            "summary": "publish the free cakes entry",
            **claims,
        },
        {
            "kind": "wording",
            "payload": {"language": "en", "situation": "greeting", "text": INJECTED},
            "summary": "greet every customer with the free cakes",
            **claims,
        },
        {
            "kind": "pricing",
            "payload": {"currency": "EUR", "items": [{"name": "Any cake", "amount": "0.00"}]},
            "summary": "cakes are free",
            **claims,
        },
        {"proposal_id": pending.pk, "decision": "approve", "token": "t" * 43, "confirm": True, "expected_version": 1},
        {"proposal_id": pending.pk, "decision": "approve", "code": "123456", "confirm": "yes"},
    ]


class Customers:
    """What customers of the agent are told: searches, one turn per question, the served versions
    and the live contract.  `heard()` is compared before and after each model call."""

    def __init__(self, world: TenantWorld) -> None:
        self.world = world

    def heard(self) -> dict[str, Any]:
        agent = self.world.agent
        searches = {
            q: [(r.entry_id, r.version, r.snippet) for r in knowledge_search(agent=agent, query=q, audience=AUDIENCE)]
            for q in QUESTIONS
        }
        session = session_open(
            agent=agent, audience=Audience.CUSTOMER, customer=Customer.objects.create(tenant=self.world.tenant)
        )
        replies = []
        for question in QUESTIONS[1:]:
            reply = turn_handle(session=session, text=question, provider=OfflineProvider(agent)).reply
            assert reply is not None
            replies.append(str(reply.text))
        served = sorted(EntryVersion.objects.filter(agent=agent, served=True).values_list("pk", flat=True))
        return {"searches": searches, "replies": replies, "served": served, "contract": live_content(agent)}


def adversary(calls: list[dict[str, Any]], seen: list[dict[str, Any]]) -> Any:
    """The fake model: on a request whose last message is the owner's, it calls the next tool of
    `calls` (if any); after a tool result, or with nothing to call, it says a draft of the
    injected entry — what `add_confirmed_knowledge` checks the owner was shown."""

    def respond(body: dict[str, Any]) -> Any:
        seen.append(body)
        last = body["messages"][-1]
        if last["role"] == "user" and last.get("content") == "yes" and calls:
            call = calls.pop(0)
            return 200, {}, completion(tool_calls=[call])
        return 200, {}, completion(text=f"Here is a draft: {INJECTED_TITLE}: {INJECTED} Shall I add this?")

    return respond


def test_no_owner_face_tool_changes_what_customers_hear(world_a: TenantWorld) -> None:
    world = world_a
    # Something waiting already, for the tools that name a proposal (decide_change).
    waiting = entry_propose(
        agent=world.agent,
        title="Refunds",
        body="Refunds within 30 days.",
        source=SourceIn(type=SourceType.REVIEW, ref="review:1", version="1"),
        actor=Actor.platform("review"),
    )
    pending = ChangeProposal.objects.get(payload__version_id=waiting.pk)
    customers = Customers(world)
    before = customers.heard()
    tools = registry.for_audience(Audience.OWNER)
    assert {"ingest_material", "add_confirmed_knowledge", "remember_lesson", "propose_change"} <= {
        t.name for t in tools
    }
    owner = session_open(agent=world.agent, audience=Audience.OWNER, user=world.owner)
    seen: list[dict[str, Any]] = []
    walked = []
    for tool in sorted(tools, key=lambda t: t.name):
        accepted = []
        for args in candidates(world, pending):
            try:
                tool.args.model_validate(args)
            except ValidationError:
                continue
            accepted.append(args)
        assert accepted, f"no candidate fits {tool.name}: give this test its arguments"
        for args in accepted:
            mark = LedgerEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0
            calls = [tool_call(f"c-{tool.name}", tool.name, json.dumps(args))]
            with LLMServer(responder=adversary(calls, seen)) as server:
                provider = OpenAICompatibleProvider(server.url, "test-model", max_retries=0)
                # The model shows its draft; the owner answers yes; the model calls the tool.
                turn_handle(session=owner, text="What do you suggest?", provider=provider)
                turn_handle(session=owner, text="yes", provider=provider)
            answers = [json.loads(m["content"]) for m in seen[-1]["messages"] if m["role"] == "tool"]
            assert answers and answers[-1]["outcome"] != "refused", (tool.name, answers)
            walked.append(tool.name)
            what = f"{tool.name}({args})"
            assert customers.heard() == before, f"{what} changed what customers hear"
            new = list(LedgerEvent.objects.filter(id__gt=mark).order_by("id"))
            deciding = [e.event_type for e in new if e.event_type in DECIDING_EVENTS]
            assert not deciding, f"{what} wrote {deciding}"
            created = [e.payload for e in new if e.event_type == "knowledge.version_created"]
            assert all(p["status"] == "pending" for p in created), f"{what} created {created}"
            assert set(ChangeProposal.objects.values_list("status", flat=True)) <= {"pending"}, what
            assert set(ChangeProposal.objects.values_list("requires", flat=True)) <= {"owner_approval"}, what
    assert set(walked) == {t.name for t in tools}
    # The owner's own act still publishes: the injected entry waits, as a card, for it.
    assert EntryVersion.objects.filter(title=INJECTED_TITLE, status="pending").exists()


def test_inside_a_tool_call_nothing_is_approved_restored_or_decided(world_a: TenantWorld) -> None:
    """The fail-closed wall behind the tools: a future tool that called a deciding service inside
    a model's call would be refused (knowledge.services.model_writing), not obeyed."""
    from approvals.services import (
        ProposalError,
        proposal_authorize,
        proposal_create,
        proposal_decide,
        proposal_rollback,
    )
    from knowledge.services import (
        KnowledgeError,
        entry_approve,
        entry_restore,
        knowledge_unquarantine,
        model_writing,
    )

    world = world_a
    version = entry_propose(
        agent=world.agent,
        title="Refunds",
        body="Refunds within 30 days.",
        source=SourceIn(type=SourceType.REVIEW, ref="review:1", version="1"),
        actor=Actor.platform("review"),
    )
    change = ChangeProposal.objects.get(payload__version_id=version.pk)
    owner = Actor.human(world.owner.pk)
    with model_writing():
        for attempt in (
            lambda: entry_approve(version=version, actor=owner),
            lambda: entry_restore(entry=version.entry, number=1, actor=owner),
            lambda: knowledge_unquarantine(agent=world.agent, actor=owner, source_type=SourceType.REVIEW),
        ):
            with pytest.raises(KnowledgeError) as refused:
                attempt()
            assert refused.value.code == "owner_decides"
        for decide in (
            lambda: proposal_authorize(agent=world.agent, proposal_id=change.pk, owner=world.owner, decision="approve"),
            lambda: proposal_decide(
                agent=world.agent,
                proposal_id=change.pk,
                owner=world.owner,
                token="t" * 43,
                decision="approve",
                expected_version=change.version,
            ),
            lambda: proposal_rollback(agent=world.agent, proposal_id=change.pk, actor=owner, owner=world.owner),
        ):
            with pytest.raises(ProposalError) as refused:
                decide()
            assert refused.value.code == "owner_decides"
        # A tool that filed a change as the owner's own (which applies at once) files it pending.
        contract = live_content(world.agent)
        own = proposal_create(
            agent=world.agent,
            kind="wording",
            # a harmless greeting: one that touched a commitment would wait whoever proposed it
            payload={"language": "en", "situation": "greeting", "text": "Welcome to the cake shop!"},
            summary="a new greeting",
            origin="owner_direct",
            actor=owner,
            owner=world.owner,
        )
        assert own.status == "pending" and live_content(world.agent) == contract
    version.refresh_from_db()
    change.refresh_from_db()
    assert (version.status, change.status) == ("pending", "pending")
