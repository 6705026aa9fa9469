"""A forgotten password in a real browser (issue 32 §2: Debian's Chromium against the live server,
the e-mail through a real SMTP server), in English on a desktop and in Chinese at phone width:
from the sign-in page to the e-mailed link, a new password, and signing in with it; then the
account page (address, password, two-step sign-in) and the e-mail change page.  Screenshots go
to var/screenshots/ (or FACADE_SHOTS)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect
from test_team_browser import Person, shoot

from conftest import TenantWorld

LINK = re.compile(r"(http://[^\s]+/accounts/password/reset/[^/\s]+/[^/\s]+/)")
PASSWORD = "a-new-Passphrase-77"
WORDS = {
    "en": {
        "forgot": "Forgot your password?",
        "email": "Email",
        "send": "Send me the link",
        "check": "Check your e-mail",
        "new": "New password",
        "again": "The same password again",
        "save": "Save the new password",
        "changed": "Password changed",
        "sign_in": "Sign in",
        "password": "Password",
        "change_email": "Change your e-mail address",
        "account": "Your account",
        "two_step": "Turn it on with an authenticator app",
    },
    "zh-hans": {
        "forgot": "忘记密码了吗？",
        "email": "电子邮箱",
        "send": "把链接发给我",
        "check": "请查收邮件",
        "new": "新密码",
        "again": "再次输入密码",
        "save": "保存新密码",
        "changed": "密码已更改",
        "sign_in": "登录",
        "password": "密码",
        "change_email": "更改电子邮件地址",
        "account": "您的账户",
        "two_step": "用身份验证器应用开启",
    },
}


@pytest.mark.browser
@pytest.mark.parametrize(
    "language, phone", [("en", False), ("zh-hans", True)], ids=["english-desktop", "chinese-phone"]
)
def test_a_forgotten_password_is_reset_in_the_browser(
    browser: Any, world: TenantWorld, site: str, smtp: Any, settings: Any, language: str, phone: bool
) -> None:
    settings.FACADE_PUBLIC_URL = site
    words, tag = WORDS[language], f"recovery-{language}-{'phone' if phone else 'desktop'}"
    person = Person(browser, site, phone)
    try:
        page = person.page
        page.goto(f"{site}/accounts/login/")
        person.speak(language)
        page.get_by_role("link", name=words["forgot"]).click()
        page.get_by_label(words["email"]).fill("owner@alpha.test")
        shoot(page, f"{tag}-1-form")
        page.get_by_role("button", name=words["send"]).click()
        expect(page.get_by_role("heading", level=1)).to_have_text(words["check"])
        shoot(page, f"{tag}-2-sent")
        found = LINK.search(smtp.received[0][1].get_payload(decode=True).decode())
        assert found is not None
        page.goto(found.group(1))
        expect(page).to_have_url(re.compile(r"/set-password/$"))  # the token leaves the address bar
        page.get_by_label(words["new"], exact=True).fill(PASSWORD)
        page.get_by_label(words["again"]).fill(PASSWORD)
        shoot(page, f"{tag}-3-new-password")
        page.get_by_role("button", name=words["save"]).click()
        expect(page.get_by_role("heading", level=1)).to_have_text(words["changed"])
        shoot(page, f"{tag}-4-changed")
        page.get_by_role("link", name=words["sign_in"]).last.click()
        page.get_by_label(words["email"]).fill("owner@alpha.test")
        page.get_by_label(words["password"], exact=True).fill(PASSWORD)
        page.get_by_role("button", name=words["sign_in"]).click()
        expect(page).to_have_url(f"{site}/")
        page.get_by_role("link", name=words["account"]).click()
        expect(page.get_by_role("heading", level=1)).to_have_text(words["account"])
        expect(page.get_by_role("link", name=words["two_step"])).to_be_visible()
        shoot(page, f"{tag}-5-account")
        page.get_by_role("link", name=words["change_email"]).click()
        expect(page.get_by_role("heading", level=1)).to_have_text(words["change_email"])
        shoot(page, f"{tag}-6-email-change")
    finally:
        person.close()
