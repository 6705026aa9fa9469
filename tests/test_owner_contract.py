"""The owner's contract page (`/owner/<slug>/contract`, issue 12): owners only, the live contract
shown readably, and each form proposing its change through `proposal_create` — never writing the
contract itself."""

from __future__ import annotations

import json
import re
from html import unescape
from typing import Any

import pytest
from django.contrib.messages.storage.fallback import FallbackStorage
from django.test import Client

from approvals.contract import live_content, live_terms
from approvals.models import ChangeProposal, ProposalStatus
from facade.contract_web import outcome_message
from facade.dialogue.models import DialogueSession
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.offline import OfflineProvider
from facade.dialogue.services import session_open
from facade.tenancy.models import Customer
from facade.tenancy.rules import Audience

pytestmark = pytest.mark.django_db


def signed_in(user: Any, **kwargs: Any) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


def page(world: Any) -> str:
    return f"/owner/{world.agent.slug}/contract"


def change(client: Client, world: Any, data: dict[str, Any]) -> Any:
    return client.post(page(world) + "/change", data)


def greeting(text: str, summary: str) -> dict[str, str]:
    """The wording form as filled in for the English greeting."""
    return {"kind": "wording", "language": "en", "situation": "greeting", "text": text, "summary": summary}


def latest(world: Any) -> ChangeProposal:
    return ChangeProposal.objects.filter(agent=world.agent).order_by("-created_at").first()  # type: ignore[return-value]


def greeting_of(world: Any) -> str:
    session: DialogueSession = session_open(
        agent=world.agent, audience=Audience.CUSTOMER, customer=Customer.objects.create(tenant=world.tenant)
    )
    result = turn_handle(session=session, text="hello", provider=OfflineProvider(world.agent))
    assert result.reply is not None
    return str(result.reply.text)


def test_the_page_is_its_owners_only(world_a: Any, world_b: Any) -> None:
    assert signed_in(world_a.owner).get(page(world_a)).status_code == 200
    for outsider in (world_b.owner, world_a.auditor, world_a.member):
        client = signed_in(outsider)
        assert client.get(page(world_a)).status_code == 404
        response = change(client, world_a, greeting("Not yours", "x"))
        # An auditor is refused every write before any view (audit/readonly.py): 403 read_only.
        assert response.status_code == (403 if outsider == world_a.auditor else 404)
    assert not ChangeProposal.objects.filter(agent=world_a.agent).exists()
    anonymous = Client().get(page(world_a))
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]


def test_the_page_shows_the_live_contract(world_a: Any) -> None:
    html = unescape(signed_in(world_a.owner).get(page(world_a)).content.decode())
    terms = live_terms(world_a.agent)
    assert f"version {terms.version}" in html
    # No own wording yet: the platform's sentences are shown, in both languages.
    assert "the platform's sentence" in html and "I can't confirm prices" in html
    assert "Hello! I can answer questions from what" in html
    for skill in terms.skill_ids:
        assert f"<code>{skill}</code>" in html
    assert "Answer from the agent's approved knowledge" in html
    for state in terms.request_flow["states"]:
        assert f"<code>{state}</code>" in html
    assert f'href="/owner/{world_a.agent.slug}/inbox"' in html and "Changes waiting for your decision: 0" in html
    # Every form carries the CSRF token and posts to the one change route.
    assert html.count('name="csrfmiddlewaretoken"') >= 8
    assert len(re.findall(rf'action="/owner/{world_a.agent.slug}/contract/change#\w+-h"', html)) == 8


def test_an_english_greeting_applies_and_the_next_turn_says_it(world_a: Any) -> None:
    client = signed_in(world_a.owner)
    text = "Welcome to the workshop, ask me anything!"
    response = change(client, world_a, greeting(text, "A warmer greeting"))
    assert response.status_code == 302 and response["Location"].endswith("/contract#wording-outcome")
    proposal = latest(world_a)
    assert proposal.kind == "wording" and proposal.status == ProposalStatus.APPLIED
    assert proposal.payload == {"language": "en", "situation": "greeting", "text": text}
    assert live_content(world_a.agent)["wording"] == {"en": {"greeting": text}}
    shown = client.get(page(world_a)).content.decode()
    assert "Applied: customers hear it from their next message." in shown
    assert text in shown
    assert greeting_of(world_a) == text


def test_a_pricing_change_waits_and_the_page_links_to_its_card(world_a: Any) -> None:
    client = signed_in(world_a.owner)
    before = live_content(world_a.agent)["pricing"]
    data = {
        "kind": "pricing",
        "currency": "eur",
        "summary": "New prices",
        "name": ["Repair", "Cleaning", "", "", "", ""],
        "amount": ["35.00", "9.50", "", "", "", ""],
    }
    response = change(client, world_a, data)
    assert response.status_code == 302
    proposal = latest(world_a)
    assert proposal.kind == "pricing" and proposal.status == ProposalStatus.PENDING
    assert proposal.payload == {
        "currency": "EUR",
        "items": [{"name": "Repair", "amount": "35.00"}, {"name": "Cleaning", "amount": "9.50"}],
    }
    assert live_content(world_a.agent)["pricing"] == before  # nothing written before the decision
    html = client.get(page(world_a)).content.decode()
    assert "Proposed. It waits for your decision" in html
    assert f'href="/owner/{world_a.agent.slug}/inbox#{proposal.pk}"' in html
    assert "Changes waiting for your decision: 1" in html


@pytest.mark.parametrize(
    ("data", "kind", "payload"),
    [
        (
            {"kind": "boundary_wording", "language": "zh-hans", "text": "价格由店主确认。"},
            "boundary_wording",
            {"language": "zh-hans", "text": "价格由店主确认。"},
        ),
        (
            {"kind": "clarification_order", "fields": "need, contact ,when"},
            "clarification_order",
            {"fields": ["need", "contact", "when"]},
        ),
        (
            {"kind": "skill_ids", "skill_ids": ["knowledge_answers", "handoff"]},
            "skill_ids",
            {"skill_ids": ["knowledge_answers", "handoff"]},
        ),
        (
            {
                "kind": "delivery",
                "channels": ["pickup", "email"],
                "note_pickup": "Mon–Fri",
                "note_email": "",
                "note_post": "ignored: not ticked",
            },
            "delivery",
            {"options": [{"channel": "pickup", "note": "Mon–Fri"}, {"channel": "email", "note": ""}]},
        ),
    ],
)
def test_each_form_proposes_its_kind_and_payload(
    world_a: Any, data: dict[str, Any], kind: str, payload: dict[str, Any]
) -> None:
    response = change(signed_in(world_a.owner), world_a, {**data, "summary": "a change"})
    assert response.status_code == 302
    proposal = latest(world_a)
    assert (proposal.kind, proposal.payload, proposal.summary) == (kind, payload, "a change")
    assert proposal.origin == "owner_direct"


def test_the_request_flow_form_proposes_the_edited_flow(world_a: Any) -> None:
    client = signed_in(world_a.owner)
    html = client.get(page(world_a)).content.decode()
    prefilled = re.search(r'<textarea id="flow-json"[^>]*>(.*?)</textarea>', html, re.S)
    assert prefilled is not None
    flow = json.loads(prefilled.group(1).replace("&quot;", '"'))
    assert flow == live_terms(world_a.agent).request_flow
    flow["states"]["accepted"]["next_actor"] = "customer"
    response = change(client, world_a, {"kind": "state_contract", "flow": json.dumps(flow), "summary": "x"})
    assert response.status_code == 302
    proposal = latest(world_a)
    assert proposal.kind == "state_contract" and proposal.payload == flow
    assert proposal.status == ProposalStatus.PENDING


def test_bad_input_is_shown_again_with_the_error_and_nothing_is_proposed(world_a: Any) -> None:
    client = signed_in(world_a.owner)
    data = {
        "kind": "pricing",
        "currency": "EUR",
        "summary": "Prices with a typo",
        "name": ["Repair", "Cleaning"],
        "amount": ["35.00", "nine"],
    }
    response = change(client, world_a, data)
    assert response.status_code == 400
    html = response.content.decode()
    assert re.search(r'role="alert">Not proposed: [^<]*items\.1\.amount', html)
    assert 'value="nine"' in html and 'value="Cleaning"' in html and 'value="Prices with a typo"' in html
    bad_json = change(client, world_a, {"kind": "state_contract", "flow": "{not json", "summary": "x"})
    assert bad_json.status_code == 400 and "{not json</textarea>" in bad_json.content.decode()
    assert "not valid JSON" in bad_json.content.decode()
    unknown = change(client, world_a, {"kind": "clarification_order", "fields": "Need!", "summary": "x"})
    assert unknown.status_code == 400 and 'value="Need!"' in unknown.content.decode()
    assert not ChangeProposal.objects.filter(agent=world_a.agent).exists()


def test_a_change_the_compiler_refused_is_said_in_plain_words(world_a: Any, rf: Any) -> None:
    # An owner's own L2 change the compiler refuses comes back `failed` from proposal_create;
    # no form input reaches that state today (the payload schemas refuse first), so the
    # outcome is checked on a proposal the compiler failed.
    change(signed_in(world_a.owner), world_a, {"kind": "clarification_order", "fields": "need", "summary": "x"})
    proposal = latest(world_a)
    proposal.status, proposal.failure_reasons = ProposalStatus.FAILED, ["clarification_order: broken"]
    request = rf.post("/")
    request.session = {}
    request._messages = FallbackStorage(request)
    outcome_message(request, world_a.agent, proposal)
    assert [str(m) for m in request._messages] == ["Failed: clarification_order: broken"]


def test_a_post_without_the_csrf_token_is_refused(world_a: Any) -> None:
    client = signed_in(world_a.owner, enforce_csrf_checks=True)
    response = change(client, world_a, greeting("No token", "x"))
    assert response.status_code == 403
    assert not ChangeProposal.objects.filter(agent=world_a.agent).exists()
    assert client.get(page(world_a) + "/change").status_code == 405


def test_the_page_speaks_chinese(world_a: Any) -> None:
    client = signed_in(world_a.owner)
    html = client.get(page(world_a), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "提议这项更改" in html and "平台的句子" in html
