"""The owner's contract page in a real browser (Daphne + Debian's Chromium, the seeded demo shop):
the owner changes the English greeting on the page and a customer's next chat turn greets with it;
then the page at 360 px in Chinese, with a pricing change proposed by keyboard alone that waits in
the inbox.  Screenshots go to var/screenshots/."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect
from test_chat_browser import ask, open_chat
from test_requests_browser import (  # noqa: F401  (the fixtures are used by name)
    Watched,
    server,
    shoot,
    shop,
    sign_in,
)

NARROW = {"width": 360, "height": 740}
GREETING = "Welcome to Ana's bakery! Ask me about cakes, or I can register an order for Ana."


@pytest.mark.browser
def test_the_owner_changes_the_greeting_and_the_next_customer_hears_it(
    browser: Any,
    shop: dict[str, str],  # noqa: F811  (the fixture imported above)
) -> None:
    from approvals.models import ChangeProposal

    site = shop["site"]
    owner_ctx, customer_ctx = Watched(browser, site), Watched(browser, site)
    try:
        owner = owner_ctx.context.new_page()
        sign_in(owner, site, shop["owner_password"])
        owner.get_by_role("link", name="what it says and offers").first.click()
        expect(owner).to_have_url(f"{site}/owner/demo-shop/contract")
        expect(owner.get_by_role("heading", level=1)).to_contain_text("says and offers")

        form = owner.locator("form", has=owner.locator("#wording-text"))
        form.get_by_label("Language").select_option("en")
        form.get_by_label("Moment").select_option("greeting")
        form.get_by_label("The sentence").fill(GREETING)
        form.get_by_label("Summary").fill("A greeting that names Ana")
        form.get_by_role("button", name="Propose this change").click()

        expect(owner).to_have_url(f"{site}/owner/demo-shop/contract#wording-outcome")
        expect(owner.locator(".flash")).to_contain_text("Applied: customers hear it from their next message.")
        expect(owner.locator(".said").first).to_contain_text(GREETING)
        [proposal] = ChangeProposal.objects.filter(agent__slug="demo-shop", kind="wording")
        assert proposal.status == "applied" and proposal.payload["text"] == GREETING
        shoot(owner, "contract-en-applied")

        customer = customer_ctx.context.new_page()
        open_chat(customer, site)
        reply = ask(customer, "Your message", "Hello")
        expect(reply.locator(".text")).to_have_text(GREETING)
    finally:
        owner_ctx.close()
        customer_ctx.close()


@pytest.mark.browser
def test_the_page_at_360px_in_chinese_by_keyboard(
    browser: Any,
    shop: dict[str, str],  # noqa: F811  (the fixture imported above)
) -> None:
    from approvals.models import ChangeProposal

    site = shop["site"]
    watched = Watched(browser, site, phone=True, viewport=NARROW)
    try:
        page = watched.context.new_page()
        sign_in(page, site, shop["owner_password"])
        page.locator("#language").select_option("zh-hans")
        expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
        page.goto(f"{site}/owner/demo-shop/contract")
        expect(page.get_by_role("heading", level=1)).to_contain_text("说什么、提供什么")
        expect(page.locator("#waiting")).to_contain_text("等待您决定的更改：0")
        assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
        shoot(page, "contract-zh-360")

        # By keyboard: fill the first empty price row (its English name, its Chinese name, its
        # amount) and the summary, submit with Enter.
        rows = page.locator("input[name=name]")
        empty = next(i for i in range(rows.count()) if not rows.nth(i).input_value())
        rows.nth(empty).focus()
        page.keyboard.type("Birthday cake")
        page.keyboard.press("Tab")
        page.keyboard.type("生日蛋糕")
        page.keyboard.press("Tab")
        page.keyboard.type("42.00")
        page.locator("#pricing-summary").fill("新的蛋糕价格")
        page.locator("#pricing-summary").press("Enter")

        expect(page.locator(".flash")).to_contain_text("已提议。它正在等待您的决定")
        [proposal] = ChangeProposal.objects.filter(agent__slug="demo-shop", kind="pricing")
        assert proposal.status == "pending"
        named = {"en": "Birthday cake", "zh-hans": "生日蛋糕"}
        assert {"name": "Birthday cake", "names": named, "amount": "42.00"} in proposal.payload["items"]
        expect(page.locator("#waiting")).to_contain_text("等待您决定的更改：1")
        link = page.locator(".flash a")
        expect(link).to_have_attribute("href", f"/owner/demo-shop/inbox#{proposal.pk}")
        assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
        shoot(page, "contract-zh-360-pending")
        link.click()
        expect(page).to_have_url(f"{site}/owner/demo-shop/inbox#{proposal.pk}")
        expect(page.locator(f'article.change-card[id="{proposal.pk}"]')).to_be_visible()
    finally:
        watched.close()


@pytest.mark.browser
def test_a_price_list_in_both_languages_on_the_page_english_desktop_and_chinese_390px(
    browser: Any,
    shop: dict[str, str],  # noqa: F811  (the fixture imported above)
) -> None:
    from approvals.contract import contract_compile
    from facade.tenancy.models import AgentProfile
    from facade.tenancy.schemas import Actor

    prices = {
        "currency": "EUR",
        "items": [
            {
                "name": "Birthday cake (8 people)",
                "names": {"en": "Birthday cake (8 people)", "zh-hans": "生日蛋糕（8人份）"},
                "amount": "35.00",
            },
            {"name": "Cupcake", "amount": "3.50"},
        ],
    }
    agent = AgentProfile.objects.get(slug="demo-shop")
    contract_compile(agent=agent, changes={"pricing": prices}, actor=Actor.platform("tests"))
    site = shop["site"]
    for language, viewport, heading in (
        ("en", {"width": 1280, "height": 900}, "Prices"),
        ("zh-hans", {"width": 390, "height": 844}, "价格"),
    ):
        watched = Watched(browser, site, phone=language != "en", viewport=viewport)
        try:
            page = watched.context.new_page()
            sign_in(page, site, shop["owner_password"])
            if language != "en":
                page.locator("#language").select_option(language)
                expect(page.locator("html")).to_have_attribute("lang", language)
            page.goto(f"{site}/owner/demo-shop/contract#pricing-h")
            section = page.locator("section", has=page.locator("#pricing-h"))
            expect(section.get_by_role("heading", level=2)).to_have_text(heading)
            # The live list names the item in both languages; its row holds both names to edit.
            expect(section.locator("table.prices tbody tr").first).to_contain_text(
                "Birthday cake (8 people) / 生日蛋糕（8人份）"
            )
            expect(section.locator("#price-name-1")).to_have_value("Birthday cake (8 people)")
            expect(section.locator("#price-name-zh-1")).to_have_value("生日蛋糕（8人份）")
            expect(section.locator("#price-name-zh-2")).to_have_value("")
            expect(section.locator("#price-amount-1")).to_have_value("35.00")
            assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
            section.scroll_into_view_if_needed()
            section.screenshot(path=str(_shots() / f"contract-prices-{language}.png"))
        finally:
            watched.close()


def _shots() -> Any:
    from test_requests_browser import SHOTS

    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS
