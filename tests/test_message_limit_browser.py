"""A message longer than the server takes (issue 11, point 6): the chat shows a live count near
the limit and refuses to send an over-long message, keeping the text in the box, instead of
the browser cutting a pasted text silently.  The limit is the server's own
(`FACADE_MESSAGE_MAX_CHARS`), and the server keeps refusing longer text whatever a client does.

Customer page and owner chat, English and Chinese, desktop and a phone, on pytest-django's live
server (WSGI: the chat talks over its HTTP fallback, which sends the same text)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from conftest import TenantWorld

pytestmark = pytest.mark.browser

from browser_support import TIMEOUT_MS  # noqa: E402  (its fixtures are a plugin of the root conftest)

PHONE_390 = {"width": 390, "height": 844}


def paste(page: Any, text: str) -> None:
    """What a paste does: the text inserted at the caret as one edit (subject to `maxlength`,
    which is what cut the message before)."""
    box = page.get_by_role("textbox", name=re.compile("Your message|您的留言"))
    box.click()
    page.keyboard.insert_text(text)


def principal_texts(world: TenantWorld) -> list[str]:
    from facade.dialogue.models import Message

    messages = Message.objects.filter(session__agent=world.agent, role="principal").order_by("pk")
    return list(messages.values_list("text", flat=True))


def sign_in_as_owner(page: Any, site: str, world: TenantWorld) -> None:
    page.goto(f"{site}/accounts/login/?next=/owner/{world.agent.slug}/chat")
    page.get_by_label("Email").fill("owner@alpha.test")
    page.get_by_label("Password").fill("pw-alpha")
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{site}/owner/{world.agent.slug}/chat")


@pytest.mark.parametrize("face", ["customer", "owner"])
def test_a_pasted_message_over_the_limit_is_refused_whole_and_kept(
    page: Any, site: str, world: TenantWorld, face: str, tmp_path: Path
) -> None:
    if face == "owner":
        sign_in_as_owner(page, site, world)
    else:
        page.goto(f"{site}/c/{world.agent.slug}/")
    textbox = page.get_by_role("textbox", name="Your message")
    count = page.locator("#text-count")
    expect(count).to_be_hidden()  # nothing to count yet

    pasted = ("A long story about a cake. " * 200)[:5000]
    paste(page, pasted)
    assert len(textbox.input_value()) == 5000  # not cut to 4,000
    assert textbox.input_value() == pasted
    expect(count).to_be_visible()
    expect(count).to_have_text("1000 characters too many (5000 of 4000)")
    expect(textbox).to_have_attribute("aria-invalid", "true")

    page.get_by_role("button", name="Send").click()
    alert = page.get_by_role("alert")
    expect(alert).to_have_text(
        "Your message is 1000 characters over the limit of 4000. Nothing was sent: shorten it, then send it again."
    )
    assert len(textbox.input_value()) == 5000  # kept for editing
    expect(page.get_by_role("list", name="Conversation").get_by_role("listitem")).to_have_count(0)
    page.screenshot(path=str(tmp_path / f"{face}-over-limit.png"), full_page=True)
    assert principal_texts(world) == []

    # Enter refuses it the same way.
    textbox.press("End")
    textbox.press("Enter")
    expect(alert).to_be_visible()
    assert textbox.input_value() == pasted
    assert principal_texts(world) == []

    # Cut to 3,500 (above 80 % of the limit): still counted, no longer over, and it is sent whole.
    shorter = pasted[:3500]
    textbox.fill(shorter)
    expect(count).to_have_text("3500 of 4000 characters")
    expect(textbox).not_to_have_attribute("aria-invalid", "true")
    page.get_by_role("button", name="Send").click()
    log = page.get_by_role("list", name="Conversation")
    expect(log.locator("li.mine .text")).to_have_text([shorter])
    expect(log.locator("li.theirs")).to_have_count(1, timeout=2 * TIMEOUT_MS)
    expect(page.locator("#error")).to_be_hidden()
    expect(count).to_be_hidden()  # the box is empty again
    assert principal_texts(world) == [shorter]


def test_the_limit_and_the_count_come_from_the_server_and_speak_chinese(
    browser: Any, site: str, world: TenantWorld, settings: Any, tmp_path: Path
) -> None:
    """A server configured for 200 characters: the page counts from 160 and refuses 201 — in
    Chinese for a Chinese browser, on a phone."""
    settings.FACADE_MESSAGE_MAX_CHARS = 200
    context = browser.new_context(viewport=PHONE_390, is_mobile=True, has_touch=True, locale="zh-CN")
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = context.new_page()
        page.goto(f"{site}/c/{world.agent.slug}/")
        expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
        textbox = page.get_by_role("textbox", name="您的留言")
        count = page.locator("#text-count")
        paste(page, "好" * 159)
        expect(count).to_be_hidden()
        textbox.press("End")
        page.keyboard.type("好")
        expect(count).to_have_text("160 / 200 个字符")
        page.keyboard.insert_text("好" * 41)
        expect(textbox).to_have_value("好" * 201)
        expect(count).to_have_text("超出 1 个字符（201 / 200）")
        page.get_by_role("button", name="发送").click()
        refused = "您的留言比上限（200 个字符）多出 1 个字符，尚未发送。请删减后再发送。"
        expect(page.get_by_role("alert")).to_have_text(refused)
        expect(textbox).to_have_value("好" * 201)
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE_390["width"]
        page.screenshot(path=str(tmp_path / "customer-over-limit-zh-phone.png"), full_page=True)
        assert principal_texts(world) == []
        # Characters, as the server counts them: a character outside the BMP counts once.
        textbox.fill("😀" * 200)
        expect(count).to_have_text("200 / 200 个字符")
        page.get_by_role("button", name="发送").click()
        expect(page.get_by_role("list", name="对话").locator("li.mine .text")).to_have_text(["😀" * 200])
        expect(page.get_by_role("list", name="对话").locator("li.theirs")).to_have_count(1, timeout=2 * TIMEOUT_MS)
        assert principal_texts(world) == ["😀" * 200]
    finally:
        context.close()


@pytest.mark.django_db
def test_the_server_still_refuses_an_over_long_message(client: Any, world_a: TenantWorld, settings: Any) -> None:
    """Whatever the page does, a longer text sent straight to the API is refused, not cut."""
    import json

    from facade.dialogue.models import Message

    session = client.post(f"/api/agents/{world_a.agent.slug}/sessions", {}, content_type="application/json").json()
    text = "x" * (settings.FACADE_MESSAGE_MAX_CHARS + 1)
    response = client.post(
        f"/api/sessions/{session['id']}/messages",
        json.dumps({"text": text, "client_message_id": "long-1"}),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["error"] == "message_too_long"
    assert not Message.objects.filter(session_id=session["id"]).exists()


@pytest.mark.django_db
def test_the_page_carries_the_servers_limit_and_no_maxlength(client: Any, world_a: TenantWorld, settings: Any) -> None:
    settings.FACADE_MESSAGE_MAX_CHARS = 1234
    html = client.get(f"/c/{world_a.agent.slug}/").content.decode()
    assert '"maxChars": 1234' in html
    textarea = re.search(r'<textarea id="text"[^>]*>', html)
    assert textarea is not None and "maxlength" not in textarea.group(0)  # the browser must not cut
