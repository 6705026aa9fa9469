"""The replay preview's counting rules (approvals/replay_rules.py): pure, no database."""

from __future__ import annotations

import pytest

from approvals.replay_rules import Change, TurnOutcome, TurnPair, change_of, replayed, tally, terms_meet

CITED = TurnOutcome(cited=frozenset({1}), digest="a")
CITED_TWO = TurnOutcome(cited=frozenset({1, 2}), digest="b")
OTHER = TurnOutcome(cited=frozenset({2}), digest="c")
NOTHING = TurnOutcome(digest="d")
BLOCKED = TurnOutcome(blocked="price", digest="e")
SAYS = TurnOutcome(digest="f", says_changed=True)
FAILED = TurnOutcome(failed=True)


@pytest.mark.parametrize(
    ("before", "after", "change"),
    [
        (CITED, CITED, Change.SAME),
        (CITED, CITED_TWO, Change.CHANGED),  # one more citation: changed, not worse
        (CITED_TWO, CITED, Change.LOST_CITATION),
        (CITED, OTHER, Change.LOST_CITATION),  # its entry replaced by another one
        (NOTHING, CITED, Change.CHANGED),
        (CITED, BLOCKED, Change.NOW_BLOCKED),
        (BLOCKED, BLOCKED, Change.SAME),
        (BLOCKED, NOTHING, Change.CHANGED),
        (NOTHING, SAYS, Change.CHANGED),
    ],
)
def test_how_a_turn_moved(before: TurnOutcome, after: TurnOutcome, change: Change) -> None:
    assert change_of(before, after) == change


def pair(n: int, before: TurnOutcome, after: TurnOutcome, concerned: bool = False) -> TurnPair:
    return TurnPair(n, f"s{n}", before, after, concerned)


def test_a_knowledge_draft_counts_the_unanswered_questions_it_concerns_as_affected() -> None:
    counts = tally(
        "knowledge_draft",
        [
            pair(1, NOTHING, CITED, concerned=True),  # affected, now answered
            pair(2, NOTHING, NOTHING, concerned=True),  # affected, still unanswered
            pair(3, CITED, OTHER, concerned=True),  # answered before: elsewhere, and worse
            pair(4, CITED, CITED),  # elsewhere, same
            pair(5, CITED, BLOCKED),  # elsewhere, now blocked
            pair(6, FAILED, CITED),  # not compared
        ],
    )
    figures = counts.figures()
    assert (figures["replayed"], figures["failed"]) == (6, 1)
    assert (figures["affected"], figures["affected_cited_before"], figures["affected_cited_after"]) == (2, 0, 1)
    assert figures["affected_changed"] == 1
    assert (figures["elsewhere"], figures["elsewhere_changed"], figures["elsewhere_worse"]) == (3, 2, 2)
    assert (figures["elsewhere_lost_citation"], figures["elsewhere_now_blocked"]) == (1, 1)
    assert (figures["blocked_before"], figures["blocked_after"]) == (0, 1)
    assert counts.pointers["affected_cited_after"] == [{"message": 1, "session": "s1"}]
    assert [p["message"] for p in counts.pointers["elsewhere_worse"]] == [3, 5]


def test_wording_is_about_the_turns_that_say_the_sentence_and_the_order_about_the_concerned() -> None:
    pairs = [pair(1, NOTHING, SAYS), pair(2, CITED, CITED, concerned=True), pair(3, SAYS, NOTHING)]
    assert tally("wording", pairs).figures()["affected"] == 2
    assert tally("boundary_wording", pairs).figures()["affected"] == 2
    assert tally("clarification_order", pairs).figures()["affected"] == 1


def test_pointers_are_capped() -> None:
    counts = tally("knowledge_draft", [pair(n, CITED, BLOCKED) for n in range(1, 30)])
    assert counts.figures()["blocked_after"] == 29 and len(counts.pointers["blocked_after"]) == 10


def test_what_is_replayed_and_when_terms_meet() -> None:
    kinds = ("knowledge_draft", "wording", "boundary_wording", "clarification_order", "pricing", "delivery")
    assert all(replayed(k) for k in kinds)
    assert not any(replayed(k) for k in ("lesson", "skill_ids", "state_contract", "rollback"))
    assert terms_meet(["ship", "parcels"], ["parcels", "abroad"]) and not terms_meet(["open"], ["parcels"])
