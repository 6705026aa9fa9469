"""Applying approved L2/L3 changes through the contract compiler (issue 12): the owner's own
wording applies on the next turn and rolls back in one click; boundary wording and L3 wait for the
token flow and publish a new contract version; a change made against a live value that has moved
on answers 409 `stale_base` until it is re-based; a change that does not compile becomes `failed`
with the compiler's reasons and the previous version stays live.  CSRF checks are on throughout."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from approvals.contract import contract_compile, live_content, live_terms
from approvals.models import AgentContract, ChangeProposal
from approvals.services import proposal_create
from conftest import TenantWorld
from facade.dialogue.models import CustomerRequest, DialogueSession, Message
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.offline import OfflineProvider
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.services import session_open
from facade.tenancy.models import Customer
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify
from tests.test_approvals_decide import strict_client
from tests.test_approvals_tools import call
from tests.test_approvals_tools import say as said

PRICING = {"currency": "EUR", "items": [{"name": "Repair", "amount": "35.00"}]}
GREETING = {"language": "en", "situation": "greeting", "text": "Welcome to the workshop! Ask me anything."}
CODE = re.compile(r"Your code: (\d{6})")
pytestmark = pytest.mark.django_db


def changes(world: TenantWorld) -> str:
    return f"/api/agents/{world.agent.slug}/changes"


def customer(world: TenantWorld) -> DialogueSession:
    return session_open(
        agent=world.agent, audience=Audience.CUSTOMER, customer=Customer.objects.create(tenant=world.tenant)
    )


def say(session: DialogueSession, text: str) -> str:
    result = turn_handle(session=session, text=text, provider=OfflineProvider(session.agent))
    assert result.reply is not None
    return str(result.reply.text)


def propose(client: Any, world: TenantWorld, kind: str, payload: Any) -> dict[str, Any]:
    response = client.post(changes(world), {"kind": kind, "payload": payload, "summary": "a change"}, format="json")
    assert response.status_code == 201, response.content
    return dict(response.json())


def decide(client: Any, world: TenantWorld, change: dict[str, Any], decision: str = "approve") -> Any:
    base = f"{changes(world)}/{change['id']}"
    granted = client.post(f"{base}/authorize", {"decision": decision}, format="json")
    assert granted.status_code == 200, granted.content
    body = {"token": granted.json()["token"], "decision": decision, "expected_version": change["version"]}
    return client.post(f"{base}/decide", body, format="json")


def code_token(client: Any, world: TenantWorld, change: dict[str, Any], outbox: list[Any]) -> str:
    """Authorize an L3 approval and answer the e-mailed code: the `email_otp` token."""
    base = f"{changes(world)}/{change['id']}"
    challenge = client.post(f"{base}/authorize", {"decision": "approve"}, format="json").json()
    code = CODE.search(str(outbox[-1].body))
    assert code is not None
    verified = client.post(
        f"{base}/authorize/verify", {"challenge_id": challenge["challenge_id"], "code": code.group(1)}, format="json"
    )
    assert verified.status_code == 200, verified.content
    return str(verified.json()["token"])


def decide_by_code(client: Any, world: TenantWorld, change: dict[str, Any], outbox: list[Any]) -> Any:
    body = {
        "token": code_token(client, world, change, outbox),
        "decision": "approve",
        "expected_version": change["version"],
    }
    return client.post(f"{changes(world)}/{change['id']}/decide", body, format="json")


def test_the_owners_own_wording_applies_on_the_next_turn_and_rolls_back_in_one_click(world_a: TenantWorld) -> None:
    owner = strict_client(world_a.owner)
    before = say(customer(world_a), "Hello")
    assert GREETING["text"] not in before

    change = propose(owner, world_a, "wording", GREETING)
    assert (change["level"], change["requires"], change["status"]) == (2, "owner_direct", "applied")
    assert (change["assurance"], change["contract_version"], change["base_contract_version"]) == ("owner_session", 2, 1)
    assert change["target"] == {"field": "wording", "path": ["en", "greeting"]}
    assert live_content(world_a.agent)["wording"] == {"en": {"greeting": GREETING["text"]}}
    assert say(customer(world_a), "Hello") == GREETING["text"]
    assert GREETING["text"] not in say(customer(world_a), "你好")  # the Chinese greeting is still the platform's

    undo = owner.post(f"{changes(world_a)}/{change['id']}/rollback", format="json")
    assert undo.status_code == 201, undo.content
    rollback = undo.json()
    assert (rollback["kind"], rollback["level"], rollback["status"]) == ("rollback", 2, "applied")
    assert (rollback["rollback_of"], rollback["contract_version"]) == (change["id"], 3)
    assert rollback["diff"] == {"before": GREETING["text"], "after": None}
    assert live_content(world_a.agent)["wording"] == {}
    assert say(customer(world_a), "Hello") == before
    assert ChangeProposal.objects.get(pk=change["id"]).status == "rolled_back"
    again = owner.post(f"{changes(world_a)}/{change['id']}/rollback", format="json")
    assert (again.status_code, again.json()["error"]) == (409, "not_rollbackable")
    kinds = [e.event_type for e in LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).order_by("seq")]
    assert kinds.count("proposal.published") == 2 and "proposal.rolled_back" in kinds
    assert ledger_verify(chain_id=world_a.tenant.pk).ok


def test_boundary_wording_waits_for_the_token_and_then_the_customer_hears_it(world_a: TenantWorld) -> None:
    owner = strict_client(world_a.owner)
    wording = {"language": "en", "text": "Prices are confirmed by Alice in person, within a day."}
    change = propose(owner, world_a, "boundary_wording", wording)
    assert (change["requires"], change["status"]) == ("owner_approval", "pending")
    assert live_terms(world_a.agent).boundary("en") != wording["text"]
    decided = decide(owner, world_a, change)
    assert decided.status_code == 200, decided.content
    assert (decided.json()["status"], decided.json()["contract_version"]) == ("applied", 2)
    assert wording["text"] in say(customer(world_a), "How much does a repair cost?")


def test_a_flagged_wording_waits_and_a_rejected_change_changes_nothing(world_a: TenantWorld) -> None:
    owner = strict_client(world_a.owner)
    flagged = {"language": "en", "situation": "greeting", "text": "Every repair costs 20 euros, guaranteed."}
    change = propose(owner, world_a, "wording", flagged)
    assert (change["requires"], change["status"]) == ("owner_approval", "pending")
    rejected = decide(owner, world_a, change, "reject")
    assert rejected.json()["status"] == "rejected"
    assert live_terms(world_a.agent).version == 1 and live_content(world_a.agent)["wording"] == {}


def test_a_change_against_a_moved_live_value_is_stale_until_rebased(world_a: TenantWorld, mailoutbox: Any) -> None:
    owner = strict_client(world_a.owner)
    change = propose(owner, world_a, "pricing", PRICING)
    # Meanwhile another change of the prices is published.
    contract_compile(
        agent=world_a.agent,
        changes={"pricing": {"currency": "EUR", "items": [{"name": "Check", "amount": "5.00"}]}},
        actor=Actor.platform("tests"),
    )
    base = f"{changes(world_a)}/{change['id']}"
    token = code_token(owner, world_a, change, mailoutbox)
    stale = owner.post(f"{base}/decide", {"token": token, "decision": "approve", "expected_version": 1}, format="json")
    assert (stale.status_code, stale.json()["error"]) == (409, "stale_base")
    assert live_content(world_a.agent)["pricing"]["items"][0]["name"] == "Check"
    assert ChangeProposal.objects.get(pk=change["id"]).status == "pending"
    assert LedgerEvent.objects.of_type("proposal.decide_refused").get().payload["reason"] == "stale_base"

    rebased = owner.post(f"{base}/rebase", {"expected_version": 1}, format="json")
    assert rebased.status_code == 200, rebased.content
    assert rebased.json()["version"] == 2 and rebased.json()["base_contract_version"] == 2
    assert rebased.json()["diff"]["before"]["items"][0]["name"] == "Check"
    # The token was for version 1: useless now; a new decision goes through.
    old = owner.post(f"{base}/decide", {"token": token, "decision": "approve", "expected_version": 2}, format="json")
    assert old.status_code == 403
    decided = decide_by_code(owner, world_a, rebased.json(), mailoutbox)
    assert decided.status_code == 200, decided.content
    assert (decided.json()["status"], decided.json()["contract_version"]) == ("applied", 3)
    assert live_content(world_a.agent)["pricing"] == PRICING


def test_a_change_that_does_not_compile_fails_with_reasons_and_the_live_version_stays(
    world_a: TenantWorld, mailoutbox: Any
) -> None:
    owner = strict_client(world_a.owner)
    change = propose(owner, world_a, "skill_ids", {"skill_ids": ["knowledge_answers", "teleportation"]})
    live_before = AgentContract.objects.get(agent=world_a.agent, is_live=True)
    decided = decide_by_code(owner, world_a, change, mailoutbox)
    assert decided.status_code == 200, decided.content
    assert decided.json()["status"] == "failed"
    assert decided.json()["failure_reasons"] == ["skill_ids: unknown skill teleportation"]
    live_after = AgentContract.objects.get(agent=world_a.agent, is_live=True)
    assert (live_after.pk, live_after.content_hash) == (live_before.pk, live_before.content_hash)
    stored = ChangeProposal.objects.get(pk=change["id"])
    assert (stored.status, stored.decided_by, stored.contract_version) == ("failed", world_a.owner, None)
    assert LedgerEvent.objects.of_type("proposal.failed").get().payload["reasons"] == stored.failure_reasons
    assert LedgerEvent.objects.of_type("contract.rejected").get().payload["caused_by"] == change["id"]
    assert owner.get(f"{changes(world_a)}/{change['id']}").json()["failure_reasons"] == stored.failure_reasons


def test_an_l3_change_and_its_rollback_both_need_the_code(
    world_a: TenantWorld, mailoutbox: Any, django_capture_on_commit_callbacks: Any
) -> None:
    owner = strict_client(world_a.owner)
    session = customer(world_a)
    change = propose(owner, world_a, "delivery", {"options": [{"channel": "pickup", "note": "Mon-Fri"}]})
    with django_capture_on_commit_callbacks(execute=True):  # a close would run after the publish
        assert decide_by_code(owner, world_a, change, mailoutbox).json()["status"] == "applied"
    assert live_content(world_a.agent)["delivery"] == [{"channel": "pickup", "note": "Mon-Fri"}]
    session.refresh_from_db()
    # A delivery option takes nothing away from an open conversation: it ends none (issue 26 §2).
    assert (session.status, session.closed_reason) == ("open", "")

    rollback = owner.post(f"{changes(world_a)}/{change['id']}/rollback", format="json").json()
    assert (rollback["level"], rollback["requires"], rollback["status"]) == (3, "owner_approval", "pending")
    click = owner.post(f"{changes(world_a)}/{rollback['id']}/authorize", {"decision": "approve"}, format="json")
    assert "token" not in click.json()  # L3: an e-mailed code, never a click token
    assert decide_by_code(owner, world_a, rollback, mailoutbox).json()["status"] == "applied"
    assert live_content(world_a.agent)["delivery"] == []
    assert live_terms(world_a.agent).version == 3


def test_a_rollback_of_a_change_a_later_one_replaced_is_refused(world_a: TenantWorld) -> None:
    owner = strict_client(world_a.owner)
    first = propose(owner, world_a, "wording", GREETING)
    propose(owner, world_a, "wording", {**GREETING, "text": "Good day! How can I help?"})
    refused = owner.post(f"{changes(world_a)}/{first['id']}/rollback", format="json")
    assert (refused.status_code, refused.json()["error"]) == (409, "superseded")
    pending = propose(owner, world_a, "pricing", PRICING)
    assert owner.post(f"{changes(world_a)}/{pending['id']}/rollback", format="json").json()["error"] == (
        "not_rollbackable"
    )


def test_a_model_proposed_wording_waits_for_the_owner(world_a: TenantWorld) -> None:
    change = proposal_create(
        agent=world_a.agent,
        kind="wording",
        payload=GREETING,
        summary="friendlier greeting",
        origin="review_report",
        actor=Actor.platform("review"),
        owner=world_a.owner,  # even with an owner at hand: the model's proposal is never the decision
    )
    assert (change.requires, change.status) == ("owner_approval", "pending")
    assert live_terms(world_a.agent).version == 1


def test_editing_a_wording_proposal_to_another_moment_retargets_it(world_a: TenantWorld) -> None:
    owner = strict_client(world_a.owner)
    flagged = {"language": "en", "situation": "greeting", "text": "Every repair costs 20 euros, guaranteed."}
    change = propose(owner, world_a, "wording", flagged)
    edited = owner.patch(
        f"{changes(world_a)}/{change['id']}",
        {"payload": {**flagged, "situation": "unknown"}, "expected_version": 1},
        format="json",
    )
    assert edited.status_code == 200, edited.content
    assert edited.json()["target"] == {"field": "wording", "path": ["en", "unknown"]}
    assert edited.json()["diff"] == {"before": None, "after": flagged["text"]}


def test_every_authorisation_is_the_owners_own_message_in_their_owner_session(world_a: TenantWorld) -> None:
    owner = strict_client(world_a.owner)
    flagged = {"language": "en", "situation": "greeting", "text": "Every repair costs 20 euros, guaranteed."}
    change = propose(owner, world_a, "wording", flagged)
    # Typed in the owner chat first: that message is the decision, nothing is added.
    session = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    typed = Message.objects.create(session=session, role="principal", text=f"Approve {change['id']}")
    assert (
        owner.post(f"{changes(world_a)}/{change['id']}/authorize", {"decision": "approve"}, format="json").status_code
        == 200
    )
    assert list(Message.objects.filter(session__user=world_a.owner)) == [typed]
    # From the inbox card: the button's request stores the owner's message in their session.
    other = propose(owner, world_a, "wording", {**flagged, "situation": "unknown"})
    assert (
        owner.post(f"{changes(world_a)}/{other['id']}/authorize", {"decision": "reject"}, format="json").status_code
        == 200
    )
    sent = Message.objects.filter(session__user=world_a.owner).latest("created_at")
    assert (sent.text, sent.role, sent.session_id) == (f"reject {other['id']}", "principal", session.pk)
    assert sent.session.audience == "owner"
    assert sent.pk in [e.payload["message_id"] for e in LedgerEvent.objects.of_type("message.posted")]


def test_the_customer_face_is_offered_and_may_run_only_the_tools_its_skills_grant(
    world_a: TenantWorld, mailoutbox: Any
) -> None:
    owner = strict_client(world_a.owner)
    first = customer(world_a)
    script = ScriptedProvider.of(said("Hello"))
    turn_handle(session=first, text="hi", provider=script)
    assert {t.name for t in script.calls[0].tools} == {
        "search_knowledge",
        "submit_request",
        "amend_request",
        "withdraw_request",
        "request_handoff",
    }
    # Only knowledge answers from now on: no requests, no handoff.
    change = propose(owner, world_a, "skill_ids", {"skill_ids": ["knowledge_answers"]})
    assert decide_by_code(owner, world_a, change, mailoutbox).json()["status"] == "applied"
    session = customer(world_a)
    details = {"need": "a repair", "when": "Friday", "contact": "c@example.com"}
    script = ScriptedProvider.of(
        call("submit_request", {"summary": "a repair", "details": details}), said("Registered!")
    )
    turn_handle(session=session, text="please repair my bike", provider=script)
    assert [t.name for t in script.calls[0].tools] == ["search_knowledge"]
    [answer] = [json.loads(m["content"]) for m in script.calls[-1].messages if m["role"] == "tool"]
    assert (answer["outcome"], answer["error"]) == ("refused", "not_in_contract")
    assert not CustomerRequest.objects.filter(session=session).exists()
    refused = LedgerEvent.objects.of_type("tool.refused").get()
    assert (refused.payload["tool"], refused.payload["reason"]) == ("submit_request", "not_in_contract")


def test_the_ledger_links_the_dialogue_that_started_a_change_to_the_version_it_published(
    world_a: TenantWorld, mailoutbox: Any
) -> None:
    session = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    script = ScriptedProvider.of(
        call("propose_change", {"kind": "pricing", "payload": PRICING, "summary": "Repair costs 35 euros"}),
        said("Proposed; it waits for you."),
    )
    turn_handle(session=session, text="the repair costs 35 euros now", provider=script)
    proposal = ChangeProposal.objects.get()
    owner = strict_client(world_a.owner)
    change = owner.get(f"{changes(world_a)}/{proposal.pk}").json()
    assert decide_by_code(owner, world_a, change, mailoutbox).json()["status"] == "applied"

    by_seq = {e.seq: e for e in LedgerEvent.objects.filter(chain_id=world_a.tenant.pk)}
    walked = []
    event = LedgerEvent.objects.of_type("proposal.published").get()
    while event is not None:
        walked.append((event.event_type, event.entity_type))
        event = by_seq.get(event.caused_by) if event.caused_by else None
    # published ← the contract version ← the decision ← its authorisation ← the proposal ← the dialogue
    assert walked == [
        ("proposal.published", "change_proposal"),
        ("contract.published", "contract"),
        ("proposal.decided", "change_proposal"),
        ("authority.token_consumed", "change_proposal"),
        ("authority.issued", "change_proposal"),
        ("authority.code_sent", "change_proposal"),
        ("proposal.created", "change_proposal"),
        ("message.posted", "session"),
    ]
    assert ledger_verify(chain_id=world_a.tenant.pk).ok


def test_a_proposal_past_its_expiry_cannot_be_decided_before_the_sweep_marks_it(world_a: TenantWorld) -> None:
    owner = strict_client(world_a.owner)
    flagged = {"language": "en", "situation": "greeting", "text": "Every repair costs 20 euros, guaranteed."}
    change = propose(owner, world_a, "wording", flagged)
    base = f"{changes(world_a)}/{change['id']}"
    token = owner.post(f"{base}/authorize", {"decision": "approve"}, format="json").json()["token"]
    ChangeProposal.objects.filter(pk=change["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    late = owner.post(f"{base}/decide", {"token": token, "decision": "approve", "expected_version": 1}, format="json")
    assert (late.status_code, late.json()["error"]) == (409, "not_pending")
    again = owner.post(f"{base}/authorize", {"decision": "approve"}, format="json")
    assert (again.status_code, again.json()["error"]) == (409, "not_pending")
    assert live_content(world_a.agent)["wording"] == {}
