"""The chat over HTTP: replies, history, cancel, ratings, rate limits, expiry, request
transitions — and a whole turn through the OpenAI-compatible provider against a local server
that speaks the protocol."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from django.core.cache import cache
from django.utils import timezone
from llm_server import LLMServer, completion

from facade.dialogue.models import CustomerRequest, DialogueSession, Message, Rating, Run, SessionStatus
from facade.dialogue.services import sessions_expire
from facade.tenancy.models import Customer
from facade.tenancy.schemas import Actor
from knowledge.schemas import SourceIn
from knowledge.services import entry_propose
from ledger.models import LedgerEvent

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_rate_windows() -> None:
    cache.clear()


def open_customer(client: Any, world: Any) -> str:
    response = client.post(f"/api/agents/{world.agent.slug}/sessions", {}, format="json")
    assert response.status_code == 201, response.content
    return str(response.json()["id"])


def post(client: Any, session_id: str, text: str, cid: str = "") -> Any:
    return client.post(f"/api/sessions/{session_id}/messages", {"text": text, "client_message_id": cid}, format="json")


def teach(world: Any, title: str, body: str) -> Any:
    return entry_propose(
        agent=world.agent,
        title=title,
        body=body,
        actor=Actor.human(world.owner.pk),
        source=SourceIn(type="owner_dialogue", ref="chat:1", version="1"),
    )


def test_a_message_gets_the_reply_with_citations_and_the_history_keeps_both(api: Any, world_a: Any) -> None:
    version = teach(world_a, "Gift wrapping", "Gift wrapping is available for every order.")
    sid = open_customer(api, world_a)
    response = post(api, sid, "Do you offer gift wrapping?", "c-1")
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == {"message", "duplicate", "reply", "request"}
    assert body["reply"]["citations"] == [{"entry_id": version.entry_id, "version": 1, "title": "Gift wrapping"}]
    assert (
        "available for every order" in body["reply"]["text"]
        and body["reply"]["stop_reason"] == ""
        and body["request"] is None
    )
    history = api.get(f"/api/sessions/{sid}/messages").json()
    assert [(m["role"], m["client_message_id"]) for m in history["messages"]] == [("principal", "c-1"), ("agent", "")]
    assert history["messages"][1]["citations"] == body["reply"]["citations"]


def test_a_price_request_is_registered_and_the_owner_moves_it_along(api: Any, make_api: Any, world_a: Any) -> None:
    sid = open_customer(api, world_a)
    assert (
        world_a.agent.boundary("en") in post(api, sid, "What is the price of a wedding cake?").json()["reply"]["text"]
    )
    post(api, sid, "yes")
    post(api, sid, "in June")
    assert post(api, sid, "ana@example.com").json()["request"] is None  # the summary first
    registered = post(api, sid, "yes").json()["request"]
    assert registered["state"] == "submitted" and registered["next_actor"] == "owner"
    owner = make_api()
    owner.force_login(world_a.owner)
    url = f"/api/requests/{registered['id']}/transition"
    assert owner.post(url, {"to": "done"}, format="json").json()["error"] == "invalid_transition"
    moved = owner.post(url, {"to": "accepted"}, format="json")
    assert moved.status_code == 200 and moved.json()["state"] == "accepted"
    assert api.get(f"/api/sessions/{sid}/messages").json()["requests"][0]["state"] == "accepted"
    # Not the owner: as if the request did not exist.
    assert make_api().post(url, {"to": "in_progress"}, format="json").status_code in (403, 404)


def test_rate_limits_answer_429_with_retry_after_and_cost_no_trust(api: Any, world_a: Any, settings: Any) -> None:
    settings.FACADE_RATE_CUSTOMER = "2/3600"  # an hour: the window never turns over mid-test
    sid = open_customer(api, world_a)
    assert [post(api, sid, f"hello {i}").status_code for i in range(2)] == [201, 201]
    limited = post(api, sid, "hello again")
    assert limited.status_code == 429 and limited.json()["error"] == "rate_limited"
    assert 1 <= int(limited["Retry-After"]) <= 3600 and limited.json()["retry_after"] == int(limited["Retry-After"])
    assert Message.objects.filter(session_id=sid, text="hello again").count() == 0
    assert Customer.objects.get().trust == 50  # a refusal writes nothing but its counter (issue 10)


def test_the_ip_limit_holds_across_customers(make_api: Any, world_a: Any, settings: Any) -> None:
    settings.FACADE_RATE_IP = "3/3600"  # an hour: the window never turns over mid-test
    codes = []
    for _ in range(4):
        client = make_api()
        codes.append(post(client, open_customer(client, world_a), "hi").status_code)
    assert codes == [201, 201, 201, 429]


def test_idle_sessions_expire_and_refuse_messages(api: Any, world_a: Any) -> None:
    sid = open_customer(api, world_a)
    DialogueSession.objects.filter(pk=sid).update(last_activity_at=timezone.now() - dt.timedelta(minutes=31))
    refused = post(api, sid, "still there?")
    assert refused.status_code == 409 and refused.json()["error"] == "session_expired"
    assert DialogueSession.objects.get(pk=sid).status == SessionStatus.EXPIRED
    other = open_customer(api, world_a)
    DialogueSession.objects.filter(pk=other).update(last_activity_at=timezone.now() - dt.timedelta(minutes=45))
    assert sessions_expire() == 1 and DialogueSession.objects.get(pk=other).status == SessionStatus.EXPIRED
    assert LedgerEvent.objects.of_type("session.expired").count() == 2


def test_a_conversation_is_rated_once(api: Any, world_a: Any) -> None:
    sid = open_customer(api, world_a)
    url = f"/api/sessions/{sid}/rating"
    assert api.post(url, {"stars": 6}, format="json").status_code == 400
    assert api.post(url, {"stars": 4, "comment": "helpful"}, format="json").status_code == 201
    assert api.post(url, {"stars": 5}, format="json").json()["error"] == "already_rated"
    assert Rating.objects.get().stars == 4 and LedgerEvent.objects.of_type("session.rated").count() == 1
    assert "helpful" not in json.dumps([e.payload for e in LedgerEvent.objects.of_type("session.rated")])


def test_cancel_answers_for_the_callers_session_only(api: Any, make_api: Any, world_a: Any) -> None:
    sid = open_customer(api, world_a)
    assert api.post(f"/api/sessions/{sid}/cancel").json() == {"cancelled": 0}
    assert make_api().post(f"/api/sessions/{sid}/cancel").status_code == 404


def test_a_turn_through_the_openai_compatible_provider(api: Any, world_a: Any, settings: Any) -> None:
    """The runtime speaks the protocol over a real socket: the model asks for a tool (with a
    tool the customer face doesn't have thrown in), gets the results, and answers."""
    teach(world_a, "Parking", "Customers park in the yard behind the shop.")
    seen: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> Any:
        seen.append(body)
        if len(seen) == 1:
            calls = [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "search_knowledge", "arguments": json.dumps({"query": "parking"})},
                },
                {
                    "id": "b",
                    "type": "function",
                    "function": {"name": "ingest_material", "arguments": json.dumps({"title": "x", "text": "y"})},
                },
            ]
            return 200, {}, completion(tool_calls=calls, prompt_tokens=50, completion_tokens=10)
        return (
            200,
            {},
            completion(text="You can park in the yard behind the shop.", prompt_tokens=80, completion_tokens=12),
        )

    with LLMServer(responder=respond) as server:
        settings.FACADE_LLM_PROVIDER = "openai"
        settings.FACADE_LLM_BASE_URL = server.url
        settings.FACADE_LLM_MODEL = "test-model"
        from facade.dialogue.runtime import providers

        providers._shared_openai.cache_clear()
        try:
            sid = open_customer(api, world_a)
            body = post(api, sid, "Where can I park?").json()
        finally:
            providers._shared_openai.cache_clear()
    assert body["reply"]["text"] == "You can park in the yard behind the shop."
    assert [c["title"] for c in body["reply"]["citations"]] == ["Parking"]
    offered = {tool["function"]["name"] for tool in seen[0]["tools"]}
    assert offered == {"search_knowledge", "submit_request", "request_handoff", "withdraw_request", "amend_request"}
    tool_messages = [m for m in seen[1]["messages"] if m["role"] == "tool"]
    assert [json.loads(m["content"])["outcome"] for m in tool_messages] == ["ok", "refused"]
    run = Run.objects.get()
    assert (run.provider, run.llm_call_count, run.tool_call_count, run.prompt_tokens) == ("openai", 2, 1, 130)
    assert CustomerRequest.objects.count() == 0


def test_peers_are_rate_limited_per_key(make_api: Any, world_a: Any, settings: Any) -> None:
    from facade.tenancy.services import peer_key_create

    settings.FACADE_RATE_PEER = "2/3600"  # an hour: the window never turns over mid-test
    codes: dict[str, list[int]] = {}
    for name in ("first", "second"):
        issued = peer_key_create(agent=world_a.agent, name=name, actor=Actor.human(world_a.owner.pk))
        client = make_api()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.key}")
        sid = open_customer(client, world_a)
        codes[name] = [post(client, sid, f"question {i}").status_code for i in range(3)]
    assert codes == {"first": [201, 201, 429], "second": [201, 201, 429]}
