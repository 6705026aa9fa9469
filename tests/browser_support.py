"""Shared pieces of the real-browser tests: Playwright for Python driving Debian's Chromium
against pytest-django's live server.  Never downloads a browser."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

from conftest import TenantWorld, build_tenant

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
TIMEOUT_MS = 10_000
PHONE = {"width": 375, "height": 740}


# --- fixtures ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def _async_unsafe_allowed() -> Iterator[None]:
    """Playwright's sync API keeps an asyncio loop registered as running on the main thread, so
    Django would refuse ORM calls from the test (and pytest-django's flush) as "async context".
    Allowed for the browser tests only, and only while this module runs."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture(scope="module")
def browser(_async_unsafe_allowed: None) -> Iterator[Any]:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium package (never download a browser)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def site(live_server: Any, transactional_db: Any, settings: Any, _async_unsafe_allowed: None) -> str:
    """The live server's base URL, over plain http (so the cookies may not be Secure).  The
    data must be committed for the server thread to see it, hence transactional_db."""
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False
    return live_server.url


@pytest.fixture
def world(site: str) -> TenantWorld:
    from django.db import connection

    # Flushing after a transactional test relies on PostgreSQL's TRUNCATE: on SQLite the flush is
    # a DELETE, which the ledger's append-only trigger refuses.  Say so rather than fail later.
    assert connection.vendor == "postgresql", f"the browser tests need PostgreSQL, not {connection.vendor}"
    return build_tenant("alpha")


# Every document reports a Content-Security-Policy violation on the console, where the context
# collects it: Chromium's own "Refused to …" messages are not console API calls Playwright sees.
_REPORT_CSP_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", function (event) {
  console.error("CSP violation: " + event.effectiveDirective + " blocked " + (event.blockedURI || "inline")
    + " at " + event.sourceFile + ":" + event.lineNumber);
});
"""


def watch_csp(context: Any) -> list[str]:
    """The Content-Security-Policy violations of every page of `context`, as they happen."""
    violations: list[str] = []
    context.add_init_script(_REPORT_CSP_VIOLATIONS)
    context.on("console", lambda message: violations.append(message.text) if "CSP violation" in message.text else None)
    return violations


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    context.set_default_timeout(TIMEOUT_MS)
    violations = watch_csp(context)
    try:
        yield context
    finally:
        context.close()
    # Every page a person uses must work under the policy: a blocked script or style is a bug.
    assert not violations, f"Content-Security-Policy violations: {violations}"


@pytest.fixture
def page(context: Any) -> Any:
    return context.new_page()
