"""Table tests for the dialogue app's pure rules (facade/dialogue/rules.py; no database)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from facade.dialogue.rules import (
    TRUST_DELTA,
    TRUST_MAX,
    TRUST_MIN,
    ChangeRefusal,
    FieldKind,
    RefusalReason,
    confirms,
    customer_may_change,
    field_kind,
    field_problem,
    is_cancel,
    is_confirmation,
    is_decline,
    is_idle,
    is_question,
    looks_like_contact,
    looks_like_when,
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


# --- the request flow: field answers, questions, cancel, confirmation (issue 11) ---------------


@pytest.mark.parametrize(
    "text",
    [
        "ana@example.com",
        "my email is ana.b+cakes@mail.example.co.uk",
        "+49 170 1234567",
        "(030) 123-4567",
        "0170/1234567".replace("/", " "),
        "call me on 07700 900123",
        "13800000000",
        "我的电话是 138 0000 0000",
        "邮箱：wang@example.cn",
    ],
)
def test_a_contact_looks_like_an_email_or_a_phone_number(text: str) -> None:
    assert looks_like_contact(text) and field_problem("contact", text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Yes, please ask a person to follow up.",
        "Do you sell gluten-free bread?",
        "你们几点开门?",
        "好的，请找人联系我",
        "ana at example",
        "123",
        "call me on Friday",
        "2026-12-05",
        "",
    ],
)
def test_what_is_not_a_contact_is_refused(text: str) -> None:
    assert field_problem("contact", text) in ("not_a_contact", "empty")


@pytest.mark.parametrize(
    "text",
    [
        "Friday",
        "tomorrow at 3pm",
        "12 March",
        "March 12th",
        "2026-12-05",
        "5/12",
        "next week",
        "in two weeks",
        "by the end of the month",
        "Is Friday ok?",
        "Friday?",
        "around 14:30",
        "asap",
        "no rush",
        "in June",
        "next month",
        "明天下午三点",
        "周五",
        "星期六上午",
        "12月5日",
        "下周",
        "下个月",
        "三天内",
        "尽快",
        "5号",
    ],
)
def test_a_date_or_time_is_taken(text: str) -> None:
    assert looks_like_when(text) and field_problem("when", text) is None and field_problem("deadline", text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Do you sell gluten-free bread?",
        "What time do you open on Friday?",
        "When is the shop open?",
        "Yes, please ask a person to follow up.",
        "ana@example.com",
        "a cake with blue roses",
        "你们几点开门?",
        "营业时间是什么时候?",
        "周五开门吗？",
        "好的",
        "",
    ],
)
def test_what_is_not_a_date_or_time_is_refused(text: str) -> None:
    assert field_problem("when", text) in ("not_a_date_or_time", "empty")


@pytest.mark.parametrize(
    "name, value, expected",
    [
        ("need", "a cake with blue roses", None),
        ("need", "Do you sell gluten-free bread?", None),  # free text: what they need may be asked as a question
        ("need", "   ", "empty"),
        ("colour", "blue", None),  # a field this code does not know is free text
        ("email", "not an address", "not_a_contact"),
        ("phone", "+86 138 0000 0000", None),
        ("Deadline", "tomorrow", None),
        ("date", "whenever", None),
        ("时间", "明天", None),
    ],
)
def test_field_problem_by_the_field_s_kind(name: str, value: str, expected: str | None) -> None:
    assert field_problem(name, value) == expected


@pytest.mark.parametrize(
    "name, kind",
    [("contact", FieldKind.CONTACT), ("Email", FieldKind.CONTACT), ("when", FieldKind.WHEN), ("need", FieldKind.TEXT)],
)
def test_field_kind(name: str, kind: FieldKind) -> None:
    assert field_kind(name) == kind


@pytest.mark.parametrize(
    "text, question",
    [
        ("Do you sell gluten-free bread?", True),
        ("what time do you open", True),
        ("Is there parking?", True),
        ("你们几点开门?", True),
        ("有没有无麸质面包", True),
        ("可以送货吗", True),
        ("Friday?", False),
        ("May 12", False),
        ("Is Friday ok?", False),
        ("ana@example.com", False),
        ("明天下午三点", False),
    ],
)
def test_is_question(text: str, question: bool) -> None:
    assert is_question(text) is question


@pytest.mark.parametrize(
    "text, cancel",
    [
        ("cancel", True),
        ("Cancel.", True),
        ("never mind", True),
        ("Nevermind!", True),
        ("stop", True),
        ("forget it", True),
        ("no, cancel that", True),
        ("算了", True),
        ("取消", True),
        ("不用了", True),
        ("算了吧", True),
        ("cancel my request #3", False),  # withdrawing a registered request, not leaving the flow
        ("撤回请求", False),
        ("the bus stop at 5pm", False),
        ("Friday", False),
    ],
)
def test_is_cancel(text: str, cancel: bool) -> None:
    assert is_cancel(text) is cancel


@pytest.mark.parametrize(
    "text, confirmation, decline",
    [
        ("yes", True, False),
        ("Yes please", True, False),
        ("ok", True, False),
        ("looks good", True, False),
        ("是的", True, False),
        ("好", True, False),
        ("确认", True, False),
        ("yes but change the date", False, False),
        ("是的，但是时间要改", False, False),
        ("no", False, True),
        ("No, the date is wrong", False, True),
        ("不对", False, True),
        ("不是", False, True),
        ("Do you sell gluten-free bread?", False, False),
        ("yes " + "really " * 20, False, False),  # a long message is not a plain yes
    ],
)
def test_confirmation_and_decline(text: str, confirmation: bool, decline: bool) -> None:
    assert (is_confirmation(text), is_decline(text)) == (confirmation, decline)


SUMMARY = "Here is your request:\n- What: a cake\nShall I register it? (yes / no)"


@pytest.mark.parametrize(
    "shown, reply, expected",
    [
        (f"Sure. {SUMMARY}", "yes", True),
        (SUMMARY + "  \n", "是的", True),
        (SUMMARY, "no", False),
        (SUMMARY, "Do you sell bread?", False),
        (f"{SUMMARY} Anything else?", "yes", False),  # the summary must be the last thing shown
        ("Shall I register a request?", "yes", False),  # a yes to something else
        ("", "yes", False),
    ],
)
def test_confirms_only_a_plain_yes_to_the_summary_just_shown(shown: str, reply: str, expected: bool) -> None:
    assert confirms(shown=shown, reply=reply, summaries=[SUMMARY, ""]) is expected


FLOW_W: dict[str, Any] = {"initial": "submitted", "states": {"submitted": {"to": ["accepted"]}, "withdrawn": {}}}


@pytest.mark.parametrize(
    "flow, state, owner_acted, expected",
    [
        (FLOW_W, "submitted", False, None),
        (FLOW_W, "submitted", True, ChangeRefusal.OWNER_HAS_ACTED),  # e.g. moved away and back
        (FLOW_W, "accepted", False, ChangeRefusal.OWNER_HAS_ACTED),
        (FLOW_W, "withdrawn", False, ChangeRefusal.ALREADY_WITHDRAWN),
        ({"initial": "submitted", "states": {"submitted": {}}}, "submitted", False, ChangeRefusal.NOT_IN_FLOW),
        ({}, "submitted", False, ChangeRefusal.OWNER_HAS_ACTED),
    ],
)
def test_customer_may_change_only_before_the_business_acts(
    flow: dict[str, Any], state: str, owner_acted: bool, expected: ChangeRefusal | None
) -> None:
    assert customer_may_change(flow=flow, state=state, owner_acted=owner_acted) == expected
