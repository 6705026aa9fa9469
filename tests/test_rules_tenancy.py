"""Table tests for the tenancy app's pure rules (facade/tenancy/rules.py; no database): audiences and
who may still post in a session."""

from __future__ import annotations

import pytest

from facade.tenancy.rules import (
    Audience,
    CallerFacts,
    PostDecision,
    derive_audience,
    find_audience_key,
    first_audience_name,
    may_post,
    names_audience,
)


@pytest.mark.parametrize(
    "peer, authenticated, owner, operator, expected",
    [
        (False, False, False, False, Audience.CUSTOMER),
        (False, True, False, False, Audience.CUSTOMER),
        (False, True, True, False, Audience.OWNER),
        (False, True, False, True, Audience.OWNER),
        (False, False, True, True, Audience.CUSTOMER),  # facts without a signed-in user do not count
        (True, False, False, False, Audience.PEER),
        (True, True, True, False, Audience.PEER),  # a key always means peer, never owner
        (True, True, False, True, Audience.PEER),
    ],
)
def test_derive_audience(peer: bool, authenticated: bool, owner: bool, operator: bool, expected: Audience) -> None:
    assert derive_audience(CallerFacts(peer, authenticated, owner, operator)) is expected


@pytest.mark.parametrize(
    "name, expected",
    [
        ("audience", True),
        ("Audience", True),
        ("AUDIENCE", True),
        ("X-Audience", True),
        ("x_facade_audience", True),
        ("meta[audience]", True),
        ("aud-ience", True),
        ("audit", False),
        ("text", False),
        ("client_message_id", False),
        ("", False),
    ],
)
def test_names_audience(name: str, expected: bool) -> None:
    assert names_audience(name) is expected


@pytest.mark.parametrize(
    "data, expected",
    [
        ({}, None),
        ({"text": "audience is a word in a value"}, None),
        ({"audience": None}, "audience"),
        ({"meta": {"AUDIENCE": "owner"}}, "meta.AUDIENCE"),
        ({"items": [{"x": 1}, {"Audience": "peer"}]}, "items[1].Audience"),
        ([{"deep": [[{"audience": 1}]]}], "[0].deep[0][0].audience"),
        ("audience", None),
    ],
)
def test_find_audience_key(data: object, expected: str | None) -> None:
    assert find_audience_key(data) == expected


def test_first_audience_name() -> None:
    assert first_audience_name(["ACCEPT", "X-AUDIENCE", "HOST"]) == "X-AUDIENCE"
    assert first_audience_name(["ACCEPT", "HOST"]) is None


@pytest.mark.parametrize(
    "audience, status, still_owner, expected",
    [
        ("owner", "open", True, PostDecision.ALLOWED),
        ("owner", "open", False, PostDecision.NO_LONGER_OWNER),
        ("owner", "closed", True, PostDecision.SESSION_NOT_OPEN),
        ("customer", "open", False, PostDecision.ALLOWED),
        ("peer", "open", False, PostDecision.ALLOWED),
        ("customer", "expired", False, PostDecision.SESSION_NOT_OPEN),
        ("peer", "closed", False, PostDecision.SESSION_NOT_OPEN),
        ("owner", "expired", False, PostDecision.SESSION_NOT_OPEN),  # a closed session answers first
        # statuses and audiences nobody defined
        ("customer", "OPEN", False, PostDecision.SESSION_NOT_OPEN),
        ("customer", "", False, PostDecision.SESSION_NOT_OPEN),
        ("customer", "reopened", False, PostDecision.SESSION_NOT_OPEN),
        ("auditor", "open", True, PostDecision.UNKNOWN_AUDIENCE),
        ("Owner", "open", True, PostDecision.UNKNOWN_AUDIENCE),
        ("", "open", True, PostDecision.UNKNOWN_AUDIENCE),
    ],
)
def test_may_post(audience: str, status: str, still_owner: bool, expected: PostDecision) -> None:
    assert may_post(audience=audience, status=status, caller_still_owner=still_owner) is expected
