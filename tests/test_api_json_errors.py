"""Every /api/ answer is JSON, and the schema states what the server enforces and lists the
refusals each operation can answer (issue 16, point 5).  The same claims, run against a real
daphne by schemathesis: tests/test_schemathesis.py."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client, override_settings
from drf_spectacular.generators import SchemaGenerator

from facade.api import PLAIN_TEXT_PATTERN
from facade.dialogue import rules
from facade.server import leave_forms_to_django

UNSAFE = {"post", "put", "patch", "delete"}


def _schema() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


def _operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in UNSAFE | {"get"}
    ]


def test_every_operation_lists_the_refusals_the_edge_can_answer() -> None:
    schema = _schema()
    operations = _operations(schema)
    assert len(operations) >= 45
    for path, method, operation in operations:
        listed = set(operation["responses"])
        where = f"{method.upper()} {path}"
        assert {"401", "403"} <= listed, where
        if "{" in path:
            assert "404" in listed, where
        if method in UNSAFE:
            assert {"400", "413", "415"} <= listed, where
        for status, response in operation["responses"].items():
            if status.startswith(("4", "5")):
                assert "$ref" in response["content"]["application/json"]["schema"], (where, status)


def test_the_413_names_the_operations_own_body_limit() -> None:
    paths = _schema()["paths"]
    cancel = paths["/api/sessions/{session_id}/cancel"]["post"]["responses"]["413"]["description"]
    assert "1024 bytes" in cancel
    opened = paths["/api/agents/{slug}/sessions"]["post"]["responses"]["413"]
    assert opened["description"]  # the view's own entry is kept
    messages = paths["/api/sessions/{session_id}/messages"]["post"]["responses"]["413"]
    assert messages["description"] == "`body_too_large`"


def test_gated_operations_list_429_and_503() -> None:
    paths = _schema()["paths"]
    search = paths["/api/agents/{slug}/knowledge/search"]["get"]["responses"]
    assert {"429", "503"} <= set(search)
    posted = paths["/api/sessions/{session_id}/messages"]["post"]["responses"]
    # A turn waits for no place (Gate(bounded=False)), but Redis or the database briefly away is
    # a 503 `temporarily_unavailable` with Retry-After, for this operation as for every other.
    assert "429" in posted and "temporarily_unavailable" in posted["503"]["description"]
    assert all("503" in operation["responses"] for item in paths.values() for operation in item.values())


@override_settings(FACADE_MESSAGE_MAX_CHARS=1234)
def test_a_messages_text_is_documented_with_the_limit_the_server_enforces() -> None:
    body = _schema()["components"]["schemas"]["MessageInRequest"]
    (text,) = body["properties"]["text"]["allOf"]
    assert text["maxLength"] == 1234 and text["minLength"] == 1
    assert text["pattern"] == PLAIN_TEXT_PATTERN
    assert body["required"] == ["text"]
    ids = body["properties"]["client_message_id"]["oneOf"][0]
    assert ids["maxLength"] == 64


def test_the_search_query_is_required_and_bounded() -> None:
    parameters = _schema()["paths"]["/api/agents/{slug}/knowledge/search"]["get"]["parameters"]
    (q,) = [p for p in parameters if p["name"] == "q"]
    assert q["required"] is True
    assert q["schema"] == {"type": "string", "minLength": 1, "maxLength": 500, "pattern": r"\S"}


@pytest.mark.parametrize(
    ("text", "taken"),
    [
        ("hello", True),
        ("  hi  ", True),
        ("你好", True),
        ("", False),
        ("   \n\t", False),
        ("a\x00b", False),
        ("\x00", False),
        ("\u3000", False),  # an ideographic space is a space to str.strip() too
    ],
)
def test_the_text_pattern_takes_what_the_services_take(text: str, taken: bool) -> None:
    services_take = rules.text_problem(text) is None and bool(text.strip())
    assert services_take is taken
    assert (re.search(PLAIN_TEXT_PATTERN, text) is not None) is taken


@pytest.mark.django_db
@override_settings(DEBUG=True)
@pytest.mark.parametrize(
    ("path", "status"),
    [("/api/sessions/null%2Cnull", 404), ("/api/agents/x/knowledge/entries/nope", 404), ("/api/nothing", 404)],
)
def test_an_api_404_is_json_even_under_debug(path: str, status: int) -> None:
    response = Client().get(path)
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"] == "not_found"
    assert response["X-Content-Type-Options"] == "nosniff"  # the security headers stay


@pytest.mark.django_db
def test_a_405_of_a_plain_django_view_on_an_api_path_is_json() -> None:
    response = Client().post("/api/docs/redoc.js")  # require_GET: Django's bare 405
    assert response.status_code == 405
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"] == "method_not_allowed"
    assert response["Allow"] == "GET"


@pytest.mark.django_db
def test_pages_keep_their_html_errors() -> None:
    response = Client().get("/no/such/page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_daphne_requests_leave_form_bodies_to_django() -> None:
    from daphne import http_protocol

    assert leave_forms_to_django() is True
    assert leave_forms_to_django() is True  # twice: still one subclass, not one inside another
    assert http_protocol.WebRequest.__mro__[1].__name__ == "WebRequest"
    assert getattr(http_protocol.WebRequest, "leaves_forms_to_django", False)


@pytest.mark.django_db
def test_a_drf_refusal_rendered_as_html_keeps_its_shaped_body_as_json() -> None:
    response = Client().post("/api/docs/")  # the reference page renders its answers in HTML
    assert response.status_code == 405
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"error": "method_not_allowed", "detail": 'Method "POST" not allowed.'}
