"""The daily review's pure rules (rsi/review_rules.py), no database: the gate's table, the scrub
of topics and the k-anonymity rule, and the offline reviewer's rules."""

from __future__ import annotations

from typing import Any

import pytest

from rsi.review_rules import (
    DRAFT_PLACEHOLDER,
    DropReason,
    Figures,
    Known,
    ShownTopic,
    TopicCount,
    gate,
    offline_review,
    scrub_topic,
    topics_for_review,
)

S1 = "0b5e8c52-0000-4000-8000-000000000001"
S2 = "0b5e8c52-0000-4000-8000-000000000002"
INVENTED = "0b5e8c52-0000-4000-8000-00000000dead"
KNOWN = Known(
    aggregates={"sessions.total": 10, "sessions.expired": 4, "topic.abc": 5},
    sessions=frozenset({S1, S2}),
    versions=frozenset({7}),
)


def claim(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "kind": "miss",
        "text": "4 of 10 conversations expired.",
        "evidence": [{"type": "aggregate", "key": "sessions.expired"}, {"type": "session", "id": S1}],
        "figure": {"key": "sessions.expired", "value": 4},
    }
    base.update(over)
    return base


def proposal(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "kind": "knowledge_draft",
        "payload": {"title": "opening hours", "text": "…"},
        "summary": "Answer opening hours",
        "sessions_affected": 3,
    }
    base.update(over)
    return base


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (claim(evidence=[]), DropReason.NO_EVIDENCE),
        (claim(evidence=None), DropReason.NO_EVIDENCE),
        ({k: v for k, v in claim().items() if k != "evidence"}, DropReason.NO_EVIDENCE),
        (claim(evidence=[{"type": "session", "id": INVENTED}]), DropReason.UNRESOLVED_POINTER),
        (
            claim(evidence=[{"type": "session", "id": S1}, {"type": "session", "id": INVENTED}]),
            DropReason.UNRESOLVED_POINTER,
        ),
        (claim(evidence=[{"type": "aggregate", "key": "sessions.invented"}]), DropReason.UNRESOLVED_POINTER),
        (claim(evidence=[{"type": "knowledge_version", "id": 8}]), DropReason.UNRESOLVED_POINTER),
        (claim(evidence=[{"type": "transcript", "id": S1}]), DropReason.UNRESOLVED_POINTER),
        (claim(figure={"key": "sessions.expired", "value": 5}), DropReason.FIGURE_MISMATCH),
        (claim(figure={"key": "sessions.expired", "value": "4"}), DropReason.FIGURE_MISMATCH),
        (claim(figure={"key": "sessions.invented", "value": 4}), DropReason.FIGURE_MISMATCH),
        (claim(kind="praise"), DropReason.UNKNOWN_KIND),
        (claim(text=""), DropReason.MALFORMED),
        ("a sentence", DropReason.MALFORMED),
        (claim(proposal=proposal(kind="pricing")), DropReason.UNKNOWN_PROPOSAL),
    ],
)
def test_the_gate_drops_and_counts(raw: Any, reason: DropReason) -> None:
    result = gate([raw, claim()], KNOWN, cap=5)
    assert [d.reason for d in result.dropped] == [reason]
    assert result.dropped[0].index == 0
    assert len(result.kept) == 1  # the good claim next to it survives


def test_the_gate_keeps_a_claim_whose_pointers_all_resolve() -> None:
    result = gate(
        [claim(evidence=[{"type": "knowledge_version", "id": 7}, {"type": "session", "id": S2.upper()}])], KNOWN, cap=5
    )
    assert not result.dropped
    assert result.kept[0]["evidence"] == [{"type": "knowledge_version", "id": 7}, {"type": "session", "id": S2}]


def test_a_reviewer_cannot_decide_who_approves() -> None:
    raw = claim(kind="gap", proposal=proposal(requires="auto", level=0, confirm=True))
    result = gate([raw], KNOWN, cap=5)
    assert result.overrides == 1
    made = result.proposals[0]
    assert made["claimed"] == {"requires": "auto", "level": "0", "confirm": "True"}
    assert "requires" not in made and "level" not in made and "confirm" not in made
    assert made["evidence"] == [{"type": "session", "id": S1}]  # aggregate pointers stay in the report
    clean = gate([claim(kind="gap", proposal=proposal())], KNOWN, cap=5)
    assert clean.overrides == 0 and clean.proposals[0]["claimed"] == {}


@pytest.mark.parametrize(
    ("over", "affected"),
    [
        # the figure it cites (sessions.expired = 4) bounds it
        ({}, 4),
        # the largest aggregate it cites, as a pointer
        ({"evidence": [{"type": "aggregate", "key": "topic.abc"}, {"type": "session", "id": S1}], "figure": None}, 5),
        # no figure: the conversations it points at
        ({"evidence": [{"type": "session", "id": S1}, {"type": "session", "id": S2}], "figure": None}, 2),
    ],
)
def test_a_reviewer_cannot_claim_more_sessions_than_its_evidence_shows(over: dict[str, Any], affected: int) -> None:
    """Sessions affected rank proposals and clear the owner's preference bar: an LLM writing a
    million is cut down to what its evidence shows, and the claim is recorded as an override."""
    raw = claim(kind="gap", proposal=proposal(sessions_affected=1_000_000), **over)
    if raw.get("figure") is None:
        raw.pop("figure")
    result = gate([raw], KNOWN, cap=5, min_sessions={"knowledge_draft": affected + 1})
    assert result.held_by_preference == {"knowledge_draft": 1}  # the bar is not cleared by words
    result = gate([raw], KNOWN, cap=5)
    made = result.proposals[0]
    assert made["sessions_affected"] == affected
    assert made["claimed"] == {"sessions_affected": "1000000"}
    assert result.overrides == 1
    honest = gate([claim(kind="gap", proposal=proposal(sessions_affected=affected), **over)], KNOWN, cap=5)
    assert honest.proposals[0]["sessions_affected"] == affected and honest.overrides == 0


def test_proposals_beyond_the_cap_are_held_back_most_sessions_first() -> None:
    total = {
        "evidence": [{"type": "aggregate", "key": "sessions.total"}],
        "figure": {"key": "sessions.total", "value": 10},
    }
    raws = [
        claim(kind="gap", proposal=proposal(sessions_affected=n, topic=f"t{n}"), **total) for n in (1, 7, 3, 9, 2, 5, 4)
    ]
    result = gate(raws, KNOWN, cap=5)
    assert [p["sessions_affected"] for p in result.proposals] == [9, 7, 5, 4, 3]
    assert result.held_back == 2
    assert len(result.kept) == 7  # held back is not dropped: the claims stay in the report
    assert gate(raws, KNOWN, cap=0).held_back == 7


@pytest.mark.parametrize(
    ("label", "shown"),
    [
        ("opening hours", "opening hours"),
        ("mail anna.lee+x@example.com hours", "mail hours"),
        ("call +49 170 1234567 please", "call please"),
        ("card 4111 1111 1111 1111 refund", "card refund"),
        ("order 20261201 status", "order status"),
        ("营业 时间 13800138000", "营业 时间"),
        ("12345678", ""),
        ("a@b.cn", ""),
    ],
)
def test_the_scrub_removes_personal_data(label: str, shown: str) -> None:
    assert scrub_topic(label) == shown


def test_a_topic_is_named_only_when_three_customers_asked_it() -> None:
    topics = [
        TopicCount("hours opening", "hours opening", misses=4, askers=3, sessions=()),
        TopicCount("parking", "parking", misses=9, askers=2, sessions=()),  # often, but by two people
        TopicCount("0170 1234567", "0170 1234567", misses=5, askers=5, sessions=()),  # nothing left after the scrub
    ]
    shown, other, other_misses = topics_for_review(topics, min_askers=3)
    assert [t.label for t in shown] == ["hours opening"]
    assert shown[0].aggregate_key.startswith("topic.") and "hours" not in shown[0].aggregate_key
    assert (other, other_misses) == (2, 14)


def test_the_offline_reviewer_rules() -> None:
    topic = ShownTopic("topic.abc", "opening hours", misses=5, askers=3, sessions=(S1, S2))
    figures = Figures(
        values={"sessions.total": 10, "sessions.expired": 4, "runs.total": 10, "runs.completed": 9, "topic.abc": 5},
        sessions={"topic.abc": (S1, S2), "sessions.expired": (S1,)},
        topics=[topic, ShownTopic("topic.def", "parking", misses=1, askers=3, sessions=())],
        clarification_order=("need", "when", "contact"),
    )
    claims = offline_review(figures)
    assert [c["kind"] for c in claims] == ["gap", "miss", "win"]
    gap, miss, _win = claims
    assert gap["proposal"]["kind"] == "knowledge_draft"
    assert gap["proposal"]["payload"] == {"title": "opening hours", "text": DRAFT_PLACEHOLDER, "topic": "topic.abc"}
    assert miss["proposal"]["payload"] == {"fields": ["contact", "need", "when"]}
    known = Known(aggregates=figures.values, sessions=frozenset({S1, S2}))
    assert not gate(claims, known, cap=5).dropped  # the offline reviewer's claims pass the gate
    quiet = Figures(
        values={"sessions.total": 10, "sessions.expired": 1, "runs.total": 10, "runs.completed": 5},
        sessions={},
        topics=[],
    )
    assert offline_review(quiet) == []
