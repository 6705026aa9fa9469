"""`/admin/` has an account that can sign in (issue 11, point 12): `seed_demo` creates a platform
operator and prints its password like the other demo accounts; in Chromium the operator signs in
to the admin, in English and in Chinese, at desktop and phone width."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

from browser_support import TIMEOUT_MS, watch_csp  # noqa: E402  (its fixtures are a plugin of the root conftest)


def seeded_operator_password() -> str:
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    found = re.search(r"operator\s+operator@demo\.test\s+password: (\S+)", out.getvalue())
    assert found, out.getvalue()
    return found.group(1)


def test_the_seeded_operator_signs_in_to_the_admin(page: Any, site: str, tmp_path: Path) -> None:
    password = seeded_operator_password()
    response = page.goto(f"{site}/admin/")
    assert response is not None and response.ok
    expect(page).to_have_url(re.compile(r"/admin/login/\?next=/admin/$"))
    page.get_by_label("Username").fill("operator@demo.test")
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(f"{site}/admin/")
    expect(page.get_by_role("heading", name="Site administration")).to_be_visible()
    # What the operator is there for: accounts, and sign-in lockouts and authenticators.
    expect(page.get_by_role("link", name="Users")).to_be_visible()
    expect(page.get_by_role("link", name="Access attempts")).to_be_visible()
    page.screenshot(path=str(tmp_path / "admin-en.png"), full_page=True)

    # Running seed_demo again changes nothing: the operator still signs in with the same password.
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    assert "password:" not in out.getvalue()
    page.get_by_role("button", name="Log out").click()
    page.goto(f"{site}/admin/login/")
    page.get_by_label("Username").fill("operator@demo.test")
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Site administration")).to_be_visible()


def test_the_owner_is_not_let_into_the_admin(page: Any, site: str) -> None:
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    owner_password = re.search(r"owner\s+owner@demo\.test\s+password: (\S+)", out.getvalue()).group(1)
    page.goto(f"{site}/admin/login/")
    page.get_by_label("Username").fill("owner@demo.test")
    page.get_by_label("Password").fill(owner_password)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".errornote")).to_be_visible()
    expect(page.get_by_role("heading", name="Site administration")).to_have_count(0)


def test_the_operator_signs_in_in_chinese_on_a_phone(browser: Any, site: str, tmp_path: Path) -> None:
    password = seeded_operator_password()
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, locale="zh-CN"
    )
    context.set_default_timeout(TIMEOUT_MS)
    violations = watch_csp(context)
    try:
        page = context.new_page()
        page.goto(f"{site}/admin/login/")
        page.get_by_label("用户名").fill("operator@demo.test")
        page.get_by_label("密码").fill(password)
        page.get_by_role("button", name="登录").click()
        expect(page.get_by_role("heading", name="站点管理")).to_be_visible()
        page.screenshot(path=str(tmp_path / "admin-zh-phone.png"), full_page=True)
    finally:
        context.close()
    assert not violations, violations
