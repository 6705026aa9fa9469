"""Published prices and delivery options are what customers hear (issue 26 §1).

An L3 `pricing` or `delivery` change, proposed and decided by the owner with the e-mailed code,
published by the contract compiler as version N: a customer asking a price (by the item's whole
name, a shorter one, in English or Chinese, or the prices in general) is told the published amount
with its currency, cited as the price list of version N — in the reply's text, in its recorded
citations, through the API.  Quoting it is not committing: the outgoing check lets the quote and a
faithful restatement through and still stops the price applied to this customer's order and a
figure the list does not hold.  A price not in the list still gets the boundary wording; a rolled
back list is not quoted from the next turn on."""

from __future__ import annotations

import json
import zoneinfo
from typing import Any

import pytest
from django.utils import timezone
from llm_server import LLMServer, text_reply, tool_call, tool_call_reply

from approvals.contract import contract_compile, contract_rollback, live_terms
from approvals.published import found_in, published_citation
from conftest import TenantWorld
from facade.dialogue.models import DialogueSession, Message, Run
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.prompts import customer_prompt
from facade.dialogue.runtime.providers.base import ModelReply, ToolCall
from facade.dialogue.runtime.providers.offline import OfflineProvider
from facade.dialogue.runtime.providers.openai import OpenAICompatibleProvider
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.services import session_open
from facade.tenancy.models import Customer
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from guard.models import DeliveredViolation
from guard.outgoing import outgoing_check
from guard.recheck import recheck_day
from ledger.models import LedgerEvent
from tests.test_approvals_apply import changes, decide_by_code, propose
from tests.test_approvals_decide import strict_client

pytestmark = pytest.mark.django_db

PRICES = {
    "currency": "EUR",
    "items": [
        {"name": "Birthday cake (8 people)", "amount": "35.00"},
        {"name": "Cupcake", "amount": "3.50"},
        {"name": "生日蛋糕（8人份）", "amount": "35.00"},
    ],
}
DELIVERY = {
    "options": [
        {"channel": "courier", "note": "within the city, 2 working days"},
        {"channel": "pickup", "note": "at the shop, Monday to Saturday"},
    ]
}
BOUNDARY = {"en": "I can't confirm prices, dates or outcomes here", "zh-hans": "价格、时间和结果我在这里无法确认"}
LIST_TITLE = {"en": "Price list (version 2)", "zh-hans": "价目表（第2版）"}
DELIVERY_TITLE = {"en": "Delivery options (version 2)", "zh-hans": "交付选项（第2版）"}


def customer(world: TenantWorld) -> DialogueSession:
    return session_open(
        agent=world.agent, audience=Audience.CUSTOMER, customer=Customer.objects.create(tenant=world.tenant)
    )


def ask(world: TenantWorld, text: str, provider: Any = None) -> Message:
    """One question in a new customer conversation, answered by the offline model (or `provider`)."""
    session = customer(world)
    result = turn_handle(session=session, text=text, provider=provider or OfflineProvider(session.agent))
    assert result.reply is not None
    return result.reply


def published_by_the_owner(world: TenantWorld, mailoutbox: Any, kind: str, payload: Any) -> int:
    """The owner proposes the change and approves it with the e-mailed code: the compiler publishes."""
    owner = strict_client(world.owner)
    change = propose(owner, world, kind, payload)
    assert (change["level"], change["status"]) == (3, "pending")
    decided = decide_by_code(owner, world, change, mailoutbox)
    assert decided.status_code == 200, decided.content
    assert decided.json()["status"] == "applied"
    return int(decided.json()["contract_version"])


def guarded(reply: Message) -> str:
    """The category the outgoing check stopped the run's reply for ("" when it was delivered)."""
    return str(Run.objects.get(message_id=reply.reply_to_id).guard_category)


def no_block() -> None:
    assert not LedgerEvent.objects.of_type("guard.blocked").exists()


# --- the price list ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "language, question, told",
    [
        (
            "en",
            "How much is the Birthday cake (8 people)?",
            ["[1] Price list (version 2): Birthday cake (8 people): 35.00 EUR"],
        ),
        ("en", "How much is a birthday cake?", ["[1] Price list (version 2): Birthday cake (8 people): 35.00 EUR"]),
        ("en", "What do cupcakes cost?", ["[1] Price list (version 2): Cupcake: 3.50 EUR"]),
        (
            "en",
            "What are your prices?",
            ["Birthday cake (8 people): 35.00 EUR", "Cupcake: 3.50 EUR", "生日蛋糕（8人份）: 35.00 EUR"],
        ),
        ("zh-hans", "生日蛋糕多少钱？", ["[1] 价目表（第2版）：生日蛋糕（8人份）：35.00 EUR"]),
        (
            "zh-hans",
            "你们的价格是多少？",
            ["[1] 价目表（第2版）：", "Birthday cake (8 people)：35.00 EUR", "Cupcake：3.50 EUR"],
        ),
    ],
)
def test_after_the_owner_publishes_prices_a_customer_is_told_the_published_amount_with_its_citation(
    world_a: TenantWorld, mailoutbox: Any, language: str, question: str, told: list[str]
) -> None:
    before = ask(world_a, question)
    assert BOUNDARY[language] in before.text  # nothing published yet: the owner confirms prices
    assert published_by_the_owner(world_a, mailoutbox, "pricing", PRICES) == 2

    reply = ask(world_a, question)
    for said in told:
        assert said in reply.text, reply.text
    assert BOUNDARY[language] not in reply.text
    assert reply.citations == [{"entry_id": None, "version": 2, "title": LIST_TITLE[language], "published": "pricing"}]
    assert guarded(reply) == ""
    no_block()


def test_the_citation_reaches_the_customer_through_the_api(world_a: TenantWorld, mailoutbox: Any, api: Any) -> None:
    published_by_the_owner(world_a, mailoutbox, "pricing", PRICES)
    session = api.post(f"/api/agents/{world_a.agent.slug}/sessions", {}, format="json").json()["id"]
    sent = api.post(f"/api/sessions/{session}/messages", {"text": "How much is a birthday cake?"}, format="json")
    assert sent.status_code == 201, sent.content
    reply = sent.json()["reply"]
    assert "35.00 EUR" in reply["text"]
    expected = {"entry_id": None, "version": 2, "title": "Price list (version 2)", "published": "pricing"}
    assert reply["citations"] == [expected]
    history = api.get(f"/api/sessions/{session}/messages").json()
    assert [m["citations"] for m in history["messages"] if m["role"] == "agent"] == [[expected]]


@pytest.mark.parametrize(
    "language, question",
    [("en", "How much is a wedding cake?"), ("zh-hans", "婚礼蛋糕多少钱？")],
)
def test_a_price_the_list_does_not_name_still_gets_the_boundary_wording(
    world_a: TenantWorld, mailoutbox: Any, language: str, question: str
) -> None:
    published_by_the_owner(world_a, mailoutbox, "pricing", PRICES)
    reply = ask(world_a, question)
    assert BOUNDARY[language] in reply.text, reply.text
    # The list is shown for what it holds; the wedding cake's price stays the owner's to confirm.
    assert f"[1] {LIST_TITLE[language]}" in reply.text
    no_block()


def test_a_price_list_rolled_back_is_no_longer_quoted_from_the_next_turn(world_a: TenantWorld, mailoutbox: Any) -> None:
    owner = strict_client(world_a.owner)
    change = propose(owner, world_a, "pricing", PRICES)
    assert decide_by_code(owner, world_a, change, mailoutbox).json()["status"] == "applied"
    assert "35.00 EUR" in ask(world_a, "How much is a birthday cake?").text

    rollback = owner.post(f"{changes(world_a)}/{change['id']}/rollback", format="json").json()
    assert decide_by_code(owner, world_a, rollback, mailoutbox).json()["status"] == "applied"
    assert live_terms(world_a.agent).version == 3
    for language, question in (("en", "How much is a birthday cake?"), ("zh-hans", "生日蛋糕多少钱？")):
        reply = ask(world_a, question)
        assert "35.00" not in reply.text and BOUNDARY[language] in reply.text, reply.text
        assert not [c for c in reply.citations if c.get("published")]


def test_a_new_price_list_replaces_the_old_one_on_the_next_turn(world_a: TenantWorld) -> None:
    contract_compile(agent=world_a.agent, changes={"pricing": PRICES}, actor=Actor.human(world_a.owner.pk))
    contract_compile(
        agent=world_a.agent,
        changes={"pricing": {"currency": "EUR", "items": [{"name": "Birthday cake (8 people)", "amount": "38.00"}]}},
        actor=Actor.human(world_a.owner.pk),
    )
    reply = ask(world_a, "How much is a birthday cake?")
    assert "[1] Price list (version 3): Birthday cake (8 people): 38.00 EUR" in reply.text
    assert "35.00" not in reply.text
    contract_rollback(agent=world_a.agent, to_version=1, actor=Actor.human(world_a.owner.pk))
    assert "38.00" not in ask(world_a, "How much is a birthday cake?").text


# --- delivery options ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "language, question, told",
    [
        (
            "en",
            "Do you deliver?",
            ["Courier: within the city, 2 working days", "Pick-up: at the shop, Monday to Saturday"],
        ),
        ("zh-hans", "可以送货吗？", ["快递：within the city, 2 working days", "自取：at the shop, Monday to Saturday"]),
    ],
)
def test_published_delivery_options_are_what_a_customer_is_told(
    world_a: TenantWorld, mailoutbox: Any, language: str, question: str, told: list[str]
) -> None:
    assert all(said not in ask(world_a, question).text for said in told)
    published_by_the_owner(world_a, mailoutbox, "delivery", DELIVERY)
    reply = ask(world_a, question)
    for said in told:
        assert said in reply.text, reply.text
    assert f"[1] {DELIVERY_TITLE[language]}" in reply.text
    assert reply.citations == [
        {"entry_id": None, "version": 2, "title": DELIVERY_TITLE[language], "published": "delivery"}
    ]
    no_block()


def test_a_delivery_day_the_options_do_not_promise_still_gets_the_boundary(world_a: TenantWorld) -> None:
    contract_compile(agent=world_a.agent, changes={"delivery": DELIVERY["options"]}, actor=Actor.platform("tests"))
    reply = ask(world_a, "Can you deliver it by Friday?")
    assert "Courier: within the city, 2 working days" in reply.text  # what is published, quoted
    assert BOUNDARY["en"] in reply.text  # the day itself is the owner's to confirm


# --- any model: the search gives it the list; the outgoing check judges what it says -------------


def searched_then(text: str, query: str = "birthday cake price") -> ScriptedProvider:
    return ScriptedProvider.of(
        ModelReply(tool_calls=[ToolCall(id="c1", name="search_knowledge", arguments=json.dumps({"query": query}))]),
        ModelReply(text=text, needs_input=False),
    )


def test_a_model_is_told_of_the_published_list_and_the_search_gives_it(world_a: TenantWorld) -> None:
    contract_compile(agent=world_a.agent, changes={"pricing": PRICES}, actor=Actor.platform("tests"))
    prompt = customer_prompt(world_a.agent, "en", ["search_knowledge"], terms=live_terms(world_a.agent))
    assert "published its price list (contract version 2)" in prompt.system
    assert "35.00" not in prompt.system  # the amounts come with the search result, cited
    model = searched_then("The Birthday cake (8 people) is 35.00 EUR [1].")
    ask(world_a, "How much is the birthday cake?", model)
    [tool] = [m for m in model.calls[1].messages if m.get("role") == "tool"]
    result = json.loads(tool["content"])["results"][0]
    assert (result["title"], result["snippet"], result["cite"]) == (
        "Price list (version 2)",
        "Birthday cake (8 people): 35.00 EUR",
        1,
    )


def test_an_openai_compatible_model_gets_the_list_and_its_quote_is_delivered(
    world_a: TenantWorld, llm_server: LLMServer
) -> None:
    contract_compile(agent=world_a.agent, changes={"pricing": PRICES}, actor=Actor.platform("tests"))
    llm_server.push(
        tool_call_reply(tool_call("c1", "search_knowledge", {"query": "birthday cake price"})),
        text_reply("Our Birthday cake (8 people) is 35.00 EUR [1]."),
    )
    model = OpenAICompatibleProvider(llm_server.url, "test-model", timeout=5.0, max_retries=0, backoff=0.0)
    reply = ask(world_a, "How much is the birthday cake?", model)
    assert reply.text == "Our Birthday cake (8 people) is 35.00 EUR [1]." and guarded(reply) == ""
    assert reply.citations == [
        {"entry_id": None, "version": 2, "title": "Price list (version 2)", "published": "pricing"}
    ]
    first, second = (request.json["messages"] for request in llm_server.requests)
    assert "published its price list (contract version 2)" in first[0]["content"]
    [tool] = [m for m in second if m["role"] == "tool"]
    assert "Birthday cake (8 people): 35.00 EUR" in tool["content"]


@pytest.mark.parametrize(
    "said",
    [
        "[1] Price list (version 2): Birthday cake (8 people): 35.00 EUR",
        "The Birthday cake (8 people) is 35.00 EUR [1].",
        "Our birthday cake (8 people) is listed at €35 [1].",
        "[1] Price list (version 2): Birthday cake (8 people): 35.00 EUR; Cupcake: 3.50 EUR",
    ],
)
def test_quoting_or_restating_the_published_list_is_delivered(world_a: TenantWorld, said: str) -> None:
    contract_compile(agent=world_a.agent, changes={"pricing": PRICES}, actor=Actor.platform("tests"))
    reply = ask(world_a, "How much is the birthday cake?", searched_then(said))
    assert reply.text == said and guarded(reply) == ""
    assert reply.citations[0]["published"] == "pricing"
    no_block()


@pytest.mark.parametrize(
    "said, question",
    [
        ("[1] Price list (version 2): Birthday cake (8 people): 35.00 EUR\nSo your total is €70.", "birthday cake"),
        ("[1] 价目表（第2版）：生日蛋糕（8人份）：35.00 EUR\n您的订单一共70欧元。", "生日蛋糕多少钱"),
        ("The Birthday cake (8 people) is 35.00 EUR [1], so for your two cakes you'll pay €70.", "birthday cake"),
        ("The Birthday cake (8 people) is 30.00 EUR [1].", "birthday cake"),  # not the published amount
        ("A wedding cake is 35.00 EUR [1].", "wedding cake price"),  # not a listed item
        ("[1] Price list (version 2): Birthday cake (8 people): 35.00 EUR\nFor you I can do €30.", "birthday cake"),
    ],
)
def test_applying_the_list_to_the_customers_order_or_a_figure_off_it_is_blocked(
    world_a: TenantWorld, said: str, question: str
) -> None:
    contract_compile(agent=world_a.agent, changes={"pricing": PRICES}, actor=Actor.platform("tests"))
    model = searched_then(said, question)
    reply = ask(world_a, question, model)
    # The model had the published list from its search, cited as the list of version 2 …
    [tool] = [m for m in model.calls[1].messages if m.get("role") == "tool"]
    assert json.loads(tool["content"])["results"][0]["published"] == "pricing"
    # … and what it made of it for this customer is not sent.
    assert reply.text != said and guarded(reply), reply.text
    assert reply.citations == []
    assert LedgerEvent.objects.of_type("guard.blocked").exists()


def test_a_model_quoting_a_list_that_was_rolled_back_is_blocked_from_the_next_turn(world_a: TenantWorld) -> None:
    said = "[1] Price list (version 2): Birthday cake (8 people): 35.00 EUR"
    contract_compile(agent=world_a.agent, changes={"pricing": PRICES}, actor=Actor.platform("tests"))
    assert ask(world_a, "birthday cake price", searched_then(said)).text == said
    contract_rollback(agent=world_a.agent, to_version=1, actor=Actor.platform("tests"))
    model = searched_then(said)
    reply = ask(world_a, "birthday cake price", model)
    [tool] = [m for m in model.calls[1].messages if m.get("role") == "tool"]
    assert "Price list" not in tool["content"]
    assert reply.text != said and guarded(reply) and BOUNDARY["en"] in reply.text


def content(pricing: Any = None, delivery: Any = None) -> dict[str, Any]:
    return {"pricing": pricing or {"currency": "EUR", "items": []}, "delivery": delivery or []}


@pytest.mark.parametrize(
    "text, language, blocked",
    [
        ("[1] Price list (version 4): Cupcake: 3.50 EUR", "en", False),
        ("Cupcakes are 3.50 EUR each on our price list [1].", "en", False),
        ("[1] 价目表（第4版）：Cupcake：3.50 EUR", "zh-hans", False),
        ("[1] Price list (version 4): Cupcake: 3.50 EUR\nThat's what you'll pay.", "en", True),
        ("[1] Price list (version 4): Cupcake: 3.50 EUR\nYour total is 7.00 EUR.", "en", True),
        ("[1] 价目表（第4版）：Cupcake：3.50 EUR\n您一共要付7欧元。", "zh-hans", True),
        ("Cupcakes are 3.00 EUR [1].", "en", True),
        ("[1] Price list (version 4): Cupcake: 3.00 EUR", "en", True),
    ],
)
def test_the_outgoing_check_reads_the_published_list_as_cited_text(text: str, language: str, blocked: bool) -> None:
    [part] = found_in(
        "how much is a cupcake?" if language == "en" else "Cupcake多少钱？",
        content=content({"currency": "EUR", "items": [{"name": "Cupcake", "amount": "3.50"}]}),
        version=4,
        language=language,
    )
    verdict = outgoing_check(text, given=[part.snippet], citations=[part.citation()])
    assert verdict.blocked is blocked, verdict
    # Without the published list cited, a price is never delivered.
    assert outgoing_check(text, given=[part.snippet], citations=[]).blocked


def test_the_nightly_recheck_reads_a_delivered_quote_of_the_list_as_the_run_did(world_a: TenantWorld) -> None:
    contract_compile(agent=world_a.agent, changes={"pricing": PRICES}, actor=Actor.platform("tests"))
    replies = [ask(world_a, "How much is a birthday cake?"), ask(world_a, "你们的价格是多少？")]
    assert all("35.00 EUR" in r.text and r.citations for r in replies)
    Message.objects.filter(pk__in=[r.pk for r in replies]).update(ruleset_hash="an older rule set")
    day = timezone.localdate(replies[0].created_at, timezone=zoneinfo.ZoneInfo(world_a.tenant.time_zone))
    result = recheck_day(agent_id=world_a.agent.pk, day=day)
    assert result.checked >= 2 and result.violations == 0
    assert not DeliveredViolation.objects.exists()


def test_a_citation_is_rebuilt_from_the_version_it_names() -> None:
    from approvals.published import cited_again, recorded

    prices = {"currency": "EUR", "items": [{"name": "Cupcake", "amount": "3.50"}]}
    [part] = found_in("what are your prices?", content=content(prices), version=7, language="zh-hans")
    again = cited_again(recorded(part.citation()), content(prices))
    assert (
        again
        == part.citation()
        == published_citation(part="pricing", version=7, title="价目表（第7版）", units=["Cupcake：3.50 EUR"])
    )


def test_in_strict_composition_the_published_list_is_quoted_too(world_a: TenantWorld) -> None:
    contract_compile(
        agent=world_a.agent, changes={"pricing": PRICES, "composition_mode": "strict"}, actor=Actor.platform("tests")
    )
    reply = ask(world_a, "How much is a birthday cake?")
    assert "[1] Price list (version 2): Birthday cake (8 people): 35.00 EUR" in reply.text, reply.text
    assert guarded(reply) == "" and reply.citations[0]["published"] == "pricing"


LISTED = content(PRICES, DELIVERY["options"])


@pytest.mark.parametrize(
    "question, language, expected",
    [
        # An item by its whole name, a shorter one, a plural, its own words only, in either language.
        (
            "How much is the Birthday cake (8 people)?",
            "en",
            [("pricing", ["Birthday cake (8 people): 35.00 EUR"], True)],
        ),
        ("birthday cakes?", "en", [("pricing", ["Birthday cake (8 people): 35.00 EUR"], True)]),
        ("What do cupcakes cost?", "en", [("pricing", ["Cupcake: 3.50 EUR"], True)]),
        ("生日蛋糕多少钱？", "zh-hans", [("pricing", ["生日蛋糕（8人份）：35.00 EUR"], True)]),
        ("请问一份蛋糕多少钱", "zh-hans", [("pricing", ["生日蛋糕（8人份）：35.00 EUR"], True)]),
        # The prices in general: the whole list.
        ("What are your prices?", "en", [("pricing", 3, True)]),
        ("Do you have a price list?", "en", [("pricing", 3, True)]),
        ("你们的价格是多少？", "zh-hans", [("pricing", 3, True)]),
        # A price of something not listed: the list, not answering.
        ("How much is a wedding cake?", "en", [("pricing", 3, False)]),
        ("婚礼蛋糕多少钱？", "zh-hans", [("pricing", 3, False)]),
        # Delivery: the options; a day, a time or a price they do not state is not answered.
        ("Do you deliver?", "en", [("delivery", 2, True)]),
        ("可以送货吗？", "zh-hans", [("delivery", 2, True)]),
        ("Can I pick it up at the shop?", "en", [("delivery", 2, True)]),
        ("Can you deliver it tomorrow?", "en", [("delivery", 2, False)]),
        ("明天能送到吗？", "zh-hans", [("delivery", 2, False)]),
        ("How much is delivery?", "en", [("delivery", 2, False)]),
        # Neither.
        ("When is the shop open?", "en", []),
        ("营业时间是几点？", "zh-hans", []),
        ("Hello!", "en", []),
    ],
)
def test_which_part_of_the_published_contract_a_question_gets(
    question: str, language: str, expected: list[tuple[str, Any, bool]]
) -> None:
    found = found_in(question, content=LISTED, version=5, language=language)
    shown = [
        (p.part, list(p.units) if isinstance(want, list) else len(p.units), p.matched)
        for p, (_, want, _m) in zip(found, expected, strict=False)
    ]
    assert len(found) == len(expected) and shown == expected, [(p.part, p.units, p.matched) for p in found]


def test_nothing_is_published_without_a_contract_version_or_a_list() -> None:
    assert found_in("What are your prices?", content=LISTED, version=None, language="en") == []
    assert found_in("What are your prices?", content=content(), version=3, language="en") == []
    assert found_in("Do you deliver?", content=content(), version=3, language="en") == []


# --- issue 26 §1, what was left: an item in both languages, the replay, metrics, strict quotes ----

BILINGUAL = {
    "currency": "EUR",
    "items": [
        {
            "name": "Birthday cake (8 people)",
            "names": {"en": "Birthday cake (8 people)", "zh-hans": "生日蛋糕（8人份）"},
            "amount": "35.00",
        },
        {"name": "Cupcake", "amount": "3.50"},
    ],
}


@pytest.mark.parametrize(
    "language, question, told",
    [
        ("zh-hans", "生日蛋糕多少钱？", "[1] 价目表（第2版）：生日蛋糕（8人份）：35.00 EUR"),
        ("zh-hans", "请问一份蛋糕多少钱", "[1] 价目表（第2版）：生日蛋糕（8人份）：35.00 EUR"),
        ("en", "How much is a birthday cake?", "[1] Price list (version 2): Birthday cake (8 people): 35.00 EUR"),
    ],
)
def test_an_item_named_in_both_languages_is_told_by_either_name_in_the_customers_language(
    world_a: TenantWorld, mailoutbox: Any, language: str, question: str, told: str
) -> None:
    assert published_by_the_owner(world_a, mailoutbox, "pricing", BILINGUAL) == 2
    assert live_terms(world_a.agent).pricing["items"][0]["names"]["zh-hans"] == "生日蛋糕（8人份）"
    reply = ask(world_a, question)
    assert told in reply.text, reply.text
    assert BOUNDARY[language] not in reply.text and "Cupcake" not in reply.text
    assert reply.citations == [{"entry_id": None, "version": 2, "title": LIST_TITLE[language], "published": "pricing"}]
    no_block()


@pytest.mark.parametrize(
    "question, language, units",
    [
        ("生日蛋糕多少钱？", "zh-hans", ["生日蛋糕（8人份）：35.00 EUR"]),
        ("How much is the birthday cake?", "zh-hans", ["生日蛋糕（8人份）：35.00 EUR"]),
        ("birthday cake 多少钱", "zh-hans", ["生日蛋糕（8人份）：35.00 EUR"]),
        ("How much is the 生日蛋糕?", "en", ["Birthday cake (8 people): 35.00 EUR"]),
        ("你们的价格是多少？", "zh-hans", ["生日蛋糕（8人份）：35.00 EUR", "Cupcake：3.50 EUR"]),
    ],
)
def test_a_question_meets_every_name_of_an_item_and_gets_its_line_in_its_language(
    question: str, language: str, units: list[str]
) -> None:
    [part] = found_in(question, content=content(BILINGUAL), version=2, language=language)
    assert (list(part.units), part.matched) == (units, True)


@pytest.mark.parametrize(
    "names, problem",
    [
        ({"fr": "Gâteau"}, "pricing: unknown language fr in the names of 'Cake'"),
        ({"zh-hans": " "}, "pricing: the names of 'Cake' must map languages to non-empty text"),
        (["Cake", "蛋糕"], "pricing: the names of 'Cake' must map languages to non-empty text"),
    ],
)
def test_the_compiler_refuses_names_that_are_not_per_language(names: Any, problem: str) -> None:
    from approvals.contract_rules import contract_problems, default_content

    contract = {
        "mission": "",
        "boundary_wording": {"en": "No."},
        "clarification_order": ["need"],
        "request_flow": {"initial": "new", "states": {"new": {"next_actor": "owner", "to": []}}},
        **default_content(),
    }
    good = {"currency": "EUR", "items": [{"name": "Cake", "amount": "5.00"}]}
    assert contract_problems({**contract, "pricing": good}) == []  # an item with one name stays valid
    bilingual = {"currency": "EUR", "items": [{"name": "Cake", "names": {"zh-hans": "蛋糕"}, "amount": "5.00"}]}
    assert contract_problems({**contract, "pricing": bilingual}) == []
    bad = {"currency": "EUR", "items": [{"name": "Cake", "names": names, "amount": "5.00"}]}
    assert problem in contract_problems({**contract, "pricing": bad})


def test_a_proposal_takes_names_per_language_and_refuses_an_unknown_one(world_a: TenantWorld) -> None:
    owner = strict_client(world_a.owner)
    named = owner.post(changes(world_a), {"kind": "pricing", "payload": BILINGUAL, "summary": "x"}, format="json")
    assert named.status_code == 201 and named.json()["payload"] == BILINGUAL, named.content
    bad = {"currency": "EUR", "items": [{"name": "Cake", "names": {"fr": "Gâteau"}, "amount": "5.00"}]}
    response = owner.post(changes(world_a), {"kind": "pricing", "payload": bad, "summary": "x"}, format="json")
    assert response.status_code == 400, response.content
    old = owner.post(changes(world_a), {"kind": "pricing", "payload": PRICES, "summary": "x"}, format="json")
    assert old.status_code == 201 and old.json()["payload"] == PRICES  # written as it was, no `names`


def test_the_owner_names_an_item_in_both_languages_on_the_contract_page(world_a: TenantWorld) -> None:
    from django.test import Client

    from approvals.models import ChangeProposal

    client = Client()
    client.force_login(world_a.owner)
    page = f"/owner/{world_a.agent.slug}/contract"
    posted = client.post(
        page + "/change",
        {
            "kind": "pricing",
            "currency": "EUR",
            "summary": "Cakes in both languages",
            "name": ["Birthday cake (8 people)", "Cupcake", "", ""],
            "name_zh": ["生日蛋糕（8人份）", "", "月饼", ""],
            "amount": ["35.00", "3.50", "12.00", ""],
        },
    )
    assert posted.status_code == 302
    proposal = ChangeProposal.objects.get(agent=world_a.agent, kind="pricing")
    assert proposal.payload["items"] == [
        {
            "name": "Birthday cake (8 people)",
            "names": {"en": "Birthday cake (8 people)", "zh-hans": "生日蛋糕（8人份）"},
            "amount": "35.00",
        },
        {"name": "Cupcake", "amount": "3.50"},
        {"name": "月饼", "amount": "12.00"},
    ]
    contract_compile(agent=world_a.agent, changes={"pricing": proposal.payload}, actor=Actor.platform("tests"))
    for language, hint in (
        ("en", "Give an item its name in English and in Chinese"),
        ("zh-hans", "请为每一项填写英文和中文名称"),
    ):
        html = client.get(page, HTTP_ACCEPT_LANGUAGE=language).content.decode()
        # The live list shows each item by both its names, and the form has them in their columns.
        assert (
            '<span>Birthday cake (8 people)</span><span class="other-name"> / </span><span>生日蛋糕（8人份）</span>'
            in html
        )
        assert 'name="name" value="Birthday cake (8 people)"' in html
        assert 'name="name_zh" value="生日蛋糕（8人份）"' in html
        assert 'name="name_zh" value="月饼"' in html  # one Chinese name: in the Chinese column
        assert hint in html


def test_the_replay_preview_of_a_pricing_proposal_answers_with_the_proposed_list(world_a: TenantWorld) -> None:
    from approvals.models import ChangeProposal
    from approvals.replay import proposal_replay_run
    from approvals.services import proposal_create
    from tests.test_replay import card_html, snapshot

    contract_compile(agent=world_a.agent, changes={"pricing": PRICES}, actor=Actor.platform("tests"))
    asked = [ask(world_a, "How much is a birthday cake?"), ask(world_a, "生日蛋糕多少钱？")]
    assert all("35.00 EUR" in reply.text for reply in asked)
    ask(world_a, "When do you open?")

    def replayed(pricing: Any) -> dict[str, int]:
        proposal = proposal_create(
            agent=world_a.agent,
            kind="pricing",
            payload=pricing,
            summary="Prices",
            origin="owner_dialogue",
            actor=Actor.human(world_a.owner.pk),
        )
        before = snapshot(world_a)
        replay = proposal_replay_run(proposal_id=proposal.pk)
        assert replay is not None and replay.status == "done"
        assert snapshot(world_a) == {**before, "ledger": before["ledger"] + 1}  # nothing but its event
        ChangeProposal.objects.filter(pk=proposal.pk).update(status="rejected")
        return {k: int(replay.counts[k]) for k in ("affected", "affected_changed", "elsewhere", "elsewhere_changed")}

    # The same list proposed again: the customers asking a price would be told the same.
    assert replayed(PRICES) == {"affected": 2, "affected_changed": 0, "elsewhere": 1, "elsewhere_changed": 0}
    # A new amount: the preview answers with it, so both price questions' replies change.
    names = ["Birthday cake (8 people)", "Cupcake", "生日蛋糕（8人份）"]
    dearer = {"currency": "EUR", "items": [{"name": name, "amount": "38.00"} for name in names]}
    assert replayed(dearer) == {"affected": 2, "affected_changed": 2, "elsewhere": 1, "elsewhere_changed": 0}
    pending = proposal_create(
        agent=world_a.agent,
        kind="delivery",
        payload=DELIVERY,
        summary="Delivery",
        origin="owner_dialogue",
        actor=Actor.human(world_a.owner.pk),
    )
    replay = proposal_replay_run(proposal_id=pending.pk)
    assert replay is not None and replay.status == "done" and replay.counts["affected"] == 0
    assert "Customer turns it concerns: 0." in card_html(world_a, pending)


def test_the_replay_of_a_delivery_proposal_tells_of_the_proposed_options(world_a: TenantWorld) -> None:
    from approvals.replay import proposal_replay_run
    from approvals.services import proposal_create

    ask(world_a, "Do you deliver?")
    ask(world_a, "可以送货吗？")
    proposal = proposal_create(
        agent=world_a.agent,
        kind="delivery",
        payload=DELIVERY,
        summary="Delivery",
        origin="owner_dialogue",
        actor=Actor.human(world_a.owner.pk),
    )
    replay = proposal_replay_run(proposal_id=proposal.pk)
    assert replay is not None and replay.status == "done"
    assert (replay.counts["affected"], replay.counts["affected_changed"]) == (2, 2)


def test_a_reply_citing_only_the_published_list_is_no_knowledge_hit(world_a: TenantWorld) -> None:
    from rsi.metrics import agent_metrics
    from tests.test_replay import teach

    teach(world_a, "Opening hours", "We open at nine every weekday.")
    contract_compile(agent=world_a.agent, changes={"pricing": PRICES}, actor=Actor.platform("tests"))
    priced, opening = ask(world_a, "How much is a birthday cake?"), ask(world_a, "When do you open?")
    assert [c.get("published") for c in priced.citations] == ["pricing"]
    assert opening.citations and opening.citations[0]["entry_id"] is not None
    today = agent_metrics(world_a.agent, days=1).rows[-1]
    assert (today.knowledge_answered, today.knowledge_questions, today.knowledge_hit) == (1, 1, 1.0)


def test_in_strict_composition_only_the_asked_items_are_quoted(world_a: TenantWorld) -> None:
    contract_compile(
        agent=world_a.agent, changes={"pricing": PRICES, "composition_mode": "strict"}, actor=Actor.platform("tests")
    )
    reply = ask(world_a, "How much is a birthday cake?")
    assert "[1] Price list (version 2): Birthday cake (8 people): 35.00 EUR" in reply.text, reply.text
    assert "Cupcake" not in reply.text and "生日蛋糕" not in reply.text
    assert guarded(reply) == "" and reply.citations[0]["published"] == "pricing"
    both = ask(world_a, "How much are the cupcakes and the birthday cake?")
    assert both.text.count("[1] Price list (version 2)") == 2 and "生日蛋糕" not in both.text, both.text
    # The prices in general: the whole list.
    everything = ask(world_a, "What are your prices?")
    assert "Birthday cake (8 people): 35.00 EUR; Cupcake: 3.50 EUR" in everything.text, everything.text


def test_the_inbox_card_of_a_price_change_names_each_item_in_both_languages(world_a: TenantWorld) -> None:
    from html import unescape

    from approvals.models import ChangeProposal
    from tests.test_replay import card_html

    contract_compile(agent=world_a.agent, changes={"pricing": PRICES}, actor=Actor.platform("tests"))
    owner = strict_client(world_a.owner)
    change = propose(owner, world_a, "pricing", BILINGUAL)

    for language in ("en", "zh-hans"):
        html = unescape(card_html(world_a, ChangeProposal.objects.get(pk=change["id"]), language))
        assert "Birthday cake (8 people) / 生日蛋糕（8人份）" in html, html
        assert "Cupcake" in html
