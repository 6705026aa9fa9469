"""The members page and an invitation's link in a real browser (issue 32 §2: Debian's Chromium
against the live server, the e-mail through a real SMTP server), in English on a desktop and in
Chinese at phone width: the owner invites an auditor, the invited person opens the e-mailed link,
creates their account and lands signed in; the used link is refused to the next holder; the new
auditor cannot open the members page; the owner removes them, and cannot remove the last owner.
Screenshots go to var/screenshots/ (or FACADE_SHOTS)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from browser_support import TIMEOUT_MS, watch_csp
from playwright.sync_api import expect

from conftest import TenantWorld
from facade.tenancy.models import Membership

SHOTS = Path(os.environ.get("FACADE_SHOTS") or Path(__file__).resolve().parents[1] / "var" / "screenshots")
PHONE = {"width": 390, "height": 844}
LINK = re.compile(r"(http://[^\s]+/accounts/invitation/\?token=[A-Za-z0-9_-]+)")
PASSWORD = "a-long-Passphrase-42"
INVITED = "partner@alpha.test"

WORDS = {
    "en": {
        "title": "Team of Alpha",
        "email": "Their e-mail address",
        "auditor": "Auditor: reads the ledger, changes nothing",
        "send": "Send the invitation",
        "sent": f"Invitation sent to {INVITED}",
        "join": "Join Alpha",
        "password": "Password",
        "again": "The same password again",
        "create": "Create the account and accept",
        "welcome": "Welcome to Alpha",
        "used": "This invitation has already been accepted.",
        "remove": f"Remove {INVITED}",
        "removed": f"{INVITED} was removed from the business.",
        "last": "The last owner",
        "not_found": "Not found",
    },
    "zh-hans": {
        "title": "Alpha 的团队",
        "email": "对方的电子邮件地址",
        "auditor": "审计员：查阅账本，不做任何更改",
        "send": "发送邀请",
        "sent": f"已向 {INVITED} 发出邀请",
        "join": "加入 Alpha",
        "password": "密码",
        "again": "再次输入密码",
        "create": "创建账户并接受",
        "welcome": "欢迎加入 Alpha",
        "used": "此邀请已被接受。",
        "remove": f"移除 {INVITED}",
        "removed": f"已将 {INVITED} 移出本商家。",
        "last": "最后一位店主",
        "not_found": "",
    },
}


def shoot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


class Person:
    """One person's browser: their own cookies, CSP violations collected, nothing from another host."""

    def __init__(self, browser: Any, site: str, phone: bool) -> None:
        options: dict[str, Any] = {"viewport": PHONE, "is_mobile": True, "has_touch": True} if phone else {}
        self.context = browser.new_context(**options)
        self.context.set_default_timeout(TIMEOUT_MS)
        self.csp = watch_csp(self.context)
        self.off_site: list[str] = []
        self.context.on("request", lambda r: None if r.url.startswith(site) else self.off_site.append(r.url))
        self.page = self.context.new_page()

    def speak(self, language: str) -> None:
        if language != "en":
            self.page.locator("#language").select_option(language)
            expect(self.page.locator("html")).to_have_attribute("lang", language)

    def close(self) -> None:
        self.context.close()
        assert self.csp == [], self.csp
        assert self.off_site == [], self.off_site


@pytest.mark.browser
@pytest.mark.parametrize(
    "language, phone", [("en", False), ("zh-hans", True)], ids=["english-desktop", "chinese-phone"]
)
def test_an_owner_invites_an_auditor_who_accepts_by_the_emailed_link(
    browser: Any, world: TenantWorld, site: str, smtp: Any, settings: Any, language: str, phone: bool
) -> None:
    settings.FACADE_PUBLIC_URL = site  # the e-mail's link points at this site
    words, tag = WORDS[language], f"team-{language}-{'phone' if phone else 'desktop'}"
    owner, invited, holder = (Person(browser, site, phone) for _ in range(3))
    try:
        page = owner.page
        page.goto(f"{site}/accounts/login/?next=/team/alpha/")
        page.get_by_label("Email").fill("owner@alpha.test")
        page.get_by_label("Password").fill("pw-alpha")
        page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(f"{site}/team/alpha/")
        owner.speak(language)
        expect(page.get_by_role("heading", level=1)).to_have_text(words["title"])
        expect(page.get_by_text(words["last"])).to_be_visible()  # the owner's own row: no remove button
        page.get_by_label(words["email"]).fill(INVITED)
        page.get_by_label(words["auditor"]).check()
        shoot(page, f"{tag}-1-invite")
        page.get_by_role("button", name=words["send"]).click()
        expect(page.locator(".flash")).to_contain_text(words["sent"])
        shoot(page, f"{tag}-2-sent")

        [(recipients, message)] = smtp.received
        assert recipients == [INVITED]
        body = message.get_payload(decode=True).decode()
        found = LINK.search(body)
        assert found is not None, body

        # The invited person opens the link: the secret leaves the address bar at once.
        invited.page.goto(found.group(1))
        expect(invited.page).to_have_url(f"{site}/accounts/invitation/")
        invited.speak(language)
        expect(invited.page.get_by_role("heading", level=1)).to_have_text(words["join"])
        invited.page.get_by_label(words["password"], exact=True).fill(PASSWORD)
        invited.page.get_by_label(words["again"]).fill(PASSWORD)
        shoot(invited.page, f"{tag}-3-accept")
        invited.page.get_by_role("button", name=words["create"]).click()
        expect(invited.page).to_have_url(f"{site}/")
        expect(invited.page.locator("body")).to_contain_text(words["welcome"])
        expect(invited.page.locator(".who")).to_have_text(INVITED)
        shoot(invited.page, f"{tag}-4-welcome")
        assert Membership.objects.get(tenant=world.tenant, user__username=INVITED).role == "auditor"
        # An auditor does not manage the team.
        assert invited.page.goto(f"{site}/team/alpha/").status == 404

        # Whoever gets hold of the used link next is refused.
        holder.page.goto(found.group(1))
        holder.speak(language)
        expect(holder.page.get_by_role("alert")).to_have_text(words["used"])
        shoot(holder.page, f"{tag}-5-used-link")

        # The owner sees the new auditor and removes them.
        page.reload()
        remove = page.get_by_role("button", name=words["remove"])
        expect(remove).to_be_visible()
        shoot(page, f"{tag}-6-members")
        remove.click()
        expect(page.locator(".flash")).to_contain_text(words["removed"])
        shoot(page, f"{tag}-7-removed")
        assert not Membership.objects.filter(tenant=world.tenant, user__username=INVITED).exists()
        assert Membership.objects.filter(tenant=world.tenant, user=world.owner, role="owner").exists()
    finally:
        for person in (owner, invited, holder):
            person.close()


ATTACK_WORDS = {
    "en": {
        "wrong": "This invitation is for stranger@alpha.test, and you are signed in as member@alpha.test.",
        "expired": "This invitation has expired.",
    },
    "zh-hans": {
        "wrong": "此邀请是发给 stranger@alpha.test 的，而您当前以 member@alpha.test 登录。",
        "expired": "此邀请已过期。",
    },
}


@pytest.mark.browser
@pytest.mark.parametrize(
    "language, phone", [("en", False), ("zh-hans", True)], ids=["english-desktop", "chinese-phone"]
)
def test_someone_elses_and_an_expired_invitation_link_are_refused_in_the_browser(
    browser: Any, world: TenantWorld, site: str, smtp: Any, settings: Any, language: str, phone: bool
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from facade.tenancy.schemas import Actor
    from facade.tenancy.services import invitation_create

    settings.FACADE_PUBLIC_URL = site
    tag = f"team-attack-{language}-{'phone' if phone else 'desktop'}"
    for email, days_ago in (("stranger@alpha.test", 0), ("late@alpha.test", 8)):
        invitation_create(
            tenant=world.tenant,
            email=email,
            role="owner",
            invited_by=world.owner,
            actor=Actor.human(world.owner.pk),
            now=timezone.now() - timedelta(days=days_ago),
        )
    links = [LINK.search(m.get_payload(decode=True).decode()) for _, m in smtp.received]
    assert all(links)
    member = Person(browser, site, phone)
    try:
        page = member.page
        page.goto(f"{site}/accounts/login/")
        page.get_by_label("Email").fill("member@alpha.test")
        page.get_by_label("Password").fill("pw-alpha")
        page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(f"{site}/")
        member.speak(language)
        page.goto(links[0].group(1))  # type: ignore[union-attr]
        expect(page.get_by_role("alert")).to_contain_text(ATTACK_WORDS[language]["wrong"])
        assert page.get_by_role("button", name="Accept the invitation").count() == 0
        shoot(page, f"{tag}-1-wrong-account")
        page.goto(links[1].group(1))  # type: ignore[union-attr]
        expect(page.get_by_role("alert")).to_contain_text(ATTACK_WORDS[language]["expired"])
        shoot(page, f"{tag}-2-expired")
    finally:
        member.close()
    assert not Membership.objects.filter(tenant=world.tenant, user__username__in=["stranger@alpha.test"]).exists()
    assert Membership.objects.get(tenant=world.tenant, user=world.member).role == "member"
