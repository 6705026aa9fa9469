"""Issue 28 §2 in the browser: the platform operator opens the demo shop's inbox (it acts for
owners there) and clicks Approve on an L3 price change — the card says that only the business's
own owners decide a change to its commitments, no code is e-mailed, and nothing is decided; in
English at desktop width and in Chinese at 390 px."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from django.core.management import call_command
from playwright.sync_api import expect
from test_inbox_browser import PRICING, card_of, mailbox, propose, server  # noqa: F401  (fixtures)
from test_requests_browser import Watched, shoot

PHONE = {"width": 390, "height": 844}
REFUSAL = {
    "en": "Only the business's own owners can decide a change to its commitments",
    "zh-hans": "只有本商家自己的所有者才能决定涉及其承诺的变更",
}
APPROVE = {"en": "Approve", "zh-hans": "批准"}


@pytest.fixture
def demo(server: str, transactional_db: Any, _async_unsafe_allowed: None, mailbox: Any) -> dict[str, Any]:  # noqa: F811
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    found = re.search(r"operator\s+operator@demo\.test\s+password: (\S+)", out.getvalue())
    assert found, out.getvalue()
    mailbox[0].received.clear()
    return {"site": server, "password": found.group(1), "mail": mailbox[0]}


@pytest.mark.browser
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_operator_cannot_approve_an_l3_change_from_the_inbox(
    browser: Any, demo: dict[str, Any], language: str
) -> None:
    from approvals.models import ChangeProposal

    site = demo["site"]
    pricing = propose("pricing", PRICING, "New cake prices")
    watched = Watched(browser, site, **({"phone": True, "viewport": PHONE} if language != "en" else {}))
    try:
        page = watched.context.new_page()
        page.goto(f"{site}/accounts/login/?next=/")
        page.get_by_label("Email").fill("operator@demo.test")
        page.get_by_label("Password").fill(demo["password"])
        page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(f"{site}/")
        if language != "en":
            page.locator("#language").select_option(language)
            expect(page.locator("html")).to_have_attribute("lang", language)
        page.goto(f"{site}/owner/demo-shop/inbox")
        card = card_of(page, pricing)
        card.get_by_role("button", name=APPROVE[language]).click()
        expect(card.locator(".card-error")).to_contain_text(REFUSAL[language])
        if language != "en":
            assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        shoot(page, f"inbox-operator-l3-{language}")
    finally:
        watched.close()
    assert demo["mail"].received == []  # no code was sent
    assert ChangeProposal.objects.get(pk=pricing.pk).status == "pending"
