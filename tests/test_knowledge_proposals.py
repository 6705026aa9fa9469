"""Pending knowledge is an L1 proposal (issue 12): every version the knowledge step's L1 rule
leaves pending gets a pending `knowledge_draft` or `lesson` proposal in the same transaction, and
deciding it is what approves (or rejects) exactly that version; a version that has left pending
or been superseded makes its proposal stale (409 `stale_base`, nothing applied).  CSRF checks are
on in every API call here."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from django.db import transaction
from django.middleware.csrf import _get_new_csrf_string
from rest_framework.test import APIClient

from approvals import schemas as approval_schemas
from approvals.knowledge_proposals import CUSTOMER_TEXT, from_owner_chat
from approvals.models import ChangeProposal
from approvals.services import ProposalError, proposal_authorize, proposal_decide, proposal_edit
from conftest import TenantWorld
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.base import ModelReply, ToolCall
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.services import session_open
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from knowledge import services as knowledge_services
from knowledge.extract import extract_text
from knowledge.ingest import ingest_material
from knowledge.models import EntryVersion, KnowledgeEntry
from knowledge.schemas import SourceIn
from knowledge.selectors import knowledge_search
from knowledge.services import (
    entry_propose,
    entry_restore,
    knowledge_miss_record,
    knowledge_quarantine,
    knowledge_unquarantine,
    regulated_term_add,
)
from knowledge.text import topic_key
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify

pytestmark = pytest.mark.django_db

PLATFORM = Actor.platform("tests")
UPLOAD = SourceIn(type="upload", ref="prices.md#refunds", version="sha-1")


def strict_client(user: Any) -> APIClient:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    secret = _get_new_csrf_string()
    client.cookies["csrftoken"] = secret
    client.credentials(HTTP_X_CSRFTOKEN=secret)
    return client


def held(
    world: TenantWorld, *, title: str = "Refunds", body: str = "Refunds are paid within 14 days.", **kw: Any
) -> EntryVersion:
    """A version the L1 rule holds: below the agent's confidence threshold."""
    version = entry_propose(
        agent=world.agent,
        title=title,
        body=body,
        source=kw.pop("source", UPLOAD),
        actor=kw.pop("actor", Actor.human(world.owner.pk)),
        confidence=Decimal("0.2"),
        **kw,
    )
    assert version.status == "pending", version.decision_reasons
    return version


def proposal_of(version: EntryVersion) -> ChangeProposal:
    return ChangeProposal.objects.get(payload__version_id=version.pk)


def decide(world: TenantWorld, change: ChangeProposal, decision: str = "approve") -> Any:
    owner = strict_client(world.owner)
    base = f"/api/agents/{world.agent.slug}/changes/{change.pk}"
    token = owner.post(f"{base}/authorize", {"decision": decision}, format="json")
    assert token.status_code == 200, token.content
    body = {"token": token.json()["token"], "decision": decision, "expected_version": change.version}
    return owner.post(f"{base}/decide", body, format="json")


def test_a_held_version_is_a_pending_proposal_in_the_inbox(world_a: TenantWorld) -> None:
    version = held(world_a)
    change = proposal_of(version)
    assert (change.kind, change.level, change.status, change.origin, change.requires) == (
        "knowledge_draft",
        1,
        "pending",
        "owner_direct",  # the owner's own upload
        "owner_approval",
    )
    assert change.payload == {
        "entry_id": version.entry_id,
        "version_id": version.pk,
        "title": "Refunds",
        "text": "Refunds are paid within 14 days.",
    }
    assert change.evidence == [{"type": "knowledge_version", "id": version.pk}]
    assert change.base == str(version.number)
    assert "low_confidence" in change.summary
    # The proposal was written with the version: the created events sit side by side in the chain.
    kinds = [e.event_type for e in LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).order_by("seq")]
    at = kinds.index("knowledge.version_created")
    assert kinds[at + 1] == "proposal.created"

    listed = strict_client(world_a.owner).get(f"/api/agents/{world_a.agent.slug}/changes?status=pending")
    assert listed.status_code == 200
    [shown] = listed.json()
    assert (shown["id"], shown["kind"], shown["level"], shown["payload"]["version_id"]) == (
        change.pk,
        "knowledge_draft",
        1,
        version.pk,
    )
    # An approved version (the owner's confident material) files nothing.
    entry_propose(agent=world_a.agent, title="Hours", body="Open at nine.", source=UPLOAD, actor=PLATFORM)
    assert ChangeProposal.objects.count() == 1


def test_origins_and_lessons(world_a: TenantWorld) -> None:
    review = held(
        world_a, title="Parking", body="Park behind the shop.", source=SourceIn(type="review", ref="r1", version="1")
    )
    feed = held(
        world_a, title="VAT", body="The VAT rate changed.", source=SourceIn(type="observe", ref="f1", version="1")
    )
    customer = held(
        world_a,
        title="Gift cards",
        body="my words as a customer",
        source=SourceIn(type="customer_candidate", ref="c1", version="1"),
    )
    taboo = held(world_a, title="Never say cheap", body="Do not call the service cheap.", kind="taboo")
    assert proposal_of(review).origin == "review_report"
    assert proposal_of(feed).origin == "observe_digest"
    lesson = proposal_of(taboo)
    assert (lesson.kind, lesson.payload["kind"], lesson.payload["version_id"]) == ("lesson", "taboo", taboo.pk)
    # A customer candidate's words are customer text: its proposal does not carry them.
    candidate = proposal_of(customer)
    assert candidate.origin == "customer_candidate"
    assert "my words" not in json.dumps([candidate.payload, candidate.diff, candidate.summary])
    assert candidate.payload["text"] == CUSTOMER_TEXT.format(number=customer.number)


def test_owner_chat_teaching_is_an_owner_dialogue_proposal_with_the_conversation(world_a: TenantWorld) -> None:
    regulated_term_add(agent=world_a.agent, term="warranty", category="law", actor=PLATFORM)
    provider = ScriptedProvider.of(
        ModelReply(
            tool_calls=[
                ToolCall(
                    id="c1",
                    name="remember_lesson",
                    arguments=json.dumps(
                        {"kind": "wording", "title": "Warranty", "text": "Say warranty, not guarantee."}
                    ),
                )
            ]
        ),
        ModelReply(text="Noted; it waits for your decision."),
    )
    session = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    turn_handle(session=session, text="remember: say warranty, not guarantee", provider=provider)
    version = EntryVersion.objects.get(agent=world_a.agent)
    assert version.status == "pending" and "regulated" in version.decision_reasons
    change = proposal_of(version)
    assert (change.kind, change.origin, change.requires) == ("lesson", "owner_dialogue", "owner_approval")
    assert {"type": "session", "id": str(session.pk)} in change.evidence
    # The owner chat's inbox names the proposal that decides it.
    reader = ScriptedProvider.of(
        ModelReply(tool_calls=[ToolCall(id="c2", name="read_owner_inbox", arguments="{}")]), ModelReply(text="Here.")
    )
    turn_handle(session=session, text="inbox", provider=reader)
    [inbox] = [json.loads(m["content"]) for m in reader.calls[-1].messages if m["role"] == "tool"]
    assert [(p["title"], p["change_id"]) for p in inbox["pending_knowledge"]] == [("Warranty", change.pk)]


def test_every_held_section_of_an_ingest_gets_its_proposal(world_a: TenantWorld) -> None:
    extracted = extract_text(
        "Policies", "# Returns\n\nReturns within 30 days.\n\n# Deposits\n\nA deposit of 20 percent."
    )
    outcome = ingest_material(
        agent=world_a.agent,
        extracted=extracted,
        document="policies.md",
        actor=Actor.human(world_a.owner.pk),
        confidence=Decimal("0.3"),
    )
    assert len(outcome.created) == 2
    for version in outcome.created:
        assert proposal_of(version).origin == "owner_direct"


def test_approving_the_proposal_approves_exactly_that_version(world_a: TenantWorld) -> None:
    version = held(world_a)
    change = proposal_of(version)
    assert not knowledge_search(agent=world_a.agent, query="refunds", audience=Audience.CUSTOMER)
    answer = decide(world_a, change)
    assert answer.status_code == 200, answer.content
    assert answer.json()["status"] == "applied"
    version.refresh_from_db()
    assert version.status == "approved"
    assert EntryVersion.objects.filter(agent=world_a.agent).count() == 1  # no copy was made
    assert KnowledgeEntry.objects.get(pk=version.entry_id).current_version_id == version.pk
    assert [h.version for h in knowledge_search(agent=world_a.agent, query="refunds", audience=Audience.CUSTOMER)] == [
        1
    ]
    applied = LedgerEvent.objects.of_type("proposal.applied").get()
    assert applied.payload["knowledge_version"] == version.pk
    assert [e.document["entity_id"] for e in LedgerEvent.objects.of_type("knowledge.version_approved")] == [
        str(version.entry_id)
    ]
    assert ledger_verify(chain_id=world_a.tenant.pk).ok


def test_rejecting_the_proposal_rejects_the_version(world_a: TenantWorld) -> None:
    version = held(world_a)
    change = proposal_of(version)
    answer = decide(world_a, change, "reject")
    assert answer.status_code == 200 and answer.json()["status"] == "rejected"
    version.refresh_from_db()
    assert version.status == "rejected"
    rejected = LedgerEvent.objects.of_type("knowledge.version_rejected").get()
    assert change.pk in rejected.payload["reason"]
    assert not LedgerEvent.objects.of_type("knowledge.version_approved").exists()


def test_an_edited_draft_approves_the_owners_text_as_the_next_version(world_a: TenantWorld) -> None:
    version = held(world_a)
    change = proposal_of(version)
    edited = {**change.payload, "text": "Refunds are paid within 7 days."}
    change = proposal_edit(
        proposal_id=change.pk,
        agent=world_a.agent,
        payload=edited,
        expected_version=1,
        actor=Actor.human(world_a.owner.pk),
    )
    # The version it decides cannot be swapped or dropped by an edit.
    for swapped in ({**edited, "version_id": version.pk + 1}, {k: v for k, v in edited.items() if k != "version_id"}):
        with pytest.raises(ProposalError) as refused:
            proposal_edit(
                proposal_id=change.pk, agent=world_a.agent, payload=swapped, expected_version=2, actor=PLATFORM
            )
        assert refused.value.code == "invalid_payload"
    assert decide(world_a, change).status_code == 200
    version.refresh_from_db()
    assert version.status == "rejected"
    served = KnowledgeEntry.objects.get(pk=version.entry_id).current_version
    assert served is not None and (served.number, served.body, served.status) == (
        2,
        "Refunds are paid within 7 days.",
        "approved",
    )
    assert ChangeProposal.objects.count() == 1  # the applied edit files no proposal of its own


def stale_decide(world: TenantWorld, change: ChangeProposal) -> None:
    """Deciding answers 409 stale_base and changes nothing: the token stays unused, the
    proposal pending at its version; the one event written is the refusal."""
    token = proposal_authorize(agent=world.agent, proposal_id=change.pk, owner=world.owner, decision="approve")
    before_seq = max(e.seq for e in LedgerEvent.objects.filter(chain_id=world.tenant.pk))
    statuses = dict(EntryVersion.objects.values_list("pk", "status"))
    with pytest.raises(ProposalError) as refused:
        proposal_decide(
            agent=world.agent,
            proposal_id=change.pk,
            owner=world.owner,
            token=token.token,  # type: ignore[union-attr]
            decision="approve",
            expected_version=change.version,
        )
    assert (refused.value.code, refused.value.http_status) == ("stale_base", 409)
    [refusal] = LedgerEvent.objects.filter(seq__gt=before_seq, chain_id=world.tenant.pk)
    assert (refusal.event_type, refusal.payload["reason"]) == ("proposal.decide_refused", "stale_base")
    assert dict(EntryVersion.objects.values_list("pk", "status")) == statuses
    change.refresh_from_db()
    assert (change.status, change.version, change.authorization_id) == ("pending", 1, "")


def test_a_quarantined_version_is_stale_until_released(world_a: TenantWorld) -> None:
    version = held(world_a)
    change = proposal_of(version)
    assert knowledge_quarantine(agent=world_a.agent, actor=PLATFORM, source_ref=UPLOAD.ref) == 1
    stale_decide(world_a, change)
    # Over the API too, with the machine-readable code.
    owner = strict_client(world_a.owner)
    base = f"/api/agents/{world_a.agent.slug}/changes/{change.pk}"
    token = owner.post(f"{base}/authorize", {"decision": "approve"}, format="json").json()["token"]
    answer = owner.post(f"{base}/decide", {"token": token, "decision": "approve", "expected_version": 1}, format="json")
    assert (answer.status_code, answer.json()["error"]) == (409, "stale_base")
    # Released, it waits again under the same proposal (no second one) and can be approved.
    knowledge_unquarantine(agent=world_a.agent, actor=PLATFORM, source_ref=UPLOAD.ref)
    assert ChangeProposal.objects.filter(status="pending").count() == 1
    assert decide(world_a, change).status_code == 200
    version.refresh_from_db()
    assert version.status == "approved"


def test_a_released_version_whose_proposal_was_rejected_gets_a_new_one(world_a: TenantWorld) -> None:
    version = held(world_a)
    knowledge_quarantine(agent=world_a.agent, actor=PLATFORM, source_ref=UPLOAD.ref)
    assert decide(world_a, proposal_of(version), "reject").status_code == 200
    version.refresh_from_db()
    assert version.status == "quarantined"  # out of service: the rejection left it as it was
    knowledge_unquarantine(agent=world_a.agent, actor=PLATFORM, source_ref=UPLOAD.ref)
    version.refresh_from_db()
    assert version.status == "pending"
    fresh = ChangeProposal.objects.get(status="pending")
    assert fresh.payload["version_id"] == version.pk


def test_a_superseded_version_is_stale(world_a: TenantWorld) -> None:
    first = held(world_a)
    change = proposal_of(first)
    second = held(world_a, body="Refunds are paid within 10 days.", entry=first.entry)
    stale_decide(world_a, change)
    assert decide(world_a, proposal_of(second)).status_code == 200
    first.refresh_from_db()
    assert first.status == "pending"  # never approved; its proposal stays undecidable


def test_a_restore_makes_the_pending_version_stale(world_a: TenantWorld) -> None:
    approved = entry_propose(
        agent=world_a.agent, title="Refunds", body="Refunds within 30 days.", source=UPLOAD, actor=PLATFORM
    )
    pending = held(world_a, body="Refunds within 3 days.", entry=approved.entry)
    entry_restore(entry=approved.entry, number=1, actor=PLATFORM)
    stale_decide(world_a, proposal_of(pending))


def test_a_proposal_and_its_version_are_written_together(world_a: TenantWorld) -> None:
    """A proposal that cannot be filed rolls the version back: none waits without one."""
    session = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    other = session.pk.__class__(int=session.pk.int ^ 1)  # a conversation that does not exist
    with pytest.raises(ProposalError), transaction.atomic(), from_owner_chat(other):
        held(world_a)
    assert not EntryVersion.objects.exists() and not ChangeProposal.objects.exists()


def test_payload_limits_are_the_knowledge_limits() -> None:
    for model in (approval_schemas.KnowledgeDraft, approval_schemas.Lesson):
        fields = model.model_json_schema()["properties"]
        assert fields["title"]["maxLength"] == knowledge_services.MAX_TITLE
        assert fields["text"]["maxLength"] == knowledge_services.MAX_BODY


def test_the_knowledge_pages_send_the_owner_to_the_inbox(client: Any, world_a: TenantWorld) -> None:
    held(world_a)
    session = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    knowledge_miss_record(agent=world_a.agent, session_id=session.pk, query="vat invoices")
    client.force_login(world_a.owner)
    inbox = f'href="/owner/{world_a.agent.slug}/inbox"'
    page = client.get(f"/owner/{world_a.agent.slug}/knowledge", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    pending = page[page.index('id="pending-h"') : page.index('id="entries-h"')]
    assert inbox in pending and "Decide in your inbox" in pending and "read-only" not in pending
    zh = client.get(f"/owner/{world_a.agent.slug}/knowledge", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "在您的待办中决定" in zh and inbox in zh
    # Writing an entry the L1 rule holds (it is regulated) says so, with the way to the inbox.
    answered = client.post(
        f"/owner/{world_a.agent.slug}/knowledge/new",
        {"topic": topic_key("vat invoices"), "title": "VAT", "body": "Invoices show VAT.", "questions": ""},
        HTTP_ACCEPT_LANGUAGE="en",
        follow=True,
    ).content.decode()
    assert "waits for your approval" in answered
    flash = answered[answered.index('class="flash"') :]
    assert "Open your inbox" in flash[: flash.index("</ul>")] and inbox in flash[: flash.index("</ul>")]
    made = EntryVersion.objects.get(title="VAT")
    assert made.status == "pending" and proposal_of(made).origin == "owner_direct"
