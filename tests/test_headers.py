"""Response headers and the HTTP edge's own refusals (issue 10, points 13 and 14): a
Content-Security-Policy with no inline script on every page, HSTS and the https redirect only
behind a TLS proxy, and Django's own 400s in the JSON error shape on API paths."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from conftest import TenantWorld

ROOT = Path(__file__).resolve().parents[1]


def page_paths(world: TenantWorld) -> list[str]:
    slug = world.agent.slug
    return ["/", "/accounts/login/", f"/c/{slug}/", f"/owner/{slug}/chat", f"/owner/{slug}/knowledge"]


def directives(header: str) -> dict[str, list[str]]:
    parsed: dict[str, list[str]] = {}
    for part in header.split(";"):
        name, *values = part.split()
        parsed[name] = values
    return parsed


# --- the policy on every page -----------------------------------------------------------------


@pytest.mark.django_db
def test_every_page_sends_the_content_security_policy(client: Any, world_a: TenantWorld) -> None:
    client.force_login(world_a.owner)
    for path in page_paths(world_a):
        response = client.get(path)
        assert response.status_code == 200, path
        policy = directives(response["Content-Security-Policy"])
        assert policy["default-src"] == ["'self'"], path
        assert policy["script-src"] == ["'self'"], path  # no 'unsafe-inline', no nonce, no other host
        assert policy["connect-src"] == ["'self'", "ws://testserver"], path
        assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"], path
        assert policy["base-uri"] == ["'self'"] and policy["form-action"] == ["'self'"], path
        assert not any("unsafe" in value for values in policy.values() for value in values), path


@pytest.mark.django_db
def test_the_websocket_origin_follows_the_scheme_and_host_served(client: Any, settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["shop.example"]
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    secure = client.get("/accounts/login/", HTTP_HOST="shop.example", HTTP_X_FORWARDED_PROTO="https")
    assert directives(secure["Content-Security-Policy"])["connect-src"] == ["'self'", "wss://shop.example"]
    # A host outside ALLOWED_HOSTS gets Django's 400, still under the policy, naming no origin of its own.
    refused = client.get("/accounts/login/", HTTP_HOST="evil.example")
    assert refused.status_code == 400
    assert directives(refused["Content-Security-Policy"])["connect-src"] == ["'self'"]


class _ScriptFinder(HTMLParser):
    """Collects what a browser would run from the markup itself: inline scripts, event handler
    attributes and javascript: links.  A data island (type application/json) is never run."""

    def __init__(self) -> None:
        super().__init__()
        self.inline: list[str] = []
        self._in_inline_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        self.inline += [f"{tag} {name}=" for name, _ in attrs if name.startswith("on")]
        self.inline += [f"{tag} {name}=javascript:" for name, v in attrs if (v or "").strip().startswith("javascript:")]
        if "style" in named:
            self.inline.append(f"{tag} style=")
        if tag == "style":
            self.inline.append("<style>")
        if tag == "script" and not named.get("src") and named.get("type") != "application/json":
            self._in_inline_script = True

    def handle_data(self, data: str) -> None:
        if self._in_inline_script and data.strip():
            self.inline.append(f"<script>{data.strip()[:60]}")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_inline_script = False


@pytest.mark.django_db
def test_no_page_carries_inline_script_or_style(client: Any, world_a: TenantWorld) -> None:
    pages = {path: client.get(path).content.decode() for path in ["/", "/accounts/login/", f"/c/{world_a.agent.slug}/"]}
    client.force_login(world_a.owner)
    pages |= {f"owner {path}": client.get(path).content.decode() for path in page_paths(world_a)}
    client.force_login(world_a.auditor)  # the home page's ledger Verify buttons
    pages["auditor /"] = client.get("/").content.decode()
    assert 'class="verify"' in pages["auditor /"]
    for name, markup in pages.items():
        finder = _ScriptFinder()
        finder.feed(markup)
        assert finder.inline == [], name


# --- HSTS and the https redirect ---------------------------------------------------------------

_PROBE = """
import json
from django.conf import settings
from django.test import Client
names = ["SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "SECURE_PROXY_SSL_HEADER"]
client = Client()
plain = client.get("/accounts/login/")
health = client.get("/healthz")
tls = client.get("/accounts/login/", HTTP_X_FORWARDED_PROTO="https")
print(json.dumps({
    **{name: getattr(settings, name) for name in names},
    "plain": [plain.status_code, plain.get("Location")],
    "healthz_redirected": health.status_code in (301, 302),
    "hsts": tls.get("Strict-Transport-Security"),
}))
"""


def probe(**env: str) -> dict[str, Any]:
    """Settings are read from the environment at start-up, so each configuration gets a process."""
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "facade.test_settings", "ALLOWED_HOSTS": "testserver", **env}
    if "BEHIND_TLS_PROXY" not in env:
        environment.pop("BEHIND_TLS_PROXY", None)
    code = "import django; django.setup()\n" + _PROBE
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_hsts_and_the_https_redirect_only_behind_a_tls_proxy() -> None:
    loopback = probe()
    assert loopback["SECURE_SSL_REDIRECT"] is False and loopback["SECURE_HSTS_SECONDS"] == 0
    assert loopback["plain"] == [200, None] and loopback["hsts"] is None

    proxied = probe(BEHIND_TLS_PROXY="true")
    assert proxied["SECURE_SSL_REDIRECT"] is True and proxied["SECURE_HSTS_SECONDS"] == 31_536_000
    assert proxied["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert proxied["plain"] == [301, "https://testserver/accounts/login/"]
    assert proxied["healthz_redirected"] is False  # the container's own health check speaks plain http
    assert proxied["hsts"] == "max-age=31536000"

    shorter = probe(BEHIND_TLS_PROXY="true", SECURE_HSTS_SECONDS="300")
    assert shorter["hsts"] == "max-age=300"


# --- Django's own 400s ---------------------------------------------------------------------------


def _too_many_fields() -> str:
    return "&".join(f"f{i}=x" for i in range(1500))  # DATA_UPLOAD_MAX_NUMBER_FIELDS is 1000


@pytest.mark.django_db
def test_too_many_fields_is_a_json_error_on_api_paths(client: Any, world_a: TenantWorld) -> None:
    # An endpoint that reads forms and whose body cap (facade/bodylimit.py) lets 1,500 fields
    # through to Django: an owner's messages.
    from facade.dialogue.services import session_open
    from facade.tenancy.rules import Audience

    session = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    client.force_login(world_a.owner)
    response = client.post(
        f"/api/sessions/{session.pk}/messages",
        _too_many_fields(),
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"error": "too_many_fields", "detail": response.json()["detail"]}
    assert response.json()["detail"]


@pytest.mark.django_db
def test_multipart_bodies_django_refuses_are_json_errors_on_api_paths(client: Any, world_a: TenantWorld) -> None:
    fields = "".join(f'--b\r\nContent-Disposition: form-data; name="f{i}"\r\n\r\nx\r\n' for i in range(1500))
    client.force_login(world_a.owner)
    many = client.post(
        f"/api/agents/{world_a.agent.slug}/knowledge/ingest",
        fields + "--b--\r\n",
        content_type="multipart/form-data; boundary=b",
    )
    assert many.status_code == 400 and many["Content-Type"] == "application/json"
    assert set(many.json()) == {"error", "detail"} and many.json()["error"] == "too_many_fields"

    client.force_login(world_a.owner)
    for content_type in ("multipart/form-data", "multipart/form-data; boundary="):
        no_boundary = client.post(
            f"/api/agents/{world_a.agent.slug}/knowledge/ingest", b"--x\r\n", content_type=content_type
        )
        assert no_boundary.status_code == 400 and no_boundary["Content-Type"] == "application/json"
        assert set(no_boundary.json()) == {"error", "detail"} and no_boundary.json()["error"] == "malformed_body"


@pytest.mark.django_db
def test_pages_keep_djangos_html_400(client: Any) -> None:
    response = client.post("/accounts/login/", _too_many_fields(), content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    assert "Content-Security-Policy" in response


# --- in Chromium: the pages work under the policy -------------------------------------------------

from browser_support import TIMEOUT_MS  # noqa: E402  (its fixtures are a plugin of the root conftest)


def _sign_in(page: Any, site: str, email: str) -> None:
    page.goto(f"{site}/accounts/login/")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill("pw-alpha")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{site}/")


@pytest.mark.browser
def test_every_page_works_in_chromium_under_the_policy(page: Any, site: str, world: TenantWorld) -> None:
    """The `context` fixture fails the test on any violation; this one walks every page and uses
    the scripts that used to be inline (the Verify button, the language menu)."""
    from playwright.sync_api import expect

    served = page.goto(f"{site}/accounts/login/")
    assert "script-src 'self'" in served.headers["content-security-policy"]
    _sign_in(page, site, "auditor@alpha.test")
    page.get_by_role("button", name="Verify ledger").click()
    expect(page.locator('output.verify-result[data-tenant="alpha"]')).to_have_text(re.compile(r"^✓ \d+ events"))
    page.get_by_label("Language").select_option("zh-hans")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans", timeout=TIMEOUT_MS)
    page.get_by_label("语言").select_option("en")
    expect(page.locator("html")).to_have_attribute("lang", "en")

    page.context.clear_cookies()
    _sign_in(page, site, "owner@alpha.test")
    for path in page_paths(world)[2:]:
        response = page.goto(site + path)
        assert response.status == 200 and "content-security-policy" in response.headers, path
        expect(page.get_by_role("heading", level=1)).to_be_visible()
    # The chat script ran: it wired the form (an empty message gets its hint, not a request).
    page.goto(f"{site}/owner/{world.agent.slug}/chat")
    page.get_by_label("Your message").fill("   ")
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#error")).to_be_visible()


@pytest.mark.browser
def test_the_policy_blocks_an_injected_inline_script(browser: Any, site: str, world: TenantWorld) -> None:
    """The harness sees a violation when one happens (else the check above would prove nothing)."""
    from browser_support import watch_csp

    context = browser.new_context()
    try:
        violations = watch_csp(context)
        page = context.new_page()
        page.goto(f"{site}/accounts/login/")
        with page.expect_console_message(lambda message: "CSP violation" in message.text):
            page.evaluate(
                "() => { const s = document.createElement('script'); s.textContent = 'window.ran = 1';"
                " document.body.append(s); }"
            )
        assert page.evaluate("() => window.ran === undefined")
        assert any("script-src" in v for v in violations), violations
    finally:
        context.close()


@pytest.mark.django_db
def test_an_unknown_api_path_is_a_json_404_and_a_page_stays_html(client: Any) -> None:
    api = client.get("/api/no-such-endpoint")
    assert (api.status_code, api["Content-Type"]) == (404, "application/json")
    assert api.json() == {"error": "not_found", "detail": "no such endpoint"}
    page = client.get("/no-such-page/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")
