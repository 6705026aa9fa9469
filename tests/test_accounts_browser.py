"""Real-browser tests of signing in: the lock-out after wrong passwords, and two-step sign-in
with an authenticator app.  At phone width, in English."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from conftest import TenantWorld

pytestmark = pytest.mark.browser

from browser_support import PHONE  # noqa: E402

SHOTS = Path(__file__).resolve().parents[1] / "var" / "screenshots"


def sign_in(page: Any, site: str, email: str, password: str) -> None:
    page.goto(f"{site}/accounts/login/")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def test_wrong_passwords_lock_the_sign_in_out_and_say_so(
    page: Any, site: str, world: TenantWorld, settings: Any
) -> None:
    settings.FACADE_LOGIN_FAILURE_LIMIT = settings.AXES_FAILURE_LIMIT = 3
    settings.FACADE_LOGIN_COOLOFF_MINUTES = 15
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    page.set_viewport_size(PHONE)
    for _ in range(3):
        sign_in(page, site, "owner@alpha.test", "not-the-password")
    sign_in(page, site, "owner@alpha.test", "pw-alpha")
    alert = page.get_by_role("alert")
    expect(alert).to_have_text("Too many failed sign-in attempts. Please try again in 15 min.")
    expect(page.get_by_label("Email")).to_have_value("owner@alpha.test")
    expect(page.get_by_role("button", name="Sign out")).to_have_count(0)
    # The message fits the phone's width (nothing scrolls sideways).
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "login-locked-out-phone.png"), full_page=True)

    # Someone else behind the same address still signs in.
    sign_in(page, site, "auditor@alpha.test", "pw-alpha")
    expect(page).to_have_url(re.compile(r"/$"))
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()


def test_an_owner_enrols_an_authenticator_and_signs_in_with_a_code(page: Any, site: str, world: TenantWorld) -> None:
    from django_otp.plugins.otp_totp.models import TOTPDevice
    from test_two_step import code_for

    from facade.tenancy.schemas import Actor
    from facade.tenancy.services import tenant_totp_require

    tenant_totp_require(tenant=world.tenant, required=True, actor=Actor.platform("tests"))
    page.set_viewport_size(PHONE)
    sign_in(page, site, "owner@alpha.test", "pw-alpha")
    # The tenant requires it: the owner lands on the enrolment page, not on their agents.
    expect(page).to_have_url(re.compile(r"/accounts/two-step/\?next=%2F$"))
    expect(page.get_by_role("heading", name="Two-step sign-in")).to_be_visible()
    expect(page.get_by_text("Your business requires a code")).to_be_visible()
    key = page.get_by_label("Key")
    expect(key).to_be_visible()
    expect(page.get_by_role("link", name="Add to authenticator app")).to_have_attribute(
        "href", re.compile(r"^otpauth://totp/")
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "two-step-enrol-phone.png"), full_page=True)

    device = TOTPDevice.objects.get(user=world.owner, confirmed=False)
    assert key.inner_text().replace(" ", "") in device.config_url  # the key shown is the device's
    page.get_by_label("Then enter the code it shows").fill(code_for(device))
    page.get_by_role("button", name="Turn on two-step sign-in").click()
    expect(page).to_have_url(f"{site}/")
    expect(page.get_by_role("region", name="Agents you own")).to_contain_text("Alpha Agent")

    page.get_by_role("button", name="Sign out").click()
    sign_in(page, site, "owner@alpha.test", "pw-alpha")
    expect(page).to_have_url(re.compile(r"/accounts/login/code/"))
    expect(page.get_by_role("button", name="Sign out")).to_have_count(0)
    page.get_by_label("Code from your authenticator app").fill("000000")
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("alert")).to_contain_text("That code is not right")
    TOTPDevice.objects.update(throttling_failure_count=0, throttling_failure_timestamp=None)  # the pause passed
    page.get_by_label("Code from your authenticator app").fill(code_for(TOTPDevice.objects.get(user=world.owner), 1))
    page.screenshot(path=str(SHOTS / "two-step-code-phone.png"), full_page=True)
    page.get_by_role("button", name="Continue").click()
    expect(page).to_have_url(f"{site}/")
    expect(page.get_by_role("navigation", name="Account")).to_contain_text("owner@alpha.test")
