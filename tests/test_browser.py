"""Real-browser tests: Playwright for Python driving Debian's Chromium against pytest-django's
live server.  Never downloads a browser: the executable is /usr/bin/chromium."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from conftest import TenantWorld

pytestmark = pytest.mark.browser

from browser_support import PHONE, TIMEOUT_MS  # noqa: E402  (its fixtures are a plugin of the root conftest)


def sign_in(page: Any, site: str, email: str, password: str) -> None:
    page.goto(f"{site}/accounts/login/")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


# --- a. owner sign-in, wrong password, sign-out --------------------------------------------


def test_owner_signs_in_sees_their_agent_and_signs_out(page: Any, site: str, world: TenantWorld) -> None:
    sign_in(page, site, "owner@alpha.test", "pw-alpha")
    expect(page).to_have_url(f"{site}/")
    agents = page.get_by_role("region", name="Agents you own")
    expect(agents).to_be_visible()
    expect(agents.get_by_text("Alpha Agent")).to_be_visible()
    expect(page.get_by_role("navigation", name="Account")).to_contain_text("owner@alpha.test")

    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(f"{site}/")
    expect(page.get_by_role("link", name="Sign in", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="Sign out")).to_have_count(0)
    expect(page.get_by_text("Agents you own")).to_have_count(0)


def test_wrong_password_shows_an_error_and_stays_on_the_login_page(page: Any, site: str, world: TenantWorld) -> None:
    sign_in(page, site, "owner@alpha.test", "not-the-password")
    alert = page.get_by_role("alert")
    expect(alert).to_be_visible()
    expect(alert).to_contain_text(re.compile("password", re.IGNORECASE))
    expect(page).to_have_url(re.compile(r"/accounts/login/$"))
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.get_by_label("Email")).to_have_value("owner@alpha.test")  # kept for a retry
    expect(page.get_by_role("button", name="Sign out")).to_have_count(0)


# --- b. auditor verifies the ledger -------------------------------------------------------


def test_auditor_verifies_the_ledger(page: Any, site: str, world: TenantWorld) -> None:
    sign_in(page, site, "auditor@alpha.test", "pw-alpha")
    expect(page).to_have_url(f"{site}/")
    page.wait_for_load_state("load")  # verify.js has attached to the button
    page.get_by_role("button", name="Verify ledger").click()
    result = page.locator('output.verify-result[data-tenant="alpha"]')
    expect(result).to_have_text(re.compile(r"^✓ \d+ events verified$"))
    checked = int(re.search(r"\d+", result.inner_text()).group())
    assert checked > 0


def test_auditor_sees_a_forged_tail_at_its_first_event(page: Any, site: str, world: TenantWorld) -> None:
    from django.db import connection
    from test_ledger_runs import forge_event

    try:
        forged = forge_event(world.tenant.pk)
    finally:  # this test's writes are committed: the append-only trigger must not stay off
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE ledger_event ENABLE TRIGGER ledger_event_append_only")
    sign_in(page, site, "auditor@alpha.test", "pw-alpha")
    page.wait_for_load_state("load")  # verify.js has attached to the button
    page.get_by_role("button", name="Verify ledger").click()
    result = page.locator('output.verify-result[data-tenant="alpha"]')
    expect(result).to_have_text(f"✗ first bad seq {forged} (bad_tag)")


def test_the_api_reference_renders_from_this_site_alone(page: Any, site: str, world: TenantWorld) -> None:
    """Redoc is served from the site's static files: no CDN, no web fonts, and no policy
    violation (the shared context fails the test on one)."""
    from urllib.parse import urlparse

    hosts: list[str] = []
    page.on("request", lambda request: hosts.append(urlparse(request.url).netloc))
    page.goto(f"{site}/api/docs/")
    # Redoc parses a 1 MB bundle and draws after the load: slow on a busy machine.
    expect(page.get_by_role("heading", name=re.compile("Facade API"))).to_be_visible(timeout=4 * TIMEOUT_MS)
    assert {host for host in hosts if host} == {urlparse(site).netloc}


# --- c. the customer page -----------------------------------------------------------------


def open_customer_page(page: Any, site: str, slug: str = "alpha-agent") -> None:
    response = page.goto(f"{site}/c/{slug}/")
    assert response is not None and response.status == 200, f"GET /c/{slug}/ answered {response and response.status}"


def _customer_rows(world: TenantWorld) -> tuple[int, int]:
    from facade.dialogue.models import DialogueSession, Message

    return (
        DialogueSession.objects.filter(agent=world.agent).count(),
        Message.objects.filter(session__agent=world.agent, role="principal").count(),
    )


def test_customer_sends_a_message(page: Any, site: str, world: TenantWorld) -> None:
    from facade.dialogue.models import DialogueSession, Message

    open_customer_page(page, site)
    expect(page.get_by_role("heading", name="Alpha Agent")).to_be_visible()

    text = "Do you deliver on Sundays?"
    page.get_by_role("textbox", name="Your message").fill(text)
    page.get_by_role("button", name="Send").click()

    log = page.get_by_role("list", name="Conversation")
    # The page's own messages (the agent's replies sit between them; this live server speaks
    # WSGI, so the chat falls back to HTTP — tests/test_chat_browser.py covers the WebSocket).
    expect(log.locator("li.mine .text")).to_have_text([text])
    expect(log.locator("li.theirs .text")).to_have_count(1)
    expect(page.get_by_role("textbox", name="Your message")).to_have_value("")
    expect(page.locator("#error")).to_be_hidden()

    session = DialogueSession.objects.get(agent=world.agent)
    assert session.audience == "customer"
    assert session.principal_type == "customer" and session.customer_id is not None
    assert list(Message.objects.filter(session=session, role="principal").values_list("text", flat=True)) == [text]

    # A second message reuses the same session.
    page.get_by_role("textbox", name="Your message").fill("And on holidays?")
    page.get_by_role("button", name="Send").click()
    expect(log.locator("li.mine .text")).to_have_text([text, "And on holidays?"])
    expect(log.locator("li.theirs .text")).to_have_count(2)
    assert _customer_rows(world) == (1, 2)


def test_customer_empty_message_shows_an_error_and_creates_nothing(page: Any, site: str, world: TenantWorld) -> None:
    open_customer_page(page, site)
    textbox = page.get_by_role("textbox", name="Your message")
    send = page.get_by_role("button", name="Send")

    # Empty: the browser's own validation (the textarea is `required`) refuses to submit.
    send.click()
    assert textbox.evaluate("el => el.validity.valueMissing") is True
    assert textbox.evaluate("el => el.validationMessage") != ""

    # Whitespace only passes `required`; the page's script refuses it with a visible alert.
    textbox.fill("   \n  ")
    send.click()
    alert = page.get_by_role("alert")
    expect(alert).to_be_visible()
    expect(alert).to_have_text("Please write a message first.")

    expect(page.get_by_role("list", name="Conversation").get_by_role("listitem")).to_have_count(0)
    assert _customer_rows(world) == (0, 0)


def test_customer_page_on_a_phone_and_by_keyboard(browser: Any, site: str, world: TenantWorld, tmp_path: Path) -> None:
    from facade.dialogue.models import Message

    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = context.new_page()
        open_customer_page(page, site)
        textbox = page.get_by_role("textbox", name="Your message")
        send = page.get_by_role("button", name="Send")
        for control in (textbox, send):
            expect(control).to_be_visible()
            box = control.bounding_box()
            assert box is not None
            assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

        screenshot = tmp_path / "customer-page.png"
        page.screenshot(path=str(screenshot), full_page=True)
        assert screenshot.stat().st_size > 0

        # Keyboard only: type, Tab to Send, Enter.
        textbox.focus()
        page.keyboard.type("Sent from the keyboard")
        page.keyboard.press("Tab")
        expect(send).to_be_focused()
        page.keyboard.press("Enter")
        expect(page.get_by_role("list", name="Conversation").locator("li.mine .text")).to_have_text(
            ["Sent from the keyboard"]
        )
        expect(page.get_by_role("list", name="Conversation").locator("li.theirs")).to_have_count(1)  # answered
        expect(textbox).to_be_focused()  # ready for the next message
        assert Message.objects.filter(session__agent=world.agent, text="Sent from the keyboard").count() == 1
    finally:
        context.close()


# --- d. unknown agent ---------------------------------------------------------------------


def test_unknown_agent_answers_404(page: Any, site: str) -> None:
    response = page.goto(f"{site}/c/no-such-agent/")
    assert response is not None
    assert response.status == 404


def test_a_visitor_switches_the_page_to_simplified_chinese(page: Any, site: str, world: TenantWorld) -> None:
    page.goto(f"{site}/c/{world.agent.slug}/")
    expect(page.get_by_role("button", name="Send")).to_be_visible()
    page.get_by_label("Language").select_option("zh-hans")
    expect(page.get_by_role("button", name="发送")).to_be_visible()
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    # The choice sticks for the next page, and the page's own error text is Chinese too.
    page.get_by_label("您的留言").fill("   ")
    page.get_by_role("button", name="发送").click()
    expect(page.get_by_role("alert")).to_have_text("请先写下留言。")
    page.goto(f"{site}/accounts/login/")
    expect(page.get_by_label("密码")).to_be_visible()
