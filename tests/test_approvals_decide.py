"""Deciding a change proposal over the API (issue 12): authorize (a one-time token for L1/L2, an
e-mailed code for L3), verify the code, decide with the token and a compare-and-swap on
`version`; an approved L1 proposal is applied through the knowledge services.  CSRF checks are on
in every call here."""

from __future__ import annotations

import json
import re
import threading
from typing import Any

import pytest
from django.db import connection
from django.middleware.csrf import _get_new_csrf_string
from rest_framework.test import APIClient

from approvals.authority import token_issue
from approvals.contract import live_content, live_terms
from approvals.models import ChangeProposal
from approvals.services import proposal_authorize, proposal_create, proposal_decide
from conftest import TenantWorld, build_tenant
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.base import ModelReply, ToolCall
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.services import session_open
from facade.errors import ApplicationError
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from knowledge.models import EntryVersion, KnowledgeEntry
from knowledge.schemas import SourceIn
from knowledge.selectors import knowledge_search
from knowledge.services import entry_propose
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify

PRICING = {"currency": "EUR", "items": [{"name": "Repair", "amount": "35.00"}]}
DRAFT = {"title": "Opening hours", "text": "The workshop opens on Saturdays from nine to noon."}
CODE = re.compile(r"Your code: (\d{6})")
PLATFORM = Actor.platform("tests")


def strict_client(user: Any) -> APIClient:
    """A client that passes Django's CSRF check only by sending the cookie's token back."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    secret = _get_new_csrf_string()
    client.cookies["csrftoken"] = secret
    client.credentials(HTTP_X_CSRFTOKEN=secret)
    return client


def no_csrf_client(user: Any) -> APIClient:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def url(world: TenantWorld, change: str, tail: str) -> str:
    return f"/api/agents/{world.agent.slug}/changes/{change}{tail}"


def post(client: APIClient, world: TenantWorld, change: str, tail: str, body: dict[str, Any]) -> Any:
    return client.post(url(world, change, tail), body, format="json")


def proposal(world: TenantWorld, kind: str = "knowledge_draft", payload: Any = None) -> ChangeProposal:
    return proposal_create(
        agent=world.agent,
        kind=kind,
        payload=payload if payload is not None else DRAFT,
        summary="a change",
        origin="review_report",
        actor=PLATFORM,
    )


def types(chain: int) -> list[str]:
    found = [e.event_type for e in LedgerEvent.objects.filter(chain_id=chain).order_by("seq")]
    return [t for t in found if t.startswith("proposal.")]


@pytest.mark.django_db
def test_the_whole_l1_flow_with_csrf_applies_the_draft_and_customers_find_it(world_a: TenantWorld) -> None:
    change = proposal(world_a)
    assert change.level == 1
    # Without the CSRF token every mutating call is refused and nothing moves.
    bare = no_csrf_client(world_a.owner)
    assert post(bare, world_a, change.pk, "/authorize", {"decision": "approve"}).status_code == 403
    owner = strict_client(world_a.owner)
    granted = post(owner, world_a, change.pk, "/authorize", {"decision": "approve"})
    assert granted.status_code == 200, granted.content
    assert set(granted.json()) == {"token", "expires_at"}
    token = granted.json()["token"]
    body = {"token": token, "decision": "approve", "expected_version": 1}
    assert post(bare, world_a, change.pk, "/decide", body).status_code == 403
    assert not knowledge_search(agent=world_a.agent, query="Saturdays workshop", audience=Audience.CUSTOMER)

    decided = post(owner, world_a, change.pk, "/decide", body)
    assert decided.status_code == 200, decided.content
    answer = decided.json()
    assert answer["status"] == "applied" and answer["version"] == 2 and answer["authorization_id"].startswith("auth_")
    change.refresh_from_db()
    assert (change.status, change.decided_by, change.assurance, change.authorization_id) == (
        "applied",
        world_a.owner,
        "click",
        answer["authorization_id"],
    )
    assert change.decided_at is not None
    [version] = EntryVersion.objects.filter(agent=world_a.agent)
    assert (version.status, version.title, version.source_ref) == ("approved", "Opening hours", change.pk)
    found = knowledge_search(agent=world_a.agent, query="Saturdays workshop", audience=Audience.CUSTOMER)
    assert [hit.title for hit in found] == ["Opening hours"]

    assert types(world_a.tenant.pk) == ["proposal.created", "proposal.decided", "proposal.applied"]
    decided_event = LedgerEvent.objects.of_type("proposal.decided").get()
    assert decided_event.payload["decision"] == "approve" and decided_event.payload["assurance"] == "click"
    assert decided_event.payload["authorization_id"] == answer["authorization_id"]
    applied = LedgerEvent.objects.of_type("proposal.applied").get()
    assert applied.payload["knowledge_version"] == version.pk
    assert token not in json.dumps([e.payload for e in LedgerEvent.objects.all()])
    assert ledger_verify(chain_id=world_a.tenant.pk).ok

    # The token is spent: a replay is refused, and the proposal is no longer pending.
    replay = post(owner, world_a, change.pk, "/decide", {**body, "expected_version": 2})
    assert (replay.status_code, replay.json()["error"]) == (409, "not_pending")
    again = post(owner, world_a, change.pk, "/authorize", {"decision": "approve"})
    assert (again.status_code, again.json()["error"]) == (409, "not_pending")


@pytest.mark.django_db
def test_a_draft_of_an_existing_entry_and_a_lesson_become_approved_versions(world_a: TenantWorld) -> None:
    old = entry_propose(
        agent=world_a.agent,
        title="Opening hours",
        body="The workshop opens on weekdays.",
        source=SourceIn(type="upload", ref="hours.md", version="1"),
        actor=PLATFORM,
    )
    assert old.status == "approved"
    redraft = proposal(world_a, payload={**DRAFT, "entry_id": old.entry_id})
    lesson = proposal(world_a, "lesson", {"kind": "taboo", "title": "No slang", "text": "Never call customers mate."})
    owner = strict_client(world_a.owner)
    for change in (redraft, lesson):
        token = post(owner, world_a, change.pk, "/authorize", {"decision": "approve"}).json()["token"]
        decided = post(
            owner, world_a, change.pk, "/decide", {"token": token, "decision": "approve", "expected_version": 1}
        )
        assert decided.json()["status"] == "applied", decided.content
    entry = KnowledgeEntry.objects.get(pk=old.entry_id)
    assert entry.current_version is not None and entry.current_version.number == 2
    assert entry.current_version.body == DRAFT["text"] and entry.current_version.status == "approved"
    taboo = KnowledgeEntry.objects.exclude(pk=old.entry_id).get()
    assert taboo.kind == "taboo" and taboo.current_version is not None


@pytest.mark.django_db
def test_a_version_the_l1_rule_holds_pending_is_approved_by_the_decision(world_a: TenantWorld) -> None:
    entry_propose(
        agent=world_a.agent,
        title="Opening hours",
        body="The workshop opens on weekdays.",
        source=SourceIn(type="upload", ref="hours.md", version="1"),
        actor=PLATFORM,
    )
    # A second entry on the same subject that contradicts the approved one waits for the owner
    # under the L1 rule; the owner's decision approves it through entry_approve.
    change = proposal(world_a)
    token = proposal_authorize(agent=world_a.agent, proposal_id=change.pk, owner=world_a.owner, decision="approve")
    decided = proposal_decide(
        agent=world_a.agent,
        proposal_id=change.pk,
        owner=world_a.owner,
        token=token.token,  # type: ignore[union-attr]
        decision="approve",
        expected_version=1,
    )
    assert decided.status == "applied"
    made = EntryVersion.objects.get(source_ref=change.pk)
    assert made.status == "approved"
    assert made.decision_reasons != ["l1_auto_approved"], made.decision_reasons  # the L1 rule held it
    approved = [e.document["entity_id"] for e in LedgerEvent.objects.of_type("knowledge.version_approved")]
    assert approved == [str(made.entry_id)]  # the entry is the entity of knowledge events


@pytest.mark.django_db
def test_reject_and_tokens_bound_to_another_change_or_decision(world_a: TenantWorld) -> None:
    first, second = proposal(world_a), proposal(world_a, payload={**DRAFT, "title": "Other"})
    owner = strict_client(world_a.owner)
    approve_first = post(owner, world_a, first.pk, "/authorize", {"decision": "approve"}).json()["token"]
    # A token for another change, or for the other decision, is refused alike and decides nothing.
    swapped = post(
        owner, world_a, second.pk, "/decide", {"token": approve_first, "decision": "approve", "expected_version": 1}
    )
    assert (swapped.status_code, swapped.json()["error"]) == (403, "invalid_token")
    flipped = post(
        owner, world_a, first.pk, "/decide", {"token": approve_first, "decision": "reject", "expected_version": 1}
    )
    assert (flipped.status_code, flipped.json()["error"]) == (403, "invalid_token")
    invented = post(
        owner, world_a, first.pk, "/decide", {"token": "A" * 43, "decision": "approve", "expected_version": 1}
    )
    assert (invented.status_code, invented.json()["error"]) == (403, "invalid_token")
    assert set(ChangeProposal.objects.values_list("status", flat=True)) == {"pending"}

    reject = post(owner, world_a, first.pk, "/authorize", {"decision": "reject"}).json()["token"]
    rejected = post(owner, world_a, first.pk, "/decide", {"token": reject, "decision": "reject", "expected_version": 1})
    assert rejected.json()["status"] == "rejected" and rejected.json()["version"] == 2
    assert LedgerEvent.objects.of_type("proposal.decided").get().payload["decision"] == "reject"
    assert not EntryVersion.objects.exists() and not LedgerEvent.objects.of_type("proposal.applied").exists()
    # The approve token, still unused, cannot decide a proposal that is no longer pending.
    late = post(
        owner, world_a, first.pk, "/decide", {"token": approve_first, "decision": "approve", "expected_version": 2}
    )
    assert (late.status_code, late.json()["error"]) == (409, "not_pending")
    bad = post(owner, world_a, second.pk, "/authorize", {"decision": "maybe"})
    assert (bad.status_code, bad.json()["error"]) == (400, "invalid_decision")


@pytest.mark.django_db
def test_a_replayed_token_is_refused(world_a: TenantWorld) -> None:
    change = proposal(world_a, "pricing", PRICING)
    assert change.level == 3
    issued = token_issue(agent=world_a.agent, change_id=change.pk, version=1, owner=world_a.owner, decision="reject")
    owner = strict_client(world_a.owner)
    body = {"token": issued.token, "decision": "reject", "expected_version": 1}
    # L3 with a click-level token: refused, nothing decided, and the token is spent.
    first = post(owner, world_a, change.pk, "/decide", body)
    assert (first.status_code, first.json()["error"]) == (403, "assurance_required")
    change.refresh_from_db()
    assert (change.status, change.version, change.authorization_id) == ("pending", 1, "")
    replay = post(owner, world_a, change.pk, "/decide", body)
    assert (replay.status_code, replay.json()["error"]) == (403, "invalid_token")
    assert [e.payload["reason"] for e in LedgerEvent.objects.of_type("authority.token_refused")] == ["used"]

    l1 = proposal(world_a)
    token = post(owner, world_a, l1.pk, "/authorize", {"decision": "reject"}).json()["token"]
    l1_body = {"token": token, "decision": "reject", "expected_version": 1}
    assert post(owner, world_a, l1.pk, "/decide", l1_body).status_code == 200
    l1.refresh_from_db()
    l1.status, l1.version = "pending", 1  # as if it were pending again: the token still cannot be replayed
    l1.save(update_fields=["status", "version"])
    again = post(owner, world_a, l1.pk, "/decide", l1_body)
    assert (again.status_code, again.json()["error"]) == (403, "invalid_token")


@pytest.mark.django_db
def test_an_edit_after_authorize_makes_the_token_useless(world_a: TenantWorld) -> None:
    change = proposal(world_a)
    owner = strict_client(world_a.owner)
    token = post(owner, world_a, change.pk, "/authorize", {"decision": "approve"}).json()["token"]
    edited = owner.patch(
        url(world_a, change.pk, ""), {"payload": {**DRAFT, "text": "Closed."}, "expected_version": 1}, format="json"
    )
    assert edited.json()["version"] == 2
    # The old version is gone: 409; the current version with the old token: 403.
    stale = post(owner, world_a, change.pk, "/decide", {"token": token, "decision": "approve", "expected_version": 1})
    assert (stale.status_code, stale.json()["error"]) == (409, "version_mismatch")
    old = post(owner, world_a, change.pk, "/decide", {"token": token, "decision": "approve", "expected_version": 2})
    assert (old.status_code, old.json()["error"]) == (403, "invalid_token")
    assert [e.payload["reason"] for e in LedgerEvent.objects.of_type("authority.token_refused")] == ["version"]
    change.refresh_from_db()
    assert change.status == "pending" and not EntryVersion.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_decides_with_the_same_version_exactly_one_applies() -> None:
    assert connection.vendor == "postgresql"
    world = build_tenant("racer")
    change = proposal(world)
    tokens = [
        proposal_authorize(agent=world.agent, proposal_id=change.pk, owner=world.owner, decision="approve").token  # type: ignore[union-attr]
        for _ in range(2)
    ]
    barrier = threading.Barrier(2)
    outcomes: list[str] = []
    lock = threading.Lock()

    def attempt(token: str) -> None:
        from django.db import connection as own  # each thread has its own connection

        try:
            barrier.wait()
            try:
                done = proposal_decide(
                    agent=world.agent,
                    proposal_id=change.pk,
                    owner=world.owner,
                    token=token,
                    decision="approve",
                    expected_version=1,
                )
                outcome = done.status
            except ApplicationError as error:
                outcome = error.code
            with lock:
                outcomes.append(outcome)
        finally:
            own.close()

    threads = [threading.Thread(target=attempt, args=(token,)) for token in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["applied", "version_mismatch"]
    assert EntryVersion.objects.filter(agent=world.agent).count() == 1
    assert LedgerEvent.objects.of_type("proposal.applied").count() == 1
    assert LedgerEvent.objects.of_type("authority.token_consumed").count() == 1
    assert ChangeProposal.objects.get().version == 2
    assert ledger_verify(chain_id=world.tenant.pk).ok


@pytest.mark.django_db
def test_l3_over_a_real_smtp_server_code_verify_decide(world_a: TenantWorld, smtp: Any) -> None:
    change = proposal(world_a, "pricing", PRICING)
    owner = strict_client(world_a.owner)
    started = post(owner, world_a, change.pk, "/authorize", {"decision": "approve"})
    assert started.status_code == 200, started.content
    challenge = started.json()
    assert set(challenge) == {"challenge_id", "sent_to", "expires_at"} and challenge["sent_to"] == "o***@alpha.test"
    [(recipients, message)] = smtp.received
    assert recipients == ["owner@alpha.test"]
    found = CODE.search(message.get_payload(decode=True).decode())
    assert found is not None
    code = found.group(1)
    wrong = "000000" if code != "000000" else "111111"

    bad = post(
        owner, world_a, change.pk, "/authorize/verify", {"challenge_id": challenge["challenge_id"], "code": wrong}
    )
    assert (bad.status_code, bad.json()["error"], bad.json()["remaining_attempts"]) == (400, "wrong_code", 4)
    # Unknown and another change's challenges answer alike.
    unknown = post(owner, world_a, change.pk, "/authorize/verify", {"challenge_id": "otp_nothing", "code": code})
    other = proposal(world_a, "pricing", {**PRICING, "currency": "USD"})
    crossed = post(
        owner, world_a, other.pk, "/authorize/verify", {"challenge_id": challenge["challenge_id"], "code": code}
    )
    assert unknown.status_code == crossed.status_code == 403
    assert unknown.json() == crossed.json() and unknown.json()["error"] == "invalid_challenge"

    verified = post(
        owner, world_a, change.pk, "/authorize/verify", {"challenge_id": challenge["challenge_id"], "code": code}
    )
    assert verified.status_code == 200, verified.content
    assert verified.json()["assurance"] == "email_otp"
    decided = post(
        owner,
        world_a,
        change.pk,
        "/decide",
        {"token": verified.json()["token"], "decision": "approve", "expected_version": 1},
    )
    assert decided.status_code == 200, decided.content
    # Approved, then applied by the contract compiler: version 2 of the contract holds the prices.
    assert decided.json() | {"authorization_id": ""} == {
        "status": "applied",
        "version": 2,
        "authorization_id": "",
        "contract_version": 2,
        "failure_reasons": [],
    }
    change.refresh_from_db()
    assert (change.status, change.assurance, change.decided_by) == ("applied", "email_otp", world_a.owner)
    assert live_terms(world_a.agent).version == 2 and live_content(world_a.agent)["pricing"] == PRICING
    assert LedgerEvent.objects.of_type("proposal.decided").get().payload["assurance"] == "email_otp"
    published = LedgerEvent.objects.of_type("proposal.published").get()
    assert (published.payload["contract_version"], published.payload["target"]) == (2, "pricing")
    assert LedgerEvent.objects.of_type("contract.published").last().payload["caused_by"] == change.pk
    ledger_text = json.dumps([e.payload for e in LedgerEvent.objects.all()])
    assert code not in ledger_text and verified.json()["token"] not in ledger_text
    assert ledger_verify(chain_id=world_a.tenant.pk).ok


@pytest.mark.django_db
def test_l3_without_a_working_mail_fails_closed(world_a: TenantWorld, settings: Any) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 9  # nothing listens there
    change = proposal(world_a, "pricing", PRICING)
    answer = post(strict_client(world_a.owner), world_a, change.pk, "/authorize", {"decision": "approve"})
    assert (answer.status_code, answer.json()["error"]) == (503, "email_unavailable")


@pytest.mark.django_db
def test_anyone_but_the_agents_owner_gets_404_everywhere(world_a: TenantWorld, world_b: TenantWorld) -> None:
    change = proposal(world_a)
    token = proposal_authorize(agent=world_a.agent, proposal_id=change.pk, owner=world_a.owner, decision="approve")
    calls = [
        ("/authorize", {"decision": "approve"}),
        ("/authorize/verify", {"challenge_id": "otp_x", "code": "123456"}),
        ("/decide", {"token": token.token, "decision": "approve", "expected_version": 1}),  # type: ignore[union-attr]
    ]
    for user in (world_a.auditor, world_a.member, world_b.owner):
        client = strict_client(user)
        for tail, body in calls:
            answer = post(client, world_a, change.pk, tail, body)
            # An auditor changes nothing anywhere: refused before any view (audit/readonly.py),
            # alike for every tenant and every id, so the answer says nothing about this one.
            expected = (403, "read_only") if user == world_a.auditor else (404, "not_found")
            assert (answer.status_code, answer.json()["error"]) == expected, (user, tail)
    # Another tenant's owner, on their own agent, cannot reach this tenant's proposal either.
    own = strict_client(world_b.owner)
    for tail, body in calls:
        assert post(own, world_b, change.pk, tail, body).status_code == 404
    change.refresh_from_db()
    assert change.status == "pending"


@pytest.mark.django_db
def test_a_model_with_a_live_token_still_decides_nothing(world_a: TenantWorld) -> None:
    change = proposal(world_a)
    issued = proposal_authorize(agent=world_a.agent, proposal_id=change.pk, owner=world_a.owner, decision="approve")
    arguments = {"proposal_id": change.pk, "decision": "approve", "token": issued.token, "expected_version": 1}  # type: ignore[union-attr]
    provider = ScriptedProvider.of(
        ModelReply(
            tool_calls=[ToolCall(id="c-1", name="decide_change", arguments=json.dumps(arguments))],
            prompt_tokens=10,
            completion_tokens=5,
        ),
        ModelReply(text="Approved.", prompt_tokens=10, completion_tokens=5),
    )
    session = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    turn_handle(session=session, text="approve it", provider=provider)
    change.refresh_from_db()
    assert (change.status, change.version, change.authorization_id) == ("pending", 1, "")
    assert not LedgerEvent.objects.of_type("authority.token_consumed").exists()
    # The token is still the owner's to use over the API.
    decided = post(
        strict_client(world_a.owner),
        world_a,
        change.pk,
        "/decide",
        {"token": issued.token, "decision": "approve", "expected_version": 1},  # type: ignore[union-attr]
    )
    assert decided.json()["status"] == "applied"
