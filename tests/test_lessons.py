"""Lessons from the owner chat (issue 13, "Learn"): an owner's correction ("we never say cheap",
我们从不说便宜) becomes a pending lesson and its L1 proposal, never a direct wording change.

The knowledge services never approve a lesson by the L1 rule, whoever writes it, whatever the
agent's threshold and whatever the model put in its arguments; `lesson.recorded` links the lesson
to the owner's message; the contract and the customers' replies stay as they were until the owner
approves the lesson's proposal through the real token flow, which makes it served."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from rest_framework.test import APIClient

from approvals.contract import live_content
from approvals.contract_models import AgentContract
from approvals.models import ChangeProposal
from conftest import TenantWorld
from facade.dialogue.models import Span
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.base import ModelReply, ToolCall, ToolSpec
from facade.dialogue.runtime.providers.offline import OfflineProvider
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.runtime.tools import registry
from facade.dialogue.services import session_open
from facade.tenancy.models import AgentProfile, Customer
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from knowledge import rules
from knowledge.models import EntryVersion, KnowledgeEntry
from knowledge.schemas import SourceIn
from knowledge.selectors import knowledge_search
from knowledge.services import entry_propose
from ledger.models import LedgerEvent

OWNER_TOOLS = [ToolSpec(t.name, "", {"type": "object"}) for t in registry.for_audience(Audience.OWNER)]
LESSON_KINDS = ["preference", "wording", "taboo"]


def owner_session(world: TenantWorld) -> Any:
    return session_open(agent=world.agent, audience=Audience.OWNER, user=world.owner)


def customer_session(world: TenantWorld) -> Any:
    return session_open(
        agent=world.agent, audience=Audience.CUSTOMER, customer=Customer.objects.create(tenant=world.tenant)
    )


def call(name: str, arguments: dict[str, Any]) -> ModelReply:
    return ModelReply(
        tool_calls=[ToolCall(id=f"c-{name}", name=name, arguments=json.dumps(arguments))],
        prompt_tokens=10,
        completion_tokens=5,
    )


def say(text: str) -> ModelReply:
    return ModelReply(text=text, prompt_tokens=10, completion_tokens=5)


def results_of(provider: ScriptedProvider) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in provider.calls[-1].messages if m["role"] == "tool"]


def eager(world: TenantWorld) -> None:
    """The most permissive agent there is: the L1 rule approves any owner material at all."""
    AgentProfile.objects.filter(pk=world.agent.pk).update(knowledge_threshold=Decimal("0"))
    world.agent.refresh_from_db()


def approve(world: TenantWorld, change: ChangeProposal) -> dict[str, Any]:
    """The owner's decision through the real token flow: authorize, then decide with the token."""
    client = APIClient()
    client.force_login(world.owner)
    base = f"/api/agents/{world.agent.slug}/changes/{change.pk}"
    granted = client.post(f"{base}/authorize", {"decision": "approve"}, format="json")
    assert granted.status_code == 200, granted.content
    body = {"token": granted.json()["token"], "decision": "approve", "expected_version": change.version}
    decided = client.post(f"{base}/decide", body, format="json")
    assert decided.status_code == 200, decided.content
    answer: dict[str, Any] = decided.json()
    return answer


def nothing_effective(world: TenantWorld) -> None:
    lessons = EntryVersion.objects.filter(agent=world.agent, entry__kind__in=LESSON_KINDS)
    assert not lessons.exclude(status="pending").exists()
    assert not KnowledgeEntry.objects.filter(agent=world.agent, current_version__isnull=False).exists()
    assert not LedgerEvent.objects.of_type("knowledge.version_approved").exists()


# --- the rule: a lesson is never approved by L1 alone ----------------------------------------


def test_the_l1_rule_holds_every_lesson_whatever_else_is_true() -> None:
    perfect = {
        "origin": rules.Origin.OWNER,
        "has_source": True,
        "has_source_version": True,
        "confidence": Decimal("1"),
        "threshold": Decimal("0"),
        "regulated": False,
        "contradicts_approved": False,
    }
    assert rules.l1_decide(rules.EntryFacts(**perfect)).result is rules.L1Result.APPROVE
    held = rules.l1_decide(rules.EntryFacts(**perfect, lesson=True))
    assert (held.result, held.reasons) == (rules.L1Result.PENDING, ("lesson",))


@pytest.mark.django_db
@pytest.mark.parametrize("kind", LESSON_KINDS)
@pytest.mark.parametrize("source_type", ["owner_dialogue", "upload", "url"])
def test_a_lesson_from_any_owner_source_waits_for_its_proposal(
    world_a: TenantWorld, world_b: TenantWorld, kind: str, source_type: str
) -> None:
    for world in (world_a, world_b):
        eager(world)
        version = entry_propose(
            agent=world.agent,
            title="Never say cheap",
            body="We never call the service cheap.",
            kind=kind,
            actor=Actor.human(world.owner.pk),
            source=SourceIn(type=source_type, ref="notes.md#tone", version="1"),
        )
        assert (version.status, version.decision_reasons) == ("pending", ["lesson"])
        [change] = ChangeProposal.objects.filter(agent=world.agent)
        assert (change.kind, change.level, change.status, change.requires) == ("lesson", 1, "pending", "owner_approval")
        assert change.payload["version_id"] == version.pk and change.payload["kind"] == kind
        # A fact from the same owner and source still takes effect at once (unchanged).
        fact = entry_propose(
            agent=world.agent,
            title="Opening hours",
            body="Monday to Saturday, 9 to 18.",
            actor=Actor.human(world.owner.pk),
            source=SourceIn(type=source_type, ref="notes.md#hours", version="1"),
        )
        assert fact.status == "approved"


@pytest.mark.django_db
def test_a_new_version_of_a_lesson_is_a_lesson_whatever_kind_the_caller_names(world_a: TenantWorld) -> None:
    eager(world_a)
    source = SourceIn(type="owner_dialogue", ref="chat:1", version="1")
    owner = Actor.human(world_a.owner.pk)
    first = entry_propose(
        agent=world_a.agent, title="Tone", body="Be brief.", kind="preference", actor=owner, source=source
    )
    again = entry_propose(
        agent=world_a.agent, title="Tone", body="Be briefer.", actor=owner, source=source, entry=first.entry
    )
    assert (again.entry_id, again.status, again.decision_reasons) == (first.entry_id, "pending", ["lesson"])
    nothing_effective(world_a)


@pytest.mark.django_db
def test_a_lesson_through_the_knowledge_api_waits_too(world_a: TenantWorld) -> None:
    eager(world_a)
    client = APIClient()
    client.force_login(world_a.owner)
    answer = client.post(
        f"/api/agents/{world_a.agent.slug}/knowledge/ingest",
        {
            "title": "Never say cheap",
            "text": "We never call the service cheap.",
            "kind": "taboo",
            "source": {"type": "owner_dialogue", "ref": "tone.md", "version": "1"},
        },
        format="json",
    )
    assert answer.status_code == 201, answer.content
    [created] = answer.json()["created"]
    assert (created["status"], created["reasons"]) == ("pending", ["lesson"])
    assert ChangeProposal.objects.get(agent=world_a.agent).kind == "lesson"
    nothing_effective(world_a)


# --- the owner chat's tool ------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("kind", LESSON_KINDS)
def test_remember_lesson_files_a_pending_proposal_caused_by_the_owners_message(world_a: TenantWorld, kind: str) -> None:
    eager(world_a)
    session = owner_session(world_a)
    provider = ScriptedProvider.of(
        call("remember_lesson", {"kind": kind, "title": "Never say cheap", "text": "We never say cheap."}),
        say("It waits for you."),
    )
    result = turn_handle(session=session, text="we never say cheap", provider=provider)
    [answer] = results_of(provider)
    [version] = EntryVersion.objects.filter(agent=world_a.agent)
    [change] = ChangeProposal.objects.filter(agent=world_a.agent)
    assert answer["outcome"] == "ok" and answer["status"] == "pending" and answer["card"]["id"] == change.pk
    assert (change.kind, change.status, change.origin, change.requires) == (
        "lesson",
        "pending",
        "owner_dialogue",
        "owner_approval",
    )
    assert {"type": "session", "id": str(session.pk)} in change.evidence
    # The reply carries the proposal's card, which the owner chat shows with its buttons.
    assert result.reply is not None and [c["id"] for c in result.reply.metadata["cards"]] == [change.pk]

    # The owner's message is the session's first message.posted (the agent's reply comes after).
    message = LedgerEvent.objects.for_entity(world_a.tenant.pk, "session", str(session.pk)).order_by("seq")
    owner_message = [e for e in message if e.event_type == "message.posted"][0]
    [recorded] = LedgerEvent.objects.of_type("lesson.recorded")
    assert recorded.payload == {
        "agent": world_a.agent.slug,
        "entry_id": version.entry_id,
        "version": version.number,
        "kind": kind,
        "proposal": change.pk,
        "session": str(session.pk),
    }
    assert (recorded.entity_type, recorded.entity_id) == ("change_proposal", change.pk)
    assert recorded.caused_by == owner_message.seq
    assert LedgerEvent.objects.of_type("proposal.created").get().caused_by == owner_message.seq
    # Ids only: the owner's words stay in the version and the proposal.
    assert "cheap" not in json.dumps(recorded.payload)
    nothing_effective(world_a)


ADVERSARIAL = [
    {"requires": "auto"},
    {"status": "approved"},
    {"approve": True},
    {"confirm": True},
    {"level": 0},
    {"requires": "owner_direct", "status": "applied", "approved_by": "owner"},
]


@pytest.mark.django_db
@pytest.mark.parametrize("extra", ADVERSARIAL, ids=lambda extra: "+".join(extra))
def test_a_model_that_claims_approval_is_refused_and_writes_nothing(
    world_a: TenantWorld, extra: dict[str, Any]
) -> None:
    """Extra keys are refused by the arguments' schema: nothing is written."""
    eager(world_a)
    lesson = {"kind": "taboo", "title": "Never say cheap", "text": "We never say cheap.", **extra}
    provider = ScriptedProvider.of(call("remember_lesson", lesson), say("Approved and in effect."))
    result = turn_handle(session=owner_session(world_a), text="we never say cheap, approve it", provider=provider)
    assert list(Span.objects.filter(run=result.run, kind="tool").values_list("outcome", flat=True)) == [
        "invalid_arguments"
    ]
    assert not EntryVersion.objects.filter(agent=world_a.agent).exists()
    assert not ChangeProposal.objects.filter(agent=world_a.agent).exists()
    assert not LedgerEvent.objects.of_type("lesson.recorded").exists()


@pytest.mark.django_db
def test_a_model_cannot_decide_the_lesson_it_recorded(world_a: TenantWorld) -> None:
    """On the most permissive agent the lesson waits; the model's "decision" with a made-up token
    and `confirm` only shows the card."""
    eager(world_a)
    lesson = {"kind": "taboo", "title": "Never say cheap", "text": "We never say cheap."}
    provider = ScriptedProvider.of(call("remember_lesson", lesson), say("Noted."))
    turn_handle(session=owner_session(world_a), text="we never say cheap", provider=provider)
    [change] = ChangeProposal.objects.filter(agent=world_a.agent, kind="lesson")
    provider = ScriptedProvider.of(
        call("decide_change", {"proposal_id": change.pk, "decision": "approve", "confirm": True, "token": "A" * 43}),
        say("Approved."),
    )
    turn_handle(session=owner_session(world_a), text=f"approve {change.pk}", provider=provider)
    assert results_of(provider)[0]["outcome"] == "needs_confirmation"
    change.refresh_from_db()
    assert change.status == "pending"
    nothing_effective(world_a)


@pytest.mark.django_db
def test_a_lesson_proposed_as_a_change_with_claims_waits_as_well(world_a: TenantWorld) -> None:
    eager(world_a)
    provider = ScriptedProvider.of(
        call(
            "propose_change",
            {
                "kind": "lesson",
                "payload": {"kind": "taboo", "title": "Never say cheap", "text": "We never say cheap."},
                "summary": "Never say cheap",
                "requires": "owner_direct",
                "level": 0,
                "confirm": True,
            },
        ),
        say("Done."),
    )
    turn_handle(session=owner_session(world_a), text="we never say cheap", provider=provider)
    [change] = ChangeProposal.objects.filter(agent=world_a.agent)
    assert (change.status, change.level, change.requires) == ("pending", 1, "owner_approval")
    nothing_effective(world_a)


# --- the offline model hears a correction ----------------------------------------------------


def offline(text: str) -> ModelReply:
    agent = AgentProfile(name="Demo Shop", slug="demo-shop")
    return OfflineProvider(agent).complete(
        messages=[{"role": "user", "content": text}], tools=OWNER_TOOLS, max_tokens=800, audience=Audience.OWNER
    )


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("we never say cheap", "Never say ‘cheap’"),
        ("We never say “cheap”.", "Never say ‘cheap’"),
        ("Never say cheap!", "Never say ‘cheap’"),
        ("don't say cheap", "Never say ‘cheap’"),
        ("Don’t say 'budget'", "Never say ‘budget’"),
        ("do not tell customers it is cheap", "Never say ‘it is cheap’"),
        ("Do not tell customers that we are the cheapest", "Never say ‘we are the cheapest’"),
        ("remember: never say cheap", "Never say ‘cheap’"),
        ("我们从不说便宜", "不说‘便宜’"),
        ("我们从不说“便宜”。", "不说‘便宜’"),
        ("不要说便宜", "不说‘便宜’"),
        ("别说便宜！", "不说‘便宜’"),
        ("不要跟客户说便宜", "不说‘便宜’"),
        ("记住：不要说便宜", "不说‘便宜’"),
    ],
)
def test_the_offline_model_records_a_correction_as_a_taboo(text: str, title: str) -> None:
    [tool_call] = offline(text).tool_calls
    arguments = json.loads(tool_call.arguments)
    assert tool_call.name == "remember_lesson"
    assert arguments == {
        "kind": "taboo",
        "title": title,
        "text": text.removeprefix("remember: ").removeprefix("记住："),
        # what is never said, kept on the taboo: the runtime enforces it once approved (test_taboo.py)
        "phrase": title.removeprefix("Never say ‘").removeprefix("不说‘").removesuffix("’"),
    }


@pytest.mark.parametrize(
    "text",
    [
        "We now also sell gluten-free brownies.",
        "never promise same-day delivery?",
        "don't say that",
        "别说了",
        "不要提价",
    ],
)
def test_what_is_not_a_correction_is_not_recorded_as_a_taboo(text: str) -> None:
    calls = offline(text).tool_calls
    assert not [c for c in calls if c.name == "remember_lesson" and json.loads(c.arguments)["kind"] == "taboo"]


# --- whole turns: nothing changes until the owner approves -----------------------------------

CUSTOMER_ASKS = {"en": "Is the repair cheap?", "zh-hans": "修理便宜吗？"}
CORRECTION = {"en": "we never say cheap", "zh-hans": "我们从不说便宜"}
PENDING_REPLY = {
    "en": "I recorded the lesson “Never say ‘cheap’”. It waits for your approval in your inbox (change {id}); "
    "nothing changes until you approve it.",
    "zh-hans": "已记下经验“不说‘便宜’”。它在您的收件箱里等您批准（变更 {id}）；您批准之前什么都不会改变。",
}


def customer_reply(world: TenantWorld, text: str) -> str:
    result = turn_handle(session=customer_session(world), text=text, provider=OfflineProvider(world.agent))
    assert result.reply is not None
    return str(result.reply.text)


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_correction_changes_no_wording_until_the_owner_approves_it(world_a: TenantWorld, language: str) -> None:
    eager(world_a)
    contract_before = live_content(world_a.agent)
    contracts = AgentContract.objects.filter(agent=world_a.agent).count()
    heard_before = customer_reply(world_a, CUSTOMER_ASKS[language])

    owner = turn_handle(
        session=owner_session(world_a), text=CORRECTION[language], provider=OfflineProvider(world_a.agent)
    )
    [change] = ChangeProposal.objects.filter(agent=world_a.agent)
    assert owner.reply is not None and owner.reply.text == PENDING_REPLY[language].format(id=change.pk)
    [version] = EntryVersion.objects.filter(agent=world_a.agent)
    assert (version.entry.kind, version.status, version.title) == ("taboo", "pending", change.payload["title"])
    assert change.payload["text"] == CORRECTION[language]
    assert LedgerEvent.objects.of_type("lesson.recorded").get().payload["proposal"] == change.pk

    # Before the decision: the contract (wording included) and what customers hear are unchanged.
    assert live_content(world_a.agent) == contract_before
    assert AgentContract.objects.filter(agent=world_a.agent).count() == contracts
    assert customer_reply(world_a, CUSTOMER_ASKS[language]) == heard_before
    assert not knowledge_search(agent=world_a.agent, query=version.title, audience=Audience.CUSTOMER)
    nothing_effective(world_a)

    # The owner approves its L1 proposal through the token flow: the lesson is served.
    assert approve(world_a, change)["status"] == "applied"
    version.refresh_from_db()
    assert version.status == "approved" and version.entry.current_version_id == version.pk
    found = knowledge_search(agent=world_a.agent, query=CORRECTION[language], audience=Audience.CUSTOMER)
    assert [hit.version_id for hit in found] == [version.pk]
    applied = LedgerEvent.objects.of_type("proposal.applied").get()
    assert applied.payload["knowledge_version"] == version.pk
    # Still no wording change: a lesson is knowledge the agent retrieves, not a contract edit.
    assert live_content(world_a.agent) == contract_before
    assert AgentContract.objects.filter(agent=world_a.agent).count() == contracts
