"""Issue 11, points 3 and 7 (unanswered questions) in Chromium, at phone width, in English and
Chinese: customers' misses appear as topics on the owner's Unanswered questions page, the owner
attaches one to the opening-hours entry and a customer asking the same question is answered
from it; "answer this" opens a new entry prefilled with the topic.

Customers chat through Daphne (the chat needs its WebSocket); the fixtures and helpers are those
of tests/test_chat_browser.py.  With UNANSWERED_SCREENSHOT_DIR set, the screenshots are kept there
to look at."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from browser_support import PHONE, TIMEOUT_MS, watch_csp  # noqa: E402  (its fixtures are a plugin of the root conftest)
from playwright.sync_api import expect
from test_chat_browser import asgi_server, ask, demo, open_chat  # noqa: F401  (fixtures used by name)

from facade.tenancy.schemas import Actor
from knowledge.models import KnowledgeEntry, KnowledgeMiss
from knowledge.schemas import SourceIn
from knowledge.services import entry_propose
from knowledge.text import topic_words

WORDS = {
    "en": {
        "locale": "en-GB",
        "textbox": "Your message",
        "question": "Are you around during Easter?",
        "unknown": "I don't know that yet",
        "entry": "Opening hours",
        "answer": "Monday to Saturday",
        "other": "Do you sell gluten-free bread?",
        "page": "Unanswered questions",
        "asked": "Asked 3 times by 3 customers",
        "attach": "Attach to entry",
        "attach_button": "Attach",
        "attached": "now finds “Opening hours” (version 3).",
        "answer_this": "Answer this",
        "new": "New entry",
        "title": "Title",
        "questions": "Questions this answers",
        "body": "Answer",
        "save": "Save entry",
        "saved": "was added and customers are answered with it from now on.",
        "source": "Question attached on the Unanswered questions page on",
        "sign_in": ("Email", "Password", "Sign in"),
    },
    "zh": {
        "locale": "zh-CN",
        "textbox": "您的留言",
        "question": "你们几点开门?",
        "unknown": "这个我还不知道",
        "entry": "营业时间",
        "answer": "周一至周六营业",
        "other": "有无麸质面包卖吗?",
        "page": "未解答的问题",
        "asked": "3 位客户共问了 3 次",
        "attach": "关联到条目",
        "attach_button": "关联",
        "attached": "现在会找到“营业时间”（版本 3）。",
        "answer_this": "回答这个问题",
        "new": "新条目",
        "title": "标题",
        "questions": "此条目回答的问题",
        "body": "回答",
        "save": "保存条目",
        "saved": "从现在起客户会得到这个回答。",
        "source": "在“未解答的问题”页面关联的问题",
        "sign_in": ("电子邮箱", "密码", "登录"),
    },
}


def shoot(page: Any, tmp_path: Path, name: str) -> None:
    folder = Path(os.environ.get("UNANSWERED_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def phone(browser: Any, words: dict[str, Any], site: str, elsewhere: list[str]) -> Any:
    """A phone-sized context in the language's locale that records CSP violations and any
    request to another host than the site."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, locale=words["locale"])
    context.set_default_timeout(TIMEOUT_MS)
    context.violations = watch_csp(context)
    host = urlsplit(site).netloc
    context.on("request", lambda r: elsewhere.append(r.url) if urlsplit(r.url).netloc not in (host, "") else None)
    return context


def customer_asks(browser: Any, words: dict[str, Any], site: str, text: str, elsewhere: list[str]) -> str:
    context = phone(browser, words, site, elsewhere)
    try:
        page = context.new_page()
        open_chat(page, site)
        reply = ask(page, words["textbox"], text)
        shown = reply.locator(".text").inner_text()
        assert not context.violations, context.violations
        return shown
    finally:
        context.close()


def without_questions(entry: KnowledgeEntry) -> None:
    """The owner's edit of the seeded entry that took its questions away: it answers only what
    its title and body say, as the demo's entries did before they had questions."""
    latest = entry.versions.order_by("-number").first()
    assert latest is not None
    entry_propose(
        agent=entry.agent,
        entry=entry,
        title=latest.title,
        body=latest.body,
        questions=[],
        actor=Actor.platform("test"),
        source=SourceIn(type="owner_dialogue", ref="seed_demo", version="edited"),
    )


@pytest.mark.browser
@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_owner_attaches_a_missed_question_and_customers_get_the_entry(
    browser: Any,
    demo: dict[str, str],  # noqa: F811  (the fixture imported above)
    tmp_path: Path,
    language: str,
) -> None:
    words = WORDS[language]
    site = demo["site"]
    elsewhere: list[str] = []
    hours = KnowledgeEntry.objects.get(origin_key="demo:opening-hours" + ("-zh" if language == "zh" else ""))
    without_questions(hours)

    # Three customers ask what nothing answers yet; a fourth asks something else, three times.
    for _ in range(3):
        assert words["unknown"] in customer_asks(browser, words, site, words["question"], elsewhere)
    for _ in range(3):
        assert words["unknown"] in customer_asks(browser, words, site, words["other"], elsewhere)
    assert KnowledgeMiss.objects.filter(resolved_at__isnull=True).count() == 6

    context = phone(browser, words, site, elsewhere)
    try:
        page = context.new_page()
        page.goto(f"{site}/accounts/login/?next=/owner/demo-shop/knowledge/unanswered")
        email, password, sign_in = words["sign_in"]
        page.get_by_label(email).fill("owner@demo.test")
        page.get_by_label(password).fill(demo["owner_password"])
        page.get_by_role("button", name=sign_in, exact=True).click()
        expect(page.get_by_role("heading", level=1)).to_have_text(words["page"])
        topics = page.get_by_role("list", name=re.compile("Topics|主题")).get_by_role("listitem")
        expect(topics).to_have_count(2)
        # Topics, never the customers' sentences.
        body = page.locator("main").inner_text()
        assert words["question"].rstrip("?") not in body and words["other"].rstrip("?") not in body
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        shoot(page, tmp_path, f"unanswered-{language}")

        hours_label, other_label = (topic_words(words[q]) for q in ("question", "other"))
        hours_topic = topics.filter(has=page.get_by_role("heading", name=hours_label, exact=True))
        expect(hours_topic).to_contain_text(words["asked"])
        hours_topic.get_by_label(words["attach"]).select_option(label=words["entry"])
        hours_topic.get_by_role("button", name=words["attach_button"], exact=True).click()
        expect(page.get_by_text(words["attached"])).to_be_visible()
        expect(topics).to_have_count(1)
        shoot(page, tmp_path, f"attached-{language}")

        # "Answer this" on the other topic opens a new entry prefilled with it.
        page.get_by_role("link", name=words["answer_this"]).click()
        expect(page.get_by_role("heading", level=1)).to_have_text(words["new"])
        expect(page.get_by_label(words["title"], exact=True)).to_have_value(other_label)
        expect(page.get_by_label(words["questions"])).to_have_value(other_label)
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        shoot(page, tmp_path, f"answer-this-{language}")
        page.get_by_label(words["body"], exact=True).fill("Gluten-free bread on Fridays. 周五有无麸质面包。")
        page.get_by_role("button", name=words["save"]).click()
        expect(page.get_by_text(words["saved"])).to_be_visible()

        # The hours entry's source now says where its new version came from, ids in the tooltip.
        page.goto(f"{site}/owner/demo-shop/knowledge?entry={hours.pk}")
        source = page.locator("td .source").filter(has_text=words["source"])
        expect(source).to_have_count(1)
        assert "owner_page:attach" in (source.get_attribute("title") or "")
        shoot(page, tmp_path, f"knowledge-{language}")
        assert not context.violations, context.violations
    finally:
        context.close()

    # The question that was missed is answered from the entry now.
    assert words["answer"] in customer_asks(browser, words, site, words["question"], elsewhere)
    assert KnowledgeMiss.objects.filter(resolved_at__isnull=True).count() == 0
    assert elsewhere == []
