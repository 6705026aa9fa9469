"""Governance by exception's pure rules (rsi/governance_rules.py), no database: the escalation
budget's token bucket and the owner's preference bars per kind; and the gate holding back a kind
the owner keeps rejecting (rsi/review_rules.py)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from rsi.governance_rules import Bucket, KindPreference, bucket_full, bucket_refill, bucket_take, preference_bars
from rsi.review_rules import Figures, Known, ShownTopic, gate, offline_review

T0 = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)
DAY = dt.timedelta(days=1)


@pytest.mark.parametrize(
    ("tokens", "elapsed", "capacity", "per_day", "expected"),
    [
        (0.0, DAY, 15, 5, 5.0),  # a day refills per_day
        (0.0, 12 * HOUR, 15, 5, 2.5),  # proportionally
        (14.0, DAY, 15, 5, 15.0),  # never above the capacity
        (15.0, 10 * DAY, 15, 5, 15.0),
        (3.0, dt.timedelta(0), 15, 5, 3.0),  # no time, no tokens
        (3.0, -DAY, 15, 5, 3.0),  # a clock that went back adds nothing
        (0.0, 30 * DAY, 0, 5, 0.0),  # a capacity of 0: never a token
        (2.0, DAY, 15, 0, 2.0),  # no refill
        (-1.0, DAY, 15, 5, 5.0),  # a broken negative count is read as empty
    ],
)
def test_refill(tokens: float, elapsed: dt.timedelta, capacity: int, per_day: float, expected: float) -> None:
    refilled = bucket_refill(Bucket(tokens, T0), now=T0 + elapsed, capacity=capacity, per_day=per_day)
    assert refilled.tokens == pytest.approx(expected)
    assert refilled.at == max(T0, T0 + elapsed)


@pytest.mark.parametrize(
    ("tokens", "elapsed", "taken", "left"),
    [
        (1.0, dt.timedelta(0), True, 0.0),
        (0.0, dt.timedelta(0), False, 0.0),
        (0.9, dt.timedelta(0), False, 0.9),  # a part of a token is not a token
        (0.0, 5 * HOUR, True, 5 * 5 / 24 - 1),  # 5 hours at 5 a day: a token and a bit
        (0.0, 4 * HOUR, False, 4 * 5 / 24),
        (15.0, DAY, True, 14.0),  # the refill is capped before the take
    ],
)
def test_take(tokens: float, elapsed: dt.timedelta, taken: bool, left: float) -> None:
    bucket, ok = bucket_take(Bucket(tokens, T0), now=T0 + elapsed, capacity=15, per_day=5)
    assert ok is taken and bucket.tokens == pytest.approx(left) and bucket.at == T0 + elapsed


def test_fifteen_takes_empty_a_full_bucket_and_a_day_gives_five_back() -> None:
    bucket = bucket_full(now=T0, capacity=15)
    results = []
    for _ in range(16):
        bucket, ok = bucket_take(bucket, now=T0, capacity=15, per_day=5)
        results.append(ok)
    assert results == [True] * 15 + [False]
    later = T0 + DAY
    oks = []
    for _ in range(6):
        bucket, ok = bucket_take(bucket, now=later, capacity=15, per_day=5)
        oks.append(ok)
    assert oks == [True] * 5 + [False]


R, A, E = "reject", "approve", "expire"


@pytest.mark.parametrize(
    ("decisions", "expected"),
    [
        ([], {}),
        ([("lesson", R)], {"lesson": KindPreference("lesson", 0, 1, 0)}),  # one rejection: no bar
        ([("lesson", R)] * 2, {"lesson": KindPreference("lesson", 0, 2, 10)}),  # two more rejections: a bar
        ([("lesson", R)] * 3, {"lesson": KindPreference("lesson", 0, 3, 15)}),  # proportional
        ([("lesson", R)] * 3 + [("lesson", A)], {"lesson": KindPreference("lesson", 1, 3, 10)}),  # approvals restore
        ([("lesson", R)] * 3 + [("lesson", A)] * 2, {"lesson": KindPreference("lesson", 2, 3, 0)}),
        ([("lesson", E)] * 5, {"lesson": KindPreference("lesson", 0, 0, 0)}),  # expiry says nothing
        (
            [("lesson", R), ("wording", R), ("lesson", R), ("wording", A)],
            {"lesson": KindPreference("lesson", 0, 2, 10), "wording": KindPreference("wording", 1, 1, 0)},
        ),
        ([("lesson", "something else")] * 4, {"lesson": KindPreference("lesson", 0, 0, 0)}),
    ],
)
def test_preference_bars(decisions: list[tuple[str, str]], expected: dict[str, KindPreference]) -> None:
    assert preference_bars(decisions, min_net=2, sessions_per_rejection=5) == expected


def test_a_higher_min_net_waits_for_more_rejections() -> None:
    assert preference_bars([("lesson", R)] * 2, min_net=3, sessions_per_rejection=5)["lesson"].min_sessions == 0
    assert preference_bars([("lesson", R)] * 3, min_net=3, sessions_per_rejection=4)["lesson"].min_sessions == 12


def gap(topic: str, sessions: int, kind: str = "knowledge_draft") -> dict[str, Any]:
    return {
        "kind": "gap",
        "text": f"{topic} was asked.",
        "evidence": [{"type": "aggregate", "key": topic}],
        "proposal": {"kind": kind, "payload": {}, "summary": topic, "sessions_affected": sessions, "topic": topic},
    }


# Figures large enough not to bound the sessions each gap claims (review_rules.affected_bound).
KNOWN = Known(aggregates={"a": 100, "b": 100, "c": 100, "d": 100}, sessions=frozenset())


@pytest.mark.parametrize(
    ("bars", "cap", "made", "by_preference", "by_cap"),
    [
        ({}, 5, ["c", "b", "a", "d"], {}, 0),
        ({}, 2, ["c", "b"], {}, 2),
        ({"knowledge_draft": 10}, 5, ["c", "d"], {"knowledge_draft": 2}, 0),  # under the bar: held, kept
        ({"knowledge_draft": 10}, 1, ["c"], {"knowledge_draft": 2}, 1),  # the bar first, then the cap
        ({"knowledge_draft": 100}, 5, ["d"], {"knowledge_draft": 3}, 0),
        ({"lesson": 100}, 5, ["c", "b", "a"], {"lesson": 1}, 0),
        ({"clarification_order": 100}, 5, ["c", "b", "a", "d"], {}, 0),  # a bar on another kind
    ],
)
def test_the_gate_holds_back_a_kind_the_owner_keeps_rejecting(
    bars: dict[str, int], cap: int, made: list[str], by_preference: dict[str, int], by_cap: int
) -> None:
    claims: list[object] = [gap("a", 3), gap("b", 5), gap("c", 20), gap("d", 2, "lesson")]
    result = gate(claims, KNOWN, cap=cap, min_sessions=bars)
    assert [p["topic"] for p in result.proposals] == made
    assert result.held_by_preference == by_preference and result.held_back == by_cap
    assert len(result.kept) == 4  # a held-back proposal's claim is still in the report


@pytest.mark.parametrize(("askers", "pointers", "affected"), [(3, 3, 3), (16, 3, 16), (4, 0, 4)])
def test_a_gap_affects_every_customer_who_asked_not_only_its_few_pointers(
    askers: int, pointers: int, affected: int
) -> None:
    ids = tuple(f"0b5e8c52-0000-4000-8000-00000000000{i}" for i in range(pointers))
    figures = Figures(
        values={"topic.x": askers},
        sessions={"topic.x": ids},
        topics=[ShownTopic("topic.x", "gift wrap", askers, askers, ids)],
    )
    [claim] = offline_review(figures)
    assert claim["proposal"]["sessions_affected"] == affected
