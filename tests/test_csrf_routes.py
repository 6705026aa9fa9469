"""CSRF on every mutating route (issue 12, "Tests that must exist"): the test walks Django's URL
resolver — every route the project serves, the admin's included, so a route added later is
walked too — and sends POST, PUT, PATCH and DELETE as a signed-in owner with CSRF checks on and
no CSRF token.  Each must be refused by the CSRF check itself (403, with Django's CSRF failure
page or DRF's `CSRF Failed`), not by something that happens to answer 403 later.

Exceptions: the A2A JSON-RPC endpoint, which never reads a session (EXCEPTIONS).  The peer API
authenticates with an API key, not a session, and so needs no CSRF token — but a request that
carries a session is checked whatever else it carries, which is what this walks; the customer
endpoints, for a signed-in user, are checked the same way."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.middleware.csrf import _get_new_csrf_string
from django.test import Client
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart
from django.urls import URLPattern, URLResolver, get_resolver

from conftest import TenantWorld

METHODS = ("post", "put", "patch", "delete")
# Routes that answer an unsafe method before any view could run, with the reason.  Empty: keep
# it so, or say here why a route may take a write without a CSRF token.
EXCEPTIONS: dict[str, str] = {
    # The A2A JSON-RPC endpoint (issue 33) reads no cookie and no session at all: its caller is
    # the peer key in a header, and without one it answers 401 — a forged request from a browser
    # carries the owner's session, which this view never looks at.
    "a2a/<slug:slug>/jsonrpc": "authenticated by the peer key header only; never by a session",
}

CONVERTER = re.compile(r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>")
REGEX_GROUP = re.compile(r"\(\?P<(?P<name>\w+)>(?P<body>[^)]*)\)")


def routes(patterns: Any = None, prefix: str = "") -> Iterator[str]:
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            yield from routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern)


def concrete(route: str, values: dict[str, str]) -> str:
    """A path that resolves to `route`: converters and regex groups filled in."""

    def converter(match: re.Match[str]) -> str:
        return values.get(match["name"], "1")

    def group(match: re.Match[str]) -> str:
        return values.get(match["name"], match["body"].split("|")[0])

    path = CONVERTER.sub(converter, route)
    path = REGEX_GROUP.sub(group, path).replace("^", "").replace("$", "")
    return "/" + path


def refused_by_csrf(response: Any) -> bool:
    if response.status_code != 403:
        return False
    data = getattr(response, "data", None)  # a DRF view's answer, whatever it renders to
    if data is None and response.get("Content-Type") == "application/json":
        data = response.json()  # a plain Django view under /api/: facade.web.csrf_failure's JSON
    if isinstance(data, dict):
        return str(data.get("detail", "")).startswith("CSRF Failed")
    # A Django view: the CSRF middleware's failure view (facade.web.csrf_failure).
    return any(context.get("csrf_failed") for context in (response.context or []))


@pytest.mark.django_db
def test_every_mutating_route_refuses_a_signed_in_owner_without_a_csrf_token(world_a: TenantWorld) -> None:
    values = {
        "slug": world_a.agent.slug,
        "tenant_slug": world_a.tenant.slug,
        "session_id": str(uuid.uuid4()),
        "key_id": str(uuid.uuid4()),
        "change_id": "chg_nothing",
        "app_label": "auth",
        "object_id": "1",
        "id": "1",
        "report_id": str(uuid.uuid4()),
    }
    walked = sorted(set(routes()))
    assert len(walked) > 60, walked  # the project's own routes and the admin's
    client = Client(enforce_csrf_checks=True)
    client.force_login(world_a.owner)
    # The owner's browser holds the CSRF cookie, and a forged request carries it: only the token
    # (the header or form field a page of the site would add) is missing.
    client.cookies["csrftoken"] = _get_new_csrf_string()
    accepted: list[str] = []
    for route in walked:
        if route in EXCEPTIONS:
            continue
        path = concrete(route, values)
        for method in METHODS:
            response = getattr(client, method)(path, data="{}", content_type="application/json")
            if response.status_code == 415:
                # A view that parses only forms (the upload) refuses JSON while looking for the
                # token in the form: send it the form it takes, which must be refused too.
                form = encode_multipart(BOUNDARY, {"file": SimpleUploadedFile("a.txt", b"hello")})
                response = client.generic(method.upper(), path, form, content_type=MULTIPART_CONTENT)
            if not refused_by_csrf(response):
                accepted.append(f"{method.upper()} {path} ({route}) → {response.status_code}")
    assert accepted == []
    # Still signed in: no write went through (a sign-out would have made later refusals
    # something other than CSRF's, and failed above).
    assert client.get(f"/api/agents/{world_a.agent.slug}/changes").status_code == 200


@pytest.mark.django_db
def test_the_walk_would_see_a_write_that_passed(world_a: TenantWorld) -> None:
    """The check above can fail: with the CSRF token, the same owner's write is not refused."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(world_a.owner)
    client.get("/")  # the page sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    path = concrete("api/agents/<slug:slug>/changes", {"slug": world_a.agent.slug})
    response = client.post(path, data="{}", content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert not refused_by_csrf(response)
    assert response.status_code == 400  # the empty proposal itself is refused, further in
