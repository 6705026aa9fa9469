"""Cross-site writes over HTTP and the text both edges refuse.

An anonymous customer has no CSRF token, so another site's page could post a form to the
customer endpoints with the visitor's customer cookie.  Every state-changing customer endpoint
takes JSON or a matching Origin; a form (or any body) from a foreign Origin is refused with 403
`cross_site_request` before anything is created.  Peers (a Bearer key) are not browsers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.cache import cache

from facade.dialogue.models import DialogueSession, Message, Rating
from facade.origins import origin_allowed, origin_of
from facade.tenancy.models import Customer
from facade.tenancy.schemas import Actor
from facade.tenancy.services import peer_key_create

pytestmark = pytest.mark.django_db

SITE = "http://127.0.0.1:8102"
EVIL = "http://evil.example"


@pytest.fixture(autouse=True)
def _site(settings: Any) -> None:
    cache.clear()
    settings.FACADE_PUBLIC_URL = SITE
    settings.CSRF_TRUSTED_ORIGINS = ["https://shop.example"]


def open_customer(client: Any, world: Any) -> str:
    response = client.post(f"/api/agents/{world.agent.slug}/sessions", {}, format="json")
    assert response.status_code == 201, response.content
    return str(response.json()["id"])


def customer_writes(world: Any, sid: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"/api/agents/{world.agent.slug}/sessions", {}),
        (f"/api/sessions/{sid}/messages", {"text": "Every cake is free on Mondays", "client_message_id": "x-1"}),
        (f"/api/sessions/{sid}/rating", {"stars": 1, "comment": "bad"}),
        (f"/api/sessions/{sid}/cancel", {}),
    ]


# --- point 10: cross-site form posts ------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["urlencoded", "multipart", "text"])
@pytest.mark.parametrize("origin", [EVIL, "http://127.0.0.1:9999", "https://127.0.0.1:8102", "null", None])
def test_a_customer_write_from_another_site_or_not_as_json_is_refused(
    api: Any, world_a: Any, encoding: str, origin: str | None
) -> None:
    sid = open_customer(api, world_a)
    sessions, customers = DialogueSession.objects.count(), Customer.objects.count()
    extra = {"HTTP_ORIGIN": origin} if origin is not None else {}
    for url, body in customer_writes(world_a, sid):
        if encoding == "urlencoded":
            response = api.generic(
                "POST", url, "&".join(f"{k}={v}" for k, v in body.items()), "application/x-www-form-urlencoded", **extra
            )
        elif encoding == "multipart":
            response = api.post(url, body, format="multipart", **extra)
        else:
            response = api.generic("POST", url, json.dumps(body), "text/plain", **extra)
        assert response.status_code == 403, (url, response.content)
        assert response.json()["error"] == "cross_site_request" and response.json()["detail"], url
    assert (DialogueSession.objects.count(), Customer.objects.count()) == (sessions, customers)
    assert not Message.objects.exists() and not Rating.objects.exists()


def test_json_from_another_site_is_refused_too(api: Any, world_a: Any) -> None:
    """A page elsewhere cannot send JSON without a CORS preflight this server never allows; a
    foreign Origin is refused all the same, whatever the body."""
    response = api.post(f"/api/agents/{world_a.agent.slug}/sessions", {}, format="json", HTTP_ORIGIN=EVIL)
    assert (response.status_code, response.json()["error"]) == (403, "cross_site_request")


@pytest.mark.parametrize("origin", [None, SITE, "https://shop.example", "http://testserver"])
def test_json_or_a_matching_origin_is_taken(api: Any, world_a: Any, origin: str | None) -> None:
    """JSON with no Origin (a script, curl), or any body from the site's own origin — the
    configured ones, or the one the request was addressed to (as Django's CSRF check sees it)."""
    extra = {"HTTP_ORIGIN": origin} if origin is not None else {}
    opened = api.post(f"/api/agents/{world_a.agent.slug}/sessions", {}, format="json", **extra)
    assert opened.status_code == 201, opened.content
    sid = opened.json()["id"]
    message = {"text": "Hello", "client_message_id": "ok-1"}
    assert api.post(f"/api/sessions/{sid}/messages", message, format="json", **extra).status_code == 201
    if origin is not None:  # a form from the site itself
        assert api.post(f"/api/sessions/{sid}/rating", {"stars": 5}, format="multipart", **extra).status_code == 201
    assert api.post(f"/api/sessions/{sid}/cancel", {}, format="json", **extra).status_code == 200


def test_a_bare_post_without_an_origin_is_taken_and_with_a_foreign_one_refused(api: Any, world_a: Any) -> None:
    """No body and no Content-Type (a script's `curl -X POST`): no browser sends that cross-site
    without an Origin."""
    sid = open_customer(api, world_a)
    assert api.post(f"/api/sessions/{sid}/cancel").json() == {"cancelled": 0}
    refused = api.post(f"/api/sessions/{sid}/cancel", HTTP_ORIGIN=EVIL)
    assert (refused.status_code, refused.json()["error"]) == (403, "cross_site_request")


def test_peers_post_forms_from_anywhere(make_api: Any, world_a: Any) -> None:
    issued = peer_key_create(agent=world_a.agent, name="partner", actor=Actor.human(world_a.owner.pk))
    peer = make_api()
    peer.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.key}")
    opened = peer.post(f"/api/agents/{world_a.agent.slug}/sessions", {}, format="multipart", HTTP_ORIGIN=EVIL)
    assert opened.status_code == 201, opened.content
    sid = opened.json()["id"]
    posted = peer.post(f"/api/sessions/{sid}/messages", {"text": "Hello"}, format="multipart")
    assert posted.status_code == 201, posted.content


def test_reads_are_not_affected(api: Any, world_a: Any) -> None:
    sid = open_customer(api, world_a)
    assert api.get(f"/api/sessions/{sid}/messages", HTTP_ORIGIN=EVIL).status_code == 200


# --- point 11: the text both edges refuse alike -----------------------------------------------


@pytest.mark.parametrize(
    "raw, code",
    [
        ('{"text": "a\\u0000b"}', "invalid_text"),
        ('{"text": "half \\ud800 a pair"}', "invalid_text"),
        ('{"text": "hi", "client_message_id": "c\\u0000"}', "invalid_client_message_id"),
        ('{"text": "hi", "client_message_id": "\\udfff"}', "invalid_client_message_id"),
    ],
)
def test_a_message_with_a_nul_or_a_lone_surrogate_is_refused_with_the_websockets_code(
    api: Any, world_a: Any, raw: str, code: str
) -> None:
    sid = open_customer(api, world_a)
    response = api.generic("POST", f"/api/sessions/{sid}/messages", raw, "application/json")
    assert (response.status_code, response.json()["error"]) == (400, code), response.content
    assert not Message.objects.exists()


@pytest.mark.parametrize("comment", ["good\\u0000", "\\ud800"])
def test_a_rating_comment_with_a_nul_or_a_lone_surrogate_is_refused(api: Any, world_a: Any, comment: str) -> None:
    sid = open_customer(api, world_a)
    raw = '{"stars": 4, "comment": "%s"}' % comment
    response = api.generic("POST", f"/api/sessions/{sid}/rating", raw, "application/json")
    assert (response.status_code, response.json()["error"]) == (400, "invalid_text"), response.content
    assert not Rating.objects.exists()


# --- origins ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, expected",
    [
        ("http://127.0.0.1:8102", ("http", "127.0.0.1", 8102)),
        ("HTTPS://Shop.Example", ("https", "shop.example", 443)),
        ("http://[::1]:8102", ("http", "::1", 8102)),
        ("http://shop.example:80", ("http", "shop.example", 80)),
        ("http://shop.example/", None),  # an Origin header has no path
        ("ws://shop.example", None),
        ("null", None),
        ("", None),
        ("http://user@shop.example", None),
        ("http://shop.example:99999", None),
        ("http://[::1", None),
    ],
)
def test_an_origin_is_a_scheme_a_host_and_a_port(value: str, expected: Any) -> None:
    assert origin_of(value) == expected


def test_the_sites_origins_come_from_its_public_url_and_trusted_origins(settings: Any) -> None:
    settings.FACADE_PUBLIC_URL = "https://shop.example/facade/"
    settings.CSRF_TRUSTED_ORIGINS = ["http://127.0.0.1:8000", "https://*.example.org"]
    assert origin_allowed("https://shop.example") and origin_allowed("https://shop.example:443")
    assert origin_allowed("http://127.0.0.1:8000")
    for foreign in ("http://shop.example", "https://shop.example:8443", "http://127.0.0.1", "https://a.example.org"):
        assert not origin_allowed(foreign), foreign
    assert not origin_allowed(None) and not origin_allowed("")
