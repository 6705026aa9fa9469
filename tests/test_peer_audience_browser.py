"""Issue 33 §4 in a real browser: the owner's overview shows other agents' traffic apart from the
customers' — its own section, in English and Chinese, on a desktop and at 390 px — with the
figures and no peer's words, and the way to the Peers page.  With PEER_SHOTS set, full-page
screenshots are kept there to look at."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from conftest import TenantWorld

pytestmark = pytest.mark.browser

from test_metrics import opened, turn  # noqa: E402
from test_peer_audience import MARKER, peer_opened  # noqa: E402
from test_requests_browser import Watched  # noqa: E402

from facade.dialogue.models import Message, Run  # noqa: E402

PHONE_390 = {"width": 390, "height": 844}
WORDS = {
    "en": {"heading": "Other agents", "conversations": "Conversations", "peers": "peers"},
    "zh-hans": {"heading": "其他代理", "conversations": "对话", "peers": "对等代理"},
}


def seed(world: TenantWorld) -> None:
    now = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    customer = opened(world, now)
    turn(customer, now, cited=True)
    for _ in range(2):
        session = peer_opened(world, now)
        asked = Message.objects.create(session=session, role="principal", text=f"{MARKER} pallets please")
        Run.objects.create(tenant_id=session.tenant_id, session=session, message=asked, status="completed")
        Message.objects.create(session=session, role="agent", text="We do.", reply_to=asked)
        turn(session, now, guard="price")


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_the_overview_shows_other_agents_apart(
    browser: Any, site: str, world: TenantWorld, language: str, viewport: str
) -> None:
    seed(world)
    options: dict[str, Any] = (
        {"viewport": PHONE_390, "is_mobile": True, "has_touch": True}
        if viewport == "phone"
        else {"viewport": {"width": 1280, "height": 900}}
    )
    watched = Watched(browser, site, **options)
    try:
        page = watched.context.new_page()
        page.goto(f"{site}/accounts/login/")
        page.get_by_label("Email").fill("owner@alpha.test")
        page.get_by_label("Password").fill("pw-alpha")
        page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(f"{site}/")
        if language != "en":
            page.locator("#language").select_option(language)
            expect(page.locator("html")).to_have_attribute("lang", language)
        page.goto(f"{site}/owner/{world.agent.slug}/")
        words = WORDS[language]
        section = page.locator("#peer-traffic")
        expect(section.get_by_role("heading", level=2)).to_have_text(f"{words['heading']} 2")
        row = section.locator("#peer-conversations")
        expect(row.locator("th")).to_have_text(words["conversations"])
        expect(row.locator("td").first).to_have_text("2")
        expect(section.locator("#peer-replies td").first).to_have_text("4")
        expect(section.locator("#peer-over_commitment td").first).to_have_text("50%")
        assert MARKER not in page.content()
        # Nothing wider than the screen: the table scrolls in its own box, the page does not.
        assert page.evaluate("document.documentElement.scrollWidth") <= options["viewport"]["width"]
        box = section.bounding_box()
        assert box is not None and box["width"] <= options["viewport"]["width"]
        if os.environ.get("PEER_SHOTS"):
            shots = Path(os.environ["PEER_SHOTS"])
            shots.mkdir(parents=True, exist_ok=True)
            section.scroll_into_view_if_needed()
            page.screenshot(path=str(shots / f"overview-{language}-{viewport}.png"), full_page=True)
            section.screenshot(path=str(shots / f"other-agents-{language}-{viewport}.png"))
        page.get_by_role("navigation").get_by_role("link", name=words["peers"], exact=True).click()
        expect(page).to_have_url(f"{site}/owner/{world.agent.slug}/peers")
    finally:
        watched.close()
