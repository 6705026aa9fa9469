"""Watching the loop as README's "Watch the loop" tells a person to, on Daphne + Debian's Chromium
against the seeded demo shop: `rsi_simulate` plays two days, the owner opens the overview and the
inbox, finds the review's gap and its draft, cannot approve it unwritten, writes the answer in the
card, saves and approves it; `rsi_simulate --today` then plays today's customers, whose same
question is answered from the owner's text.  The inbox again at 360 px in Chinese."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import call_command
from playwright.sync_api import expect
from test_chat_browser import daphne
from test_requests_browser import Watched, shoot, sign_in

NARROW = {"width": 360, "height": 740}
ANSWER = "Yes: we wrap any purchase in recycled paper at no extra charge."


@pytest.fixture(scope="module")
def server(django_db_setup: Any, tmp_path_factory: Any) -> Iterator[str]:
    with daphne(tmp_path_factory.mktemp("daphne")) as url:
        yield url


@pytest.fixture
def shop(server: str, transactional_db: Any, _async_unsafe_allowed: None) -> dict[str, Any]:
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    password = re.search(r"owner\s+owner@demo\.test\s+password: (\S+)", out.getvalue())
    assert password, out.getvalue()
    return {"site": server, "owner_password": password.group(1)}


def simulate(*args: str) -> str:
    out = io.StringIO()
    call_command("rsi_simulate", "--agent", "demo-shop", "--customers-per-day", "3", *args, stdout=out)
    return out.getvalue()


@pytest.mark.browser
def test_a_person_watches_the_loop_close(browser: Any, shop: dict[str, Any]) -> None:
    from approvals.models import ChangeProposal

    site = shop["site"]
    played = simulate("--days", "2")
    draft = ChangeProposal.objects.get(origin="review_report", kind="knowledge_draft")
    assert f"write the answer into the draft {draft.pk}" in played
    watched = Watched(browser, site)
    try:
        page = watched.context.new_page()
        sign_in(page, site, shop["owner_password"], "/owner/demo-shop/")
        expect(page.locator("canvas").first).to_be_visible()
        expect(page.get_by_text("Knowledge hit").first).to_be_visible()
        shoot(page, "loop-overview-before")

        page.goto(f"{site}/owner/demo-shop/inbox")
        expect(page.locator(".review")).to_contain_text("was asked 3 times")
        card = page.locator(f'article.change-card[id="{draft.pk}"]')
        expect(card.locator(".draft-edit")).to_have_attribute("open", "")
        shoot(page, "loop-inbox-draft")
        # Approving the placeholder is refused, and the card says what to do.
        card.get_by_role("button", name="Approve").click()
        expect(card.locator(".card-error")).to_contain_text("write the answer")
        card.get_by_label("Text customers are told", exact=True).fill(ANSWER)
        card.get_by_role("button", name="Save the text").click()
        card = page.locator(f'article.change-card[id="{draft.pk}"]')
        expect(card.locator(".card-status")).to_have_text("Saved. Read it again, then decide.")
        expect(card).to_contain_text(ANSWER)
        card.get_by_role("button", name="Approve").click()
        card = page.locator(f'article.change-card[id="{draft.pk}"]')
        expect(card.locator(".card-status")).to_have_text("Approved and applied.")
        assert ChangeProposal.objects.get(pk=draft.pk).status == "applied"

        today = simulate("--today")
        assert "“Do you offer gift wrapping?” asked by 3, answered from knowledge 3 times" in today
        page.goto(f"{site}/owner/demo-shop/")
        expect(page.locator("canvas").first).to_be_visible()
        shoot(page, "loop-overview-after")
    finally:
        watched.close()

    phone = Watched(browser, site, phone=True, viewport=NARROW)
    try:
        page = phone.context.new_page()
        sign_in(page, site, shop["owner_password"])
        page.locator("#language").select_option("zh-hans")
        expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
        page.goto(f"{site}/owner/demo-shop/inbox")
        expect(page.locator(f'article.change-card[id="{draft.pk}"]')).to_contain_text("已生效")
        assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
        shoot(page, "loop-inbox-zh-360")
        page.goto(f"{site}/owner/demo-shop/")
        assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
        shoot(page, "loop-overview-zh-360")
    finally:
        phone.close()
