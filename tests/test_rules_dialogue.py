"""Table tests for the dialogue app's pure rules (facade/dialogue/rules.py; no database)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from facade.dialogue.rules import (
    TRUST_DELTA,
    TRUST_MAX,
    TRUST_MIN,
    RefusalReason,
    is_idle,
    may_execute,
    request_can_move,
    text_problem,
    trust_after,
)
from facade.ratelimit import parse_rate

# --- request transitions -----------------------------------------------------------------------

FLOW: dict[str, Any] = {
    "states": {
        "submitted": {"to": ["accepted", "declined"]},
        "accepted": {"to": ["done", "ghost"]},  # "ghost" is named but is not a state of the flow
        "declined": {},
        "done": {"to": []},
    }
}


@pytest.mark.parametrize(
    "flow, state, to, expected",
    [
        (FLOW, "submitted", "accepted", True),
        (FLOW, "submitted", "declined", True),
        (FLOW, "accepted", "done", True),
        (FLOW, "submitted", "done", False),  # not an edge of the flow
        (FLOW, "accepted", "submitted", False),  # no way back unless the flow says so
        (FLOW, "submitted", "submitted", False),  # staying put is not a move
        (FLOW, "accepted", "ghost", False),  # a target that is not a state
        (FLOW, "declined", "done", False),  # a state without "to"
        (FLOW, "done", "accepted", False),  # a final state
        (FLOW, "unknown", "accepted", False),  # an unknown state allows nothing
        (FLOW, "", "accepted", False),
        ({}, "submitted", "accepted", False),  # a flow without states
        ({"states": None}, "submitted", "accepted", False),
        ({"states": {"submitted": None, "accepted": {}}}, "submitted", "accepted", False),
    ],
)
def test_request_can_move(flow: dict[str, Any], state: str, to: str, expected: bool) -> None:
    assert request_can_move(flow, state, to) is expected


# --- trust -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "score, reason, expected",
    [
        (50, "request_completed", 55),
        (98, "request_completed", TRUST_MAX),  # clamped at the top
        (TRUST_MAX, "request_completed", TRUST_MAX),
        (TRUST_MIN, "request_completed", TRUST_MIN + 5),
    ],
)
def test_trust_after(score: int, reason: str, expected: int) -> None:
    assert trust_after(score, reason) == expected


def test_a_blocked_reply_is_no_reason_to_change_trust() -> None:
    """Trust moves for what the customer did; the guard blocking the agent's reply is not that."""
    assert "guard_blocked" not in TRUST_DELTA
    with pytest.raises(KeyError):
        trust_after(50, "guard_blocked")


def test_every_trust_reason_moves_the_score() -> None:
    assert TRUST_DELTA and all(delta != 0 for delta in TRUST_DELTA.values())


@pytest.mark.parametrize("reason", ["", "unknown", "REQUEST_COMPLETED", "request_completed ", "rate_limited"])
def test_trust_after_an_unknown_reason_is_refused(reason: str) -> None:
    # No default delta: a reason nobody defined changes nothing, loudly.
    with pytest.raises(KeyError):
        trust_after(50, reason)


# --- rate windows ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("20/60", (20, 60)),
        ("1/1", (1, 1)),
        ("5/3600", (5, 3600)),
        ("20", (20, 60)),  # the window defaults to a minute
        ("20/", (20, 60)),
        (" 20 / 60 ", (20, 60)),
    ],
)
def test_parse_rate(spec: str, expected: tuple[int, int]) -> None:
    assert parse_rate(spec) == expected


@pytest.mark.parametrize("spec", ["", "/60", "0/60", "20/0", "-1/60", "20/-5", "abc", "20/sixty", "1.5/60", "20/60/1"])
def test_parse_rate_refuses_what_is_not_a_rate(spec: str) -> None:
    with pytest.raises(ValueError):
        parse_rate(spec)


# --- idle sessions -----------------------------------------------------------------------------

NOW = dt.datetime(2025, 3, 1, 12, 0, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize(
    "last_activity, idle_minutes, expected",
    [
        (NOW - dt.timedelta(minutes=30), 30, True),  # exactly the idle time
        (NOW - dt.timedelta(minutes=29, seconds=59), 30, False),
        (NOW - dt.timedelta(days=2), 30, True),
        (NOW, 30, False),
        (NOW + dt.timedelta(minutes=5), 30, False),  # a clock ahead of ours is not idle
        (NOW, 0, True),  # no idle time allowed
        (NOW - dt.timedelta(minutes=30), 30 * 60, False),
        (dt.datetime(2025, 3, 1, 19, 30, tzinfo=dt.timezone(dt.timedelta(hours=8))), 30, True),  # zones compare
    ],
)
def test_is_idle(last_activity: dt.datetime, idle_minutes: int, expected: bool) -> None:
    assert is_idle(last_activity, NOW, idle_minutes) is expected


# --- tool execution ----------------------------------------------------------------------------

CUSTOMER_FACING = frozenset({"customer", "peer"})
OWNER_ONLY = frozenset({"owner"})
BOUND = {"session_agent_id": 7, "agent_id": 7, "session_tenant_id": 3, "agent_tenant_id": 3}


@pytest.mark.parametrize(
    "tool_audiences, audience, binding, owner_still, expected",
    [
        (CUSTOMER_FACING, "customer", {}, False, None),
        (CUSTOMER_FACING, "peer", {}, False, None),
        (OWNER_ONLY, "owner", {}, True, None),
        (frozenset({"customer", "peer", "owner"}), "owner", {}, True, None),
        # an unknown tool, whoever asks
        (None, "owner", {}, True, RefusalReason.UNKNOWN_TOOL),
        (None, "customer", {}, False, RefusalReason.UNKNOWN_TOOL),
        # red line 2: owner tools are refused to customers and peers
        (OWNER_ONLY, "customer", {}, False, RefusalReason.AUDIENCE),
        (OWNER_ONLY, "peer", {}, True, RefusalReason.AUDIENCE),
        (CUSTOMER_FACING, "owner", {}, True, RefusalReason.AUDIENCE),
        # audiences nobody defined, and a tool that serves nobody
        (OWNER_ONLY, "auditor", {}, True, RefusalReason.AUDIENCE),
        (CUSTOMER_FACING, "", {}, False, RefusalReason.AUDIENCE),
        (CUSTOMER_FACING, "Customer", {}, False, RefusalReason.AUDIENCE),
        (frozenset(), "owner", {}, True, RefusalReason.AUDIENCE),
        # the session belongs to another agent or tenant than the one running
        (CUSTOMER_FACING, "customer", {"agent_id": 8}, False, RefusalReason.BINDING),
        (CUSTOMER_FACING, "customer", {"agent_tenant_id": 4}, False, RefusalReason.BINDING),
        (OWNER_ONLY, "owner", {"session_agent_id": 8, "session_tenant_id": 4}, True, RefusalReason.BINDING),
        # an owner removed since the session opened
        (OWNER_ONLY, "owner", {}, False, RefusalReason.NO_LONGER_OWNER),
        (CUSTOMER_FACING, "customer", {}, True, None),  # owner_still means nothing off the owner face
    ],
)
def test_may_execute(
    tool_audiences: frozenset[str] | None,
    audience: str,
    binding: dict[str, int],
    owner_still: bool,
    expected: RefusalReason | None,
) -> None:
    decision = may_execute(tool_audiences=tool_audiences, audience=audience, owner_still=owner_still, **BOUND | binding)
    assert decision is expected


@pytest.mark.parametrize(
    "text, problem",
    [
        ("", None),
        ("Hello, 你好 ✓ \u2028 \ufeff 😀", None),
        ("tab\tnew line\n", None),
        ("a\x00b", "contains a NUL character"),
        ("half \ud800 a pair", "contains a lone surrogate (not valid Unicode)"),
        ("\udfff", "contains a lone surrogate (not valid Unicode)"),
        ("\ud83d\ude00", "contains a lone surrogate (not valid Unicode)"),  # a pair as two code points is no emoji
    ],
)
def test_text_problem(text: str, problem: str | None) -> None:
    assert text_problem(text) == problem
