"""Issue 26 §4 in Chromium, English at desktop width and Chinese at 390 px: three customers asked
about gift wrapping, the daily review proposed a draft; the owner writes the answer in both
languages on the card, saves and approves it — and the gap line, the Unanswered questions page
and the home count say it is answered, and a Chinese question finds the entry.

Screenshots go to $ANSWERED_SCREENSHOT_DIR when it is set (else the test's tmp directory)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from browser_support import TIMEOUT_MS, watch_csp
from playwright.sync_api import expect

from approvals.models import ChangeProposal
from facade.dialogue.services import session_open
from facade.tenancy.rules import Audience
from facade.tenancy.services import customer_create
from knowledge.models import EntryVersion
from knowledge.selectors import knowledge_search, unanswered_topics
from knowledge.services import knowledge_miss_record
from rsi.review import review_run
from rsi.review_input import local_today

GIFT = "Do you offer gift wrapping?"
ANSWER = "Yes: every order can be gift wrapped for free."
ANSWER_ZH = "可以：每个订单都可以免费礼品包装。"
WORDS = {
    "en": {
        "locale": "en-GB",
        "viewport": {"width": 1280, "height": 900},
        "write": "Write the answer",
        "text": "Text customers are told",
        "other": "The same answer in Chinese (optional)",
        "save": "Save the text",
        "approve": "Approve",
        "applied": r"^Approved and applied",
        "placeholder": "its text is a placeholder",
        "answered": "answered since: an approved answer is published",
        "none": "No unanswered questions right now.",
        "home": "Unanswered questions: 0",
    },
    "zh": {
        "locale": "zh-CN",
        "viewport": {"width": 390, "height": 844},
        "write": "写下答案",
        "text": "告诉顾客的文字",
        "other": "同一答案的中文版（可选）",
        "save": "保存文字",
        "approve": "批准",
        "applied": r"^已批准并",
        "placeholder": "占位",
        "answered": "此后已回答",
        "none": "目前没有未解答的问题。",
        "home": "未解答的问题：0",
    },
}


def shoot(page: Any, tmp_path: Path, name: str) -> None:
    folder = Path(os.environ.get("ANSWERED_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


@pytest.mark.browser
@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_owner_answers_a_gap_in_both_languages_and_it_leaves_every_list(
    browser: Any, site: str, world: Any, tmp_path: Path, language: str
) -> None:
    words = WORDS[language]
    for _ in range(3):
        customer = customer_create(tenant=world.tenant)
        session = session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer)
        knowledge_miss_record(agent=world.agent, session_id=session.pk, query=GIFT, asker=str(customer.pk))
    report = review_run(agent_id=world.agent.pk, day=local_today(world.tenant))
    draft = ChangeProposal.objects.get(pk=report.gaps[0]["change_id"])

    options: dict[str, Any] = {"viewport": words["viewport"], "locale": words["locale"]}
    if language == "zh":
        options.update(is_mobile=True, has_touch=True)
    context = browser.new_context(**options)
    context.set_default_timeout(TIMEOUT_MS)
    violations = watch_csp(context)
    try:
        page = context.new_page()
        page.goto(f"{site}/accounts/login/?next=/owner/{world.agent.slug}/inbox")
        page.locator("input[name=username], input[type=email]").first.fill(world.owner.email)
        page.locator("input[type=password]").fill("pw-alpha")
        page.locator("form button[type=submit]").first.click()
        expect(page).to_have_url(re.compile(rf"/owner/{world.agent.slug}/inbox$"))
        # Before: the topic is listed, as customers asked it, and the page carries no more than its label.
        page.goto(f"{site}/owner/{world.agent.slug}/knowledge/unanswered")
        expect(page.locator("h2.topic")).to_have_text("gift wrapping")
        assert page.locator("h2.topic").get_attribute("title") is None
        assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
        shoot(page, tmp_path, f"unanswered-before-{language}")
        page.goto(f"{site}/owner/{world.agent.slug}/inbox")
        expect(page.locator(".claim-gap")).to_contain_text(words["placeholder"])
        card = page.locator(f'article.change-card[id="{draft.pk}"]')
        expect(card.locator("details.draft-edit summary")).to_have_text(words["write"])
        card.get_by_label(words["text"], exact=True).first.fill(ANSWER)
        other = card.locator("fieldset.draft-translation")
        expect(other.locator("legend")).to_have_text(words["other"])
        other.locator("input[name=translation_title]").fill("礼品包装")
        other.locator("textarea[name=translation_text]").fill(ANSWER_ZH)
        assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
        shoot(page, tmp_path, f"draft-both-languages-{language}")
        card.get_by_role("button", name=words["save"]).click()
        card = page.locator(f'article.change-card[id="{draft.pk}"]')
        card.get_by_role("button", name=words["approve"], exact=True).click()
        card = page.locator(f'article.change-card[id="{draft.pk}"]')
        expect(card.locator(".card-status")).to_have_text(re.compile(words["applied"]))

        page.reload()
        gap = page.locator(".claim-gap")
        expect(gap).to_contain_text(words["answered"])
        expect(gap).not_to_contain_text(words["placeholder"])
        shoot(page, tmp_path, f"gap-answered-{language}")
        page.goto(f"{site}/owner/{world.agent.slug}/knowledge/unanswered")
        expect(page.get_by_text(words["none"])).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
        shoot(page, tmp_path, f"unanswered-empty-{language}")
        page.goto(f"{site}/")
        expect(page.locator("main")).to_contain_text(words["home"])
        # The entry's page shows its answer in both languages.
        entry = EntryVersion.objects.get(agent=world.agent, served=True).entry_id
        page.goto(f"{site}/owner/{world.agent.slug}/knowledge?entry={entry}")
        expect(page.locator("dd[lang=zh-hans]").first).to_contain_text(ANSWER_ZH)
        assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
        shoot(page, tmp_path, f"entry-both-languages-{language}")
        assert violations == [], violations
    finally:
        context.close()

    assert unanswered_topics(world.agent).topics == []
    [found] = knowledge_search(agent=world.agent, query="可以礼品包装吗？", audience=Audience.CUSTOMER)
    assert ANSWER_ZH in found.snippet and found.title == "礼品包装"


@pytest.mark.browser
@pytest.mark.parametrize("language", ["en", "zh"])
def test_answer_this_takes_the_answer_in_both_languages(
    browser: Any, site: str, world: Any, tmp_path: Path, language: str
) -> None:
    """A Chinese topic on the Unanswered questions page: "Answer this" opens the new entry with a
    second language (English) beside it; one entry then answers both questions."""
    words = WORDS[language]
    for _ in range(3):
        customer = customer_create(tenant=world.tenant)
        session = session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer)
        knowledge_miss_record(
            agent=world.agent, session_id=session.pk, query="可以礼品包装吗？", asker=str(customer.pk)
        )
    options: dict[str, Any] = {"viewport": words["viewport"], "locale": words["locale"]}
    if language == "zh":
        options.update(is_mobile=True, has_touch=True)
    context = browser.new_context(**options)
    context.set_default_timeout(TIMEOUT_MS)
    violations = watch_csp(context)
    try:
        page = context.new_page()
        page.goto(f"{site}/accounts/login/?next=/owner/{world.agent.slug}/knowledge/unanswered")
        page.locator("input[name=username], input[type=email]").first.fill(world.owner.email)
        page.locator("input[type=password]").fill("pw-alpha")
        page.locator("form button[type=submit]").first.click()
        expect(page.locator("h2.topic")).to_have_text("礼品包装")
        page.locator(".topic-actions a.button").click()
        expect(page.locator("#new-title")).to_have_value("礼品包装")
        page.locator("#new-body").fill(ANSWER_ZH)
        other = page.locator("fieldset.translation")
        expect(other.locator("legend")).to_have_text(
            "The same answer in English (optional)" if language == "en" else "同一答案的英文版（可选）"
        )
        page.locator("#new-other-title").fill("Gift wrapping")
        page.locator("#new-other-body").fill(ANSWER)
        assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
        shoot(page, tmp_path, f"answer-this-both-languages-{language}")
        page.locator("form.stack button[type=submit]").click()
        expect(page).to_have_url(re.compile(r"/knowledge\?entry=\d+"))
        assert violations == [], violations
    finally:
        context.close()
    [english] = knowledge_search(agent=world.agent, query=GIFT, audience=Audience.CUSTOMER)
    [chinese] = knowledge_search(agent=world.agent, query="可以礼品包装吗？", audience=Audience.CUSTOMER)
    assert english.entry_id == chinese.entry_id
    assert ANSWER in english.snippet and ANSWER_ZH in chinese.snippet
    assert unanswered_topics(world.agent).topics == []
