"""A change never ends a conversation a customer is in the middle of (issue 26 §2).

- An L2 change (greeting, wording, boundary wording, clarification order) and every L3 change
  that takes nothing away (a price, a delivery option, an added skill) applies from the next
  turn of an open conversation, in the same session — over the service, HTTP and the WebSocket.
- An L3 change that takes away what a conversation relies on (a skill, part of the request
  flow) ends the old session, but the conversation goes on in a session that continues it: the
  earlier messages are its history, a registered request stays registered (and withdrawable)
  there, and a half-filled request flow goes on from the answers given.
- The ledger records the contract version each turn spoke by, and the auditor's replay of the
  agent at each turn finds that version, across a publish in the middle of one conversation.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest
from django.test import Client

from approvals.contract import contract_compile, live_terms
from approvals.contract_rules import default_content, removals
from audit.replay import agent_state_at
from conftest import TenantWorld
from facade.dialogue.models import CustomerRequest, DialogueSession, Message, Run
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.services import session_open
from facade.errors import ApplicationError
from facade.tenancy.models import Customer, default_request_flow
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify

GREETING = "Welcome back to Alpha — ask me anything."
ASK_WHEN = "By when would you like it?"
ASK_CONTACT = "How can the owner reach you"
SUMMARY = "Please check your request before I register it"
REGISTERED = "I've registered your request #"
SKILLS = ["knowledge_answers", "request_intake", "handoff"]


def _flow_without_a_transition() -> dict[str, Any]:
    """The default flow, except that a request in progress can no longer be cancelled."""
    flow: dict[str, Any] = copy.deepcopy(default_request_flow())
    flow["states"]["in_progress"]["to"] = ["done"]
    return flow


# Changes that take nothing away from an open conversation: each applies from its next turn.
KEEPING = {
    "greeting (L2 wording)": {"wording": {"en": {"greeting": GREETING}}},
    "boundary wording (L2)": {"boundary_wording": {"en": "Ana confirms prices herself."}},
    "clarification order (L2)": {"clarification_order": ["need", "contact", "when"]},
    "mission (L2)": {"mission": "Cakes for every day."},
    "a price (L3)": {"pricing": {"currency": "EUR", "items": [{"name": "Birthday cake", "amount": "35.00"}]}},
    "a delivery option (L3)": {"delivery": [{"channel": "pickup", "note": "Mon-Fri"}]},
    "an added skill (L3)": {"skill_ids": [*SKILLS, "request_status"]},
}
# Changes that take away what an open conversation relies on.
TAKING = {
    "a skill removed": {"skill_ids": ["knowledge_answers", "request_intake"]},
    "a request flow transition removed": {"request_flow": _flow_without_a_transition()},
}


def owner(world: TenantWorld) -> Actor:
    return Actor.human(world.owner.pk)


def customer_session(world: TenantWorld) -> DialogueSession:
    customer = Customer.objects.create(tenant=world.tenant)
    return session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer)


def say(session: DialogueSession, text: str) -> str:
    result = turn_handle(session=session, text=text, client_message_id=uuid.uuid4().hex)
    assert result.reply is not None
    return result.reply.text


# --- the rule (no database) ---------------------------------------------------------------


@pytest.mark.parametrize("change", list(KEEPING.values()), ids=list(KEEPING))
def test_a_change_that_takes_nothing_away_removes_nothing(change: dict[str, Any]) -> None:
    before = {**default_content(), "request_flow": default_request_flow()}
    assert removals(before, {**before, **change}) == []


def test_what_a_change_takes_away_is_named() -> None:
    before = {**default_content(), "request_flow": default_request_flow()}
    assert removals(before, {**before, **TAKING["a skill removed"]}) == ["skill_ids: handoff"]
    assert removals(before, {**before, **TAKING["a request flow transition removed"]}) == [
        "request_flow: in_progress -> cancelled"
    ]
    flow = default_request_flow()
    other_start = {**flow, "initial": "accepted"}
    assert removals({**before, "request_flow": flow}, {**before, "request_flow": other_start}) == [
        "request_flow: initial state"
    ]


# --- L2 and the L3 changes that take nothing away: the same session goes on ----------------


@pytest.mark.django_db
@pytest.mark.parametrize("change", list(KEEPING.values()), ids=list(KEEPING))
def test_a_change_that_takes_nothing_away_ends_no_conversation(world_a: TenantWorld, change: dict[str, Any]) -> None:
    session = customer_session(world_a)
    assert ASK_WHEN in say(session, "I'd like to order a birthday cake")
    contract_compile(agent=world_a.agent, changes=change, actor=owner(world_a))
    # The customer's next message, in the middle of the order, is answered in the same session:
    # the flow goes on (a date is not taken for a question about the opening hours).
    reply = say(session, "next Friday")
    asked_next = ASK_CONTACT if change != KEEPING["clarification order (L2)"] else SUMMARY
    assert asked_next in reply or ASK_CONTACT in reply, reply
    session.refresh_from_db()
    assert (session.status, session.contract_version) == ("open", 2)
    assert not DialogueSession.objects.filter(continues=session).exists()
    versions = Run.objects.filter(session=session).order_by("started_at").values_list("contract_version", flat=True)
    assert list(versions) == [1, 2]


@pytest.mark.django_db
def test_the_new_greeting_is_said_from_the_next_turn_of_an_open_conversation(world_a: TenantWorld) -> None:
    session = customer_session(world_a)
    assert GREETING not in say(session, "hello")
    say(session, "I'd like to order a birthday cake")
    contract_compile(agent=world_a.agent, changes=KEEPING["greeting (L2 wording)"], actor=owner(world_a))
    assert ASK_CONTACT in say(session, "next Friday")
    assert SUMMARY in say(session, "ana@example.com")
    assert REGISTERED in say(session, "yes")
    assert say(session, "hello") == GREETING
    session.refresh_from_db()
    assert session.status == "open"


@pytest.mark.django_db
def test_over_http_the_next_message_after_a_greeting_change_is_answered_in_the_same_session(
    world_a: TenantWorld,
) -> None:
    client = Client()
    opened = client.post(f"/api/agents/{world_a.agent.slug}/sessions", {}, content_type="application/json")
    assert opened.status_code == 201, opened.content
    url = f"/api/sessions/{opened.json()['id']}/messages"

    def post(text: str) -> Any:
        return client.post(url, {"text": text, "client_message_id": uuid.uuid4().hex}, content_type="application/json")

    assert ASK_WHEN in post("I'd like to order a birthday cake").json()["reply"]["text"]
    contract_compile(agent=world_a.agent, changes=KEEPING["greeting (L2 wording)"], actor=owner(world_a))
    answered = post("next Friday")
    assert answered.status_code == 201, answered.content
    assert ASK_CONTACT in answered.json()["reply"]["text"]
    history = client.get(url).json()
    assert (history["status"], len(history["messages"])) == ("open", 4)


# --- a change that takes away what the conversation relies on: it goes on in a new session --


@pytest.mark.django_db
@pytest.mark.parametrize("change", list(TAKING.values()), ids=list(TAKING))
def test_a_change_that_takes_away_ends_the_session_and_the_conversation_goes_on(
    world_a: TenantWorld, change: dict[str, Any]
) -> None:
    session = customer_session(world_a)
    # A request registered …
    say(session, "I'd like to order a birthday cake")
    say(session, "next Friday")
    say(session, "ana@example.com")
    assert REGISTERED in say(session, "yes")
    request = CustomerRequest.objects.get(session=session)
    # … and a second one half filled in (its need and its date answered).
    assert ASK_WHEN in say(session, "I'd also like to order cupcakes")
    assert ASK_CONTACT in say(session, "next Saturday")
    contract_compile(agent=world_a.agent, changes=change, actor=owner(world_a))

    with pytest.raises(ApplicationError) as refused:
        turn_handle(session=session, text="bo@example.com", client_message_id="c-1")
    assert (refused.value.code, refused.value.http_status) == ("session_continued", 409)
    successor = DialogueSession.objects.get(pk=refused.value.extra["session"])
    session.refresh_from_db()
    assert (session.status, session.closed_reason) == ("closed", "contract_republished")
    assert (successor.status, successor.continues_id, successor.contract_version) == ("open", session.pk, 2)
    assert (successor.customer_id, successor.audience) == (session.customer_id, "customer")
    assert not Message.objects.filter(session=session, client_message_id="c-1").exists()  # refused, not stored

    # The request stays registered, now in the new session; the half-filled one goes on from the
    # answers given: the contact was the one field left, so the summary follows with all three.
    request.refresh_from_db()
    assert (request.session_id, request.state) == (successor.pk, "submitted")
    reply = turn_handle(session=successor, text="bo@example.com", client_message_id="c-1").reply
    assert reply is not None and SUMMARY in reply.text
    assert "cupcakes" in reply.text and "next Saturday" in reply.text and "bo@example.com" in reply.text
    assert REGISTERED in say(successor, "yes")
    assert CustomerRequest.objects.filter(session=successor).count() == 2

    # Asked again, the old session names the same continuation (one per ended session).
    with pytest.raises(ApplicationError) as again:
        turn_handle(session=session, text="hello", client_message_id="c-2")
    assert again.value.extra["session"] == str(successor.pk)
    [continued] = LedgerEvent.objects.of_type("session.continued")
    assert continued.entity_id == str(successor.pk)
    assert continued.payload == {"continues": str(session.pk), "contract_version": 2, "requests": [request.pk]}


@pytest.mark.django_db
def test_over_http_the_page_finds_the_continuation_with_the_messages_and_the_request(world_a: TenantWorld) -> None:
    client = Client()
    opened = client.post(f"/api/agents/{world_a.agent.slug}/sessions", {}, content_type="application/json").json()

    def post(session_id: str, text: str, cid: str | None = None) -> Any:
        body = {"text": text, "client_message_id": cid or uuid.uuid4().hex}
        return client.post(f"/api/sessions/{session_id}/messages", body, content_type="application/json")

    for text in ("I'd like to order a birthday cake", "next Friday", "ana@example.com", "yes"):
        assert post(opened["id"], text).status_code == 201
    contract_compile(agent=world_a.agent, changes=TAKING["a skill removed"], actor=owner(world_a))

    refused = post(opened["id"], "Is my order confirmed?", cid="again")
    assert refused.status_code == 409
    body = refused.json()
    assert body["error"] == "session_continued" and body["session"] != opened["id"]
    old = client.get(f"/api/sessions/{opened['id']}/messages").json()
    assert (old["status"], old["closed_reason"]) == ("closed", "contract_republished")
    new = client.get(f"/api/sessions/{body['session']}/messages").json()
    assert new["status"] == "open"
    assert [m["text"] for m in new["messages"]] == [m["text"] for m in old["messages"]]
    request_id = CustomerRequest.objects.get(agent=world_a.agent).pk
    assert len(new["messages"]) == 8 and [r["id"] for r in new["requests"]] == [request_id]
    assert old["requests"] == []  # moved, not copied
    # The request can still be withdrawn from the page, now through the new session.
    withdrawn = client.post(
        f"/api/sessions/{body['session']}/requests/{request_id}/withdraw", {}, content_type="application/json"
    )
    assert withdrawn.status_code == 200, withdrawn.content
    assert post(body["session"], "Is my order confirmed?", cid="again").status_code == 201


# --- the ledger: which version each turn spoke by -----------------------------------------


@pytest.mark.django_db
def test_each_turn_records_its_contract_version_and_the_replay_holds_across_a_publish(world_a: TenantWorld) -> None:
    session = customer_session(world_a)
    say(session, "hello")
    contract_compile(agent=world_a.agent, changes=KEEPING["greeting (L2 wording)"], actor=owner(world_a))
    assert say(session, "hello") == GREETING
    turns = LedgerEvent.objects.of_type("run.finished").order_by("seq")
    finished = [e for e in turns if e.payload["session"] == str(session.pk)]
    assert [e.payload["contract_version"] for e in finished] == [1, 2]
    for event in finished:
        state = agent_state_at(agent=world_a.agent, at=event.created_at).live
        assert state.contract.version == event.payload["contract_version"]
        assert state.contract.hash_ok and state.mismatches() == []
        terms_then = state.contract.content
        assert (terms_then.get("wording") or {}).get("en", {}).get("greeting") == (
            GREETING if event.payload["contract_version"] == 2 else None
        )
    assert live_terms(world_a.agent).version == 2
    verified = ledger_verify(chain_id=world_a.tenant.pk)
    assert verified.ok, verified
