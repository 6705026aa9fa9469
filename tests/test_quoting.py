"""Quoting is not committing (issue 11, point 2).

A price, a time or a condition that stands in an approved entry the run's search returned may be
shown as the entry says it, attributed to it; applying it to the customer's own case, or a figure
no entry gave, is still stopped by the server's checks (the commitment guard and the grounding
check), whatever the model wrote.  The demo shop's own entries plus a price list uploaded through
the real upload path (Markdown, the worker's job), in English and Chinese."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.cache import cache
from django.core.management import call_command

from facade.dialogue.models import DialogueSession, Run
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.base import ModelReply, ToolCall
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.tenancy.models import AgentProfile
from guard.quoting import applies_to_customer, unquoted
from knowledge.jobs import ingest_job_execute
from knowledge.models import EntryVersion
from ledger.models import LedgerEvent

pytestmark = pytest.mark.django_db

# A small menu with prices, as an owner would upload it.  Its titles share words with the demo's
# own entries ("shop", 本店), so that asking the opening hours finds the price list too.
PRICE_LIST = """# Shop price list
- Birthday cakes: from €35
- Wedding cakes: from €180
- Cupcakes: €3 each

# Delivery
We deliver within the city for €5. Orders placed before noon are delivered the next day.

# 本店价目表
- 生日蛋糕：35 欧元起
- 婚礼蛋糕：180 欧元起

# 送货
市内送货收费 5 欧元。中午前下单，次日送达。
"""


@pytest.fixture
def shop(api: Any, make_api: Any) -> AgentProfile:
    """The demo shop (`seed_demo`) after its owner uploaded the price list."""
    cache.clear()
    call_command("seed_demo", stdout=io.StringIO())
    agent = AgentProfile.objects.get(slug="demo-shop")
    owner = make_api()
    owner.force_login(agent.owners.get())
    handle = io.BytesIO(PRICE_LIST.encode())
    handle.name = "prices.md"
    job = owner.post(f"/api/agents/{agent.slug}/knowledge/uploads", {"file": handle}, format="multipart")
    assert job.status_code == 202, job.content
    assert ingest_job_execute(job.json()["id"]) == "done"
    uploaded = EntryVersion.objects.filter(agent=agent, source_ref__startswith="prices.md#")
    assert sorted(uploaded.values_list("status", flat=True)) == ["approved"] * 4
    return agent


def chat(api: Any, agent: AgentProfile, *questions: str) -> list[dict[str, Any]]:
    """A customer's conversation over the API; each question's reply."""
    session = api.post(f"/api/agents/{agent.slug}/sessions", {}, format="json").json()["id"]
    replies = []
    for text in questions:
        response = api.post(f"/api/sessions/{session}/messages", {"text": text}, format="json")
        assert response.status_code == 201, response.content
        replies.append(response.json()["reply"])
    return replies


def titles(reply: dict[str, Any]) -> list[str]:
    return [c["title"] for c in reply["citations"]]


# --- the offline model on the demo shop with a price list ----------------------------------


@pytest.mark.parametrize(
    "question, quoted, title",
    [
        ("When is the shop open?", "Monday to Saturday", "Opening hours"),
        ("Do you deliver?", "We deliver within the city for €5.", "Delivery"),
        ("How much is a birthday cake?", "Birthday cakes: from €35", "Shop price list"),
        ("本店营业时间是几点？", "本店周一至周六营业", "营业时间"),
        ("你们送货吗？", "市内送货收费 5 欧元。中午前下单，次日送达。", "送货"),
        ("生日蛋糕多少钱？", "生日蛋糕：35 欧元起", "本店价目表"),
    ],
)
def test_knowledge_with_prices_answers_from_the_entries_with_their_citation(
    api: Any, shop: AgentProfile, question: str, quoted: str, title: str
) -> None:
    [reply] = chat(api, shop, question)
    assert quoted in reply["text"], reply["text"]
    assert title in titles(reply), reply
    number = titles(reply).index(title) + 1
    assert f"[{number}] {title}" in reply["text"]  # attributed to the entry it stands in
    assert not LedgerEvent.objects.of_type("guard.blocked").exists()


@pytest.mark.parametrize(
    "question, boundary",
    [
        ("How much is a birthday cake?", "I can't confirm prices, dates or outcomes here"),
        ("So my birthday cake will cost €35 and be ready on Friday?", "I can't confirm prices, dates or outcomes here"),
        ("生日蛋糕多少钱？", "价格、时间和结果我在这里无法确认"),
    ],
)
def test_a_price_question_quotes_the_list_and_leaves_the_customers_own_case_to_the_owner(
    api: Any, shop: AgentProfile, question: str, boundary: str
) -> None:
    """The quote says what the list says; what this customer's cake costs and when it is ready is
    the owner's to confirm, and the offer to register a request still leads into the request."""
    [reply] = chat(api, shop, question)
    text = reply["text"]
    assert ("€35" in text or "35 欧元起" in text) and boundary in text
    assert "your cake will cost" not in text.lower()
    assert text.rstrip().endswith(("?", "？"))  # the offer: a "yes" starts the request
    assert Run.objects.latest("started_at").needs_input


def test_a_quoted_price_question_leads_into_a_request(api: Any, shop: AgentProfile) -> None:
    first, second = chat(api, shop, "How much is a birthday cake?", "yes")
    assert "€35" in first["text"]
    assert "By when would you like it?" in second["text"]


# --- whatever the model writes: the server's checks ----------------------------------------


def search(query: str) -> ModelReply:
    return ModelReply(tool_calls=[ToolCall(id="c1", name="search_knowledge", arguments=json.dumps({"query": query}))])


def say(text: str) -> ModelReply:
    return ModelReply(text=text)


def customer_session(agent: AgentProfile) -> DialogueSession:
    from facade.dialogue.services import session_open
    from facade.tenancy.models import Customer
    from facade.tenancy.rules import Audience

    customer = Customer.objects.create(tenant=agent.tenant)
    return session_open(agent=agent, audience=Audience.CUSTOMER, customer=customer)


LIST = "• Birthday cakes: from €35 • Wedding cakes: from €180 • Cupcakes: €3 each"


@pytest.mark.parametrize(
    "reply",
    [
        f"Here is what I found:\n[1] Shop price list: {LIST}",
        "Our shop price list says: birthday cakes from €35 [1]",
        'Shop price list: "Birthday cakes: from €35" [1]',
        "[1] Shop price list says: Wedding cakes: from €180. Cupcakes: €3 each",
    ],
)
def test_an_attributed_quote_of_the_cited_entry_is_sent(shop: AgentProfile, reply: str) -> None:
    result = turn_handle(
        session=customer_session(shop),
        text="How much is a birthday cake?",
        provider=ScriptedProvider.of(search("price list"), say(reply)),
    )
    assert result.reply is not None and result.reply.text == reply
    assert result.reply.citations[0]["title"] == "Shop price list"
    assert not LedgerEvent.objects.of_type("guard.blocked").exists()


@pytest.mark.parametrize(
    "reply, category",
    [
        # Applying the list to this customer's case.
        ("Your cake will cost €35 and be ready on Friday.", "price"),
        (f"[1] Shop price list: {LIST}\nSo your cake will cost €35 and be ready on Friday.", "price"),
        ("Our shop price list says: your cake will cost €35 [1]", "price"),
        ("Our shop price list says your cake will cost: from €35 [1]", "price"),
        (
            "[1] Shop price list: Birthday cakes: from €35, ready on Friday",
            "deadline",
        ),  # the price restated, not the day
        ("Birthday cakes from €35, yours by Friday.", "price"),
        # A figure no entry gave, attributed or not.
        ("Our shop price list says: birthday cakes from €30 [1]", "price"),
        ("[1] Shop price list: Birthday cakes: from €35 • Wedding cakes: from €150", "price"),
        ("Birthday cakes take 4 days to bake.", "unsourced_figure"),
        # Attributed to the wrong entry, or to no entry of this run.
        ("[2] Shop price list: Birthday cakes: from €35", "price"),
        ("[1] Delivery: Birthday cakes: from €35", "price"),
        # A piece of a sentence that drops its condition.
        ("[1] Delivery: delivered the next day", "deadline"),
        # A quote, then words that apply it to the customer.
        ("Our shop price list says: birthday cakes from €35 [1]. That's what you'll pay.", "applied_quote"),
        (f"[1] Shop price list: {LIST}\nSo that is what yours costs.", "applied_quote"),
    ],
)
def test_a_commitment_or_a_figure_no_entry_gave_is_still_blocked(shop: AgentProfile, reply: str, category: str) -> None:
    result = turn_handle(
        session=customer_session(shop),
        text="How much is a birthday cake and when is it ready?",
        provider=ScriptedProvider.of(search("price list delivery"), say(reply)),
    )
    assert result.reply is not None and result.reply.text.startswith(shop.boundary("en"))
    assert result.reply.citations == []
    [blocked] = LedgerEvent.objects.of_type("guard.blocked")
    assert blocked.payload["category"] == category


@pytest.mark.parametrize(
    "reply, category",
    [
        ("[1] 本店价目表：• 生日蛋糕：35 欧元起 • 婚礼蛋糕：180 欧元起\n您的蛋糕35欧元，周五做好。", "price"),
        ("根据「本店价目表」：生日蛋糕：35 欧元起 [1]。您付这么多就行。", "applied_quote"),
        ("根据「本店价目表」：生日蛋糕 30 欧元起 [1]", "price"),
    ],
)
def test_in_chinese_too(shop: AgentProfile, reply: str, category: str) -> None:
    quoted = turn_handle(
        session=customer_session(shop),
        text="生日蛋糕多少钱？",
        provider=ScriptedProvider.of(search("本店价目表 生日蛋糕"), say("根据「本店价目表」：生日蛋糕：35 欧元起 [1]")),
    )
    assert quoted.reply is not None and quoted.reply.text == "根据「本店价目表」：生日蛋糕：35 欧元起 [1]"
    blocked = turn_handle(
        session=customer_session(shop),
        text="生日蛋糕多少钱？",
        provider=ScriptedProvider.of(search("本店价目表 生日蛋糕"), say(reply)),
    )
    assert blocked.reply is not None and blocked.reply.text.startswith(shop.boundary("zh-hans"))
    [event] = LedgerEvent.objects.of_type("guard.blocked")
    assert event.payload["category"] == category


def test_a_quote_of_an_entry_the_run_did_not_find_is_blocked(shop: AgentProfile) -> None:
    result = turn_handle(
        session=customer_session(shop),
        text="How much is a birthday cake?",
        provider=ScriptedProvider.of(say(f"[1] Shop price list: {LIST}")),
    )
    assert result.reply is not None and result.reply.text.startswith(shop.boundary("en"))


# --- the rule itself (no database) ---------------------------------------------------------

CITED = [
    {"title": "Shop price list", "snippet": LIST},
    {
        "title": "Delivery",
        "snippet": "We deliver within the city for €5. Orders placed before noon are delivered the next day.",
    },
    {"title": "本店价目表", "snippet": "• 生日蛋糕：35 欧元起 • 婚礼蛋糕：180 欧元起"},
]


@pytest.mark.parametrize(
    "text, left",
    [
        (f"Here is what I found:\n[1] Shop price list: {LIST}", "Here is what I found:"),
        ("[2] Delivery: We deliver within the city for €5.", ""),
        ("Delivery says: “Orders placed before noon are delivered the next day.” [2]", ""),
        ("According to our Delivery page: we deliver within the city for €5 [2]", ""),
        ("[3] 本店价目表：• 生日蛋糕：35 欧元起 • 婚礼蛋糕：180 欧元起", ""),
        ("根据「本店价目表」：生日蛋糕：35 欧元起 [3]", ""),
        ("我们的本店价目表上写着：婚礼蛋糕 180 欧元起 [3]", ""),
        # Not quotes: left for the guard and the grounding check.
        ("[2] Delivery: delivered the next day", "[2] Delivery: delivered the next day"),
        ("[1] Delivery: We deliver within the city for €5.", "[1] Delivery: We deliver within the city for €5."),
        (
            "Your Delivery says: we deliver within the city for €5 [2]",
            "Your Delivery says: we deliver within the city for €5 [2]",
        ),
        ("[4] Delivery: We deliver within the city for €5.", "[4] Delivery: We deliver within the city for €5."),
        (
            "[2] Delivery: We deliver within the city for €5. For you: tomorrow.",
            "[2] Delivery: We deliver within the city for €5. For you: tomorrow.",
        ),
        ("[3] 本店价目表：您的生日蛋糕 35 欧元", "[3] 本店价目表：您的生日蛋糕 35 欧元"),
    ],
)
def test_unquoted_keeps_everything_but_attributed_quotes(text: str, left: str) -> None:
    assert unquoted(text, CITED).strip() == left


@pytest.mark.parametrize(
    "rest, applies",
    [
        ("That's what you'll pay.", True),
        ("So yours will be ready then.", True),
        ("您付这么多就行。", True),
        ("你的蛋糕周五做好。", True),
        # The offline model's own sentences around a quote.
        ("This is what our published information says:", False),
        ("I can't confirm prices, dates or outcomes here: the owner confirms those personally.", False),
        ("Shall I register a request so that the owner can confirm it with you?", False),
        ("价格、时间和结果我在这里无法确认，需要店主本人确认。需要我登记一个请求，让店主和您确认吗？", False),
        ("Here is what I found:", False),
    ],
)
def test_what_applies_a_quote_to_the_customer(rest: str, applies: bool) -> None:
    assert applies_to_customer(rest) is applies
