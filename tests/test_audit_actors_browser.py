"""The loop as an auditor and an owner see it in Chromium (issue 26 §6), in English on a desktop
and in Chinese at 390 px: the lineage of the knowledge a simulated night's review proposed and
the owner approved with a click (the review, the proposal, the decision, the owner by name), the
timeline naming the owner, the auditor's page of a simulated conversation, and the owner's
Requests page marking the simulated request.  Nothing runs wider than the phone."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from playwright.sync_api import expect

from conftest import TenantWorld
from facade.dialogue.models import CustomerRequest
from tests.test_audit_actors import simulated_draft_approved

pytestmark = pytest.mark.browser

from browser_support import TIMEOUT_MS, watch_csp  # noqa: E402

SHOTS = Path(__file__).resolve().parents[1] / "var" / "screenshots"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
WORDS = {
    "en": {
        "review": "the daily review of",
        "started": "Started by",
        "simulated": "Simulated",
        "sign_in": "Sign in",
        "not_counted": "Simulated, not counted: 1",
    },
    "zh-CN": {
        "review": "的每日复盘",
        "started": "起因",
        "simulated": "模拟",
        "sign_in": "登录",
        "not_counted": "模拟请求（不计入）：1",
    },
}


def approved_in_a_thread(world: TenantWorld) -> tuple[Any, Any]:
    """The simulated night and the owner's click (through the API's test client), in a thread of
    its own: Playwright's event loop on this one makes Django's async-to-sync middleware refuse."""
    found: dict[str, Any] = {}

    def run() -> None:
        try:
            # Nine customers: three ask the gap, the six others each scripted conversation once.
            found["approved"] = simulated_draft_approved(world, customers=9)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return found["approved"]


def sign_in(page: Any, site: str, email: str, password: str, words: dict[str, str]) -> None:
    page.goto(f"{site}/accounts/login/")
    page.locator("input[name=username]").fill(email)
    page.locator("input[name=password]").fill(password)
    page.get_by_role("button", name=words["sign_in"]).click()
    expect(page).to_have_url(f"{site}/")


def look(page: Any, url: str, shot: str, viewport: dict[str, int]) -> None:
    response = page.goto(url)
    assert response is not None and response.status == 200, url
    page.wait_for_load_state("networkidle")
    for details in page.locator("details").all():
        details.evaluate("d => d.open = true")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"loop-{shot}.png"), full_page=True)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"], (url, width)


@pytest.mark.parametrize(("language", "viewport"), [("en", DESKTOP), ("zh-CN", PHONE)])
def test_the_auditor_and_the_owner_see_people_by_name_and_simulated_traffic_marked(
    browser: Any, site: str, world: TenantWorld, language: str, viewport: dict[str, int]
) -> None:
    world.owner.first_name, world.owner.last_name = "Alice", "Baker"
    world.owner.save(update_fields=["first_name", "last_name"])
    draft, version = approved_in_a_thread(world)
    request = CustomerRequest.objects.get(agent=world.agent)
    words = WORDS[language]
    tag = f"{language}-{viewport['width']}"
    base = f"{site}/audit/{world.tenant.slug}"
    phone = viewport is PHONE
    for email in ("auditor@alpha.test", "owner@alpha.test"):
        context = browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone, locale=language)
        context.set_default_timeout(TIMEOUT_MS)
        violations = watch_csp(context)
        try:
            page = context.new_page()
            sign_in(page, site, email, "pw-alpha", words)
            who = email.split("@")[0]
            lineage = f"{base}/lineage?entity_type=knowledge_entry&entity_id={version.entry_id}"
            look(page, lineage, f"lineage-{who}-{tag}", viewport)
            versions = page.locator(".lineage-versions")
            expect(versions).to_contain_text(words["review"])
            expect(versions).to_contain_text(draft.pk)
            expect(versions).to_contain_text("Alice Baker <owner@alpha.test>")
            expect(versions).not_to_contain_text(f"user:{world.owner.pk}")
            expect(versions.locator("dt", has_text=words["started"])).to_be_visible()
            look(page, f"{base}/?entity_type=change_proposal&entity_id={draft.pk}", f"timeline-{who}-{tag}", viewport)
            expect(page.locator("ol.events")).to_contain_text("Alice Baker <owner@alpha.test>")
            look(page, f"{base}/sessions/{request.session_id}", f"session-{who}-{tag}", viewport)
            expect(page.locator(".badge-simulated")).to_have_text(words["simulated"])
            if who == "owner":
                look(page, f"{site}/", f"home-{tag}", viewport)
                expect(page.locator(".waiting .badge-simulated")).to_have_text(words["not_counted"])
                look(page, f"{site}/owner/{world.agent.slug}/requests", f"requests-{tag}", viewport)
                expect(page.locator(f"#request-{request.pk} .badge-simulated")).to_have_text(words["simulated"])
        finally:
            context.close()
        assert violations == []
