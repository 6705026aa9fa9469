"""Issue 11, points 7 and 9 in a real browser (Debian's Chromium against Daphne on the seeded demo
shop): a customer's request reaches the owner — by e-mail to a real SMTP server and on the
Requests page reached from the home page — the owner moves it and replies, and the customer's
open chat shows both at once; in English on a desktop and in Chinese on a phone.  And the owner's
preview of the customer face: marked as a preview, answered like a customer, left out of the
unanswered questions."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import PHONE, TIMEOUT_MS, watch_csp
from django.core.management import call_command
from playwright.sync_api import expect
from test_chat_browser import agent_replies, ask, daphne

SHOTS = Path(__file__).resolve().parents[1] / "var" / "screenshots"
ANSWER_MS = 20_000
DETAILS = {"need": "a birthday cake for 12", "when": "next Friday", "contact": "ana@example.com"}
SUMMARY = "SUMMARY-NOT-FOR-THE-OWNER"


@pytest.fixture(scope="module")
def server(django_db_setup: Any, tmp_path_factory: Any) -> Iterator[str]:
    with daphne(tmp_path_factory.mktemp("daphne")) as url:
        yield url


@pytest.fixture
def shop(server: str, transactional_db: Any, _async_unsafe_allowed: None) -> dict[str, str]:
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    password = re.search(r"owner\s+owner@demo\.test\s+password: (\S+)", out.getvalue())
    assert password, out.getvalue()
    return {"site": server, "owner_password": password.group(1)}


class Watched:
    """A browser context whose pages may break no CSP rule and ask nothing of another host."""

    def __init__(self, browser: Any, site: str, phone: bool = False, **options: Any) -> None:
        if phone:
            options = {"viewport": PHONE, "is_mobile": True, "has_touch": True, **options}
        self.context = browser.new_context(**options)
        self.context.set_default_timeout(TIMEOUT_MS)
        self.csp = watch_csp(self.context)
        self.off_site: list[str] = []
        origins = (site, site.replace("http://", "ws://"))
        self.context.on("request", lambda r: None if r.url.startswith(origins) else self.off_site.append(r.url))

    def close(self) -> None:
        self.context.close()
        assert self.csp == [], self.csp
        assert self.off_site == [], self.off_site


def sign_in(page: Any, site: str, password: str, next_path: str = "/") -> None:
    page.goto(f"{site}/accounts/login/?next={next_path}")
    page.get_by_label("Email").fill("owner@demo.test")
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{site}{next_path}")


def shoot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


WORDS = {
    "en": {
        "textbox": "Your message",
        "hello": "Hello",
        "waiting": "Requests waiting for you: 1",
        "request": "Request #{id}",
        "submitted": "Submitted",
        "accept": "Accept",
        "moved": "Request #{id} is now: Accepted.",
        "card_state": "State: Accepted",
        "reply_label": "Reply to the customer about #{id}",
        "send": "Send reply",
        "sent": "Your reply to request #{id} was sent to the customer.",
        "reply": "Yes, we can bake it for Friday. Please pick it up after 5 pm.",
        "business": "The business",
        "fields": ["What is needed", "By when", "Contact"],
    },
    "zh-hans": {
        "textbox": "您的留言",
        "hello": "你好",
        "waiting": "等待您处理的请求：1",
        "request": "请求 #{id}",
        "submitted": "已提交",
        "accept": "接受",
        "moved": "请求 #{id} 当前状态：已接受。",
        "card_state": "状态：已接受",
        "reply_label": "就请求 #{id} 回复客户",
        "send": "发送回复",
        "sent": "您对请求 #{id} 的回复已发送给客户。",
        "reply": "可以，周五为您做好，请下午五点后来取。",
        "business": "商家",
        "fields": ["需求", "期望时间", "联系方式"],
    },
}


@pytest.mark.browser
@pytest.mark.parametrize(
    "language, phone", [("en", False), ("zh-hans", True)], ids=["english-desktop", "chinese-phone"]
)
def test_a_request_reaches_the_owner_who_moves_it_and_replies_into_the_open_chat(
    browser: Any, shop: dict[str, str], smtp: Any, settings: Any, language: str, phone: bool
) -> None:
    from facade.dialogue.models import DialogueSession
    from facade.dialogue.services import request_submit

    site, words = shop["site"], WORDS[language]
    settings.FACADE_PUBLIC_URL = site  # the e-mail's links point at the site
    customer_ctx, owner_ctx = Watched(browser, site, phone), Watched(browser, site, phone)
    try:
        customer = customer_ctx.context.new_page()
        customer.goto(f"{site}/c/demo-shop/")
        if language != "en":
            customer.locator("#language").select_option(language)
            expect(customer.locator("html")).to_have_attribute("lang", language)
        ask(customer, words["textbox"], words["hello"])
        # The customer's request, registered in their open conversation (the flow's own turns are
        # another test's; here the request is what the owner gets).
        session = DialogueSession.objects.get(agent__slug="demo-shop", audience="customer")
        request = request_submit(session=session, summary=SUMMARY, details=DETAILS)
        rid = request.pk

        # The e-mail: a summary and the link, nothing of the customer's but the collected fields.
        [(to, mail)] = smtp.received
        assert to == ["owner@demo.test"]
        body = mail.get_payload(decode=True).decode(mail.get_content_charset() or "utf-8")
        link = f"{site}/owner/demo-shop/requests#request-{rid}"
        assert link in body and SUMMARY not in body and "Hello" not in body and "你好" not in body
        assert all(value in body for value in DETAILS.values())

        owner = owner_ctx.context.new_page()
        sign_in(owner, site, shop["owner_password"])
        if language != "en":
            owner.locator("#language").select_option(language)
            expect(owner.locator("html")).to_have_attribute("lang", language)
        waiting = owner.get_by_role("link", name=words["waiting"])
        expect(waiting).to_be_visible()
        shoot(owner, f"owner-home-{language}-{'phone' if phone else 'desktop'}")
        waiting.click()
        expect(owner).to_have_url(f"{site}/owner/demo-shop/requests")
        card = owner.get_by_role("article", name=re.compile(re.escape(words["request"].format(id=rid))))
        expect(card).to_contain_text(words["submitted"])
        for name, value in zip(words["fields"], DETAILS.values(), strict=True):
            expect(card).to_contain_text(name)
            expect(card).to_contain_text(value)
        expect(card).not_to_contain_text(SUMMARY)
        if phone:
            assert owner.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        shoot(owner, f"owner-requests-{language}-{'phone' if phone else 'desktop'}")

        card.get_by_role("button", name=words["accept"], exact=True).click()
        expect(owner.get_by_role("status")).to_contain_text(words["moved"].format(id=rid))
        # The customer's open chat shows the move at once …
        expect(customer.locator("#request-list")).to_contain_text(words["card_state"])

        card = owner.get_by_role("article", name=re.compile(re.escape(words["request"].format(id=rid))))
        card.get_by_label(words["reply_label"].format(id=rid)).fill(words["reply"])
        card.get_by_role("button", name=words["send"]).click()
        expect(owner.get_by_role("status")).to_contain_text(words["sent"].format(id=rid))
        expect(owner.locator(f"#request-{rid} .replies")).to_contain_text(words["reply"])
        shoot(owner, f"owner-requests-replied-{language}-{'phone' if phone else 'desktop'}")

        # … and the reply, from the business, without a reload.
        from_business = customer.locator("#log li.msg.owner")
        expect(from_business).to_have_count(1)
        expect(from_business.locator(".who")).to_have_text(words["business"])
        expect(from_business.locator(".text")).to_have_text(words["reply"])
        shoot(customer, f"customer-sees-reply-{language}-{'phone' if phone else 'desktop'}")
        # Coming back later, it is in the history.
        customer.reload()
        expect(customer.locator("#log li.msg.owner .text")).to_have_text(words["reply"])

        # The e-mail's link opens the request on the owner's page.
        owner.goto(link)
        expect(owner.locator(f"#request-{rid}")).to_be_visible()
    finally:
        customer_ctx.close()
        owner_ctx.close()


@pytest.mark.browser
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_owner_previews_the_customer_face(browser: Any, shop: dict[str, str], language: str) -> None:
    from facade.dialogue.models import DialogueSession
    from knowledge.models import KnowledgeMiss

    site = shop["site"]
    context = Watched(browser, site, phone=language != "en")
    try:
        page = context.context.new_page()
        sign_in(page, site, shop["owner_password"])
        if language != "en":
            page.locator("#language").select_option(language)
            expect(page.locator("html")).to_have_attribute("lang", language)
        name = "preview as a customer" if language == "en" else "以客户身份预览"
        page.get_by_role("link", name=name, exact=True).click()
        expect(page).to_have_url(f"{site}/owner/demo-shop/preview")
        banner = page.get_by_role("note")
        expect(banner).to_contain_text("Preview" if language == "en" else "预览")
        textbox = "Your message" if language == "en" else "您的留言"
        question = "When is the shop open?" if language == "en" else "营业时间是几点？"
        answer = ask(page, textbox, question)
        expect(answer.locator(".text")).to_contain_text("Monday to Saturday" if language == "en" else "周一至周六")
        unknown = "Do you repair vintage typewriters?" if language == "en" else "你们修理老式打字机吗？"
        ask(page, textbox, unknown)
        expect(agent_replies(page)).to_have_count(2)
        expect(page.locator("#rating")).to_have_count(0)
        shoot(page, f"owner-preview-{language}")
        [session] = DialogueSession.objects.filter(agent__slug="demo-shop")
        assert session.preview and session.audience == "customer"
        assert not KnowledgeMiss.objects.exists()

        # The customer page, signed in as the owner, offers the preview.
        page.goto(f"{site}/c/demo-shop/")
        link = "Preview as a customer" if language == "en" else "以客户身份预览"
        expect(page.get_by_role("link", name=link)).to_have_attribute("href", "/owner/demo-shop/preview")
    finally:
        context.close()
