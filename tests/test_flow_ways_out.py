"""Issue 26 §3: the request flow lets customers out — through the real runtime and the offline
model, in English and Chinese.

A question is a question (可以礼品包装吗？ is no yes), answered, and the open question asked again;
a question about a registered request is answered from its state (skill `request_status`), never
a new order; a field refused twice offers a way out (passed on to the owner, or "cancel") instead
of a third identical refusal; a discount, a special price or a promise is a decision only the
business makes — said so, offered to be passed on, recorded with its own stop reason and no
knowledge miss.  Every reply added here passes the outgoing check."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache

from approvals.contract import contract_compile, live_terms
from facade.dialogue.intents import OWNER_DECISION
from facade.dialogue.models import CustomerRequest, Run
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.offline import QUESTIONS, TEXT
from facade.dialogue.runtime.request_status import NEXT, STATES
from facade.dialogue.runtime.summary import SUMMARY
from facade.dialogue.runtime.ways_out import WAYS
from facade.dialogue.services import request_transition, session_open
from facade.tenancy.models import Customer
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from knowledge.models import KnowledgeMiss
from knowledge.schemas import SourceIn
from knowledge.services import entry_propose
from ledger.models import LedgerEvent

pytestmark = pytest.mark.django_db

LANGUAGES = ("en", "zh-hans")


@pytest.fixture(autouse=True)
def _fresh_rate_windows() -> None:
    cache.clear()


def with_status_skill(world: Any) -> None:
    skills = [*live_terms(world.agent).skill_ids, "request_status"]
    contract_compile(agent=world.agent, changes={"skill_ids": skills}, actor=Actor.platform("test"), caused_by="test")


def customer_session(world: Any) -> Any:
    customer = Customer.objects.create(tenant=world.tenant)
    return session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer)


def say(session: Any, *texts: str) -> list[str]:
    replies = []
    for text in texts:
        result = turn_handle(session=session, text=text)
        assert result.reply is not None
        replies.append(str(result.reply.text))
    return replies


def teach(world: Any, title: str, body: str) -> None:
    entry_propose(
        agent=world.agent,
        title=title,
        body=body,
        actor=Actor.human(world.owner.pk),
        source=SourceIn(type="owner_dialogue", ref="chat:1", version="1"),
    )


def unguarded(session: Any) -> None:
    """Every reply of the session went out as written: the outgoing check blocked none."""
    assert not Run.objects.filter(session=session).exclude(guard_category="").exists()


# --- a question is a question -------------------------------------------------------------------

SCRIPTS = {
    "en": ("How much is a birthday cake?", "Can you gift wrap it?", "yes"),
    "zh-hans": ("生日蛋糕多少钱？", "可以礼品包装吗？", "好的"),
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_question_after_the_offer_is_answered_and_the_offer_made_again(world_a: Any, language: str) -> None:
    teach(
        world_a,
        "Gift wrapping" if language == "en" else "礼品包装",
        "We gift wrap every cake. 每个蛋糕都可以礼品包装。",
    )
    session = customer_session(world_a)
    price, question, yes = SCRIPTS[language]
    offered, answered = say(session, price, question)
    assert offered.endswith(TEXT[language]["offer"])
    # Not a yes (可以 is "OK"): answered from knowledge, then the same offer, not the flow.
    assert "gift wrap" in answered.casefold() or "礼品包装" in answered
    assert answered.endswith(WAYS[language]["offer_again"])
    assert QUESTIONS[language]["when"] not in answered and CustomerRequest.objects.count() == 0
    # A yes now takes the offer up, with the price question as what is needed.
    [started] = say(session, yes)
    assert started.endswith(QUESTIONS[language]["when"])
    unguarded(session)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_demo_s_chinese_loop_is_gone(world_a: Any, language: str) -> None:
    """After "by when?", a discount asked for and the need said again get no "not a date" refusal."""
    session = customer_session(world_a)
    want, discount = {
        "en": ("I'd like to order a birthday cake", "Give me 20% off"),
        "zh-hans": ("我想订一个生日蛋糕", "给我打八折"),
    }[language]
    first, decision, again = say(session, want, discount, want)
    assert first.endswith(QUESTIONS[language]["when"])
    assert TEXT[language]["bad_when"] not in decision and TEXT[language]["bad_when"] not in again
    assert decision.startswith(WAYS[language]["decision"]) and decision.endswith(WAYS[language]["pass_offer"])
    assert again == QUESTIONS[language]["when"]
    assert not KnowledgeMiss.objects.exists()
    unguarded(session)


# --- a request's state ------------------------------------------------------------------------

STATUS = {
    "en": ("I'd like to order a birthday cake", "Friday", "ana@example.com", "yes", "Is my order confirmed?"),
    "zh-hans": ("我想订一个生日蛋糕", "周五", "13800000000", "是的", "我的订单确认了吗？"),
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_question_about_a_registered_request_is_answered_from_its_state(world_a: Any, language: str) -> None:
    with_status_skill(world_a)
    session = customer_session(world_a)
    *_, registered, asked = say(session, *STATUS[language])
    request = CustomerRequest.objects.get()
    assert f"#{request.pk}" in registered
    assert asked.startswith(STATES[language]["submitted"].format(id=request.pk))
    # Not a new order: no clarification question, no second request.
    assert not any(q in asked for q in QUESTIONS[language].values()) and CustomerRequest.objects.count() == 1
    owner = Actor.human(world_a.owner.pk)
    request_transition(request=request, to="accepted", actor=owner)
    [accepted] = say(session, STATUS[language][-1])
    assert accepted.startswith(STATES[language]["accepted"].format(id=request.pk))
    request_transition(request=request, to="cancelled", actor=owner)
    [cancelled] = say(session, STATUS[language][-1])
    assert cancelled.startswith(STATES[language]["cancelled"].format(id=request.pk))
    assert CustomerRequest.objects.count() == 1
    unguarded(session)


@pytest.mark.parametrize("language", LANGUAGES)
def test_without_the_skill_a_status_question_still_starts_no_order(world_a: Any, language: str) -> None:
    session = customer_session(world_a)
    *_, asked = say(session, *STATUS[language])
    assert not any(q in asked for q in QUESTIONS[language].values()) and CustomerRequest.objects.count() == 1


def test_the_owner_having_seen_a_request_is_said(world_a: Any) -> None:
    from facade.dialogue.services import request_reply

    with_status_skill(world_a)
    session = customer_session(world_a)
    say(session, *STATUS["en"][:4])
    request = CustomerRequest.objects.get()
    request_reply(request=request, text="We'll look at the flavours.", actor=Actor.human(world_a.owner.pk))
    [seen] = say(session, "Did the owner see my request?")
    assert seen.startswith(STATES["en"]["submitted_seen"].format(id=request.pk))


# --- the same field refused twice offers a way out -------------------------------------------

REFUSED = {
    "en": ("I'd like to order a birthday cake", "it depends on the oven", "it depends on my mum", "yes"),
    "zh-hans": ("我想订一个生日蛋糕", "烤箱热的时候", "月亮变蓝的时候", "好的"),
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_contact_refused_twice_offers_the_way_out_too(world_a: Any, language: str) -> None:
    session = customer_session(world_a)
    want, when = {"en": ("I'd like to order a birthday cake", "Friday"), "zh-hans": ("我想订一个生日蛋糕", "周五")}[
        language
    ]
    bad, worse = {"en": ("my neighbour", "the blue house"), "zh-hans": ("我的邻居", "蓝色的房子")}[language]
    first, second = say(session, want, when, bad, worse)[2:]
    assert first.startswith(TEXT[language]["bad_contact"])
    assert second.startswith(WAYS[language]["still_bad_contact"]) and second.endswith(WAYS[language]["way_out"])
    unguarded(session)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_field_refused_twice_offers_a_way_out_and_never_a_third_identical_refusal(
    world_a: Any, language: str
) -> None:
    session = customer_session(world_a)
    want, bad, worse, yes = REFUSED[language]
    asked, first, second, third = say(session, want, bad, worse, bad)
    assert asked == QUESTIONS[language]["when"]
    assert first.startswith(TEXT[language]["bad_when"])
    assert second.startswith(WAYS[language]["still_bad_when"]) and second.endswith(WAYS[language]["way_out"])
    assert len({first, second, third}) >= 2 and not first == second == third
    assert third != second  # no two refusals alike in a row
    [passed] = say(session, worse, yes)[1:]
    request = CustomerRequest.objects.get()
    assert request.kind == "handoff" and request.details == {"need": want}
    assert passed == TEXT[language]["handoff"].format(id=request.pk, next=TEXT[language]["next_owner"])
    unguarded(session)


@pytest.mark.parametrize("language", LANGUAGES)
def test_without_a_handoff_the_way_out_is_cancel_and_no_refusal_repeats(world_a: Any, language: str) -> None:
    changes = {"skill_ids": ["knowledge_answers", "request_intake"]}
    contract_compile(agent=world_a.agent, changes=changes, actor=Actor.platform("test"), caused_by="test")
    session = customer_session(world_a)
    want, bad, worse, _yes = REFUSED[language]
    replies = say(session, want, bad, worse, bad, worse)
    assert replies[2].startswith(WAYS[language]["still_bad_when"]) and WAYS[language]["cancel_hint"] in replies[2]
    assert replies[2].endswith(QUESTIONS[language]["when"])
    assert all(a != b for a, b in zip(replies[1:], replies[2:], strict=False))  # no refusal twice alike in a row
    assert say(session, "cancel" if language == "en" else "算了") == [TEXT[language]["cancelled"]]
    unguarded(session)


@pytest.mark.parametrize("language, words", [("en", "pass it on"), ("zh-hans", "转给店主吧")])
def test_the_way_out_can_be_typed(world_a: Any, language: str, words: str) -> None:
    session = customer_session(world_a)
    want, bad, *_ = REFUSED[language]
    [out] = say(session, want, bad, words)[2:]
    request = CustomerRequest.objects.get()
    assert request.kind == "handoff" and request.details == {"need": want} and f"#{request.pk}" in out


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_no_to_the_way_out_asks_the_field_again(world_a: Any, language: str) -> None:
    session = customer_session(world_a)
    want, bad, worse, _yes = REFUSED[language]
    no, when = {"en": ("no", "Friday"), "zh-hans": ("不", "周五")}[language]
    back, then = say(session, want, bad, worse, no, when)[3:]
    assert back == QUESTIONS[language]["when"]
    assert then == QUESTIONS[language]["contact"] and not CustomerRequest.objects.exists()


# --- a decision only the business can make ----------------------------------------------------

DECISIONS = {"en": ("Give me 20% off", "yes"), "zh-hans": ("给我打八折", "好的")}


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_discount_is_the_owner_s_decision_never_a_knowledge_gap(world_a: Any, language: str) -> None:
    session = customer_session(world_a)
    discount, yes = DECISIONS[language]
    [said] = say(session, discount)
    assert said == f"{WAYS[language]['decision']}{'' if language == 'zh-hans' else ' '}{WAYS[language]['pass_offer']}"
    assert not KnowledgeMiss.objects.exists()  # no topic for the review
    run = Run.objects.get(session=session)
    assert run.stop_reason == OWNER_DECISION
    [finished] = [e for e in LedgerEvent.objects.of_type("run.finished") if e.payload["message_id"] == run.message_id]
    assert finished.payload["stop_reason"] == OWNER_DECISION
    [passed] = say(session, yes)
    request = CustomerRequest.objects.get()
    assert request.kind == "handoff" and request.details == {"asked": discount}
    assert f"#{request.pk}" in passed
    unguarded(session)


def test_a_hosted_model_s_search_for_a_discount_records_no_miss(world_a: Any) -> None:
    """Whatever the model does with it: the search tool records no knowledge miss for it."""
    from facade.dialogue.runtime.providers.base import ModelReply, ToolCall
    from facade.dialogue.runtime.providers.scripted import ScriptedProvider

    session = customer_session(world_a)
    search = ToolCall(id="c1", name="search_knowledge", arguments='{"query": "20% off"}')
    provider = ScriptedProvider.of(ModelReply(tool_calls=[search]), ModelReply(text="The owner decides that."))
    turn_handle(session=session, text="Give me 20% off", provider=provider)
    assert not KnowledgeMiss.objects.exists()
    assert Run.objects.get(session=session).stop_reason == OWNER_DECISION


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_state_of_the_flow_is_read_to_the_customer_and_none_commits(world_a: Any, language: str) -> None:
    """Each state of the default request flow, as the customer asks after it: its own sentence,
    through the outgoing check (nothing blocked: the over-commitment rate stays 0)."""
    with_status_skill(world_a)
    owner = Actor.human(world_a.owner.pk)
    question = STATUS[language][-1]
    moves = {
        "needs_info": ["needs_info"],
        "in_progress": ["accepted", "in_progress"],
        "done": ["accepted", "in_progress", "done"],
        "declined": ["declined"],
    }
    for state, path in moves.items():
        session = customer_session(world_a)
        say(session, *STATUS[language][:4])
        request = CustomerRequest.objects.filter(session=session).get()
        for to in path:
            request = request_transition(request=request, to=to, actor=owner)
        [told] = say(session, question)
        assert told.startswith(STATES[language][state].format(id=request.pk)), state
        unguarded(session)
    session = customer_session(world_a)
    say(session, *STATUS[language][:4])
    request = CustomerRequest.objects.filter(session=session).get()
    say(session, {"en": "cancel my request", "zh-hans": "撤回请求"}[language])
    [told] = say(session, question)
    assert told.startswith(STATES[language]["withdrawn"].format(id=request.pk))
    unguarded(session)


# --- the demo's contract tells customers where their request stands ----------------------------


def _seed() -> str:
    import io

    from django.core.management import call_command

    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


def test_the_demo_contract_has_the_request_status_skill_from_version_1() -> None:
    from approvals.contract import live_contract
    from facade.tenancy.models import AgentProfile

    _seed()
    agent = AgentProfile.objects.get(slug="demo-shop")
    live = live_contract(agent)
    assert live is not None and live.version == 1 and "request_status" in live.skill_ids
    _seed()  # idempotent: no new version
    assert live_contract(agent).version == 1  # type: ignore[union-attr]


def test_a_demo_seeded_before_gets_the_skill_unless_an_owner_changed_the_contract() -> None:
    from approvals.contract import live_contract
    from facade.tenancy.models import AgentProfile

    _seed()
    agent = AgentProfile.objects.get(slug="demo-shop")
    seed = Actor.platform("manage.py seed_demo")
    old = ["knowledge_answers", "request_intake", "handoff"]
    contract_compile(agent=agent, changes={"skill_ids": old}, actor=seed, caused_by="seed_demo")
    assert "contract:" in _seed()
    assert "request_status" in live_contract(agent).skill_ids  # type: ignore[union-attr]
    # An owner's own choice stands: a contract the owner published is left as it is.
    contract_compile(agent=agent, changes={"skill_ids": old}, actor=Actor.human(1), caused_by="chg_1")
    version = live_contract(agent).version  # type: ignore[union-attr]
    assert "contract:" not in _seed()
    assert live_contract(agent).version == version  # type: ignore[union-attr]
    assert live_contract(agent).skill_ids == old  # type: ignore[union-attr]


def test_the_demo_customer_face_answers_is_my_order_confirmed() -> None:
    from facade.tenancy.models import AgentProfile

    _seed()
    agent = AgentProfile.objects.get(slug="demo-shop")
    customer = Customer.objects.create(tenant=agent.tenant)
    session = session_open(agent=agent, audience=Audience.CUSTOMER, customer=customer)
    *_, asked = say(session, *STATUS["en"])
    request = CustomerRequest.objects.get()
    assert asked.startswith(STATES["en"]["submitted"].format(id=request.pk))


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_ways_out_in_strict_composition(world_a: Any, language: str) -> None:
    """In strict mode the same replies are composed by the server from published templates and the
    request's status line: nothing is refused."""
    skills = [*live_terms(world_a.agent).skill_ids, "request_status"]
    changes = {"skill_ids": skills, "composition_mode": "strict"}
    contract_compile(agent=world_a.agent, changes=changes, actor=Actor.platform("test"), caused_by="test")
    session = customer_session(world_a)
    discount, yes = DECISIONS[language]
    [said] = say(session, discount)
    assert said.startswith(WAYS[language]["decision"]) and said.endswith(WAYS[language]["pass_offer"])
    say(session, yes)
    request = CustomerRequest.objects.get()
    [state] = say(session, STATUS[language][-1])
    assert state == STATES[language]["submitted"].format(id=request.pk) + ("" if language == "zh-hans" else " ") + str(
        NEXT[language]["owner"]
    )
    unguarded(session)


def test_a_hosted_model_is_told_the_ways_out_of_the_tools_it_is_offered(world_a: Any) -> None:
    from facade.dialogue.runtime.prompts import customer_prompt

    everything = customer_prompt(world_a.agent, "en", ["search_knowledge", "request_handoff", "read_request_status"])
    assert "read_request_status" in everything.system and "decision only the owner makes" in everything.system
    bare = customer_prompt(world_a.agent, "en", ["search_knowledge"])
    assert "read_request_status" not in bare.system and "request_handoff" not in bare.system
    assert "open question again" in bare.system


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_question_before_the_yes_keeps_what_is_passed_on(world_a: Any, language: str) -> None:
    session = customer_session(world_a)
    discount, yes = DECISIONS[language]
    question = {"en": "Do you bake on Sundays?", "zh-hans": "你们周日烤蛋糕吗？"}[language]
    _, answered, _ = say(session, discount, question, yes)
    assert answered.endswith(WAYS[language]["pass_offer"])
    assert CustomerRequest.objects.get().details == {"asked": discount}


@pytest.mark.parametrize(
    "language, question",
    [
        ("en", "Are cakes gluten-free?"),
        ("en", "Gift wrapping?"),
        ("zh-hans", "是不是要提前订"),
        ("zh-hans", "礼品包装？"),
    ],
)
def test_a_question_mid_flow_is_answered_whatever_its_form(world_a: Any, language: str, question: str) -> None:
    session = customer_session(world_a)
    want = {"en": "I'd like to order a birthday cake", "zh-hans": "我想订一个生日蛋糕"}[language]
    _, aside = say(session, want, question)
    assert not aside.startswith(TEXT[language]["bad_when"]) and aside.endswith(QUESTIONS[language]["when"])
    assert TEXT[language]["unknown_short"] in aside  # searched like any question (and noted for the owner)


def test_the_owner_sees_what_was_passed_on_to_decide(world_a: Any) -> None:
    from django.test import Client
    from django.urls import reverse

    session = customer_session(world_a)
    say(session, *DECISIONS["en"])
    client = Client()
    client.force_login(world_a.owner)
    page = client.get(reverse("owner-requests", args=[world_a.agent.slug])).content.decode()
    assert "Asked of you to decide" in page and "Give me 20% off" in page


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_need_said_again_is_the_request_s_need(world_a: Any, language: str) -> None:
    session = customer_session(world_a)
    first, again, when, contact = {
        "en": ("I'd like a cake", "I'd like to order a birthday cake", "Friday", "ana@example.com"),
        "zh-hans": ("我想要蛋糕", "我想订一个生日蛋糕", "周五", "13800000000"),
    }[language]
    summary = say(session, first, again, when, contact)[-1]
    assert again in summary and first not in summary.replace(again, "")
    say(session, {"en": "yes", "zh-hans": "是的"}[language])
    assert CustomerRequest.objects.get().details["need"] == again


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_status_question_before_any_request_resumes_the_flow(world_a: Any, language: str) -> None:
    with_status_skill(world_a)
    session = customer_session(world_a)
    want, when, contact, _yes, status = STATUS[language]
    asked = say(session, want, when, contact, status)[-1]
    assert asked.startswith(TEXT[language]["not_found"]) and asked.endswith(SUMMARY[language]["closing"])
