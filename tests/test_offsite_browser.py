"""No page asks another host for anything (issue 11: "A browser test asserts that no page
requests anything from a host other than the server itself"; point 11, the API reference
offline).

The pages are taken from the URL conf: every route outside `api/` and `admin/` is a page and is
opened, so a page added later is covered without touching this file; the routes that are not
pages (JSON, POST-only, a script, an image) are named below with the reason.  Chromium runs with
every request to another host blocked and recorded, as on a machine with no internet access:
the pages must still render (the API reference among them), and the record must stay empty.
Each page is opened by a visitor in English at desktop width and by the signed-in owner in
Chinese at phone width (390 px), plus the error pages, the admin's sign-in and index."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from playwright.sync_api import expect

from conftest import TenantWorld
from rsi.review_models import ReviewReport

pytestmark = pytest.mark.browser

from browser_support import TIMEOUT_MS, watch_csp  # noqa: E402  (its fixtures are a plugin of the root conftest)

PHONE_390 = {"width": 390, "height": 844}
REDOC_MS = 4 * TIMEOUT_MS  # Redoc parses a 1 MB bundle and draws after the load: slow on a busy machine

# Routes that are not pages a person opens, by name, and why.  Everything under `api/` is the
# JSON API (its reference page, `api/docs/`, is a page and is opened) and everything under
# `admin/` is Django's admin (its sign-in and index are opened below).
NOT_PAGES = {
    "healthz": "JSON status for the container's health check",
    "favicon": "the icon itself (tests/test_error_pages.py)",
    "logout": "POST only: the Sign out button",
    "set_language": "POST only: the language menu, used on every page below",
    "owner-request-move": "POST only: a move button on the Requests page, opened below",
    "owner-request-reply": "POST only: the reply form on the Requests page, opened below",
    "owner-unanswered-attach": "POST only: the attach form on the Unanswered questions page, opened below",
    "owner-contract-change": "POST only: every change form on the contract page, opened below",
    "owner-feeds-add": "POST only: the add form on the feeds page, opened below",
    "owner-feeds-run": "POST only: the Run observe now button on the feeds page, opened below",
    "owner-feed-toggle": "POST only: a feed's enable/disable button on the feeds page, opened below",
    "owner-candidate-propose": "POST only: a candidate's Propose as knowledge button on the feeds page, opened below",
    "owner-guard-breaker-close": "POST only: the Close the breaker button of the overview, when the breaker is open",
    "owner-review-run": "POST only: the Run today's review and Review this day buttons of the overview",
    "owner-review-status": "JSON: a daily review's progress, polled by the review page (owner-review), opened below",
    "owner-inbox-card": "one change card (an HTML fragment) that the inbox page and the owner chat load",
    "audit-verifier": "a download (the export verifier, tests/test_audit_export_page.py), linked from the export page",
    "audit-verify-run": "POST only: the Verify now button on the auditor console's verification page, opened below",
    "api-docs-script": "the API reference's script, loaded by api/docs/",
    "schema": "the OpenAPI document (YAML), loaded by api/docs/",
    "owner-peers-issue": "POST only: the Issue a key form on the Peers page, opened below",
    "owner-peer-trust": "POST only: a key's trust form on the Peers page, opened below",
    "owner-peer-revoke": "POST only: a key's Revoke button on the Peers page, opened below",
    "owner-peers-listing": "POST only: the List my agent / Take it off the list button on the Peers page, opened below",
    "business-new": "POST only: the Create form on the operator's businesses page, opened below",
    "team-invite": "POST only: the Invite form on the team page, opened below",
    "team-member-role": "POST only: a member's role form on the team page, opened below",
    "team-member-remove": "POST only: a member's Remove button on the team page, opened below",
    "team-invitation-cancel": "POST only: an invitation's Cancel button on the team page, opened below",
    "a2a-card": "JSON: an agent's A2A Agent Card, read by other agents (tests/test_a2a.py)",
    "a2a-jsonrpc": "POST only: the A2A JSON-RPC endpoint other agents call (tests/test_a2a.py)",
}
PAGES_UNDER_API = {"api-docs"}
# Pages an owner is not shown (walked all the same): the operator's businesses page, sign-up while
# FACADE_SIGNUP is off (the default), and the pages of an e-mailed link opened without one. The
# operator opens the businesses page below.
NOT_THE_OWNERS = {
    "/platform/businesses/",
    "/signup/",
    "/signup/verify/",
    "/accounts/invitation/",
    "/accounts/email/confirm/",
}
# A segment whose page reads it: a day is a date (any past one: the page shows what that day has).
# The auditor console's pages of one tenant take the walk's tenant (the owner reads its ledger),
# an event of its ledger is one the tenant's creation wrote, and its review page a daily review
# the walk stores under this id.
REVIEW_ID = "5f0c8a44-1d2b-4c3e-9a7f-000000000014"
FILLERS_BY_NAME = {"day": "2026-01-05", "tenant_slug": "alpha", "report_id": REVIEW_ID, "seq": "1"}
FILLERS = {"slug": "{slug}", "int": "1", "uuid": "00000000-0000-0000-0000-000000000000", "str": "x", "path": "x"}


def routes(patterns: list[Any] | None = None, prefix: str = "") -> Iterator[tuple[str, str | None]]:
    """(route, name) of every URL pattern, includes flattened."""
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(entry, URLResolver):
            yield from routes(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry.name


def page_routes() -> list[str]:
    found = []
    for route, name in routes():
        if route.startswith("admin/") or name in NOT_PAGES:
            continue
        if route.startswith("api/") and name not in PAGES_UNDER_API:
            continue
        found.append(route)
    return found


def page_path(route: str, slug: str, by_name: dict[str, str] | None = None) -> str:
    """A path for `route`: an agent's slug for `<slug:…>`, a placeholder for other converters
    (such a page may answer 404 — the page it shows must not load from elsewhere either)."""

    def fill(match: re.Match[str]) -> str:
        converter = match.group(1) or "str"
        fillers = FILLERS_BY_NAME if by_name is None else by_name
        if match.group(2) in fillers:
            return fillers[match.group(2)]
        if converter not in FILLERS:
            raise AssertionError(f"route {route!r}: say in FILLERS how to fill a <{converter}:…> segment")
        return FILLERS[converter].format(slug=slug)

    return "/" + re.sub(r"<(?:(\w+):)?(\w+)>", fill, route)


def test_the_walk_knows_every_route() -> None:
    """Every route is either opened as a page or named as not one; the names listed exist."""
    names = {name for _, name in routes()}
    assert set(NOT_PAGES) <= names and PAGES_UNDER_API <= names
    pages = page_routes()
    for expected in ("", "c/<slug:slug>/", "owner/<slug:slug>/chat", "owner/<slug:slug>/knowledge"):
        assert expected in pages
    assert {"accounts/login/", "accounts/login/code/", "accounts/two-step/", "api/docs/"} <= set(pages)


# --- the browser ----------------------------------------------------------------------------


class Offsite:
    """Blocks and records every request of a context to a host other than the server's."""

    def __init__(self, context: Any, site: str) -> None:
        self.host = urlparse(site).netloc
        self.requests: list[str] = []
        self.pages: list[str] = []
        context.route("**/*", self._route)
        context.on("request", self._seen)

    def local(self, url: str) -> bool:
        parsed = urlparse(url)
        return parsed.scheme in ("data", "blob", "about") or parsed.netloc == self.host

    def _seen(self, request: Any) -> None:
        if not self.local(request.url):
            self.requests.append(f"{request.url} (from {request.frame.url})")

    def _route(self, route: Any) -> None:
        if self.local(route.request.url):
            route.continue_()
        else:
            route.abort("internetdisconnected")


SCREENSHOT_MS = 60_000


def open_page(page: Any, url: str, shots: Path | None, name: str) -> int:
    response = page.goto(url)
    assert response is not None, url
    page.wait_for_load_state("networkidle")
    if url.endswith("/api/docs/"):  # Redoc draws after the load: the page must render, offline
        expect(page.get_by_role("heading", name=re.compile("Facade API"))).to_be_visible(timeout=REDOC_MS)
    if shots is not None:
        # A whole-page picture of a long page (the API reference) took over the 10 s default on a
        # loaded machine, twice: what the test checks is the requests, not how fast Chromium paints.
        page.screenshot(path=str(shots / f"{name}.png"), full_page=True, timeout=SCREENSHOT_MS)
    return int(response.status)


def shot_name(path: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-") or "home"


def sign_in(page: Any, site: str, email: str, password: str, button: str) -> None:
    page.goto(f"{site}/accounts/login/")
    page.locator("input[name=username]").fill(email)
    page.locator("input[name=password]").fill(password)
    page.get_by_role("button", name=button).click()
    expect(page).to_have_url(f"{site}/")


def test_no_page_requests_anything_from_another_host(
    browser: Any, site: str, world: TenantWorld, tmp_path: Path, settings: Any
) -> None:
    from facade.tenancy.services import user_ensure

    # The demo outbox is a page too, when the demo flag is on and e-mail goes to files.
    settings.FACADE_DEMO_OUTBOX = True
    settings.EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
    settings.EMAIL_FILE_PATH = str(tmp_path / "outbox")

    user_ensure(email="operator@platform.test", password="pw-operator", is_staff=True, is_superuser=True)
    from facade.dialogue.runtime.loop import turn_handle
    from facade.dialogue.runtime.providers.offline import OfflineProvider
    from facade.dialogue.services import session_open
    from facade.tenancy.rules import Audience
    from facade.tenancy.services import customer_create

    slug = world.agent.slug
    ReviewReport.objects.create(
        id=REVIEW_ID,
        tenant=world.tenant,
        agent=world.agent,
        day=dt.date(2026, 1, 5),
        time_zone="UTC",
        status=ReviewReport.Status.FINISHED,
        partial=False,
    )
    # The console's session page shows a conversation of the tenant: one with a turn.
    session = session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer_create(tenant=world.tenant))
    turn_handle(session=session, text="Do you repair bikes?", provider=OfflineProvider(world.agent))
    fillers = {**FILLERS_BY_NAME, "session_id": str(session.pk)}
    paths = [page_path(route, slug, fillers) for route in page_routes()]
    contexts = []
    violations: list[str] = []

    def new_context(**options: Any) -> tuple[Any, Offsite]:
        context = browser.new_context(**options)
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append((context, watch_csp(context)))
        return context, Offsite(context, site)

    visitor, visitor_offsite = new_context(locale="en-GB")
    owner, owner_offsite = new_context(locale="zh-CN", viewport=PHONE_390, is_mobile=True, has_touch=True)
    operator, operator_offsite = new_context(locale="en-GB")
    try:
        en_shots = tmp_path / "en-desktop"
        zh_shots = tmp_path / "zh-phone"
        en_shots.mkdir()
        zh_shots.mkdir()

        # A visitor, in English: every page (the owner's redirect to the sign-in page).
        page = visitor.new_page()
        for path in paths:
            status = open_page(page, site + path, en_shots, shot_name(path))
            assert status < 500, (path, status)
            visitor_offsite.pages.append(path)
        # The API reference renders with the rest of the internet cut off.
        page.goto(f"{site}/api/docs/")
        expect(page.get_by_role("heading", name=re.compile("Facade API"))).to_be_visible(timeout=REDOC_MS)
        expect(page.get_by_text("/api/agents/{slug}/sessions").first).to_be_attached()
        page.screenshot(path=str(en_shots / "api-docs-rendered.png"))  # the first screen
        # The error pages: an unknown page, an unknown agent, a form whose CSRF cookie is gone.
        assert open_page(page, f"{site}/no/such/page/", en_shots, "404") == 404
        assert open_page(page, f"{site}/c/no-such-agent/", en_shots, "404-agent") == 404
        page.goto(f"{site}/accounts/login/")
        visitor.clear_cookies()
        page.locator("input[name=username]").fill("owner@alpha.test")
        page.locator("input[name=password]").fill("pw-alpha")
        with page.expect_response(re.compile(r"/accounts/login/$")) as refused:
            page.get_by_role("button", name="Sign in").click()
        assert refused.value.status == 403
        page.wait_for_load_state("networkidle")
        expect(page.get_by_role("heading", name="Access denied")).to_be_visible()
        page.screenshot(path=str(en_shots / "403-csrf.png"), full_page=True)
        # The admin's sign-in page.
        assert open_page(page, f"{site}/admin/login/", en_shots, "admin-login") == 200

        # The owner, signed in, in Chinese on a phone: every page again, and the 404 page.
        page = owner.new_page()
        sign_in(page, site, "owner@alpha.test", "pw-alpha", "登录")
        for path in paths:
            status = open_page(page, site + path, zh_shots, shot_name(path))
            assert status == (404 if path in NOT_THE_OWNERS else 200), (path, status)
            owner_offsite.pages.append(path)
        assert open_page(page, f"{site}/no/such/page/", zh_shots, "404") == 404
        expect(page.get_by_role("heading", name="找不到页面")).to_be_visible()

        # The platform operator: the admin's index.
        page = operator.new_page()
        page.goto(f"{site}/admin/login/")
        page.locator("input[name=username]").fill("operator@platform.test")
        page.locator("input[name=password]").fill("pw-operator")
        page.get_by_role("button", name="Log in").click()
        expect(page.get_by_role("heading", name="Site administration")).to_be_visible()
        page.wait_for_load_state("networkidle")
        page.goto(f"{site}/admin/auth/user/")
        page.wait_for_load_state("networkidle")
        assert open_page(page, f"{site}/platform/businesses/", en_shots, "operator-businesses") == 200
    finally:
        for context, found in contexts:
            context.close()
            violations.extend(found)

    assert visitor_offsite.pages == owner_offsite.pages == paths
    offsite = visitor_offsite.requests + owner_offsite.requests + operator_offsite.requests
    assert offsite == [], f"requests to another host: {offsite}"
    assert violations == [], f"Content-Security-Policy violations: {violations}"
