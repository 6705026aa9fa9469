"""The guard breaker on the owner overview, in a real browser (Debian's Chromium against the live
server): after more blocked customer replies in an hour than the threshold, the owner — told by
e-mail, received by a real SMTP server — sees the strict-mode notice on the agent's overview and
closes the breaker with its button; the close is recorded with the owner as actor.  English and
Chinese, on a phone, under the Content-Security-Policy, nothing asked of another host."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect
from test_guard_breaker import blocked_turn, customer_session
from test_requests_browser import Watched, shoot
from test_review_trigger_browser import sign_in

from conftest import TenantWorld
from guard.breaker import breaker_open
from ledger.models import LedgerEvent

pytestmark = pytest.mark.browser

THRESHOLD = 2
WORDS = {
    "en": {
        "heading": "Strict mode: the guard breaker is open",
        "notice": f"{THRESHOLD + 1} replies to customers had been blocked within an hour",
        "button": "Close the breaker",
        "closed": "Guard breaker closed: the customer face composes as its contract says again.",
    },
    "zh-hans": {
        "heading": "严格模式：守护断路器已打开",
        "notice": f"一小时内已有 {THRESHOLD + 1} 条给客户的答复被拦截",
        "button": "关闭断路器",
        "closed": "守护断路器已关闭：面向客户时，它重新按照合同的规定组织答复。",
    },
}


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_owner_sees_the_notice_and_closes_the_breaker(
    browser: Any, site: str, world: TenantWorld, smtp: Any, settings: Any, language: str
) -> None:
    settings.FACADE_GUARD_BREAKER_THRESHOLD = THRESHOLD
    session = customer_session(world)
    for _ in range(THRESHOLD + 1):
        blocked_turn(session)
    assert breaker_open(world.agent)
    [(recipients, mail)] = smtp.received
    assert recipients == ["owner@alpha.test"] and f"/owner/{world.agent.slug}/#guard-breaker" in mail.get_payload()
    words = WORDS[language]
    watched = Watched(browser, site, phone=True)
    errors: list[str] = []
    watched.context.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        page = watched.context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        sign_in(page, site, language)
        page.goto(f"{site}/owner/{world.agent.slug}/#guard-breaker")
        notice = page.locator("#guard-breaker")
        expect(notice).to_be_visible()
        expect(notice.get_by_role("heading", level=2)).to_have_text(words["heading"])
        expect(notice).to_contain_text(words["notice"])
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        shoot(page, f"guard-breaker-open-{language}-375")
        notice.get_by_role("button", name=words["button"]).click()
        expect(page).to_have_url(f"{site}/owner/{world.agent.slug}/#guard-breaker")
        expect(page.locator(".flash")).to_contain_text(words["closed"])
        expect(page.locator("#guard-breaker")).to_have_count(0)
        shoot(page, f"guard-breaker-closed-{language}-375")
        assert not breaker_open(world.agent)
        [closed] = LedgerEvent.objects.of_type("guard.breaker_closed")
        assert closed.actor_id == f"user:{world.owner.pk}"
        # Customers kept being served: the session the blocks happened in takes the next message.
        assert blocked_turn(session).reply is not None
        assert errors == [], errors
    finally:
        watched.close()
