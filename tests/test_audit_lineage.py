"""Lineage in the auditor console (issue 14): "who changed this wording, when, and because of which
review?".  A scripted week through the real API and services — a daily review proposes a change,
the owner approves it, an L3 change is approved with the code e-mailed over a real SMTP server, the
contract compiler publishes, an L3 rollback undoes it — and the lineage returns exactly that
chain.  A sentence copied from a real customer reply finds the contract field it came from; a
version row changed behind the ledger's back is flagged; another tenant's reader gets 404; every
read is recorded."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from rest_framework.test import APIClient

from approvals.models import AgentContract, ChangeProposal
from facade.dialogue.models import DialogueSession
from facade.tenancy.schemas import Actor
from knowledge.models import EntryVersion
from knowledge.schemas import SourceIn
from knowledge.services import entry_propose, entry_restore
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify
from rsi.review_input import local_today
from rsi.review_models import ReviewReport
from tests.test_approvals_decide import strict_client
from tests.test_review import MARKER, customer_turn, gap_day

pytestmark = pytest.mark.django_db

CODE = re.compile(r"Your code: (\d{6})")
PRICING = {"currency": "EUR", "items": [{"name": "Repair", "amount": "35.00"}]}
WORDING = "Prices are confirmed by Alice in person, within one working day."


@pytest.fixture(autouse=True)
def _fresh_rate_windows() -> None:
    cache.clear()


def changes(world: Any) -> str:
    return f"/api/agents/{world.agent.slug}/changes"


def reader(user: Any) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def page(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def lineage(client: Any, world: Any, entity_type: str, entity_id: str, **extra: str) -> Any:
    params = {"tenant": world.tenant.slug, "entity_type": entity_type, "entity_id": entity_id, **extra}
    return client.get("/api/audit/lineage", params)


def click_approve(owner: Any, world: Any, change_id: str, version: int = 1) -> dict[str, Any]:
    base = f"{changes(world)}/{change_id}"
    granted = owner.post(f"{base}/authorize", {"decision": "approve"}, format="json")
    assert granted.status_code == 200 and "token" in granted.json(), granted.content
    body = {"token": granted.json()["token"], "decision": "approve", "expected_version": version}
    decided = owner.post(f"{base}/decide", body, format="json")
    assert decided.status_code == 200, decided.content
    return dict(decided.json())


def code_approve(owner: Any, world: Any, change_id: str, smtp: Any) -> dict[str, Any]:
    """An L3 approval: the code e-mailed over the real SMTP server, verified, then the decision."""
    base = f"{changes(world)}/{change_id}"
    challenge = owner.post(f"{base}/authorize", {"decision": "approve"}, format="json")
    assert challenge.status_code == 200 and "token" not in challenge.json(), challenge.content
    found = CODE.search(smtp.received[-1][1].get_payload(decode=True).decode())
    assert found is not None
    verified = owner.post(
        f"{base}/authorize/verify",
        {"challenge_id": challenge.json()["challenge_id"], "code": found.group(1)},
        format="json",
    )
    assert verified.status_code == 200 and verified.json()["assurance"] == "email_otp", verified.content
    body = {"token": verified.json()["token"], "decision": "approve", "expected_version": 1}
    decided = owner.post(f"{base}/decide", body, format="json")
    assert decided.status_code == 200, decided.content
    return dict(decided.json())


def expiring_day(world: Any) -> list[str]:
    """Five customer conversations today, three of which expired: the review's miss."""
    sessions = [customer_turn(world, f"{MARKER} question {n}") for n in range(5)]
    expired = [str(s.pk) for s in sessions[:3]]
    DialogueSession.objects.filter(pk__in=expired).update(status="expired")
    return expired


def test_the_contracts_lineage_is_the_chain_from_the_review_through_the_emailed_code_to_the_rollback(
    world_a: Any, smtp: Any
) -> None:
    expired = expiring_day(world_a)
    owner = strict_client(world_a.owner)
    day = str(local_today(world_a.tenant))
    ran = owner.post(f"/api/agents/{world_a.agent.slug}/reviews", {"date": day}, format="json")
    assert ran.status_code == 200, ran.content
    report = ReviewReport.objects.get(pk=ran.json()["id"])
    [miss] = report.misses
    reviewed = ChangeProposal.objects.get(pk=miss["change_id"])
    assert (reviewed.kind, reviewed.level, reviewed.origin) == ("clarification_order", 2, "review_report")

    # The owner approves the review's L2 change with a click: version 2.
    assert click_approve(owner, world_a, reviewed.pk)["contract_version"] == 2
    # An L3 change of the prices, approved with the e-mailed code: version 3.
    proposed = owner.post(changes(world_a), {"kind": "pricing", "payload": PRICING, "summary": "prices"}, format="json")
    assert proposed.status_code == 201, proposed.content
    pricing = ChangeProposal.objects.get(pk=proposed.json()["id"])
    assert pricing.level == 3
    assert code_approve(owner, world_a, pricing.pk, smtp)["contract_version"] == 3
    # Its rollback is L3 too: the e-mailed code again, version 4 (version 1's prices).
    undo = owner.post(f"{changes(world_a)}/{pricing.pk}/rollback", format="json")
    assert undo.status_code == 201, undo.content
    rollback = ChangeProposal.objects.get(pk=undo.json()["id"])
    assert code_approve(owner, world_a, rollback.pk, smtp)["contract_version"] == 4
    reviewed.refresh_from_db()
    pricing.refresh_from_db()
    rollback.refresh_from_db()
    assert pricing.status == "rolled_back" and len({reviewed.authorization_id, pricing.authorization_id}) == 2

    auditor = reader(world_a.auditor)
    answer = lineage(auditor, world_a, "contract", world_a.agent.slug)
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert (body["entity_type"], body["agent"], body["mismatches"]) == ("contract", world_a.agent.slug, [])
    versions = body["versions"]
    assert [v["version"] for v in versions] == [1, 2, 3, 4]
    assert all(v["hash_ok"] for v in versions)
    recorded = {e.payload["version"]: e.payload["hash"] for e in LedgerEvent.objects.of_type("contract.published")}
    assert [v["recorded_hash"] for v in versions] == [recorded[n] for n in (1, 2, 3, 4)]
    first, by_review, by_code, undone = versions

    assert first["proposal"] is None and first["decision"] is None and first["started"]["type"] == "platform"

    # Version 2: the review's proposal, the owner's click, and the review's claim with its pointers.
    assert by_review["changed"] == ["clarification_order"] and by_review["caused_by"] == reviewed.pk
    assert any(line.startswith("+") and "contact" in line for line in by_review["diff"])
    proposal = by_review["proposal"]
    assert (proposal["id"], proposal["kind"], proposal["level"], proposal["origin"]) == (
        reviewed.pk,
        "clarification_order",
        2,
        "review_report",
    )
    assert proposal["evidence"] == reviewed.evidence and proposal["evidence"]
    decision = by_review["decision"]
    assert (decision["assurance"], decision["authorization_id"], decision["decision"]) == (
        "click",
        reviewed.authorization_id,
        "approve",
    )
    assert decision["actor"]["id"] == f"user:{world_a.owner.pk}"
    started = by_review["started"]
    assert (started["type"], started["report"], started["day"]) == ("review_report", str(report.pk), day)
    assert started["event"]["event_type"] == "review.started"
    claim = started["claim"]
    assert claim["kind"] == "miss" and claim["figure"] == {"key": "sessions.expired", "value": 3}
    assert {"type": "aggregate", "key": "sessions.expired", "value": 3} in claim["evidence"]
    assert {p["id"] for p in claim["evidence"] if p["type"] == "session"} <= set(expired)
    assert any(p["type"] == "session" for p in claim["evidence"])

    # Version 3: the owner's own L3 change, approved with the e-mailed code.
    assert by_code["changed"] == ["pricing"] and by_code["proposal"]["id"] == pricing.pk
    assert (by_code["proposal"]["level"], by_code["proposal"]["origin"]) == (3, "owner_direct")
    assert (by_code["decision"]["assurance"], by_code["decision"]["authorization_id"]) == (
        "email_otp",
        pricing.authorization_id,
    )
    assert by_code["started"]["type"] == "owner_direct" and by_code["rollback"] is None
    assert any("35.00" in line for line in by_code["diff"] if line.startswith("+"))

    # Version 4: the rollback, itself approved with the e-mailed code.
    assert undone["proposal"]["id"] == rollback.pk and undone["proposal"]["rollback_of"] == pricing.pk
    assert undone["rollback"]["of_change"] == pricing.pk
    assert (undone["decision"]["assurance"], undone["decision"]["authorization_id"]) == (
        "email_otp",
        rollback.authorization_id,
    )
    assert (undone["started"]["type"], undone["started"]["of"]) == ("rollback", pricing.pk)
    assert any("35.00" in line for line in undone["diff"] if line.startswith("-"))
    assert undone["live"] and not by_code["live"]

    # The affected field alone: only the versions that changed it.
    focused = lineage(auditor, world_a, "contract", world_a.agent.slug, field="pricing").json()
    assert [v["version"] for v in focused["versions"]] == [1, 3, 4]
    assert [v["decision"]["assurance"] for v in focused["versions"][1:]] == ["email_otp", "email_otp"]
    order = lineage(auditor, world_a, "contract", world_a.agent.slug, field="clarification_order").json()
    assert [v["version"] for v in order["versions"]] == [1, 2]

    # The pricing change's own lineage: proposed, decided with the code, published, rolled back.
    steps = lineage(auditor, world_a, "change_proposal", pricing.pk).json()
    assert [s["step"] for s in steps["versions"]] == [
        "proposal.created",
        "proposal.decided",
        "proposal.published",
        "proposal.rolled_back",
    ]
    assert steps["versions"][1]["decision"]["assurance"] == "email_otp"
    assert steps["versions"][3]["rollback"] == {"by": rollback.pk, "contract_version": 4}
    assert steps["versions"][0]["hash_ok"] is True

    # The page shows the same chain, and the review page its claim's pointers.
    shown = page(world_a.auditor).get(
        f"/audit/{world_a.tenant.slug}/lineage",
        {"entity_type": "contract", "entity_id": world_a.agent.slug},
    )
    assert shown.status_code == 200
    html = shown.content.decode()
    for text in (reviewed.pk, pricing.pk, rollback.pk, pricing.authorization_id, str(report.pk)):
        assert text in html
    assert "e-mailed code" in html and MARKER not in html
    review = page(world_a.auditor).get(f"/audit/{world_a.tenant.slug}/reviews/{report.pk}")
    assert review.status_code == 200
    html = review.content.decode()
    assert any(f"/audit/{world_a.tenant.slug}/sessions/{s}" in html for s in expired)
    assert "sessions.expired" in html and "3 of 5 conversations expired" in html and reviewed.pk in html
    assert MARKER not in html
    assert ledger_verify(chain_id=world_a.tenant.pk).ok


def test_a_review_draft_the_owner_wrote_is_the_knowledge_entrys_lineage_with_its_restore(world_a: Any) -> None:
    gap_day(world_a)
    owner = strict_client(world_a.owner)
    day = str(local_today(world_a.tenant))
    report = ReviewReport.objects.get(
        pk=owner.post(f"/api/agents/{world_a.agent.slug}/reviews", {"date": day}, format="json").json()["id"]
    )
    [gap] = report.gaps
    draft = ChangeProposal.objects.get(pk=gap["change_id"])
    written = {"title": draft.payload["title"], "text": "Yes: gift wrapping costs nothing extra."}
    edited = owner.patch(f"{changes(world_a)}/{draft.pk}", {"payload": written, "expected_version": 1}, format="json")
    assert edited.status_code == 200, edited.content
    assert click_approve(owner, world_a, draft.pk, version=2)["status"] == "applied"
    draft.refresh_from_db()
    first = EntryVersion.objects.get(agent=world_a.agent, body=written["text"])
    # The owner then writes a second version and restores the first.
    owner_actor = Actor.human(world_a.owner.pk)
    entry_propose(
        agent=world_a.agent,
        title=written["title"],
        body="Gift wrapping costs two euros.",
        actor=owner_actor,
        source=SourceIn(type="owner_dialogue", ref="chat:1", version="1"),
        entry=first.entry,
    )
    entry_restore(entry=first.entry, number=1, actor=owner_actor)

    body = lineage(reader(world_a.auditor), world_a, "knowledge_entry", str(first.entry_id)).json()
    versions = body["versions"]
    assert [v["version"] for v in versions] == [1, 2, 3]
    assert all(v["hash_ok"] for v in versions) and body["mismatches"] == []
    one = versions[0]
    assert one["proposal"]["id"] == draft.pk and one["proposal"]["origin"] == "review_report"
    assert (one["decision"]["assurance"], one["decision"]["authorization_id"]) == ("click", draft.authorization_id)
    assert one["started"]["type"] == "review_report" and one["started"]["report"] == str(report.pk)
    assert one["started"]["claim"]["kind"] == "gap" and one["started"]["claim"]["evidence"]
    assert versions[1]["started"]["type"] == "owner_direct" and versions[1]["proposal"] is None
    assert any("two euros" in line for line in versions[1]["diff"] if line.startswith("+"))
    assert versions[2]["rollback"]["restored_from"] == 1
    assert any("nothing extra" in line for line in versions[2]["diff"] if line.startswith("+"))


def test_a_sentence_from_a_real_customer_reply_finds_the_boundary_wording_it_came_from(world_a: Any) -> None:
    owner = strict_client(world_a.owner)
    proposed = owner.post(
        changes(world_a),
        {"kind": "boundary_wording", "payload": {"language": "en", "text": WORDING}, "summary": "wording"},
        format="json",
    )
    assert proposed.status_code == 201, proposed.content
    click_approve(owner, world_a, proposed.json()["id"])

    customer = APIClient()
    opened = customer.post(f"/api/agents/{world_a.agent.slug}/sessions", {}, format="json")
    assert opened.status_code == 201, opened.content
    sid = opened.json()["id"]
    replied = customer.post(
        f"/api/sessions/{sid}/messages", {"text": f"{MARKER} what is the price of a wedding cake?"}, format="json"
    )
    assert replied.status_code == 201, replied.content
    reply = replied.json()["reply"]["text"]
    sentence = re.split(r"(?<=[.!?])\s+", reply.strip())[0]
    assert sentence and sentence in reply

    auditor = page(world_a.auditor)
    url = f"/audit/{world_a.tenant.slug}/lineage"
    found = auditor.get(url, {"q": f"  {sentence.upper()} "})
    assert found.status_code == 302
    assert found["Location"] == (f"{url}?entity_type=contract&entity_id={world_a.agent.slug}&field=boundary_wording"), (
        found["Location"]
    )
    opened_page = auditor.get(found["Location"])
    assert opened_page.status_code == 200 and proposed.json()["id"] in opened_page.content.decode()

    # Customer messages are never searched; the ledger keeps the query's fingerprint, not its words.
    missing = auditor.get(url, {"q": f"{MARKER} what is the price"})
    assert missing.status_code == 200 and "contains this sentence" in missing.content.decode()
    viewed = [e.payload for e in LedgerEvent.objects.of_type("audit.viewed").filter(chain_id=world_a.tenant.pk)]
    assert all("q" not in p["params"] for p in viewed) and any("q_sha256" in p["params"] for p in viewed)
    assert sentence.lower() not in str(viewed).lower() and MARKER not in str(viewed)

    # Knowledge is searched too: two places holding the sentence are listed, not opened.
    entry_propose(
        agent=world_a.agent,
        title="Prices",
        body=f"About prices: {WORDING}",
        actor=Actor.human(world_a.owner.pk),
        source=SourceIn(type="owner_dialogue", ref="chat:1", version="1"),
    )
    listed = auditor.get(url, {"q": WORDING})
    assert listed.status_code == 200
    html = listed.content.decode()
    assert "field=boundary_wording" in html and "entity_type=knowledge_entry" in html

    # Without parameters: the search box and what there is to trace.
    chooser = auditor.get(url).content.decode()
    assert 'name="q"' in chooser and "field=boundary_wording" in chooser and "entity_type=knowledge_entry" in chooser


def test_a_version_row_changed_behind_the_ledgers_back_is_flagged(world_a: Any) -> None:
    owner = strict_client(world_a.owner)
    proposed = owner.post(
        changes(world_a),
        {"kind": "boundary_wording", "payload": {"language": "en", "text": WORDING}, "summary": "wording"},
        format="json",
    )
    click_approve(owner, world_a, proposed.json()["id"])
    auditor = reader(world_a.auditor)
    assert lineage(auditor, world_a, "contract", world_a.agent.slug).json()["mismatches"] == []
    AgentContract.objects.filter(agent=world_a.agent, version=2).update(boundary_wording={"en": "We promise 5 euros."})
    body = lineage(auditor, world_a, "contract", world_a.agent.slug).json()
    assert body["mismatches"] == [2]
    assert [v["hash_ok"] for v in body["versions"]] == [True, False]
    html = page(world_a.auditor).get(
        f"/audit/{world_a.tenant.slug}/lineage",
        {"entity_type": "contract", "entity_id": world_a.agent.slug, "field": "boundary_wording"},
    )
    assert "does not match the ledger" in html.content.decode()

    version = entry_propose(
        agent=world_a.agent,
        title="Hours",
        body="Open on Saturdays.",
        actor=Actor.human(world_a.owner.pk),
        source=SourceIn(type="owner_dialogue", ref="chat:1", version="1"),
    )
    assert lineage(auditor, world_a, "knowledge_entry", str(version.entry_id)).json()["mismatches"] == []
    EntryVersion.objects.filter(pk=version.pk).update(body="Open every day.")
    assert lineage(auditor, world_a, "knowledge_entry", str(version.entry_id)).json()["mismatches"] == [1]


def test_other_tenants_unknown_entities_and_types(world_a: Any, world_b: Any) -> None:
    outsider = reader(world_b.auditor)
    assert lineage(outsider, world_a, "contract", world_a.agent.slug).status_code == 404
    assert page(world_b.auditor).get(f"/audit/{world_a.tenant.slug}/lineage").status_code == 404
    auditor = reader(world_a.auditor)
    # world_b's agent is not in world_a's ledger.
    missing = lineage(auditor, world_a, "contract", world_b.agent.slug)
    assert (missing.status_code, missing.json()["error"]) == (404, "not_found")
    assert lineage(auditor, world_a, "knowledge_entry", "999999").status_code == 404
    assert lineage(auditor, world_a, "change_proposal", "chg_nothing").status_code == 404
    unknown = lineage(auditor, world_a, "session", "x")
    assert (unknown.status_code, unknown.json()["error"]) == (400, "unknown_entity_type")
    bad_field = lineage(auditor, world_a, "contract", world_a.agent.slug, field="secrets")
    assert (bad_field.status_code, bad_field.json()["error"]) == (400, "unknown_field")
    assert reader(world_a.member).get("/api/audit/lineage", {"tenant": world_a.tenant.slug}).status_code == 404
    assert APIClient().get("/api/audit/lineage").status_code in (401, 403)
    shown = page(world_a.auditor).get(
        f"/audit/{world_a.tenant.slug}/lineage", {"entity_type": "contract", "entity_id": world_b.agent.slug}
    )
    assert shown.status_code == 404
    assert page(world_a.auditor).get(f"/audit/{world_a.tenant.slug}/lineage", {"entity_type": "x"}).status_code == 400
    gap_day(world_b)
    from rsi.review import review_run

    other = review_run(agent_id=world_b.agent.pk, day=local_today(world_b.tenant))
    assert page(world_a.auditor).get(f"/audit/{world_a.tenant.slug}/reviews/{other.pk}").status_code == 404
    assert page(world_b.auditor).get(f"/audit/{world_b.tenant.slug}/reviews/{other.pk}").status_code == 200


def test_every_read_is_recorded(world_a: Any) -> None:
    gap_day(world_a)
    from rsi.review import review_run

    report = review_run(agent_id=world_a.agent.pk, day=local_today(world_a.tenant))
    lineage(reader(world_a.auditor), world_a, "contract", world_a.agent.slug)
    page(world_a.auditor).get(
        f"/audit/{world_a.tenant.slug}/lineage", {"entity_type": "contract", "entity_id": world_a.agent.slug}
    )
    page(world_a.auditor).get(f"/audit/{world_a.tenant.slug}/reviews/{report.pk}")
    viewed = list(LedgerEvent.objects.of_type("audit.viewed").filter(chain_id=world_a.tenant.pk).order_by("seq"))
    assert [e.payload["view"] for e in viewed] == ["api.lineage", "lineage", "review"]
    assert all(e.actor_id == f"user:{world_a.auditor.pk}" for e in viewed)
    assert viewed[0].payload["params"]["entity_id"] == world_a.agent.slug
    # A refused read records nothing.
    lineage(reader(world_a.auditor), world_a, "session", "x")
    assert LedgerEvent.objects.of_type("audit.viewed").filter(chain_id=world_a.tenant.pk).count() == 3


def test_a_rollback_by_the_contract_service_is_a_version_with_its_event(world_a: Any) -> None:
    from approvals.contract import contract_compile, contract_rollback

    operator = Actor.platform("operator")
    contract_compile(agent=world_a.agent, changes={"boundary_wording": {"en": WORDING}}, actor=operator)
    contract_rollback(agent=world_a.agent, to_version=1, actor=operator)
    body = lineage(reader(world_a.auditor), world_a, "contract", world_a.agent.slug, field="boundary_wording").json()
    assert [v["version"] for v in body["versions"]] == [1, 2, 3]
    back = body["versions"][2]
    assert back["rollback"]["to_version"] == 1 and back["rollback"]["event"]["event_type"] == "contract.rolled_back"
    assert back["started"] == {"type": "platform", "actor": "operator", "cause": "rollback:1", "event": None}
    assert any(WORDING in line for line in back["diff"] if line.startswith("-")) and back["hash_ok"]


def test_knowledge_the_platform_seeded_reads_as_its_source(world_a: Any) -> None:
    """The demo's knowledge is written by the platform from an owner-dialogue source, with no
    proposal: its lineage page says where it came from (it once answered 500)."""
    source = SourceIn(type="owner_dialogue", ref="seed:demo", version="1")
    version = entry_propose(
        agent=world_a.agent, title="Opening hours", body="Nine to six.", source=source, actor=Actor.platform("seed")
    )
    answer = page(world_a.auditor).get(
        f"/audit/{world_a.tenant.slug}/lineage", {"entity_type": "knowledge_entry", "entity_id": version.entry_id}
    )
    assert answer.status_code == 200
    html = answer.content.decode()
    assert "material of source type owner_dialogue" in html and "<code>seed</code>" in html
