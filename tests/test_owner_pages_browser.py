"""Issue 26 §6, the owner's and the auditor's pages in a real browser (Debian's Chromium against
Daphne on the seeded demo shop, with the demo outbox on as `make run` has it), in English on a
desktop and in Chinese at 390 px:

- the owner proposes a price list on the contract page and lands on what became of it — the
  confirmation and the change's card in view, not an empty form at the top of a long page — then
  approves it there: the card's code step says where the code went (masked) and links the demo
  outbox, where the owner reads the code (it is nowhere else on the page), types it and the price
  list is published;
- signed out, `/` leads to the shop's chat; a wrong password names the e-mail field;
- the auditor downloads the export verifier from the export page;
- the metrics of an agent with no figures are a page of ordinary height.

Screenshots go to var/screenshots/."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import PHONE
from django.core.management import call_command
from playwright.sync_api import expect
from test_chat_browser import daphne
from test_requests_browser import Watched, shoot

NARROW = {**PHONE, "width": 390}
ROOT = Path(__file__).resolve().parents[1]
WORDS = {
    "en": {
        "proposed": "Proposed. It waits for your decision",
        "approve": "Approve",
        "confirm": "Confirm",
        "waiting": "Waiting for the code from the e-mail.",
        "sent": "We e-mailed a 6-digit code to o***@demo.test",
        "outbox": "Read the code in the demo outbox",
        "published": "Approved and published as contract version",
        "chat": "Chat with Demo Shop",
        "wrong": "That e-mail address and password do not match an account.",
        "download": "Download the verifier",
    },
    "zh-hans": {
        "proposed": "已提议。它正在等待您的决定",
        "approve": "批准",
        "confirm": "确认",
        "waiting": "正在等待您输入电子邮件中的验证码。",
        "sent": "o***@demo.test",
        "outbox": "在演示发件箱中查看验证码",
        "published": "已批准，并发布为合约第",
        "chat": "与 Demo Shop 对话",
        "wrong": "该电子邮件地址与密码不匹配任何账户",
        "download": "下载校验程序",
    },
}


@pytest.fixture(scope="module")
def server(django_db_setup: Any, tmp_path_factory: Any) -> Iterator[str]:
    var = tmp_path_factory.mktemp("var")
    with daphne(tmp_path_factory.mktemp("daphne"), FACADE_DEMO_OUTBOX="true", FACADE_VAR_DIR=str(var)) as url:
        yield url


@pytest.fixture
def demo(server: str, transactional_db: Any, _async_unsafe_allowed: None) -> dict[str, str]:
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    found = dict(re.findall(r"(owner|auditor)\s+\S+@demo\.test\s+password: (\S+)", out.getvalue()))
    assert set(found) == {"owner", "auditor"}, out.getvalue()
    return {"site": server, **found}


def context_for(browser: Any, site: str, language: str) -> Watched:
    if language == "en":
        return Watched(browser, site, viewport={"width": 1280, "height": 800})
    return Watched(browser, site, phone=True, viewport=NARROW, locale="zh-CN")


def sign_in(page: Any, site: str, email: str, password: str, language: str) -> None:
    page.goto(f"{site}/accounts/login/")
    if language != "en":
        page.locator("#language").select_option(language)
        expect(page.locator("html")).to_have_attribute("lang", language)
    page.locator("#id_username").fill(email)
    page.locator("#id_password").fill(password)
    page.locator("form.stack button[type=submit]").click()
    expect(page).to_have_url(f"{site}/")


def fits(page: Any, language: str) -> None:
    if language != "en":
        assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]


@pytest.mark.browser
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_owner_proposes_prices_and_approves_them_with_the_code_from_the_demo_outbox(
    browser: Any, demo: dict[str, str], language: str
) -> None:
    from approvals.models import ChangeProposal

    site, words = demo["site"], WORDS[language]
    watched = context_for(browser, site, language)
    try:
        page = watched.context.new_page()
        sign_in(page, site, "owner@demo.test", demo["owner"], language)
        # The overview of a shop that has served no one: a line per metric, not empty charts.
        page.goto(f"{site}/owner/demo-shop/")
        expect(page.locator(".charts-empty")).to_have_count(1)
        overview_height = page.evaluate("document.documentElement.scrollHeight")
        shoot(page, f"ownerui-overview-empty-{language}")
        assert overview_height < (1800 if language == "en" else 2400), overview_height
        page.goto(f"{site}/owner/demo-shop/contract#pricing-h")
        rows = page.locator("#pricing-h ~ form input[name=name]")
        empty = next(i for i in range(rows.count()) if not rows.nth(i).input_value())
        rows.nth(empty).fill("Birthday cake (8 people)")
        page.locator("#pricing-h ~ form input[name=amount]").nth(empty).fill("35.00")
        page.locator("#pricing-summary").fill("Cake prices" if language == "en" else "蛋糕价格")
        page.locator("#pricing-summary").press("Enter")

        [proposal] = ChangeProposal.objects.filter(agent__slug="demo-shop", kind="pricing")
        expect(page).to_have_url(re.compile(rf"/owner/demo-shop/contract\?change={proposal.pk}#pricing-outcome$"))
        outcome = page.locator("#pricing-outcome")
        expect(outcome.locator(".flash")).to_contain_text(words["proposed"])
        expect(outcome.locator(".flash")).to_be_in_viewport()
        card = outcome.locator(f'article.change-card[id="{proposal.pk}"]')
        expect(card.locator("h3")).to_be_in_viewport()
        expect(card.locator("table.rows")).to_contain_text("Birthday cake (8 people)")
        fits(page, language)
        shoot(page, f"ownerui-contract-proposed-{language}")
        page.screenshot(path=str(ROOT / "var" / "screenshots" / f"ownerui-contract-proposed-view-{language}.png"))

        card.get_by_role("button", name=words["approve"], exact=True).click()
        status = card.locator(".card-status")
        expect(status).to_have_text(words["waiting"])
        expect(card.locator(".sent-to")).to_contain_text(words["sent"])
        link = card.locator(".outbox-hint a")
        expect(link).to_contain_text(words["outbox"])
        expect(card.locator("input[name=code]")).to_be_focused()
        fits(page, language)
        page.screenshot(path=str(ROOT / "var" / "screenshots" / f"ownerui-code-step-{language}.png"))
        assert not re.search(r"\b\d{6}\b", card.inner_text())  # the code is not on the page

        with page.context.expect_page() as opened:
            link.click()
        outbox = opened.value
        outbox.wait_for_load_state()
        mail = outbox.locator("ol.mails article").first  # the newest: this change's code
        expect(mail).to_contain_text(proposal.pk)
        shoot(outbox, f"ownerui-outbox-{language}")
        code = re.search(r"(?:Your code|您的验证码)[:：] ?(\d{6})", mail.inner_text())
        assert code is not None
        outbox.close()

        card.locator("input[name=code]").fill(code.group(1))
        card.get_by_role("button", name=words["confirm"], exact=True).click()
        published = page.locator(f'article.change-card[id="{proposal.pk}"] .card-status')
        expect(published).to_contain_text(words["published"])
        proposal.refresh_from_db()
        assert proposal.status == "applied" and proposal.contract_version
        fits(page, language)
        page.screenshot(path=str(ROOT / "var" / "screenshots" / f"ownerui-published-{language}.png"))
    finally:
        watched.close()


@pytest.mark.browser
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_visitor_finds_the_chat_and_the_sign_in_names_the_email(
    browser: Any, demo: dict[str, str], language: str
) -> None:
    site, words = demo["site"], WORDS[language]
    watched = context_for(browser, site, language)
    try:
        page = watched.context.new_page()
        page.goto(f"{site}/")
        if language != "en":
            page.locator("#language").select_option(language)
            expect(page.locator("html")).to_have_attribute("lang", language)
        chat = page.get_by_role("link", name=words["chat"])
        expect(chat).to_be_visible()
        fits(page, language)
        shoot(page, f"ownerui-home-signed-out-{language}")
        chat.click()
        expect(page).to_have_url(f"{site}/c/demo-shop/")

        page.goto(f"{site}/accounts/login/")
        page.locator("#id_username").fill("owner@demo.test")
        page.locator("#id_password").fill("not the password")
        page.locator("form.stack button[type=submit]").click()
        expect(page.locator("form .error")).to_contain_text(words["wrong"])
        assert "username" not in page.locator("main").inner_text().lower()
        shoot(page, f"ownerui-sign-in-refused-{language}")
    finally:
        watched.close()


@pytest.mark.browser
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_auditor_downloads_the_verifier_and_empty_metrics_are_short(
    browser: Any, demo: dict[str, str], language: str, tmp_path: Path
) -> None:
    site, words = demo["site"], WORDS[language]
    watched = context_for(browser, site, language)
    try:
        page = watched.context.new_page()
        sign_in(page, site, "auditor@demo.test", demo["auditor"], language)
        page.goto(f"{site}/audit/demo/export")
        button = page.locator("#verifier")
        expect(button).to_contain_text(words["download"])
        fits(page, language)
        shoot(page, f"ownerui-export-{language}")
        with page.expect_download() as download:
            button.click()
        saved = tmp_path / "verify_export.py"
        download.value.save_as(saved)
        assert saved.read_bytes() == (ROOT / "tools" / "verify_export.py").read_bytes()

        # The demo shop has served no one yet: each metric is one line, not an empty chart.
        page.goto(f"{site}/audit/demo/metrics")
        expect(page.locator(".charts-empty")).to_have_count(1)
        height = page.evaluate("document.documentElement.scrollHeight")
        assert height < (1400 if language == "en" else 2000), height  # 3,600 px of empty charts before
        fits(page, language)
        shoot(page, f"ownerui-metrics-empty-{language}")
    finally:
        watched.close()
