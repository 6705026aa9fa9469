"""Change proposals over the API (issue 12, first increment): propose, list, read, edit with
compare-and-swap; the platform assigns level and who decides; evidence must resolve; owners only;
CSRF on every mutating call; the payload shapes are in the OpenAPI schema."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
import yaml
from django.test import Client
from django.utils import timezone

from approvals.contract import contract_compile
from approvals.models import ChangeProposal
from approvals.services import proposals_expire
from facade.dialogue.services import session_open
from facade.tenancy.models import Customer
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from knowledge.schemas import SourceIn
from knowledge.services import entry_propose
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify

pytestmark = pytest.mark.django_db

PRICING = {"currency": "EUR", "items": [{"name": "Repair", "amount": "35.00"}]}
BOUNDARY = {"language": "en", "text": "Prices are confirmed by a person."}


def url(agent: Any, tail: str = "") -> str:
    return f"/api/agents/{agent.slug}/changes{tail}"


def propose(api: Any, agent: Any, kind: str, payload: Any, summary: str = "a change", **extra: Any) -> Any:
    return api.post(url(agent), {"kind": kind, "payload": payload, "summary": summary, **extra}, format="json")


def test_an_owner_proposes_and_the_platform_assigns_level_and_who_decides(api: Any, world_a: Any) -> None:
    api.force_login(world_a.owner)
    response = propose(api, world_a.agent, "pricing", PRICING, "Repair costs 35 euros")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["id"].startswith("chg_") and len(body["id"]) > 12
    assert (body["kind"], body["level"], body["status"], body["version"]) == ("pricing", 3, "pending", 1)
    assert (body["requires"], body["origin"], body["summary"]) == (
        "owner_approval",
        "owner_direct",
        "Repair costs 35 euros",
    )
    # the diff is the live contract's value it replaces (no prices yet) and the one it sets
    assert body["payload"] == PRICING and body["diff"] == {"before": {"currency": "EUR", "items": []}, "after": PRICING}
    assert body["target"] == {"field": "pricing", "path": []} and body["base_contract_version"] == 1
    assert len(body["base"]) == 64 and body["created_at"]
    expires = timezone.datetime.fromisoformat(body["expires_at"]) - timezone.datetime.fromisoformat(body["created_at"])
    assert timedelta(days=13, hours=23) < expires <= timedelta(days=14)
    [created] = LedgerEvent.objects.of_type("proposal.created")
    assert created.entity_id == body["id"] and created.payload["level"] == 3
    assert "Repair" not in json.dumps(created.payload)  # the ledger keeps the fingerprint, the row the text
    assert ledger_verify(chain_id=world_a.tenant.pk).ok

    wording = propose(api, world_a.agent, "wording", {"language": "en", "situation": "greeting", "text": "Hi!"}).json()
    assert (wording["level"], wording["requires"]) == (2, "owner_direct")
    flagged = {"language": "en", "situation": "greeting", "text": "Every repair costs 20 euros, guaranteed."}
    assert propose(api, world_a.agent, "wording", flagged).json()["requires"] == "owner_approval"  # the guard flags it
    boundary = propose(api, world_a.agent, "boundary_wording", BOUNDARY).json()
    assert (boundary["level"], boundary["requires"]) == (2, "owner_approval")
    assert boundary["diff"]["before"] is None


def test_what_the_caller_claims_about_level_or_requires_is_refused(api: Any, world_a: Any) -> None:
    api.force_login(world_a.owner)
    response = propose(api, world_a.agent, "pricing", {**PRICING, "requires": "auto"})
    assert (response.status_code, response.json()["error"]) == (400, "invalid_payload")
    assert propose(api, world_a.agent, "mission", {"text": "x"}).json()["error"] == "unknown_kind"
    bad = propose(api, world_a.agent, "pricing", {"currency": "EUR", "items": [{"name": "a", "amount": "-1"}]})
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_payload"
    assert not ChangeProposal.objects.exists()


def test_evidence_must_resolve_to_this_agent(api: Any, world_a: Any, world_b: Any) -> None:
    api.force_login(world_a.owner)
    mine = session_open(
        agent=world_a.agent, audience=Audience.CUSTOMER, customer=Customer.objects.create(tenant=world_a.tenant)
    )
    theirs = session_open(
        agent=world_b.agent, audience=Audience.CUSTOMER, customer=Customer.objects.create(tenant=world_b.tenant)
    )
    version = entry_propose(
        agent=world_a.agent,
        title="Hours",
        body="9 to 18",
        actor=Actor.human(world_a.owner.pk),
        source=SourceIn(type="owner_dialogue", ref="chat:1", version="1"),
    )
    evidence = [{"type": "session", "id": str(mine.pk)}, {"type": "knowledge_version", "id": version.pk}]
    ok = propose(api, world_a.agent, "lesson", {"kind": "taboo", "title": "t", "text": "x"}, evidence=evidence)
    assert ok.status_code == 201 and ok.json()["evidence"] == evidence
    for wrong in ([{"type": "session", "id": str(theirs.pk)}], [{"type": "knowledge_version", "id": 10**9}]):
        refused = propose(api, world_a.agent, "lesson", {"kind": "taboo", "title": "t", "text": "x"}, evidence=wrong)
        assert (refused.status_code, refused.json()["error"]) == (400, "unresolved_evidence")
    odd = propose(
        api, world_a.agent, "lesson", {"kind": "taboo", "title": "t", "text": "x"}, evidence=[{"type": "url", "id": 1}]
    )
    assert odd.json()["error"] == "invalid_evidence"


def test_a_knowledge_draft_records_the_entry_version_it_was_made_against(api: Any, world_a: Any) -> None:
    api.force_login(world_a.owner)
    version = entry_propose(
        agent=world_a.agent,
        title="Hours",
        body="9 to 18",
        actor=Actor.human(world_a.owner.pk),
        source=SourceIn(type="owner_dialogue", ref="chat:1", version="1"),
    )
    draft = propose(
        api, world_a.agent, "knowledge_draft", {"entry_id": version.entry_id, "title": "Hours", "text": "9 to 19"}
    )
    assert (draft.json()["level"], draft.json()["base"]) == (1, str(version.number))
    assert propose(api, world_a.agent, "knowledge_draft", {"title": "New", "text": "x"}).json()["base"] == "new"
    missing = propose(api, world_a.agent, "knowledge_draft", {"entry_id": 10**9, "title": "x", "text": "y"})
    assert missing.json()["error"] == "unknown_entry"
    contract_compile(agent=world_a.agent, changes={"clarification_order": ["need", "when"]}, actor=Actor.platform("t"))
    order = propose(api, world_a.agent, "clarification_order", {"fields": ["when", "need"]}).json()
    assert order["diff"]["before"] == ["need", "when"] and len(order["base"]) == 64


def test_list_read_and_edit_with_compare_and_swap(api: Any, world_a: Any) -> None:
    api.force_login(world_a.owner)
    first = propose(api, world_a.agent, "pricing", PRICING).json()
    second = propose(api, world_a.agent, "boundary_wording", BOUNDARY).json()
    listed = api.get(url(world_a.agent), {"status": "pending"}).json()
    assert [p["id"] for p in listed] == [second["id"], first["id"]]
    assert api.get(url(world_a.agent), {"status": "applied"}).json() == []
    assert api.get(url(world_a.agent), {"status": "whatever"}).status_code == 400
    assert api.get(url(world_a.agent, f"/{first['id']}")).json()["payload"] == PRICING

    cheaper = {"currency": "EUR", "items": [{"name": "Repair", "amount": "30.00"}]}
    edited = api.patch(
        url(world_a.agent, f"/{first['id']}"), {"payload": cheaper, "expected_version": 1}, format="json"
    )
    assert edited.status_code == 200, edited.content
    assert (edited.json()["version"], edited.json()["payload"]) == (2, cheaper)
    stale = api.patch(url(world_a.agent, f"/{first['id']}"), {"payload": PRICING, "expected_version": 1}, format="json")
    assert (stale.status_code, stale.json()["error"]) == (409, "version_mismatch")
    bad = api.patch(
        url(world_a.agent, f"/{first['id']}"), {"payload": {"currency": "EUR"}, "expected_version": 2}, format="json"
    )
    assert (bad.status_code, bad.json()["error"]) == (400, "invalid_payload")
    assert api.patch(url(world_a.agent, f"/{first['id']}"), {"payload": cheaper}, format="json").status_code == 400
    assert ChangeProposal.objects.get(pk=first["id"]).version == 2
    [event] = LedgerEvent.objects.of_type("proposal.edited")
    assert (event.entity_id, event.entity_version) == (first["id"], 2)

    ChangeProposal.objects.filter(pk=first["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert proposals_expire() == 1 and proposals_expire() == 0
    assert api.get(url(world_a.agent, f"/{first['id']}")).json()["status"] == "expired"
    late = api.patch(url(world_a.agent, f"/{first['id']}"), {"payload": cheaper, "expected_version": 2}, format="json")
    assert (late.status_code, late.json()["error"]) == (409, "not_pending")
    assert LedgerEvent.objects.of_type("proposal.expired").count() == 1
    assert ledger_verify(chain_id=world_a.tenant.pk).ok


def test_owners_only_and_tenants_apart(api: Any, make_api: Any, world_a: Any, world_b: Any) -> None:
    api.force_login(world_a.owner)
    mine = propose(api, world_a.agent, "pricing", PRICING).json()
    assert make_api().get(url(world_a.agent)).status_code in (401, 403)
    other = make_api()
    other.force_login(world_b.owner)
    assert other.get(url(world_a.agent)).status_code == 404
    assert other.get(url(world_b.agent, f"/{mine['id']}")).status_code == 404
    assert (
        other.patch(
            url(world_b.agent, f"/{mine['id']}"), {"payload": PRICING, "expected_version": 1}, format="json"
        ).status_code
        == 404
    )
    member = make_api()
    member.force_login(world_a.member)
    assert propose(member, world_a.agent, "pricing", PRICING).status_code == 404


def test_csrf_is_enforced_on_every_mutating_call(world_a: Any) -> None:
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(world_a.owner)
    body = json.dumps({"kind": "pricing", "payload": PRICING, "summary": "s"})
    assert strict.post(url(world_a.agent), body, content_type="application/json").status_code == 403
    loose = Client()
    loose.force_login(world_a.owner)
    made = loose.post(url(world_a.agent), body, content_type="application/json").json()
    edit = json.dumps({"payload": PRICING, "expected_version": 1})
    assert strict.patch(url(world_a.agent, f"/{made['id']}"), edit, content_type="application/json").status_code == 403
    assert ChangeProposal.objects.get().version == 1


def test_the_schema_has_the_exact_payload_shapes(client: Any) -> None:
    schema = yaml.safe_load(client.get("/api/schema/").content)
    components = schema["components"]["schemas"]
    boundary = components["BoundaryWording"]
    assert set(boundary["properties"]) == {"language", "text"} and boundary["additionalProperties"] is False
    [language] = boundary["properties"]["language"]["allOf"]
    assert components[language["$ref"].rsplit("/", 1)[1]]["enum"] == ["en", "zh-hans"]
    pricing = components["Pricing"]
    assert set(pricing["properties"]) == {"currency", "items"} and pricing["additionalProperties"] is False
    item = components["PriceItem"]
    assert set(item["properties"]) == {"name", "names", "amount"} and item["properties"]["amount"]["type"] == "string"
    assert item["properties"]["amount"]["pattern"].startswith("^[0-9]")
    paths = schema["paths"]["/api/agents/{slug}/changes"]
    assert {"get", "post"} <= set(paths) and "patch" in schema["paths"]["/api/agents/{slug}/changes/{change_id}"]
    out = components["ChangeOut"]["properties"]
    assert {"id", "kind", "level", "status", "version", "summary", "payload", "requires"} <= set(out)
