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
