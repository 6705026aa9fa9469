"""The owner-face tools of the approvals step, driven by a scripted model: `propose_change`
creates a proposal that waits for the owner whatever the model claims (the claim is recorded as an
override), and `decide_change` never decides (DESIGN.md red line 4)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from approvals.models import ChangeProposal
from approvals.services import proposal_create
from facade.dialogue.models import Span
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.base import ModelReply, ToolCall
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.services import session_open
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify

pytestmark = pytest.mark.django_db

PRICING = {"currency": "EUR", "items": [{"name": "Repair", "amount": "35.00"}]}


def call(name: str, arguments: Any) -> ModelReply:
    return ModelReply(
        tool_calls=[ToolCall(id=f"c-{name}", name=name, arguments=json.dumps(arguments))],
        prompt_tokens=10,
        completion_tokens=5,
    )


def say(text: str) -> ModelReply:
    return ModelReply(text=text, prompt_tokens=10, completion_tokens=5)


def tool_answers(provider: ScriptedProvider) -> list[dict[str, Any]]:
    last = provider.calls[-1].messages
    return [json.loads(m["content"]) for m in last if m["role"] == "tool"]


def test_a_model_that_claims_level_1_auto_and_confirm_for_a_pricing_change_decides_nothing(world_a: Any) -> None:
    provider = ScriptedProvider.of(
        call(
            "propose_change",
            {
                "kind": "pricing",
                "payload": PRICING,
                "summary": "Repair costs 35 euros",
                "level": 1,
                "requires": "auto",
                "confirm": True,
            },
        ),
        say("Done, the price is live."),
    )
    session = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    result = turn_handle(session=session, text="set the repair price to 35 euros", provider=provider)
    [proposal] = ChangeProposal.objects.all()
    assert (proposal.level, proposal.requires, proposal.origin, proposal.status) == (
        3,
        "owner_approval",
        "owner_dialogue",
        "pending",
    )
    assert proposal.decided_at is None and proposal.authorization_id == ""
    [answer] = tool_answers(provider)
    assert answer["outcome"] == "ok"
    card = answer["card"]
    assert (card["id"], card["level"], card["requires"], card["status"]) == (
        proposal.pk,
        3,
        "owner_approval",
        "pending",
    )
    assert card["payload"] == PRICING
    [override] = LedgerEvent.objects.of_type("proposal.override_recorded")
    assert override.payload["claimed"] == {"level": "1", "requires": '"auto"', "confirm": "true"}
    assert override.payload["assigned"] == {"level": "3", "requires": "owner_approval", "confirm": "ignored"}
    assert override.entity_id == proposal.pk
    assert LedgerEvent.objects.of_type("proposal.created").count() == 1
    assert result.run is not None and ledger_verify(chain_id=world_a.tenant.pk).ok


def test_a_proposal_without_claims_records_no_override(world_a: Any) -> None:
    provider = ScriptedProvider.of(
        call(
            "propose_change",
            {
                "kind": "wording",
                "payload": {"language": "en", "situation": "greeting", "text": "Hello!"},
                "summary": "s",
            },
        ),
        call("propose_change", {"kind": "pricing", "payload": {"currency": "EURO", "items": []}, "summary": "bad"}),
        say("ok"),
    )
    session = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    turn_handle(session=session, text="greet people with hello", provider=provider)
    [proposal] = ChangeProposal.objects.all()
    # the model made it, so it waits for the owner even though an owner's own L2 change would not
    assert (proposal.level, proposal.requires) == (2, "owner_approval")
    assert not LedgerEvent.objects.of_type("proposal.override_recorded").exists()
    answers = tool_answers(provider)
    assert [a["outcome"] for a in answers] == ["ok", "failed"] and answers[1]["error"] == "invalid_payload"


def test_decide_change_with_an_invented_token_or_code_only_shows_the_card(world_a: Any) -> None:
    proposal = proposal_create(
        agent=world_a.agent,
        kind="pricing",
        payload=PRICING,
        summary="Repair costs 35 euros",
        origin="review_report",
        actor=Actor.platform("review"),
    )
    invented = "tok_" + "A" * 43
    provider = ScriptedProvider.of(
        call("decide_change", {"proposal_id": proposal.pk, "decision": "approve", "token": invented}),
        call("decide_change", {"proposal_id": proposal.pk, "decision": "approve", "code": "123456", "confirm": True}),
        call("decide_change", {"proposal_id": proposal.pk, "decision": "approve", "expected_version": 1}),
        call("decide_change", {"proposal_id": "chg_nothing", "decision": "reject"}),
        say("Approved."),
    )
    session = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    result = turn_handle(session=session, text="approve it", provider=provider)
    proposal.refresh_from_db()
    assert (proposal.status, proposal.version, proposal.decided_by, proposal.authorization_id) == (
        "pending",
        1,
        None,
        "",
    )
    answers = tool_answers(provider)
    assert [a["outcome"] for a in answers] == ["needs_confirmation"] * 3 + ["failed"]
    assert all(a["waiting_for"] == "owner_confirmation" and a["card"]["id"] == proposal.pk for a in answers[:3])
    overrides = [e.payload["claimed"] for e in LedgerEvent.objects.of_type("proposal.override_recorded")]
    assert overrides == [{"authorisation_given": "token"}, {"confirm": "true", "authorisation_given": "code"}]
    ledger_text = json.dumps([e.payload for e in LedgerEvent.objects.all()])
    assert invented not in ledger_text and "123456" not in ledger_text
    assert (
        list(Span.objects.filter(run=result.run, kind="tool").values_list("name", flat=True)) == ["decide_change"] * 4
    )
