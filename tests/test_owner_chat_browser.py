"""The owner chat of the demo shop in a real browser, on a phone, in English and in Chinese (issue 11,
point 8): the owner asks what the agent can do, reads customers' open requests and unanswered
questions, states a fact and adds it with a yes, and a malformed teach is refused with its form.

Daphne serves the real ASGI application (the chat's WebSocket included) on the test database;
the fixtures are those of `test_chat_browser`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import test_chat_browser
from browser_support import PHONE, TIMEOUT_MS  # noqa: E402  (its fixtures are a plugin of the root conftest)
from playwright.sync_api import expect
from test_chat_browser import ask

ENGLISH: dict[str, Any] = {
    "textbox": "Your message",
    "help": ("Hello, what can you do?", ["teach: title / text", "“requests”", "“unanswered”", "“inbox”"]),
    "requests": ("requests", ["Open customer requests (1):", "new, waiting for you — next: you"]),
    "unanswered": ("unanswered", ["• sell gluten free bread — 3"]),
    "inbox": ("what's new", ["Waiting for you: 1 open customer request(s), 1 unanswered question topic(s)"]),
    "fact": "We now also sell gluten-free brownies.",
    "draft": "Here is a draft for the knowledge base:\n“Gluten-free brownies”: We now also sell gluten-free brownies.\n"
    "Shall I add this?",
    "yes": "yes",
    "added": "Saved “Gluten-free brownies”. It waits for your approval on its card (change {id}); customers are "
    "told it once you approve it there.",
    "approve": "Approve",
    "approved": r"^Approved",
    "title": "Gluten-free brownies",
    "malformed": "teach: missing slash no title",
    "form": "To teach an entry, write: teach: title / text",
}
CHINESE: dict[str, Any] = {
    "textbox": "您的留言",
    "help": ("你好，你能做什么？", ["知识：标题 / 内容", "“请求”", "“未回答的问题”", "“收件箱”"]),
    "requests": ("请求", ["未完成的客户请求（1 个）：", "新请求，等您处理——下一步：您"]),
    "unanswered": ("未回答的问题", ["• sell gluten free bread——3 次"]),
    "inbox": ("收件箱", ["等您处理：1 个未完成的客户请求，1 个未回答的问题主题"]),
    "fact": "我们现在也卖无麸质布朗尼。",
    "draft": "这是一条知识库草稿：\n“无麸质布朗尼”：我们现在也卖无麸质布朗尼。\n要我添加吗？",
    "yes": "好的",
    "added": "已保存“无麸质布朗尼”。它在卡片上等您批准（变更 {id}）；您在那里批准后才会告诉客户。",
    "approve": "批准",
    "approved": r"^已批准",
    "title": "无麸质布朗尼",
    "malformed": "知识：没有斜杠也没有标题",
    "form": "要添加一条知识，请这样写：知识：标题 / 内容",
}
MARKER = "Quokka-4411-private"
# The demo shop behind Daphne, as the customer's browser tests have it.
asgi_server = test_chat_browser.asgi_server
demo = test_chat_browser.demo


def customers_left_something() -> None:
    """A customer's request and a question the demo shop could not answer."""
    from facade.dialogue.services import request_submit, session_open
    from facade.tenancy.models import AgentProfile, Customer
    from facade.tenancy.rules import Audience
    from knowledge.services import knowledge_miss_record

    agent = AgentProfile.objects.get(slug="demo-shop")
    session = session_open(
        agent=agent, audience=Audience.CUSTOMER, customer=Customer.objects.create(tenant_id=agent.tenant_id)
    )
    details = {"need": f"A cake for {MARKER}", "when": "Friday", "contact": f"{MARKER}@example.com"}
    request_submit(session=session, summary=f"A cake for {MARKER}", details=details)
    # Three customers ask it: a topic reaches an owner only once enough distinct customers asked.
    for asker in (session.pk, *(open_for(agent).pk for _ in range(2))):
        knowledge_miss_record(agent=agent, session_id=asker, query="Do you sell gluten-free bread?")


def open_for(agent: Any) -> Any:
    from facade.dialogue.services import session_open
    from facade.tenancy.models import Customer
    from facade.tenancy.rules import Audience

    return session_open(
        agent=agent, audience=Audience.CUSTOMER, customer=Customer.objects.create(tenant_id=agent.tenant_id)
    )


@pytest.mark.browser
@pytest.mark.parametrize("words", [ENGLISH, CHINESE], ids=["en", "zh-hans"])
def test_the_owner_talks_to_the_owner_chat_in_plain_words_on_a_phone(
    browser: Any, demo: dict[str, str], words: dict[str, Any], tmp_path: Path
) -> None:
    from approvals.models import ChangeProposal
    from knowledge.models import EntryVersion

    customers_left_something()
    seeded = EntryVersion.objects.count()
    site = demo["site"]
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = context.new_page()
        page.goto(f"{site}/owner/demo-shop/chat")
        page.get_by_label("Email").fill("owner@demo.test")
        page.get_by_label("Password").fill(demo["owner_password"])
        page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(f"{site}/owner/demo-shop/chat")
        if words is CHINESE:
            page.get_by_label("Language").select_option("zh-hans")
            expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
        textbox = words["textbox"]

        for key in ("help", "requests", "unanswered", "inbox"):
            said, expected = words[key]
            reply = ask(page, textbox, said).locator(".text")
            for part in expected:
                expect(reply).to_contain_text(part)
            expect(reply).not_to_contain_text(MARKER)
            expect(reply).not_to_contain_text("Nothing in the knowledge base")

        draft = ask(page, textbox, words["fact"]).locator(".text")
        expect(draft).to_have_text(words["draft"])
        assert EntryVersion.objects.count() == seeded  # nothing before the owner's yes
        reply = ask(page, textbox, words["yes"])
        added = EntryVersion.objects.exclude(title__in=["Opening hours", "Custom cakes", "营业时间", "定制蛋糕"])
        # What the agent wrote down waits for the owner's own click on its card (issue 28 §1).
        [change] = ChangeProposal.objects.filter(payload__version_id=added.get().pk)
        expect(reply.locator(".text")).to_have_text(words["added"].format(id=change.pk))
        assert list(added.values_list("title", "status", "source_type")) == [
            (words["title"], "pending", "owner_dialogue")
        ]
        card = reply.locator(f'.chat-card article.change-card[id="{change.pk}"]')
        card.get_by_role("button", name=words["approve"]).click()
        card = page.locator(f'article.change-card[id="{change.pk}"]')
        expect(card.locator(".card-status")).to_have_text(re.compile(words["approved"]))
        assert list(added.values_list("status", flat=True)) == ["approved"]

        expect(ask(page, textbox, words["malformed"]).locator(".text")).to_have_text(words["form"])
        assert EntryVersion.objects.count() == seeded + 1

        shown = page.locator("#log li.theirs .text").all_inner_texts()
        assert not [t for t in shown if re.search(r"#\d+ v\d|approved|完成：", t)], shown
        # A phone's width holds the conversation, the long help included.
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        page.screenshot(path=str(tmp_path / "owner-chat-phone.png"), full_page=True)
    finally:
        context.close()
