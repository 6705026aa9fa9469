"""The site's own error pages (issue 11, point 13): 404, 403 (a refused permission and a failed
CSRF check) and 500 answer in the site's layout, in the visitor's language, while `/api/` paths
keep the API's JSON error shape; and a favicon, linked from every page and at `/favicon.ico`."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client, RequestFactory
from django.urls import get_resolver

LAYOUT = ('<header class="top">', '<a class="brand" href="/">Facade</a>', 'href="/static/css/facade.css"')


def has_layout(html: str) -> bool:
    return all(mark in html for mark in LAYOUT)


def heading(html: str) -> str:
    found = re.search(r"<h1[^>]*>(.*?)</h1>", html)
    return found.group(1) if found else ""


# --- 404 ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_unknown_page_answers_404_in_the_sites_layout(client: Any) -> None:
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    html = response.content.decode()
    assert has_layout(html)
    assert heading(html) == "Page not found"
    assert 'href="/"' in html  # a way back home
    assert "Not Found</h1>" not in html  # not Django's bare page


@pytest.mark.django_db
def test_an_unknown_agent_answers_the_same_page(client: Any) -> None:
    response = client.get("/c/no-such-agent/")
    assert response.status_code == 404
    assert has_layout(response.content.decode())


@pytest.mark.django_db
def test_the_404_page_speaks_chinese_to_a_chinese_browser(client: Any) -> None:
    response = client.get("/no/such/page/", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert response.status_code == 404
    html = response.content.decode()
    assert has_layout(html)
    assert '<html lang="zh-hans">' in html
    assert heading(html) == "找不到页面"


@pytest.mark.django_db
def test_an_unknown_api_path_keeps_the_json_error_shape(client: Any) -> None:
    response = client.get("/api/no-such-endpoint", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content) == {"error": "not_found", "detail": "no such endpoint"}


# --- 403 ----------------------------------------------------------------------------------


def _handler(status: int) -> Any:
    """The handler facade.urls names for `status` (what Django calls when DEBUG is off)."""
    return get_resolver().resolve_error_handler(status)


@pytest.mark.django_db
@pytest.mark.parametrize(("language", "title"), [("en", "Access denied"), ("zh-hans", "无权访问")])
def test_a_refused_page_answers_403_in_the_sites_layout(rf: RequestFactory, language: str, title: str) -> None:
    from django.contrib.auth.models import AnonymousUser
    from django.utils import translation

    request = rf.get("/owner/somewhere/")
    request.user = AnonymousUser()
    with translation.override(language):
        response = _handler(403)(request, PermissionDenied())
    assert response.status_code == 403
    html = response.content.decode()
    assert has_layout(html)
    assert heading(html) == title


@pytest.mark.django_db
def test_a_refused_api_path_answers_json(rf: RequestFactory) -> None:
    response = _handler(403)(rf.get("/api/agents/x/peer-keys"), PermissionDenied())
    assert response.status_code == 403
    assert json.loads(response.content) == {"error": "forbidden", "detail": "you may not do this"}


@pytest.mark.django_db
@pytest.mark.parametrize(("language", "title"), [("en", "Access denied"), ("zh-hans", "无权访问")])
def test_a_form_sent_without_its_csrf_cookie_answers_403_in_the_sites_layout(language: str, title: str) -> None:
    client = Client(enforce_csrf_checks=True)
    response = client.post("/accounts/login/", {"username": "a@b.test", "password": "x"}, HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 403
    html = response.content.decode()
    assert has_layout(html)
    assert heading(html) == title
    assert "CSRF verification failed" not in html  # not Django's technical wording
    assert 'href="/accounts/login/"' in html  # where to start again


# --- 500 ----------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(("language", "title"), [("en", "Something went wrong"), ("zh-hans", "出错了")])
def test_a_server_error_answers_500_in_the_sites_layout(rf: RequestFactory, language: str, title: str) -> None:
    from django.utils import translation

    with translation.override(language):
        response = _handler(500)(rf.get("/c/x/"))
    assert response.status_code == 500
    html = response.content.decode()
    assert has_layout(html)
    assert heading(html) == title
    # Django renders the 500 page without the request: no form that would need a CSRF token.
    assert "<form" not in html


@pytest.mark.django_db
def test_a_server_error_on_an_api_path_answers_json(rf: RequestFactory) -> None:
    response = _handler(500)(rf.get("/api/sessions/x/messages"))
    assert response.status_code == 500
    assert json.loads(response.content) == {"error": "server_error", "detail": "the server failed; try again later"}


def test_the_site_answers_404_403_and_500_through_its_own_handlers() -> None:
    import facade.urls

    assert facade.urls.handler403 == "facade.api.permission_denied"
    assert facade.urls.handler404 == "facade.api.not_found"
    assert facade.urls.handler500 == "facade.api.server_error"


# --- favicon ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_every_page_links_the_favicon_and_it_is_served(client: Any) -> None:
    for path in ("/", "/accounts/login/", "/no/such/page/", "/api/docs/"):
        html = client.get(path).content.decode()
        assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in html, path
    icon = client.get("/static/favicon.svg")
    assert icon.status_code == 200
    assert b"<svg" in b"".join(icon.streaming_content)


@pytest.mark.django_db
def test_favicon_ico_is_served_for_browsers_that_ask_for_it(client: Any) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/x-icon"
    assert response.content[:4] == b"\x00\x00\x01\x00"  # the ICO header
    assert "max-age" in response["Cache-Control"]
