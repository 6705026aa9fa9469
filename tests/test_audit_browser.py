"""An auditor's afternoon in a real browser (Debian's Chromium against the live server; issue 14).

Three customers asked what the knowledge could not answer, the daily review named the gap and
proposed a draft, the owner wrote and approved it with a one-time token, and a customer now gets
the answer in the chat.  The auditor copies a sentence of that answer from the customer's chat,
finds where it comes from (the knowledge entry's lineage: the owner's decision and the review that
started it), follows it to the review's evidence and from a pointer to the ledger's timeline, then
exports the day and checks the file offline with the standalone verifier.  English on a desktop
and Chinese on a phone; nothing wider than the screen, no Content-Security-Policy violation, and
the auditor's own steps recorded in the ledger."""

from __future__ import annotations

import base64
import datetime as dt
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from approvals.models import ChangeProposal
from conftest import TenantWorld
from ledger.keys import ledger_keys
from ledger.models import LedgerEvent
from rsi.review import review_run
from rsi.review_input import local_today
from tests.test_review import QUESTION, gap_day
from tests.test_simulated_week import owner_client

pytestmark = pytest.mark.browser

from browser_support import PHONE, TIMEOUT_MS, watch_csp  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ANSWER = "We wrap any parcel in recycled paper at no extra charge. Ask for it when you order."
SENTENCE = "We wrap any parcel in recycled paper at no extra charge."
ANSWER_MS = 20_000

EN = {
    "locale": "en-GB",
    "sign_in": "Sign in",
    "console": "auditor console",
    "lineage": "Lineage",
    "search": "A sentence you saw in a chat",
    "find": "Find where it comes from",
    "review": "the daily review of",
    "export": "Export",
    "from": "From (UTC, inclusive)",
    "to": "To (UTC, exclusive; a date includes that day)",
    "download": "Download export",
}
ZH = {"locale": "zh-CN", "sign_in": "登录", "console": "审计控制台", "lineage": "变更谱系", "export": "导出"}


def approve_the_draft(world: TenantWorld) -> ChangeProposal:
    """The review of today's questions proposes a draft; the owner writes it and approves it with
    a one-time token, as the inbox card does.  In a thread of its own: the requests go through
    Django's middleware, which may not run on the thread where Playwright's event loop runs."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(_approve_the_draft, world).result()


def _approve_the_draft(world: TenantWorld) -> ChangeProposal:
    from django.db import connection

    gap_day(world)
    report = review_run(agent_id=world.agent.pk, day=local_today(world.tenant))
    draft = ChangeProposal.objects.get(pk=report.gaps[0]["change_id"])
    owner = owner_client(world.owner)
    change = f"/api/agents/{world.agent.slug}/changes/{draft.pk}"
    edited = owner.patch(
        change, {"payload": {"title": draft.payload["title"], "text": ANSWER}, "expected_version": 1}, format="json"
    )
    assert edited.status_code == 200, edited.content
    token = owner.post(f"{change}/authorize", {"decision": "approve"}, format="json")
    assert token.status_code == 200, token.content
    decided = owner.post(
        f"{change}/decide",
        {"token": token.json()["token"], "decision": "approve", "expected_version": edited.json()["version"]},
        format="json",
    )
    assert decided.status_code == 200 and decided.json()["status"] == "applied", decided.content
    connection.close()
    return draft


def customer_asks(browser: Any, site: str, world: TenantWorld) -> str:
    """A customer asks in the chat (over HTTP: the live server speaks no WebSocket) and is
    answered from the owner's text; returns the reply as the customer sees it."""
    context = browser.new_context(locale="en-GB")
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = context.new_page()
        page.add_init_script("delete window.WebSocket;")
        page.goto(f"{site}/c/{world.agent.slug}/")
        textbox = page.get_by_role("textbox", name="Your message")
        textbox.fill(QUESTION + "?")
        textbox.press("Enter")
        reply = page.locator("#log li.theirs[data-id]").last
        expect(reply.locator(".text")).to_contain_text(SENTENCE, timeout=ANSWER_MS)
        return str(reply.locator(".text").inner_text())
    finally:
        context.close()


def auditor_context(browser: Any, words: dict[str, str], **options: Any) -> tuple[Any, list[str]]:
    """A browser context in the auditor's language, with its CSP violations watched."""
    context = browser.new_context(locale=words["locale"], **options)
    context.set_default_timeout(TIMEOUT_MS)
    return context, watch_csp(context)


def sign_in(page: Any, site: str, words: dict[str, str]) -> None:
    """The auditor signs in and opens the console from the home page's list of ledgers."""
    page.goto(f"{site}/accounts/login/")
    page.locator("input[name=username]").fill("auditor@alpha.test")
    page.locator("input[name=password]").fill("pw-alpha")
    page.get_by_role("button", name=words["sign_in"]).click()
    expect(page).to_have_url(f"{site}/")
    page.get_by_role("link", name=words["console"]).click()
    expect(page).to_have_url(f"{site}/audit/")


def fits(page: Any, width: int) -> None:
    for details in page.locator("details").all():
        details.evaluate("d => d.open = true")
    assert page.evaluate("document.documentElement.scrollWidth") <= width, page.url


def test_an_auditor_follows_a_chat_answer_to_the_review_and_exports_the_day(
    browser: Any, site: str, world: TenantWorld, tmp_path: Path
) -> None:
    draft = approve_the_draft(world)
    seen = customer_asks(browser, site, world)
    words = EN
    context, violations = auditor_context(
        browser, words, accept_downloads=True, viewport={"width": 1280, "height": 900}
    )
    try:
        page = context.new_page()
        sign_in(page, site, words)
        page.get_by_role("link", name=words["lineage"]).first.click()
        # The answer the customer read, pasted whole, leads to the knowledge entry's lineage: the
        # owner's decision with its one-time token, and the daily review that proposed it.
        page.get_by_label(words["search"], exact=False).fill(seen)
        page.get_by_role("button", name=words["find"]).click()
        expect(page).to_have_url(re.compile(r"entity_type=knowledge_entry"))
        body = page.locator("main")
        expect(body).to_contain_text(draft.pk)
        expect(body).to_contain_text("click")
        # The owner who decided, by e-mail address (issue 26: people by name, not `user:<id>`).
        expect(body.locator(".lineage-versions")).to_contain_text(world.owner.email)
        expect(body.locator(".lineage-versions")).not_to_contain_text(f"user:{world.owner.pk}")
        fits(page, 1280)
        page.get_by_role("link", name=re.compile(words["review"])).first.click()
        expect(page).to_have_url(re.compile(r"/reviews/"))
        # The review's evidence: the sessions of the three customers, pointers only.
        evidence = page.locator("main a", has_text=re.compile("session"))
        expect(evidence.first).to_be_visible()
        assert QUESTION not in page.locator("main").inner_text()
        evidence.first.click()
        expect(page).to_have_url(re.compile(r"/sessions/"))  # the conversation's pointers, no text
        assert QUESTION not in page.locator("main").inner_text()
        page.get_by_role("link", name="Its events on the timeline").click()
        expect(page.locator("main")).to_contain_text("session.opened")
        assert QUESTION not in page.locator("main").inner_text()
        # Export today's events and check the file offline with the verifier and the ledger's key.
        page.get_by_role("link", name=words["export"], exact=True).click()
        today = dt.datetime.now(dt.timezone.utc).date()
        page.get_by_label(words["from"]).fill(today.isoformat())
        page.get_by_label(words["to"]).fill((today + dt.timedelta(days=1)).isoformat())
        with page.expect_download() as download:
            page.get_by_role("button", name=words["download"]).click()
        exported = tmp_path / "export.jsonl"
        download.value.save_as(exported)
    finally:
        context.close()
    assert violations == []
    key = base64.b64encode(ledger_keys().public_raw).decode()
    checked = subprocess.run(
        [sys.executable, "-I", str(ROOT / "tools" / "verify_export.py"), str(exported), "--public-key", key],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0 and checked.stdout.startswith("OK"), checked.stdout + checked.stderr
    # What the auditor did is itself in the ledger: the search, the review, the timeline, the export.
    auditor = f"user:{world.auditor.pk}"
    done = LedgerEvent.objects.filter(chain_id=world.tenant.pk).order_by("seq")
    steps = [(e.event_type, e.payload.get("view")) for e in done if e.actor_id == auditor]
    assert ("audit.viewed", "lineage") in steps and ("audit.viewed", "review") in steps
    assert ("audit.viewed", "session") in steps and ("audit.viewed", "timeline") in steps
    assert ("audit.exported", None) in steps


def test_the_console_reads_in_chinese_on_a_phone(browser: Any, site: str, world: TenantWorld) -> None:
    approve_the_draft(world)
    words = ZH
    context, violations = auditor_context(browser, words, viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        sign_in(page, site, words)
        tabs = [str(href) for href in page.locator("main .cards a").evaluate_all("as => as.map(a => a.href)")]
        assert len(tabs) >= 6, tabs
        for url in tabs:
            response = page.goto(url)
            assert response is not None and response.status == 200, url
            page.wait_for_load_state("networkidle")
            fits(page, PHONE["width"])
            assert page.locator("html").get_attribute("lang") == "zh-hans"
        page.goto(f"{site}/audit/{world.tenant.slug}/")
        expect(page.get_by_role("link", name=words["lineage"])).to_be_visible()
        expect(page.get_by_role("link", name=words["export"], exact=True)).to_be_visible()
    finally:
        context.close()
    assert violations == []
