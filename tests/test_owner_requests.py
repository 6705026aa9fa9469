"""Issue 11, point 7 (the requests half): the owner's Requests page — state, who acts next, the
fields the flow collected, the moves the flow allows, a reply the customer sees in their chat —
the e-mail a new request sends the owners (to a real SMTP server), and the counts on the home
page.  Point 9: an owner's preview of the customer face, left out of every metric and review."""

from __future__ import annotations

import json
import re
from email.message import Message as EmailMessage
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from smtp_support import Inbox

from approvals.contract import contract_compile
from conftest import TenantWorld
from facade.celery import app as celery_app
from facade.dialogue.models import CustomerRequest, DialogueSession, Message, Rating, TrustChange
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.base import ModelReply, ToolCall
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.services import DialogueError, rating_record, request_submit, request_transition, session_open
from facade.tenancy.models import Customer
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from facade.tenancy.services import agent_owner_remove, customer_create
from knowledge.models import KnowledgeHit, KnowledgeMiss
from knowledge.schemas import SourceIn
from knowledge.services import entry_propose, knowledge_miss_record
from ledger.models import LedgerEvent

pytestmark = pytest.mark.django_db

SUMMARY = "SUMMARY-IN-THE-CUSTOMERS-WORDS"  # the request's summary: never on the page or in the e-mail
SAID = "I told the agent my secret birthday plans"  # a message of the conversation: likewise
DETAILS = {"need": "a birthday cake", "when": "next Friday", "contact": "ana@example.com"}


# --- helpers ------------------------------------------------------------------------------


def customer_session(world: TenantWorld) -> DialogueSession:
    return session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer_create(tenant=world.tenant))


def preview_session(world: TenantWorld) -> DialogueSession:
    return session_open(agent=world.agent, audience=Audience.CUSTOMER, user=world.owner, preview=True)


def a_request(world: TenantWorld, session: DialogueSession | None = None) -> CustomerRequest:
    session = session or customer_session(world)
    Message.objects.create(session=session, role="principal", text=SAID)
    return request_submit(session=session, summary=SUMMARY, details=DETAILS)


def signed_in(user: Any, **kwargs: Any) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


def events(tenant: Any, event_type: str) -> list[LedgerEvent]:
    return list(LedgerEvent.objects.filter(chain_id=tenant.pk).of_type(event_type).order_by("seq"))


def page_url(world: TenantWorld) -> str:
    return reverse("owner-requests", args=[world.agent.slug])


def call(name: str, arguments: dict[str, Any]) -> ModelReply:
    return ModelReply(tool_calls=[ToolCall(id=f"c-{name}", name=name, arguments=json.dumps(arguments))])


def say(text: str) -> ModelReply:
    return ModelReply(text=text)


# --- the Requests page --------------------------------------------------------------------


def test_the_requests_page_shows_state_next_actor_fields_and_the_flows_moves(world_a: TenantWorld) -> None:
    request = a_request(world_a)
    page = signed_in(world_a.owner).get(page_url(world_a))
    assert page.status_code == 200
    html = page.content.decode()
    card = html.split(f'id="request-{request.pk}"', 1)[1]
    assert f"Request #{request.pk}" in card
    assert "Submitted" in card and "you (the business)" in card and "Waiting for you" in card
    for value in DETAILS.values():
        assert value in card
    # The moves the stored flow allows from `submitted`, and no other.
    moves = re.findall(r'name="to" value="(\w+)"', card)
    assert moves == list(request.flow["states"]["submitted"]["to"])
    assert SUMMARY not in html and SAID not in html
    assert "<script>" not in html  # nothing inline (the CSP would refuse it)


def test_the_page_renders_whatever_states_the_stored_flow_has(world_a: TenantWorld) -> None:
    """Flows change (a customer may withdraw, say): the page shows the request's own flow."""
    flow = {
        "initial": "new",
        "states": {
            "new": {"next_actor": "owner", "to": ["quoted", "withdrawn"]},
            "quoted": {"next_actor": "customer", "to": []},
            "withdrawn": {"next_actor": "nobody", "to": []},
        },
    }
    contract_compile(agent=world_a.agent, changes={"request_flow": flow}, actor=Actor.human(world_a.owner.pk))
    request = a_request(world_a)
    client = signed_in(world_a.owner)
    card = client.get(page_url(world_a)).content.decode().split(f'id="request-{request.pk}"', 1)[1]
    assert re.findall(r'name="to" value="(\w+)"', card) == ["quoted", "withdrawn"]
    assert "<dd>new</dd>" in card  # a state the page has no name for is shown as written
    assert ">quoted</button>" in card and ">Mark as withdrawn</button>" in card
    client.post(reverse("owner-request-move", args=[world_a.agent.slug, request.pk]), {"to": "quoted"})
    request.refresh_from_db()
    assert request.state == "quoted" and request.next_actor == "customer"


def test_a_move_goes_through_the_flow_and_the_ledger(world_a: TenantWorld) -> None:
    request = a_request(world_a)
    client = signed_in(world_a.owner)
    move = reverse("owner-request-move", args=[world_a.agent.slug, request.pk])
    done = client.post(move, {"to": "accepted"}, follow=True)
    assert done.redirect_chain[-1][0].endswith(f"{page_url(world_a)}#request-{request.pk}")
    assert f"Request #{request.pk} is now: Accepted." in done.content.decode()
    request.refresh_from_db()
    assert request.state == "accepted"
    [moved] = events(world_a.tenant, "request.transitioned")
    assert moved.payload == {"from": "submitted", "to": "accepted"} and moved.actor_id == f"user:{world_a.owner.pk}"
    # A move the flow does not allow changes nothing and says so.
    refused = client.post(move, {"to": "submitted"}, follow=True)
    assert f"Request #{request.pk} cannot make that move now." in refused.content.decode()
    request.refresh_from_db()
    assert request.state == "accepted" and len(events(world_a.tenant, "request.transitioned")) == 1


def test_the_open_list_leaves_finished_requests_to_the_all_list(world_a: TenantWorld) -> None:
    waiting, finished = a_request(world_a), a_request(world_a)
    request_transition(request=finished, to="declined", actor=Actor.human(world_a.owner.pk))
    client = signed_in(world_a.owner)
    shown_open = client.get(page_url(world_a)).content.decode()
    shown_all = client.get(page_url(world_a) + "?show=all").content.decode()
    assert f'id="request-{waiting.pk}"' in shown_open and f'id="request-{finished.pk}"' not in shown_open
    assert f'id="request-{waiting.pk}"' in shown_all and f'id="request-{finished.pk}"' in shown_all


def test_the_page_and_its_forms_are_for_the_agents_owners_only(
    world_a: TenantWorld, world_b: TenantWorld, client: Client
) -> None:
    request = a_request(world_a)
    slug = world_a.agent.slug
    move = reverse("owner-request-move", args=[slug, request.pk])
    reply = reverse("owner-request-reply", args=[slug, request.pk])
    anonymous = client.get(page_url(world_a))
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    for outsider in (world_b.owner, world_a.member, world_a.auditor):
        other = signed_in(outsider)
        assert other.get(page_url(world_a)).status_code == 404
        # An auditor is refused every write before any view (audit/readonly.py): 403 read_only.
        refused = 403 if outsider == world_a.auditor else 404
        assert other.post(move, {"to": "accepted"}).status_code == refused
        assert other.post(reply, {"text": "hello"}).status_code == refused
    # Another agent's request through this owner's own agent: 404 as well.
    foreign = a_request(world_b)
    owner = signed_in(world_a.owner)
    assert owner.post(reverse("owner-request-move", args=[slug, foreign.pk]), {"to": "accepted"}).status_code == 404
    assert owner.post(reverse("owner-request-reply", args=[slug, foreign.pk]), {"text": "x"}).status_code == 404
    # Forms need the CSRF token.
    strict = signed_in(world_a.owner, enforce_csrf_checks=True)
    assert strict.post(move, {"to": "accepted"}).status_code == 403
    assert strict.post(reply, {"text": "hello"}).status_code == 403
    request.refresh_from_db()
    assert request.state == "submitted" and not Message.objects.filter(role="owner").exists()


def test_a_reply_lands_in_the_customers_conversation_and_the_ledger_without_its_text(world_a: TenantWorld) -> None:
    request = a_request(world_a)
    client = signed_in(world_a.owner)
    url = reverse("owner-request-reply", args=[world_a.agent.slug, request.pk])
    text = "We can make it for Friday — 35 euros, pick up at 5."
    shown = client.post(url, {"text": text}, follow=True).content.decode()
    assert f"Your reply to request #{request.pk} was sent to the customer." in shown
    assert text.replace("—", "&mdash;") in shown or text in shown  # the owner sees their own reply
    [reply] = Message.objects.filter(role="owner")
    assert reply.session_id == request.session_id and reply.request_id == request.pk and reply.text == text
    [event] = events(world_a.tenant, "request.replied")
    assert event.entity_id == str(request.pk) and event.actor_id == f"user:{world_a.owner.pk}"
    assert event.payload == {"session": str(request.session_id), "message_id": reply.pk, "chars": len(text)}
    assert "euros" not in json.dumps(event.payload)
    # An empty reply is refused and stores nothing.
    assert "Please write a reply first." in client.post(url, {"text": "   "}, follow=True).content.decode()
    assert Message.objects.filter(role="owner").count() == 1


def test_the_customers_history_holds_the_owners_reply(world_a: TenantWorld, api: Any) -> None:
    from facade.dialogue.services import request_reply
    from facade.tenancy.identity import customer_cookie_name, set_customer_cookie

    request = a_request(world_a)
    request_reply(request=request, text="Yes, Friday works.", actor=Actor.human(world_a.owner.pk))
    from django.http import HttpResponse

    response = HttpResponse()
    customer = Customer.objects.get(pk=request.session.customer_id)
    set_customer_cookie(response, world_a.tenant, customer)
    name = customer_cookie_name(world_a.tenant)
    api.cookies[name] = response.cookies[name].value
    history = api.get(f"/api/sessions/{request.session_id}/messages").json()
    assert [(m["role"], m["text"]) for m in history["messages"]][-1] == ("owner", "Yes, Friday works.")


# --- the e-mail to the owners -------------------------------------------------------------


def body_of(message: EmailMessage) -> str:
    payload = message.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode(message.get_content_charset() or "utf-8")


def test_a_new_request_emails_the_owners_a_summary_and_a_link_after_the_commit(
    world_a: TenantWorld, smtp: Inbox, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        request = a_request(world_a)
    assert smtp.received == []  # nothing is sent before the commit
    for callback in callbacks:
        callback()
    [(to, message)] = smtp.received
    assert to == [world_a.owner.email]
    assert message["Subject"] == f"New request #{request.pk} for {world_a.agent.name}"
    body = body_of(message)
    assert f"https://shop.example/owner/{world_a.agent.slug}/requests#request-{request.pk}" in body
    for value in DETAILS.values():
        assert value in body
    assert "Submitted" in body and "you (the business)" in body
    assert SUMMARY not in body and SAID not in body
    # Everything the customer wrote that reaches the e-mail is a field the flow collected.
    collected = set(DETAILS.values())
    for line in body.splitlines():
        if line.startswith("  "):
            assert line.split(": ", 1)[1] in collected


def test_a_redelivered_task_sends_no_second_email(world_a: TenantWorld, smtp: Inbox) -> None:
    from facade.dialogue.tasks import request_notify_owners_task

    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(celery_app.conf, "CELERY_TASK_ALWAYS_EAGER", False)
        mp.setattr(request_notify_owners_task, "delay", lambda *a, **k: None)
        request = a_request(world_a)
    assert request_notify_owners_task(request.pk) == 1
    assert request_notify_owners_task(request.pk) == 0
    assert len(smtp.received) == 1


def test_a_preview_request_sends_no_email_and_the_default_needs_no_smtp_server(
    world_a: TenantWorld, smtp: Inbox, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        a_request(world_a, preview_session(world_a))
    assert smtp.received == []


def test_without_email_host_the_email_goes_to_the_outbox_directory(
    world_a: TenantWorld,
    settings: Any,
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The embedded default (no EMAIL_HOST): the message is written to a file, nothing crashes."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
    settings.EMAIL_FILE_PATH = str(tmp_path / "outbox")
    monkeypatch.setitem(celery_app.conf, "CELERY_TASK_ALWAYS_EAGER", True)
    with django_capture_on_commit_callbacks(execute=True):
        request = a_request(world_a)
    [written] = list((tmp_path / "outbox").iterdir())
    assert f"New request #{request.pk}" in written.read_text()


# --- the home page ------------------------------------------------------------------------


def test_the_home_page_counts_requests_waiting_and_unanswered_topics(world_a: TenantWorld) -> None:
    a_request(world_a)
    accepted = a_request(world_a)
    request_transition(request=accepted, to="accepted", actor=Actor.human(world_a.owner.pk))  # still the owner's
    asked = a_request(world_a)
    request_transition(request=asked, to="needs_info", actor=Actor.human(world_a.owner.pk))  # the customer's turn
    a_request(world_a, preview_session(world_a))  # a preview: not counted
    # Three customers asked one thing, one another: only a topic that enough distinct customers
    # asked reaches an owner page (DESIGN.md, k-anonymous topics), and the count is the page's.
    for query in ("gluten free bread", "gluten free bread", "gluten free bread", "parking nearby"):
        session = customer_session(world_a)
        knowledge_miss_record(agent=world_a.agent, session_id=session.pk, query=query)
    html = signed_in(world_a.owner).get("/").content.decode()
    assert "Requests waiting for you: 2" in html
    assert f'href="{page_url(world_a)}"' in html
    assert f'href="/owner/{world_a.agent.slug}/knowledge/unanswered"' in html
    assert "Unanswered questions: 1" in html
    assert f'href="{reverse("owner-preview", args=[world_a.agent.slug])}"' in html


# --- point 9: the preview -----------------------------------------------------------------


def test_an_owner_opens_a_preview_session_others_cannot(world_a: TenantWorld, world_b: TenantWorld, api: Any) -> None:
    url = f"/api/agents/{world_a.agent.slug}/preview-sessions"
    assert api.post(url, {}, format="json").status_code == 404  # a customer
    api.force_authenticate(world_b.owner)
    assert api.post(url, {}, format="json").status_code == 404
    api.force_authenticate(world_a.member)
    assert api.post(url, {}, format="json").status_code == 404
    api.force_authenticate(world_a.owner)
    assert api.post(url, {"audience": "owner"}, format="json").status_code == 400  # still the server's to derive
    opened = api.post(url, {}, format="json")
    assert opened.status_code == 201
    body = opened.json()
    assert body["audience"] == "customer" and body["preview"] is True
    assert body["principal"] == {"type": "user", "id": str(world_a.owner.pk)}
    [event] = events(world_a.tenant, "session.opened")
    assert event.payload["preview"] is True and event.payload["audience"] == "customer"
    # The ordinary session endpoint still gives the signed-in owner the owner face.
    assert api.post(f"/api/agents/{world_a.agent.slug}/sessions", {}, format="json").json()["audience"] == "owner"


def test_a_preview_answers_as_the_customer_face(world_a: TenantWorld) -> None:
    entry = entry_propose(
        agent=world_a.agent,
        title="Opening hours",
        body="We are open Monday to Saturday, 9:00 to 18:00.",
        actor=Actor.human(world_a.owner.pk),
        source=SourceIn(type="owner_dialogue", ref="chat:1", version="1"),
    )
    preview, customer = preview_session(world_a), customer_session(world_a)
    seen = [turn_handle(session=s, text="When is the shop open?") for s in (preview, customer)]
    assert seen[0].reply is not None and seen[1].reply is not None
    assert seen[0].reply.text == seen[1].reply.text and "Monday to Saturday" in seen[0].reply.text
    assert seen[0].reply.citations == seen[1].reply.citations
    # … but only the customer's counts towards the knowledge-hit rate.
    assert list(KnowledgeHit.objects.values_list("session_id", flat=True)) == [customer.pk]
    assert entry.pk


def test_a_preview_is_left_out_of_misses_ratings_and_trust(world_a: TenantWorld) -> None:
    preview = preview_session(world_a)
    result = turn_handle(session=preview, text="Do you repair vintage typewriters?")
    assert result.reply is not None and "don't know" in result.reply.text
    assert not KnowledgeMiss.objects.exists()  # never an unanswered customer question
    # A reply the guard blocks costs no one trust; a completed request earns no one trust.
    turn_handle(session=preview, text="price?", provider=ScriptedProvider.of(say("It costs only ¥99.")))
    wanted = {"summary": "a cake", "details": {"when": "Friday", "contact": "ana@example.com"}}

    def shown(messages: list[dict[str, Any]], tools: Any) -> Any:
        return say(json.loads(messages[-1]["content"])["summary"])  # the server's summary, as given

    turn_handle(session=preview, text="a cake", provider=ScriptedProvider.of(call("submit_request", wanted), shown))
    done = turn_handle(
        session=preview, text="yes", provider=ScriptedProvider.of(call("submit_request", wanted), say("Ok."))
    )
    request = CustomerRequest.objects.get(pk=done.request["id"])
    for state in ("accepted", "in_progress", "done"):
        request = request_transition(request=request, to=state, actor=Actor.human(world_a.owner.pk))
    assert not TrustChange.objects.exists() and not Customer.objects.exists()
    with pytest.raises(DialogueError) as refused:
        rating_record(session=preview, stars=5)
    assert refused.value.code == "preview_not_rated" and not Rating.objects.exists()


def test_a_removed_owner_can_no_longer_post_in_their_preview(world_a: TenantWorld, api: Any) -> None:
    preview = preview_session(world_a)
    api.force_authenticate(world_a.owner)
    url = f"/api/sessions/{preview.pk}/messages"
    assert api.post(url, {"text": "hello", "client_message_id": "m-1"}, format="json").status_code == 201
    agent_owner_remove(agent=world_a.agent, user=world_a.owner, actor=Actor.platform("tests"))
    refused = api.post(url, {"text": "hello again", "client_message_id": "m-2"}, format="json")
    assert refused.status_code == 403 and refused.json()["error"] == "no_longer_owner"


def test_the_preview_page_is_marked_and_for_owners_only(world_a: TenantWorld, world_b: TenantWorld) -> None:
    url = reverse("owner-preview", args=[world_a.agent.slug])
    assert signed_in(world_b.owner).get(url).status_code == 404
    html = signed_in(world_a.owner).get(url).content.decode()
    assert "Preview" in html and "left out of every metric and review" in html
    config = json.loads(re.search(r'<script id="chat-config" type="application/json">(.*?)</script>', html, re.S)[1])
    assert config["preview"] is True and config["mode"] == "customer"
    assert 'id="rating"' not in html
    # The customer page offers the preview to a signed-in owner, and to no one else.
    customer_page = reverse("customer-page", args=[world_a.agent.slug])
    assert f'href="{url}"' in signed_in(world_a.owner).get(customer_page).content.decode()
    assert f'href="{url}"' not in Client().get(customer_page).content.decode()
