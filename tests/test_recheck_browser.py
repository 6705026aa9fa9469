"""The owner's view of delivered violations (issue 15 §6) in a real browser, in English and in
Chinese: the count, each violation's rule, category and day, the pointer to the reply and the
agent's own words, never the customer's — under the enforced Content-Security-Policy, nothing
asked of another host, no console error."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from playwright.sync_api import expect

from conftest import TenantWorld

pytestmark = pytest.mark.browser

from test_guard_recheck import APPLIED, CUSTOMER, SLIPPED, at, delivered, mending_entry, shanghai  # noqa: E402
from test_requests_browser import Watched, shoot  # noqa: E402

WORDS = {
    "en": {
        "heading": "Delivered violations",
        "count": "Commitments delivered to customers despite the guard: 2.",
        "applied": "a quote applied to the customer, stopped now by the commitment guard",
        "price": "a price, stopped now by the commitment guard",
        "reply": "Reply {id} in conversation {session}",
    },
    "zh-hans": {
        "heading": "已送达的违规",
        "count": "绕过守卫送达客户的承诺：2。",
        "applied": "把引用套用到客户身上，现在会被承诺守卫拦截",
        "price": "价格，现在会被承诺守卫拦截",
        "reply": "对话 {session} 中的回复 {id}",
    },
}


def seed(world: TenantWorld) -> dict[str, Any]:
    from guard.models import DeliveredViolation
    from guard.recheck import recheck_day

    day = shanghai(world)
    cited = mending_entry(world)
    slipped = delivered(world, at(day, 10), SLIPPED)
    applied = delivered(world, at(day, 11), APPLIED, citations=cited)
    recheck_day(agent_id=world.agent.pk, day=day)
    ids = dict(DeliveredViolation.objects.values_list("message_id", "pk"))
    return {
        "day": day.isoformat(),
        "slipped": (slipped.pk, str(slipped.session_id), ids[slipped.pk]),
        "applied": (applied.pk, str(applied.session_id), ids[applied.pk]),
    }


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_owner_sees_each_delivered_violation_with_its_rule_and_the_agents_words(
    browser: Any, site: str, world: TenantWorld, language: str
) -> None:
    with ThreadPoolExecutor(1) as pool:
        seeded = pool.submit(seed, world).result()
    words = WORDS[language]
    watched = Watched(browser, site, locale="zh-CN" if language == "zh-hans" else "en-US")
    errors: list[str] = []
    watched.context.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        page = watched.context.new_page()
        page.add_init_script("delete window.WebSocket;")
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{site}/accounts/login/?next=/owner/{world.agent.slug}/")
        page.locator("input[name=username], input[type=email]").first.fill("owner@alpha.test")
        page.locator("input[type=password]").fill("pw-alpha")
        page.locator("form button[type=submit]").first.click()
        expect(page).to_have_url(f"{site}/owner/{world.agent.slug}/")
        expect(page.locator("html")).to_have_attribute("lang", language)

        section = page.locator("#delivered-violations")
        expect(section.get_by_role("heading", name=words["heading"])).to_be_visible()
        expect(section.locator("h2 .total")).to_have_text("2")
        expect(section).to_contain_text(words["count"])
        items = section.locator("ol.violation-list > li")
        expect(items).to_have_count(2)

        message, session, violation = seeded["applied"]
        applied = section.locator(f"#violation-{violation}")
        expect(applied).to_contain_text(words["applied"])
        expect(applied.locator("code.violation-rule")).to_have_text("quote.applied")
        expect(applied.locator("time")).to_have_attribute("datetime", seeded["day"])
        expect(applied).to_contain_text(words["reply"].format(id=message, session=session))
        expect(applied.locator("blockquote.agent-reply")).to_contain_text("That's what you'll pay.")

        message, session, violation = seeded["slipped"]
        slipped = section.locator(f"#violation-{violation}")
        expect(slipped).to_contain_text(words["price"])
        expect(slipped.locator("code.violation-rule")).to_have_text("price.en.money")
        expect(slipped.locator("blockquote.agent-reply")).to_have_text(SLIPPED)
        expect(slipped).to_contain_text(words["reply"].format(id=message, session=session))

        # The customer's words are nowhere on the page.
        body = page.content()
        assert CUSTOMER not in body and "grandmother" not in body and "teapot cracked" not in body
        section.scroll_into_view_if_needed()
        shoot(page, f"delivered-violations-{language}")
        assert errors == [], errors
    finally:
        watched.close()
