"""What a customer sees when the owner's contract is republished (issue 12, L3 applying): the
conversation opened under the old version ends with the page's "conversation has ended" notice,
the message goes back into the box, and sent again it opens a new conversation whose answer
uses the new version's boundary wording.  English and Simplified Chinese, on daphne + Chromium."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect
from test_chat_browser import (  # noqa: F401  (the fixtures are used by name)
    ANSWER_MS,
    CHINESE,
    ENGLISH,
    agent_replies,
    asgi_server,
    ask,
    demo,
    open_chat,
)

WORDING = {"en": "Prices are set by Ana herself; she'll write to you.", "zh-hans": "价格由安娜本人确定，她会联系您。"}
ENDED = {
    "en": "This conversation has ended. Your next message starts a new one.",
    "zh-hans": "这次对话已结束。您的下一条消息会开始新的对话。",
}


@pytest.mark.browser
@pytest.mark.parametrize("language, words", [("en", ENGLISH), ("zh-hans", CHINESE)])
def test_a_republished_contract_ends_the_conversation_and_the_next_one_uses_it(
    page: Any,
    demo: dict[str, str],  # noqa: F811  (the fixture imported above)
    language: str,
    words: dict[str, Any],
) -> None:
    from approvals.contract import contract_compile
    from facade.dialogue.models import DialogueSession
    from facade.tenancy.models import AgentProfile
    from facade.tenancy.schemas import Actor

    open_chat(page, demo["site"])
    if language == "zh-hans":
        page.get_by_label("Language").select_option("zh-hans")
        expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    before = ask(page, words["textbox"], words["price"])
    expect(before.locator(".text")).to_contain_text(words["boundary"])

    agent = AgentProfile.objects.get(slug="demo-shop")
    contract_compile(agent=agent, changes={"boundary_wording": WORDING}, actor=Actor.platform("tests"))
    [old] = DialogueSession.objects.filter(agent=agent, audience="customer")
    assert (old.status, old.closed_reason) == ("closed", "contract_republished")

    textbox = page.get_by_role("textbox", name=words["textbox"])
    replies = agent_replies(page).count()
    textbox.fill(words["price"])
    textbox.press("Enter")
    expect(page.locator("#error")).to_contain_text(ENDED[language], timeout=ANSWER_MS)
    expect(textbox).to_have_value(words["price"])  # refused, not stored: back in the box
    assert agent_replies(page).count() == replies

    textbox.press("Enter")
    expect(agent_replies(page)).to_have_count(1, timeout=ANSWER_MS)  # a new conversation
    expect(agent_replies(page).last.locator(".text")).to_contain_text(WORDING[language])
    new = DialogueSession.objects.get(agent=agent, audience="customer", status="open")
    assert new.contract_version == 2 and new.pk != old.pk
