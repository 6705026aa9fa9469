"""An owner's correction in the owner chat, in a real browser on a phone (issue 13, "Learn"): the
owner types "we never say cheap" (or 我们从不说便宜), the agent answers that the lesson waits for
their approval in the inbox, and the inbox shows the pending lesson's card; nothing is served
until the owner approves it there (a one-time token behind the card's button).

Daphne serves the real ASGI application on the test database; the fixtures are those of
`test_chat_browser`.  Screenshots go to var/screenshots/."""

from __future__ import annotations

import re
from typing import Any

import pytest
import test_chat_browser
from browser_support import PHONE  # noqa: E402  (its fixtures are a plugin of the root conftest)
from playwright.sync_api import expect
from test_chat_browser import ask
from test_requests_browser import Watched, shoot, sign_in

WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "textbox": "Your message",
        "correction": "we never say cheap",
        "title": "Never say ‘cheap’",
        "waits": "It waits for your approval in your inbox (change {id}); nothing changes until you approve it.",
        "lesson": "Lesson",
        "approve": "Approve",
        "approved": r"^Approved",
    },
    "zh-hans": {
        "textbox": "您的留言",
        "correction": "我们从不说便宜",
        "title": "不说‘便宜’",
        "waits": "它在您的收件箱里等您批准（变更 {id}）；您批准之前什么都不会改变。",
        "lesson": "经验",
        "approve": "批准",
        "approved": r"^已批准",
    },
}
asgi_server = test_chat_browser.asgi_server
demo = test_chat_browser.demo


@pytest.mark.browser
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_owner_says_we_never_say_cheap_and_finds_the_lesson_waiting_in_the_inbox(
    browser: Any, demo: dict[str, str], language: str
) -> None:
    from approvals.models import ChangeProposal
    from facade.tenancy.models import AgentProfile
    from facade.tenancy.rules import Audience
    from knowledge.models import EntryVersion
    from knowledge.selectors import knowledge_search

    words = WORDS[language]
    site = demo["site"]
    agent = AgentProfile.objects.get(slug="demo-shop")
    watched = Watched(browser, site, phone=True)
    try:
        page = watched.context.new_page()
        sign_in(page, site, demo["owner_password"], "/owner/demo-shop/chat")
        if language == "zh-hans":
            page.get_by_label("Language").select_option("zh-hans")
            expect(page.locator("html")).to_have_attribute("lang", "zh-hans")

        reply = ask(page, words["textbox"], words["correction"])
        [change] = ChangeProposal.objects.filter(agent=agent, kind="lesson")
        expect(reply.locator(".text")).to_contain_text(words["title"])
        expect(reply.locator(".text")).to_contain_text(words["waits"].format(id=change.pk))
        [version] = EntryVersion.objects.filter(agent=agent, entry__kind="taboo")
        assert (version.status, version.title) == ("pending", words["title"])
        # The reply brings the lesson's card, as the inbox shows it.
        in_chat = reply.locator(f'.chat-card article.change-card[id="{change.pk}"]')
        expect(in_chat).to_contain_text(words["title"])
        expect(in_chat.get_by_role("button", name=words["approve"])).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        shoot(page, f"lesson-chat-{language}-phone")

        page.goto(f"{site}/owner/demo-shop/inbox")
        card = page.locator(f'article.change-card[id="{change.pk}"]')
        expect(card).to_contain_text(words["lesson"])
        expect(card).to_contain_text(words["title"])
        expect(card.get_by_role("button", name=words["approve"])).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        shoot(page, f"lesson-inbox-{language}-phone")
        assert not knowledge_search(agent=agent, query=words["correction"], audience=Audience.CUSTOMER)

        # The card's button is the token flow: approving it makes the lesson served.
        card.get_by_role("button", name=words["approve"]).click()
        card = page.locator(f'article.change-card[id="{change.pk}"]')
        expect(card.locator(".card-status")).to_have_text(re.compile(words["approved"]))
        version.refresh_from_db()
        assert version.status == "approved"
        found = knowledge_search(agent=agent, query=words["correction"], audience=Audience.CUSTOMER)
        assert [hit.version_id for hit in found] == [version.pk]
    finally:
        watched.close()
