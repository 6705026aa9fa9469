"""What a customer sees when the owner's contract is republished (issue 12, L3 applying; issue 26
§2): a change that takes away what the conversation relies on (here a skill) ends its session,
but the customer loses nothing — the next message is answered, in a new session that continues
the old one: the earlier messages stay on the page (after a reload too), the registered request
stays registered and shown, and no "conversation has ended" notice appears.  A change of the
boundary wording (L2) ends nothing: the next message is answered with it in the same session.
English and Simplified Chinese, on daphne + Chromium."""

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
    conversation,
    demo,
    open_chat,
)

WORDING = {"en": "Prices are set by Ana herself; she'll write to you.", "zh-hans": "价格由安娜本人确定，她会联系您。"}


def _language(page: Any, language: str) -> None:
    if language == "zh-hans":
        page.get_by_label("Language").select_option("zh-hans")
        expect(page.locator("html")).to_have_attribute("lang", "zh-hans")


def _publish(changes: dict[str, Any]) -> None:
    from approvals.contract import contract_compile
    from facade.tenancy.models import AgentProfile
    from facade.tenancy.schemas import Actor

    agent = AgentProfile.objects.get(slug="demo-shop")
    contract_compile(agent=agent, changes=changes, actor=Actor.platform("tests"))


def _customer_sessions() -> list[Any]:
    from facade.dialogue.models import DialogueSession

    return list(DialogueSession.objects.filter(agent__slug="demo-shop", audience="customer").order_by("created_at"))


@pytest.mark.browser
@pytest.mark.parametrize("language, words", [("en", ENGLISH), ("zh-hans", CHINESE)])
def test_a_boundary_wording_change_is_heard_in_the_same_conversation(
    page: Any,
    demo: dict[str, str],  # noqa: F811  (the fixture imported above)
    language: str,
    words: dict[str, Any],
) -> None:
    open_chat(page, demo["site"])
    _language(page, language)
    before = ask(page, words["textbox"], words["price"])
    expect(before.locator(".text")).to_contain_text(words["boundary"])
    _publish({"boundary_wording": WORDING})

    after = ask(page, words["textbox"], words["price"])
    expect(after.locator(".text")).to_contain_text(WORDING[language])
    expect(page.locator("#error")).to_be_hidden()
    expect(agent_replies(page)).to_have_count(2)
    [session] = _customer_sessions()
    assert (session.status, session.contract_version) == ("open", 2)


@pytest.mark.browser
@pytest.mark.parametrize("language, words", [("en", ENGLISH), ("zh-hans", CHINESE)])
def test_a_removed_skill_ends_the_session_but_the_conversation_and_its_request_go_on(
    page: Any,
    demo: dict[str, str],  # noqa: F811  (the fixture imported above)
    language: str,
    words: dict[str, Any],
) -> None:
    open_chat(page, demo["site"])
    _language(page, language)
    ask(page, words["textbox"], words["price"])
    expect(ask(page, words["textbox"], words["yes"]).locator(".text")).to_contain_text(words["ask_when"])
    ask(page, words["textbox"], words["when"])
    ask(page, words["textbox"], words["contact"])
    expect(ask(page, words["textbox"], words["confirm"]).locator(".text")).to_contain_text(words["registered"])
    requests = page.get_by_role("region", name=words["requests"])
    expect(requests.get_by_role("listitem")).to_have_count(1)
    said_before = conversation(page)
    [old] = _customer_sessions()

    _publish({"skill_ids": ["knowledge_answers", "request_intake"]})  # no more hand-over to a person

    answer = ask(page, words["textbox"], words["question"])
    expect(answer.locator(".text")).to_contain_text(words["answer"], timeout=ANSWER_MS)
    expect(page.locator("#error")).to_be_hidden()
    assert conversation(page)[: len(said_before)] == said_before  # nothing said before is lost
    expect(requests.get_by_role("listitem")).to_have_count(1)
    expect(requests).to_contain_text(words["state"])
    old_now, new = _customer_sessions()
    assert old_now.pk == old.pk and (old_now.status, old_now.closed_reason) == ("closed", "contract_republished")
    assert (new.status, new.continues_id, new.contract_version) == ("open", old.pk, 2)

    # After a reload the page reads the new session: the whole conversation and the request.
    page.reload()
    expect(agent_replies(page)).to_have_count(len([t for t in said_before if t]) // 2 + 1, timeout=ANSWER_MS)
    assert conversation(page)[: len(said_before)] == said_before
    expect(page.get_by_role("region", name=words["requests"]).get_by_role("listitem")).to_have_count(1)


@pytest.mark.browser
def test_without_websockets_the_page_goes_on_in_the_continuation_over_http(
    context: Any,
    demo: dict[str, str],  # noqa: F811  (the fixture imported above)
) -> None:
    page = context.new_page()
    page.add_init_script("delete window.WebSocket;")
    open_chat(page, demo["site"])
    words = ENGLISH
    expect(ask(page, words["textbox"], words["question"]).locator(".text")).to_contain_text(words["answer"])
    said_before = conversation(page)
    _publish({"skill_ids": ["knowledge_answers", "request_intake"]})

    answer = ask(page, words["textbox"], words["price"])
    expect(answer.locator(".text")).to_contain_text(words["boundary"], timeout=ANSWER_MS)
    expect(page.locator("#error")).to_be_hidden()
    assert page.evaluate("window.__streamed") is False  # over HTTP
    assert conversation(page)[: len(said_before)] == said_before
    expect(agent_replies(page)).to_have_count(2)
    old, new = _customer_sessions()
    assert (old.closed_reason, new.continues_id, new.status) == ("contract_republished", old.pk, "open")
