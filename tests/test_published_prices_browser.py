"""What a customer sees once the owner has published a price list and delivery options (issue 26
§1): the published amount with its currency, and under *Sources* the price list of the contract
version it came from, the way a knowledge entry's citation shows.  English at a desktop width,
Simplified Chinese on a 390 px phone; daphne + Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser_support import TIMEOUT_MS
from playwright.sync_api import expect
from test_chat_browser import (  # noqa: F401  (the fixtures are used by name)
    asgi_server,
    ask,
    demo,
    open_chat,
)

PRICES = {
    "currency": "EUR",
    "items": [
        # One item, named in both languages: each customer is told it under the name in theirs.
        {
            "name": "Birthday cake (8 people)",
            "names": {"en": "Birthday cake (8 people)", "zh-hans": "生日蛋糕（8人份）"},
            "amount": "35.00",
        },
    ],
}
DELIVERY = [{"channel": "courier", "note": "within the city, 2 working days"}]
WIDE = {"width": 1280, "height": 900}
PHONE_390 = {"width": 390, "height": 844}

SEEN = {
    "en": {
        "viewport": WIDE,
        "textbox": "Your message",
        "price": "How much is a birthday cake?",
        "amount": "Birthday cake (8 people): 35.00 EUR",
        "other_name": "生日蛋糕",
        "source": "Price list (version 2), as published by the business",
        "deliver": "Do you deliver?",
        "option": "Courier: within the city, 2 working days",
        "delivery_source": "Delivery options (version 2), as published by the business",
        "boundary": "I can't confirm prices",
    },
    "zh-hans": {
        "viewport": PHONE_390,
        "textbox": "您的留言",
        "price": "生日蛋糕多少钱？",
        "amount": "生日蛋糕（8人份）：35.00 EUR",
        "other_name": "Birthday cake",
        "source": "价目表（第2版），商家已发布",
        "deliver": "可以送货吗？",
        "option": "快递：within the city, 2 working days",
        "delivery_source": "交付选项（第2版），商家已发布",
        "boundary": "价格、时间和结果我在这里无法确认",
    },
}


@pytest.mark.browser
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_customer_sees_the_published_price_and_its_source(
    browser: Any,
    demo: dict[str, str],  # noqa: F811  (the fixture imported above)
    language: str,
    tmp_path: Path,
) -> None:
    from approvals.contract import contract_compile
    from facade.tenancy.models import AgentProfile
    from facade.tenancy.schemas import Actor

    words: dict[str, Any] = SEEN[language]
    agent = AgentProfile.objects.get(slug="demo-shop")
    contract_compile(agent=agent, changes={"pricing": PRICES, "delivery": DELIVERY}, actor=Actor.platform("tests"))
    phone = words["viewport"] is PHONE_390
    context = browser.new_context(viewport=words["viewport"], is_mobile=phone, has_touch=phone)
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = context.new_page()
        open_chat(page, demo["site"])
        if language == "zh-hans":
            page.get_by_label("Language").select_option("zh-hans")
            expect(page.locator("html")).to_have_attribute("lang", "zh-hans")

        price = ask(page, words["textbox"], words["price"])
        expect(price.locator(".text")).to_contain_text(words["amount"])
        expect(price.locator(".text")).not_to_contain_text(words["boundary"])
        expect(price.locator(".text")).not_to_contain_text(words["other_name"])  # the item in the customer's words
        expect(price.locator(".sources li").first).to_have_text(words["source"])

        delivery = ask(page, words["textbox"], words["deliver"])
        expect(delivery.locator(".text")).to_contain_text(words["option"])
        expect(delivery.locator(".sources li").first).to_have_text(words["delivery_source"])

        width = words["viewport"]["width"]
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        box = price.bounding_box()
        assert box is not None and box["x"] + box["width"] <= width
        page.screenshot(path=str(tmp_path / f"published-prices-{language}.png"), full_page=True)
    finally:
        context.close()
