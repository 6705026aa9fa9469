"""The error pages in Chromium (issue 11, point 13): 404, 403 and 500 in the site's layout, in
English at desktop width and in Chinese on a phone (390 px), under the Content-Security-Policy
(the `context` fixture and `watch_csp` fail the test on a violation)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

from browser_support import TIMEOUT_MS, watch_csp  # noqa: E402  (its fixtures are a plugin of the root conftest)

VIEWS = {
    "en": {"locale": "en-GB", "viewport": {"width": 1280, "height": 720}},
    "zh": {"locale": "zh-CN", "viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
}
TEXT = {
    "en": {
        "404": "Page not found",
        "403": "Access denied",
        "500": "Something went wrong",
        "home": "Go to the home page",
    },
    "zh": {"404": "找不到页面", "403": "无权访问", "500": "出错了", "home": "返回首页"},
}


@pytest.fixture
def failing_site(site: str, settings: Any) -> str:
    settings.ROOT_URLCONF = "error_urls"
    return site


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_error_pages_in_the_sites_layout(browser: Any, failing_site: str, language: str, tmp_path: Path) -> None:
    site, text = failing_site, TEXT[language]
    context = browser.new_context(**VIEWS[language])
    context.set_default_timeout(TIMEOUT_MS)
    violations = watch_csp(context)
    try:
        page = context.new_page()
        width = VIEWS[language]["viewport"]["width"]

        response = page.goto(f"{site}/no/such/page/")
        assert response is not None and response.status == 404
        expect(page.get_by_role("heading", level=1)).to_have_text(text["404"])
        expect(page.get_by_role("link", name="Facade")).to_be_visible()  # the site's header
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=str(tmp_path / f"404-{language}.png"), full_page=True)
        page.get_by_role("link", name=text["home"]).click()
        expect(page).to_have_url(f"{site}/")

        # 403: the sign-in form sent after its CSRF cookie was lost.
        page.goto(f"{site}/accounts/login/")
        context.clear_cookies()
        page.locator("input[name=username]").fill("someone@example.test")
        page.locator("input[name=password]").fill("whatever")
        with page.expect_response(lambda r: r.url.endswith("/accounts/login/") and r.request.method == "POST") as sent:
            page.locator("form.stack button[type=submit], main button[type=submit]").first.click()
        assert sent.value.status == 403
        expect(page.get_by_role("heading", level=1)).to_have_text(text["403"])
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=str(tmp_path / f"403-{language}.png"), full_page=True)

        # 500: a page that fails.  No request behind it: the header has no forms.
        response = page.goto(f"{site}/test-fails/")
        assert response is not None and response.status == 500
        expect(page.get_by_role("heading", level=1)).to_have_text(text["500"])
        expect(page.get_by_role("link", name="Facade")).to_be_visible()
        expect(page.locator("form")).to_have_count(0)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=str(tmp_path / f"500-{language}.png"), full_page=True)
    finally:
        context.close()
    assert not violations, violations
