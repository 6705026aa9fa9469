"""Issue 11, points 2, 4 and 5 in a real browser, as a customer of the seeded demo shop after its
owner uploaded a price list: a price question answered by quoting the list with its citation,
the customer's own case left to the owner, a hosted model's applied commitment refused by the
server, and small talk answered — in English and in Chinese, at desktop and phone width."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import TIMEOUT_MS
from playwright.sync_api import expect
from test_chat_browser import WATCH, agent_replies, ask, daphne, hosted_model, open_chat
from test_quoting import PRICE_LIST

SCREENSHOTS = Path(__file__).resolve().parents[1] / "var" / "screenshots"
PHONE_390 = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def asgi_server(django_db_setup: Any, tmp_path_factory: Any) -> Iterator[str]:
    with daphne(tmp_path_factory.mktemp("daphne")) as url:
        yield url


@pytest.fixture
def shop(asgi_server: str, transactional_db: Any, _async_unsafe_allowed: None) -> str:
    """The seeded demo shop after its owner uploaded the price list (committed, so that the
    server process sees it); the site's URL."""
    from django.core.management import call_command

    call_command("seed_demo", stdout=io.StringIO())
    upload_price_list()
    return asgi_server


def upload_price_list() -> None:
    """The owner's upload of the price list, through the service the upload endpoint calls and the
    worker's job run here (an HTTP client in this thread would share Playwright's event loop)."""
    from facade.tenancy.models import AgentProfile
    from facade.tenancy.schemas import Actor
    from knowledge.jobs import ingest_job_create, ingest_job_execute

    agent = AgentProfile.objects.get(slug="demo-shop")
    owner = Actor.human(agent.owners.get().pk)
    data = PRICE_LIST.encode()
    job = ingest_job_create(agent=agent, filename="prices.md", media_type="text/markdown", data=data, actor=owner)
    assert ingest_job_execute(job.pk) == "done"


def nothing_recorded_against_the_customer() -> None:
    from facade.dialogue.models import TrustChange
    from facade.tenancy.models import Customer
    from knowledge.models import KnowledgeMiss
    from ledger.models import LedgerEvent

    assert not KnowledgeMiss.objects.exists()  # small talk is not a question nobody could answer
    assert not TrustChange.objects.exists() and set(Customer.objects.values_list("trust", flat=True)) == {50}
    assert not LedgerEvent.objects.of_type("customer.trust_changed").exists()


ENGLISH = {
    "textbox": "Your message",
    "price": "How much is a birthday cake?",
    "quote": "Birthday cakes: from €35",
    "cited": "] Shop price list: • Birthday cakes: from €35",
    "source": r"^Shop price list \(entry \d+, version 1\)$",
    "mine": "So my birthday cake will cost €35 and be ready on Friday?",
    "boundary": "I can't confirm prices, dates or outcomes here: the owner confirms those personally.",
    "thanks": "Thanks!",
    "thanked": "You're welcome! Is there anything else I can help you with?",
    "bye": "Thanks, bye!",
    "goodbye": "Goodbye, and thank you for visiting Demo Shop!",
}
CHINESE = {
    "textbox": "您的留言",
    "price": "生日蛋糕多少钱？",
    "quote": "生日蛋糕：35 欧元起",
    "cited": "] 本店价目表：• 生日蛋糕：35 欧元起",
    "source": r"^本店价目表（条目 \d+，版本 1）$",
    "mine": "我的生日蛋糕多少钱，周五能做好吗？",
    "boundary": "价格、时间和结果我在这里无法确认，需要店主本人确认。",
    "thanks": "谢谢",
    "thanked": "不客气！还有什么可以帮您的吗？",
    "bye": "再见",
    "goodbye": "再见，感谢您光临Demo Shop！",
}


def customer_path(page: Any, words: dict[str, str], shots: str) -> None:
    quoted = ask(page, words["textbox"], words["price"])
    expect(quoted.locator(".text")).to_contain_text(words["quote"])
    expect(quoted.locator(".text")).to_contain_text(words["cited"])  # attributed to the entry
    expect(quoted.locator(".text")).to_contain_text(words["boundary"])  # the customer's own case: the owner's
    expect(quoted.locator(".sources li").filter(has_text=re.compile(words["source"]))).to_have_count(1)

    mine = ask(page, words["textbox"], words["mine"])
    expect(mine.locator(".text")).to_contain_text(words["boundary"])
    expect(mine.locator(".text")).not_to_contain_text(re.compile("your cake will|您的蛋糕", re.I))

    expect(ask(page, words["textbox"], words["thanks"]).locator(".text")).to_have_text(words["thanked"])
    bye = ask(page, words["textbox"], words["bye"])
    expect(bye.locator(".text")).to_have_text(words["goodbye"])
    expect(bye.locator(".sources")).to_have_count(0)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{shots}.png"), full_page=True)
    nothing_recorded_against_the_customer()


@pytest.mark.browser
def test_a_customer_reads_the_price_list_quoted_and_small_talk_is_answered(page: Any, shop: str) -> None:
    open_chat(page, shop)
    customer_path(page, ENGLISH, "quoting-en-desktop")


@pytest.mark.browser
def test_the_same_in_chinese_on_a_phone(browser: Any, shop: str) -> None:
    context = browser.new_context(viewport=PHONE_390, is_mobile=True, has_touch=True, locale="zh-CN")
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = context.new_page()
        open_chat(page, shop)
        page.get_by_label("语言").select_option("zh-hans")
        expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
        page.evaluate(WATCH)
        customer_path(page, CHINESE, "quoting-zh-phone")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE_390["width"]
    finally:
        context.close()


@pytest.mark.browser
def test_a_hosted_models_applied_commitment_is_refused_by_the_server(page: Any, shop: str, tmp_path: Path) -> None:
    """A model that quotes the list properly is shown with its citation; the same model applying
    the price to the customer's cake gets the boundary wording instead — the server's check, not
    the model's good manners."""
    from llm_server import LLMServer, text_reply, tool_call, tool_call_reply

    from ledger.models import LedgerEvent

    searched = tool_call_reply(tool_call("c1", "search_knowledge", {"query": "price list"}))
    script = [
        searched,
        text_reply("Our shop price list says: birthday cakes from €35 [1]"),
        tool_call_reply(tool_call("c2", "search_knowledge", {"query": "price list"})),
        text_reply("Your cake will cost €35 and be ready on Friday."),
    ]
    with (
        LLMServer(script) as model,
        daphne(tmp_path, **hosted_model(model.url)) as site,
    ):
        open_chat(page, site)
        quoted = ask(page, "Your message", "How much is a birthday cake?")
        expect(quoted.locator(".text")).to_have_text("Our shop price list says: birthday cakes from €35 [1]")
        expect(quoted.locator(".sources li").filter(has_text=re.compile(ENGLISH["source"]))).to_have_count(1)
        applied = ask(page, "Your message", "Great, and mine?")
        expect(applied.locator(".text")).to_contain_text(ENGLISH["boundary"])
        expect(applied.locator(".text")).not_to_contain_text("€35")
        expect(applied.locator(".sources")).to_have_count(0)
        expect(agent_replies(page)).to_have_count(2)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "quoting-en-hosted-model.png"), full_page=True)
    assert [e.payload["category"] for e in LedgerEvent.objects.of_type("guard.blocked")] == ["price"]
    nothing_recorded_against_the_customer()
