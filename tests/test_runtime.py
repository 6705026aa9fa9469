"""The run loop, the tool registry and the offline model: faces, budgets, the guard, requests."""

from __future__ import annotations

import json
from typing import Any

import pytest

from approvals.contract import contract_compile
from facade.dialogue.models import CustomerRequest, DailyUsage, Message, Run, RunStatus, Span, TrustChange
from facade.dialogue.runtime.loop import run_cancel, turn_handle
from facade.dialogue.runtime.providers.base import ModelReply, ProviderError, ToolCall
from facade.dialogue.runtime.providers.offline import OfflineProvider
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.runtime.tools import registry
from facade.dialogue.services import request_transition, session_open
from facade.tenancy.models import Customer
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from facade.tenancy.services import agent_owner_remove, peer_key_create
from knowledge.models import KnowledgeHit, KnowledgeMiss
from knowledge.schemas import SourceIn
from knowledge.services import entry_propose
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify

pytestmark = pytest.mark.django_db

BUILT_OWNER_TOOLS = [
    "read_owner_inbox",
    "ingest_material",
    "remember_lesson",
    "read_customer_requests",
    "read_unanswered_questions",
    "add_confirmed_knowledge",
    "propose_change",
    "decide_change",
]
OWNER_TOOLS = BUILT_OWNER_TOOLS


def teach(world: Any, title: str, body: str, ref: str = "chat:1", **extra: Any) -> Any:
    return entry_propose(
        agent=world.agent,
        title=title,
        body=body,
        actor=Actor.human(world.owner.pk),
        source=SourceIn(type=extra.pop("source_type", "owner_dialogue"), ref=ref, version="1"),
        **extra,
    )


def customer_session(world: Any) -> Any:
    customer = Customer.objects.create(tenant=world.tenant)
    return session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer)


def peer_session(world: Any) -> Any:
    issued = peer_key_create(agent=world.agent, name="partner", actor=Actor.human(world.owner.pk))
    from facade.tenancy.models import PeerCredential

    return session_open(
        agent=world.agent, audience=Audience.PEER, peer=PeerCredential.objects.get(pk=issued.credential_id)
    )


def owner_session(world: Any) -> Any:
    return session_open(agent=world.agent, audience=Audience.OWNER, user=world.owner)


def call(name: str, arguments: Any = None, raw: str | None = None) -> ModelReply:
    args = raw if raw is not None else json.dumps(arguments or {})
    return ModelReply(
        tool_calls=[ToolCall(id=f"c-{name}", name=name, arguments=args)], prompt_tokens=10, completion_tokens=5
    )


def say(text: str) -> ModelReply:
    return ModelReply(text=text, prompt_tokens=10, completion_tokens=5)


def events(event_type: str) -> list[Any]:
    return list(LedgerEvent.objects.of_type(event_type))


# --- the offline model, end to end --------------------------------------------------------


def test_a_question_is_answered_from_approved_knowledge_with_its_citation(world_a: Any) -> None:
    entry = teach(world_a, "Opening hours", "The shop is open Monday to Saturday, 9 to 18.")
    teach(world_a, "Secret plans", "Pending material is not served.", ref="chat:2", confidence="0.1")
    session = customer_session(world_a)
    result = turn_handle(session=session, text="When is the shop open?")
    assert result.reply is not None and "Monday to Saturday" in result.reply.text
    assert result.reply.citations == [{"entry_id": entry.entry_id, "version": entry.number, "title": "Opening hours"}]
    assert "Pending material" not in result.reply.text
    run = Run.objects.get(message=result.message)
    assert (run.status, run.stop_reason, run.step_index, run.llm_call_count, run.tool_call_count) == (
        RunStatus.COMPLETED,
        "",
        1,
        2,
        1,
    )
    assert len(run.context_hash) == 64
    assert [(s.kind, s.name, s.outcome) for s in Span.objects.filter(run=run).order_by("pk")] == [
        ("model", "offline", "tool_calls"),
        ("tool", "search_knowledge", "ok"),
        ("model", "offline", "text"),
    ]
    assert KnowledgeHit.objects.filter(session_id=session.pk, version_id=entry.pk).count() == 1
    [finished] = events("run.finished")
    assert finished.payload["citations"] == 1 and "shop" not in json.dumps(finished.payload)
    assert ledger_verify(chain_id=world_a.tenant.pk).ok


def test_an_unknown_question_is_an_honest_miss(world_a: Any) -> None:
    session = customer_session(world_a)
    result = turn_handle(session=session, text="Do you repair vintage typewriters?")
    assert result.reply is not None and "don't know" in result.reply.text and result.reply.citations == []
    [miss] = KnowledgeMiss.objects.filter(session_id=session.pk)
    assert set(miss.topic_key.split()) <= {"repair", "vintage", "typewriters"}


@pytest.mark.parametrize(
    "language, ask, yes, when, contact",
    [
        ("en", "How much does a custom cake cost?", "yes please", "next month", "ana@example.com"),
        ("zh-hans", "定制蛋糕多少钱？", "好的", "下个月", "13800000000"),
    ],
)
def test_a_price_question_gets_the_boundary_then_a_registered_request(
    world_a: Any, language: str, ask: str, yes: str, when: str, contact: str
) -> None:
    session = customer_session(world_a)
    first = turn_handle(session=session, text=ask)
    assert first.reply is not None and first.reply.text.startswith(world_a.agent.boundary(language))
    assert Run.objects.get(message=first.message).needs_input
    second = turn_handle(session=session, text=yes)
    assert (
        second.reply is not None
        and second.request is None
        and second.run is not None
        and second.run.status == RunStatus.WAITING_INPUT
    )
    third = turn_handle(session=session, text=when)
    assert third.request is None
    summary = turn_handle(session=session, text=contact)
    assert summary.request is None and CustomerRequest.objects.count() == 0  # first the summary, then a yes
    assert summary.reply is not None and contact in summary.reply.text and when in summary.reply.text
    fourth = turn_handle(session=session, text=yes)
    assert (
        fourth.request is not None
        and fourth.request["state"] == "submitted"
        and fourth.request["next_actor"] == "owner"
    )
    request = CustomerRequest.objects.get(pk=fourth.request["id"])
    assert request.details == {"need": ask, "when": when, "contact": contact}
    assert f"#{request.pk}" in fourth.reply.text
    assert len(events("request.submitted")) == 1 and ask not in json.dumps(
        events("request.submitted")[0].payload, ensure_ascii=False
    )


def test_a_handoff_is_its_own_kind_of_request_and_event(world_a: Any) -> None:
    session = customer_session(world_a)
    provider = ScriptedProvider.of(call("request_handoff", {"reason": "wants a person"}), say("Someone will call."))
    result = turn_handle(session=session, text="can a human call me back?", provider=provider)
    request = CustomerRequest.objects.get()
    assert (request.kind, request.state, result.request is not None) == ("handoff", "submitted", True)
    [handoff] = events("handoff.submitted")
    assert (handoff.entity_type, handoff.entity_id, handoff.actor_id) == (
        "request",
        str(request.pk),
        f"customer:{session.customer_id}",
    )
    assert handoff.payload == {"session": str(session.pk), "state": "submitted", "fields": []}
    assert events("request.submitted") == []
    request_transition(request=request, to="accepted", actor=Actor.human(world_a.owner.pk))
    [moved] = events("request.transitioned")
    assert moved.payload == {"from": "submitted", "to": "accepted"} and moved.actor_id == f"user:{world_a.owner.pk}"


def test_wanting_something_done_is_clarified_in_the_agents_order(world_a: Any) -> None:
    contract_compile(
        agent=world_a.agent, changes={"clarification_order": ["need", "contact"]}, actor=Actor.platform("t")
    )
    session = customer_session(world_a)
    asked = turn_handle(session=session, text="I'd like to order a birthday cake with blue roses")
    assert asked.reply is not None and "reach you" in asked.reply.text
    assert turn_handle(session=session, text="ana@example.com").request is None
    done = turn_handle(session=session, text="yes")
    assert done.request is not None
    assert CustomerRequest.objects.get().details == {
        "need": "I'd like to order a birthday cake with blue roses",
        "contact": "ana@example.com",
    }


def confirmed_request(session: Any, details: dict[str, str] | None = None) -> Any:
    """A request registered the way the server allows: the model calls `submit_request`, shows
    the summary the server answers, and calls it again once the customer says yes."""
    arguments = {"summary": "a cake", "details": details or {"when": "Friday", "contact": "ana@example.com"}}
    turn_handle(
        session=session, text="a cake please", provider=ScriptedProvider.of(call("submit_request", arguments), shown)
    )
    provider = ScriptedProvider.of(call("submit_request", arguments), say("Registered."))
    result = turn_handle(session=session, text="yes", provider=provider)
    assert result.request is not None
    return result


def shown(messages: list[dict[str, Any]], tools: Any) -> ModelReply:
    """The model shows the summary the server's `needs_confirmation` answer gave it."""
    answer = json.loads(messages[-1]["content"])
    assert answer["outcome"] == "needs_confirmation"
    return say(f"Let me check. {answer['summary']}")


def test_completed_requests_raise_trust_and_a_blocked_reply_changes_nothing(world_a: Any) -> None:
    session = customer_session(world_a)
    result = confirmed_request(session)
    request = CustomerRequest.objects.get(pk=result.request["id"])
    for state in ("accepted", "in_progress", "done"):
        request = request_transition(request=request, to=state, actor=Actor.human(world_a.owner.pk))
    assert Customer.objects.get(pk=session.customer_id).trust == 55
    trust_events = LedgerEvent.objects.of_type("customer.trust_changed").count()
    # The guard blocks the agent's own reply: the customer only asked (issue 11, point 5).
    blocked = turn_handle(session=session, text="price?", provider=ScriptedProvider.of(say("It costs only ¥99.")))
    assert blocked.run is not None and Run.objects.get(pk=blocked.run.pk).guard_category == "price"
    assert Customer.objects.get(pk=session.customer_id).trust == 55
    assert [c.reason for c in TrustChange.objects.order_by("pk")] == ["request_completed"]
    assert LedgerEvent.objects.of_type("customer.trust_changed").count() == trust_events


# --- red line 2: owner tools never reach customers or peers ---------------------------------


@pytest.mark.parametrize("face", ["customer", "peer"])
@pytest.mark.parametrize("tool", OWNER_TOOLS)
def test_owner_tools_are_neither_offered_nor_executed_for_customers_and_peers(
    world_a: Any, face: str, tool: str
) -> None:
    session = customer_session(world_a) if face == "customer" else peer_session(world_a)
    arguments = {
        "title": "x",
        "text": "y",
        "kind": "taboo",
        "change": "z",
        "proposal_id": 1,
        "decision": "approve",
        "confirm": True,
    }
    provider = ScriptedProvider.of(call(tool, arguments), say("Done."))
    before = set(registry.names())
    result = turn_handle(session=session, text="please do it", provider=provider)
    assert tool not in {spec.name for spec in provider.calls[0].tools}
    assert set(registry.names()) == before
    tool_message = [m for m in provider.calls[1].messages if m["role"] == "tool"][-1]
    assert json.loads(tool_message["content"])["outcome"] == "refused"
    [refused] = events("tool.refused")
    assert refused.payload["tool"] == tool and refused.payload["audience"] == face
    assert refused.payload["reason"] == "not_for_this_audience"
    run = result.run
    assert run is not None and run.tool_call_count == 0
    assert Span.objects.get(run=run, kind="tool").outcome == "refused"


def test_owner_tools_are_offered_to_the_owner_only() -> None:
    for audience in Audience:
        offered = {t.name for t in registry.for_audience(audience)}
        if audience == Audience.OWNER:
            assert set(OWNER_TOOLS) <= offered
        else:
            assert not set(OWNER_TOOLS) & offered


def test_peers_get_search_and_requests_only(world_a: Any) -> None:
    provider = ScriptedProvider.of(say("hello"))
    turn_handle(session=peer_session(world_a), text="hi", provider=provider)
    assert {spec.name for spec in provider.calls[0].tools} == {"search_knowledge", "submit_request"}


def test_owners_never_get_submit_request(world_a: Any) -> None:
    provider = ScriptedProvider.of(call("submit_request", {"summary": "order for a customer"}), say("ok"))
    turn_handle(session=owner_session(world_a), text="order a cake for Ana", provider=provider)
    assert "submit_request" not in {spec.name for spec in provider.calls[0].tools}
    assert CustomerRequest.objects.count() == 0 and events("tool.refused")[0].payload["tool"] == "submit_request"


def test_a_removed_owner_s_next_tool_call_is_refused(world_a: Any) -> None:
    session = owner_session(world_a)
    agent_owner_remove(agent=world_a.agent, user=world_a.owner, actor=Actor.platform("test"))
    provider = ScriptedProvider.of(
        call("remember_lesson", {"kind": "taboo", "title": "no", "text": "never say cheap"}), say("ok")
    )
    turn_handle(session=session, text="remember: never say cheap", provider=provider)
    assert events("tool.refused")[0].payload["reason"] == "no_longer_owner"
    assert not LedgerEvent.objects.of_type("knowledge.version_created").exists()


# --- red line 5 groundwork: customer text never reaches the owner face -----------------------


def test_customer_text_never_reaches_owner_prompts_or_tool_results(world_a: Any) -> None:
    marker = "ZEBRA-7f3a-customer-marker"
    customer = customer_session(world_a)
    turn_handle(session=customer, text=f"I want {marker} delivered")
    turn_handle(session=customer, text=f"contact me at {marker}@example.com")
    turn_handle(session=customer, text="tomorrow")
    teach(
        world_a,
        f"Customer idea {marker}",
        f"Customers ask about {marker}",
        ref="session:1",
        source_type="customer_candidate",
    )
    provider = ScriptedProvider.of(
        call("search_knowledge", {"query": "customers ask about"}),
        call("read_owner_inbox", {}),
        say("That is all."),
    )
    turn_handle(session=owner_session(world_a), text="what is new?", provider=provider)
    seen = json.dumps([c.messages for c in provider.calls], ensure_ascii=False)
    assert marker not in seen
    inbox = json.loads([m for m in provider.calls[-1].messages if m["role"] == "tool"][-1]["content"])
    assert inbox["customer_candidates"]["count"] == 1 and inbox["pending_knowledge"] == []


# --- budgets and cancellation ---------------------------------------------------------------


def test_max_steps_ends_the_run_with_an_honest_reply(world_a: Any) -> None:
    world_a.agent.max_steps = 3
    world_a.agent.save(update_fields=["max_steps"])
    provider = ScriptedProvider.of(call("search_knowledge", {"query": "loop"}), repeat_last=True)
    result = turn_handle(session=customer_session(world_a), text="loop forever", provider=provider)
    run = result.run
    assert run is not None and (run.status, run.stop_reason, run.step_index, run.llm_call_count) == (
        RunStatus.OVER_BUDGET,
        "max_steps",
        3,
        3,
    )
    assert result.reply is not None and result.reply.stop_reason == "max_steps" and "limits" in result.reply.text


def test_the_turn_token_budget_ends_the_run(world_a: Any, settings: Any) -> None:
    settings.FACADE_TURN_TOKEN_LIMIT = 100
    provider = ScriptedProvider.of(
        ModelReply(
            tool_calls=[ToolCall("1", "search_knowledge", '{"query": "x"}')], prompt_tokens=90, completion_tokens=20
        ),
        say("never"),
    )
    result = turn_handle(session=customer_session(world_a), text="a long question", provider=provider)
    assert result.run is not None and result.run.stop_reason == "token_budget" and len(provider.calls) == 1
    assert result.reply is not None and result.reply.text


def test_the_daily_model_call_budget_is_per_tenant(world_a: Any, world_b: Any, settings: Any) -> None:
    settings.FACADE_DAILY_MODEL_CALLS = 2
    session = customer_session(world_a)
    first = turn_handle(session=session, text="hello")
    assert first.run is not None and first.run.status == RunStatus.COMPLETED
    turn_handle(session=session, text="hello again")
    provider = ScriptedProvider.of(say("never"))
    third = turn_handle(session=session, text="and again", provider=provider)
    assert third.run is not None and third.run.stop_reason == "daily_budget" and provider.calls == []
    assert third.reply is not None and "today" in third.reply.text
    assert DailyUsage.objects.get(tenant=world_a.tenant).model_calls == 2
    other = turn_handle(session=customer_session(world_b), text="hello")
    assert other.run is not None and other.run.status == RunStatus.COMPLETED


def test_the_daily_budget_counts_every_model_call_of_a_run(world_a: Any, settings: Any) -> None:
    # The first call is counted with the message, the later ones each in their own transaction.
    settings.FACADE_DAILY_MODEL_CALLS = 2
    provider = ScriptedProvider.of(
        call("search_knowledge", {"query": "a"}), call("search_knowledge", {"query": "b"}), say("never")
    )
    result = turn_handle(session=customer_session(world_a), text="a long task", provider=provider)
    run = result.run
    assert run is not None and (run.stop_reason, run.llm_call_count) == ("daily_budget", 2) and len(provider.calls) == 2
    assert DailyUsage.objects.get(tenant=world_a.tenant).model_calls == 2


def test_a_message_and_its_run_are_stored_together_or_not_at_all(world_a: Any, monkeypatch: Any) -> None:
    from facade.dialogue import events

    session = customer_session(world_a)

    def refuse(**kwargs: Any) -> Any:
        raise RuntimeError("ledger unavailable")

    # The message's event is appended through the dialogue app's event constructors.
    monkeypatch.setattr(events, "ledger_append", refuse)
    with pytest.raises(RuntimeError):
        turn_handle(session=session, text="hello")
    assert not Message.objects.filter(session=session).exists()
    assert not Run.objects.filter(session=session).exists()
    assert not DailyUsage.objects.filter(tenant=world_a.tenant).exists()


def test_cancel_stops_further_model_and_tool_calls(world_a: Any) -> None:
    session = customer_session(world_a)

    def cancel_now(messages: Any, tools: Any) -> ModelReply:
        run_cancel(session=session)
        return call("search_knowledge", {"query": "x"})

    provider = ScriptedProvider.of(cancel_now, say("never"))
    result = turn_handle(session=session, text="start", provider=provider)
    run = result.run
    assert run is not None and (run.status, run.stop_reason, run.llm_call_count, run.tool_call_count) == (
        RunStatus.CANCELLED,
        "cancelled",
        1,
        0,
    )
    assert len(provider.calls) == 1 and not Span.objects.filter(run=run, kind="tool").exists()


def test_a_provider_failure_is_a_stop_reason_and_an_honest_reply(world_a: Any) -> None:
    result = turn_handle(
        session=customer_session(world_a), text="hello?", provider=ScriptedProvider.of(ProviderError("timeout"))
    )
    assert result.run is not None and (result.run.status, result.run.stop_reason) == (
        RunStatus.FAILED,
        "provider_error",
    )
    assert result.reply is not None and "technical problem" in result.reply.text
    assert Span.objects.get(run=result.run).outcome == "timeout"


def test_invalid_arguments_get_one_repair_round_then_the_run_stops(world_a: Any) -> None:
    repaired = ScriptedProvider.of(
        call("search_knowledge", raw="{not json"), call("search_knowledge", {"query": "ok"}), say("fine")
    )
    result = turn_handle(session=customer_session(world_a), text="first", provider=repaired)
    assert result.run is not None and result.run.status == RunStatus.COMPLETED and result.run.llm_call_count == 3
    stubborn = ScriptedProvider.of(
        call("search_knowledge", {"query": 5, "extra": 1}), call("search_knowledge", raw="[]"), say("never")
    )
    stopped = turn_handle(session=customer_session(world_a), text="second", provider=stubborn)
    assert stopped.run is not None and (stopped.run.status, stopped.run.stop_reason) == (
        RunStatus.FAILED,
        "invalid_tool_arguments",
    )
    assert len(stubborn.calls) == 2


# --- the commitment guard on every outgoing reply --------------------------------------------


@pytest.mark.parametrize(
    "promise, category, rule",
    [
        ("It costs only ¥99, order now!", "price", "price.en.money"),
        ("We guarantee delivery within 3 days.", "deadline", "deadline.en.within_duration"),
        ("We guarantee it.", "outcome", "outcome.en.guarantee_word"),
        ("价格是100元，三天内送达。", "price", "price.zh.price_word_figure"),
    ],
)
def test_a_promise_in_a_customer_reply_becomes_the_boundary_wording(
    world_a: Any, promise: str, category: str, rule: str
) -> None:
    session = customer_session(world_a)
    result = turn_handle(session=session, text="how much and when?", provider=ScriptedProvider.of(say(promise)))
    assert result.reply is not None and promise not in result.reply.text
    assert result.reply.text.startswith(world_a.agent.boundary("en"))
    [blocked] = events("guard.blocked")
    # The event names the category and the rule that fired, never the text.
    assert (blocked.payload["category"], blocked.payload["rule"]) == (category, rule)
    assert promise not in json.dumps(blocked.payload, ensure_ascii=False)
    assert Run.objects.get(pk=result.run.pk).guard_category == blocked.payload["category"]


@pytest.mark.parametrize(
    "reply",
    [
        "It'll take our carpenter 4 days.",
        "做一张这样的桌子，师傅要花4天。",
        "Our tuner needs 2 hours for a grand piano.",
    ],
)
def test_a_figure_the_model_was_not_given_is_not_sent_whatever_the_wording(world_a: Any, reply: str) -> None:
    # Worded so that the pattern guard lets it pass; the grounding check stops it all the same.
    from guard.engine import guard_check

    assert not guard_check(reply).blocked
    session = customer_session(world_a)
    result = turn_handle(session=session, text="how long?", provider=ScriptedProvider.of(say(reply)))
    assert result.reply is not None and result.reply.text.startswith(world_a.agent.boundary("en"))
    [blocked] = events("guard.blocked")
    assert blocked.payload["category"] == "unsourced_figure" and reply not in json.dumps(
        blocked.payload, ensure_ascii=False
    )
    assert blocked.payload["rule"] == ""  # the grounding check has no named rules
    assert Run.objects.get(pk=result.run.pk).guard_category == "unsourced_figure"


def test_a_figure_from_approved_knowledge_the_run_searched_is_sent(world_a: Any) -> None:
    teach(world_a, "Tables", "A dining table takes our carpenter four days of work.")
    provider = ScriptedProvider.of(
        call("search_knowledge", {"query": "dining table carpenter"}), say("It'll take our carpenter 4 days.")
    )
    result = turn_handle(session=customer_session(world_a), text="how long for a table?", provider=provider)
    assert result.reply is not None and result.reply.text == "It'll take our carpenter 4 days."
    assert events("guard.blocked") == []


def test_a_figure_the_customer_gave_may_be_repeated(world_a: Any) -> None:
    result = turn_handle(
        session=customer_session(world_a),
        text="I need it within 10 days, is that something to ask?",
        provider=ScriptedProvider.of(say("I've noted that you need it within 10 days; the owner will confirm.")),
    )
    assert result.reply is not None and "10 days" in result.reply.text


def test_peers_replies_are_guarded_too_and_owner_replies_are_not(world_a: Any) -> None:
    peer = turn_handle(
        session=peer_session(world_a), text="quote?", provider=ScriptedProvider.of(say("It costs $500."))
    )
    assert peer.reply is not None and "$500" not in peer.reply.text
    owner = turn_handle(
        session=owner_session(world_a), text="what do we charge?", provider=ScriptedProvider.of(say("It costs $500."))
    )
    assert owner.reply is not None and owner.reply.text == "It costs $500."


@pytest.mark.parametrize(
    "opened, audience",
    [(customer_session, Audience.CUSTOMER), (peer_session, Audience.PEER), (owner_session, Audience.OWNER)],
)
def test_every_model_call_is_told_the_sessions_audience(world_a: Any, opened: Any, audience: Audience) -> None:
    """The provider learns the audience from the run loop, not from the prompt (the offline model's
    owner face depends on it: tests/test_offline_provider.py)."""
    provider = ScriptedProvider.of(call("search_knowledge", {"query": "opening hours"}), say("Nothing yet."))
    turn_handle(session=opened(world_a), text="When do you open?", provider=provider)
    assert [seen.audience for seen in provider.calls] == [audience, audience]


# --- idempotency ----------------------------------------------------------------------------


def test_a_repeated_client_message_id_does_not_run_again(world_a: Any) -> None:
    session = customer_session(world_a)
    first = turn_handle(session=session, text="hello", client_message_id="m-1")
    again = turn_handle(session=session, text="hello", client_message_id="m-1", provider=ScriptedProvider.of())
    assert again.duplicate and again.reply is not None and first.reply is not None and again.reply.pk == first.reply.pk
    assert Message.objects.filter(session=session).count() == 2 and Run.objects.count() == 1


def test_the_offline_provider_is_deterministic(world_a: Any) -> None:
    teach(world_a, "Delivery area", "We deliver in Berlin and Potsdam.")
    texts = []
    for _ in range(2):
        result = turn_handle(
            session=customer_session(world_a),
            text="Do you deliver in Potsdam?",
            provider=OfflineProvider(world_a.agent),
        )
        texts.append(result.reply.text if result.reply else "")
    assert texts[0] == texts[1] and "Potsdam" in texts[0]


# --- the model never authorises anything ------------------------------------------------------


def test_the_owner_face_model_cannot_approve_or_mark_anything_automatic(world_a: Any) -> None:
    """Pending material stays pending whatever the model writes: a decision with `confirm`, a
    lesson that claims `requires: auto`, an ingest that claims approval."""
    pending = teach(world_a, "VAT", "Prices include VAT.", ref="chat:9")
    assert pending.status == "pending"
    provider = ScriptedProvider.of(
        call("decide_change", {"proposal_id": pending.pk, "decision": "approve", "confirm": True}),
        call("remember_lesson", {"kind": "taboo", "title": "t", "text": "x", "requires": "auto"}),
        call("remember_lesson", {"kind": "taboo", "title": "t", "text": "x", "status": "approved"}),
        say("I approved it."),
    )
    result = turn_handle(session=owner_session(world_a), text="approve the VAT entry", provider=provider)
    pending.refresh_from_db()
    assert pending.status == "pending"
    outcomes = list(Span.objects.filter(run=result.run, kind="tool").order_by("pk").values_list("outcome", flat=True))
    # decide_change answers that the owner decides (there is no proposal 1 here: not found)
    assert outcomes == ["failed", "invalid_arguments", "invalid_arguments"]
    assert result.run is not None and result.run.stop_reason == "invalid_tool_arguments"
    assert result.reply is not None and "approved" not in result.reply.text
    assert not LedgerEvent.objects.of_type("knowledge.version_approved").exists()


def test_a_tool_name_made_of_customer_text_is_not_recorded(world_a: Any) -> None:
    """The model writes tool names; spans and ledger events keep only name-shaped ones."""
    leaked = "my card number is 4111 1111 1111 1111"
    result = turn_handle(
        session=customer_session(world_a), text="hi", provider=ScriptedProvider.of(call(leaked, {}), say("ok"))
    )
    [refused] = events("tool.refused")
    assert refused.payload["tool"] == "(not a tool name)" and refused.payload["reason"] == "unknown_tool"
    assert Span.objects.get(run=result.run, kind="tool").name == "(not a tool name)"
    assert "4111" not in json.dumps([e.payload for e in LedgerEvent.objects.all()])


@pytest.mark.django_db(transaction=True)
def test_a_remote_model_call_holds_no_database_connection(world_a: Any) -> None:
    """While a remote model thinks (seconds), the turn's database connection is back with the
    pool (or closed) instead of held idle; the run goes on afterwards."""
    from django.db import connection

    held: list[bool] = []

    def remote_step(messages: Any, tools: Any) -> ModelReply:
        held.append(connection.connection is not None)
        return say("Here you are.")

    provider = ScriptedProvider.of(remote_step)
    provider.remote = True
    result = turn_handle(session=customer_session(world_a), text="hello", provider=provider)
    assert held == [False]
    assert result.reply is not None and result.reply.text == "Here you are." and result.run is not None
    assert Run.objects.get(pk=result.run.pk).status == RunStatus.COMPLETED
