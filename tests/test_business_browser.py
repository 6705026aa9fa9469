"""A business joins, in a real browser (issue 32 §1: Debian's Chromium against the live server, the
e-mail through a real SMTP server), in English on a desktop and in Chinese at phone width: the
operator takes on a business from the Businesses page (a taken address is said, the form kept),
its first owner accepts the e-mailed invitation and lands on its team page owning its agent; and
with FACADE_SIGNUP=open a person signs a business up, opens the e-mailed link and creates it.
Screenshots go to var/screenshots/ (or FACADE_SHOTS)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect
from test_team_browser import Person, shoot

from conftest import TenantWorld
from facade.tenancy.models import AgentProfile
from facade.tenancy.policy import AgentPolicy
from facade.tenancy.services import user_ensure

LINK = re.compile(r"(http://[^\s]+/(?:accounts/invitation|signup/verify)/\?token=[A-Za-z0-9_:.-]+)")
PASSWORD = "a-long-Passphrase-42"

WORDS = {
    "en": {
        "name": "Name",
        "slug": "Address (lower-case letters, digits and hyphens)",
        "tz": "Time zone (e.g. Europe/Berlin, Asia/Shanghai)",
        "agent_name": "Its first agent's name",
        "agent_slug": "Its first agent's address (its chat is at /c/ADDRESS/)",
        "owner": "The first owner's e-mail address",
        "take": "Take on the business and invite its owner",
        "taken": "The address alpha is taken",
        "joined": "Rosa Bakery joined, with its agent rosa",
        "password": "Password",
        "again": "The same password again",
        "create": "Create the account and accept",
        "team": "Team of Rosa Bakery",
        "email": "Your e-mail address",
        "send": "E-mail me the link",
        "sent": "We sent a link to lin@tea.test",
        "create_business": "Create the account and the business",
    },
    "zh-hans": {
        "name": "名称",
        "slug": "地址（小写字母、数字和连字符）",
        "tz": "时区（例如 Europe/Berlin、Asia/Shanghai）",
        "agent_name": "首个智能体的名称",
        "agent_slug": "首个智能体的地址（其聊天页在 /c/地址/）",
        "owner": "首位店主的电子邮件地址",
        "take": "接入商家并邀请店主",
        "taken": "地址 alpha 已被占用",
        "joined": "Rosa Bakery 已加入，智能体为 rosa",
        "password": "密码",
        "again": "再次输入密码",
        "create": "创建账户并接受",
        "team": "Rosa Bakery 的团队",
        "email": "您的电子邮件地址",
        "send": "把链接发到我的邮箱",
        "sent": "我们已向 lin@tea.test 发送了一个链接",
        "create_business": "创建账户和商家",
    },
}
CASES = [("en", False), ("zh-hans", True)]
IDS = ["english-desktop", "chinese-phone"]


def fill_business(page: Any, words: dict[str, str], slug: str, agent_slug: str) -> None:
    page.get_by_label(words["name"], exact=True).fill("Rosa Bakery")
    page.get_by_label(words["slug"]).fill(slug)
    page.get_by_label(words["tz"]).fill("Asia/Shanghai")
    page.get_by_label(words["agent_name"]).fill("Rosa")
    page.get_by_label(words["agent_slug"]).fill(agent_slug)


@pytest.mark.browser
@pytest.mark.parametrize("language, phone", CASES, ids=IDS)
def test_the_operator_takes_on_a_business_and_its_owner_accepts(
    browser: Any, world: TenantWorld, site: str, smtp: Any, settings: Any, language: str, phone: bool
) -> None:
    settings.FACADE_PUBLIC_URL = site
    user_ensure(email="operator@platform.test", password="pw-operator", is_staff=True, is_superuser=True)
    words, tag = WORDS[language], f"business-{language}-{'phone' if phone else 'desktop'}"
    operator, owner = Person(browser, site, phone), Person(browser, site, phone)
    try:
        page = operator.page
        page.goto(f"{site}/accounts/login/?next=/platform/businesses/")
        page.get_by_label("Email").fill("operator@platform.test")
        page.get_by_label("Password").fill("pw-operator")
        page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(f"{site}/platform/businesses/")
        operator.speak(language)
        fill_business(page, words, "alpha", "rosa")
        page.get_by_label(words["owner"]).fill("rosa@bakery.test")
        page.get_by_role("button", name=words["take"]).click()
        expect(page.get_by_role("alert")).to_contain_text(words["taken"])
        expect(page.get_by_label(words["owner"])).to_have_value("rosa@bakery.test")  # the form is kept
        shoot(page, f"{tag}-1-taken")
        page.get_by_label(words["slug"]).fill("rosa-bakery")
        page.get_by_role("button", name=words["take"]).click()
        expect(page.locator(".flash")).to_contain_text(words["joined"])
        shoot(page, f"{tag}-2-joined")

        [(recipients, message)] = smtp.received
        assert recipients == ["rosa@bakery.test"]
        found = LINK.search(message.get_payload(decode=True).decode())
        assert found is not None
        owner.page.goto(found.group(1))
        owner.speak(language)
        owner.page.get_by_label(words["password"], exact=True).fill(PASSWORD)
        owner.page.get_by_label(words["again"]).fill(PASSWORD)
        owner.page.get_by_role("button", name=words["create"]).click()
        expect(owner.page).to_have_url(f"{site}/team/rosa-bakery/")
        expect(owner.page.get_by_role("heading", level=1)).to_have_text(words["team"])
        shoot(owner.page, f"{tag}-3-owner-team")
        from django.contrib.auth import get_user_model

        rosa = get_user_model().objects.get(username="rosa@bakery.test")
        assert AgentPolicy.is_owner(rosa, AgentProfile.objects.get(slug="rosa"))
    finally:
        operator.close()
        owner.close()


@pytest.mark.browser
@pytest.mark.parametrize("language, phone", CASES, ids=IDS)
def test_a_person_signs_a_business_up_by_the_emailed_link(
    browser: Any, world: TenantWorld, site: str, smtp: Any, settings: Any, language: str, phone: bool
) -> None:
    settings.FACADE_PUBLIC_URL, settings.FACADE_SIGNUP = site, "open"
    words, tag = WORDS[language], f"signup-{language}-{'phone' if phone else 'desktop'}"
    person = Person(browser, site, phone)
    try:
        page = person.page
        page.goto(f"{site}/signup/")
        person.speak(language)
        fill_business(page, words, "lin-tea", "lin")
        page.get_by_label(words["email"]).fill("lin@tea.test")
        shoot(page, f"{tag}-1-form")
        page.get_by_role("button", name=words["send"]).click()
        expect(page.locator("#signup-sent")).to_contain_text(words["sent"])
        shoot(page, f"{tag}-2-sent")
        found = LINK.search(smtp.received[0][1].get_payload(decode=True).decode())
        assert found is not None
        page.goto(found.group(1))
        expect(page).to_have_url(f"{site}/signup/verify/")
        page.get_by_label(words["password"], exact=True).fill(PASSWORD)
        page.get_by_label(words["again"]).fill(PASSWORD)
        shoot(page, f"{tag}-3-verify")
        page.get_by_role("button", name=words["create_business"]).click()
        expect(page).to_have_url(f"{site}/team/lin-tea/")
        shoot(page, f"{tag}-4-team")
    finally:
        person.close()
