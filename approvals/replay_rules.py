"""Pure rules of the replay preview (approvals/replay.py): which proposals are replayed, which
turns a proposal concerns, and how a turn's two replays are compared and counted.  No I/O here:
a replayed turn is a `TurnOutcome`, plain data with ids and a digest, never its text.

A turn is replayed twice with the same model: against the live state ("before") and against the
state with the proposal applied ("after").  What is counted:

- affected questions answered with a citation, before → after (the questions the proposal is
  about: for a knowledge draft, questions nothing answered before whose words meet the draft's;
  for wording, the turns where the changed sentence is said; for the order of questions, the
  turns of conversations that went into a request);
- answers elsewhere (every other replayed turn) that change, and of those the ones that get
  worse: an entry cited before is no longer cited, or the reply is now blocked;
- replies the guard would block after the change, over all replayed turns.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from .schemas import Kind

# What changes what customers are told, and so is replayed before the owner decides.
REPLAYED_KINDS = frozenset(
    {
        Kind.KNOWLEDGE_DRAFT,
        Kind.WORDING,
        Kind.BOUNDARY_WORDING,
        Kind.CLARIFICATION_ORDER,
        # What customers are told of prices and delivery (approvals/published.py), replayed with the
        # proposed list in place of the live one.
        Kind.PRICING,
        Kind.DELIVERY,
    }
)
# Pointers kept per count: enough to look at, few enough for a card.
POINTERS = 10


def replayed(kind: str) -> bool:
    return kind in REPLAYED_KINDS


class Change(StrEnum):
    SAME = "same"
    CHANGED = "changed"  # another reply, no worse by the counts
    LOST_CITATION = "lost_citation"  # an entry cited before is cited no more
    NOW_BLOCKED = "now_blocked"  # the guard would block it now, and did not before


@dataclass(frozen=True)
class TurnOutcome:
    """One replay of one customer turn: the entries its reply cites (none when blocked), the
    guard's category ("" when sent), whether the sentence the proposal changes is in it, and a
    digest of the reply to tell a change (the text itself is not kept)."""

    cited: frozenset[int] = frozenset()
    blocked: str = ""
    says_changed: bool = False
    digest: str = ""
    failed: bool = False  # the model failed on it: not compared


@dataclass(frozen=True)
class TurnPair:
    message_id: int
    session_id: str
    before: TurnOutcome
    after: TurnOutcome
    concerned: bool  # picked as one the proposal is about, before it was replayed


def change_of(before: TurnOutcome, after: TurnOutcome) -> Change:
    """How a turn's reply moved; "worse" is the first two kinds below SAME/CHANGED."""
    if after.blocked and not before.blocked:
        return Change.NOW_BLOCKED
    if before.cited - after.cited:
        return Change.LOST_CITATION
    if before.digest != after.digest or before.cited != after.cited or before.blocked != after.blocked:
        return Change.CHANGED
    return Change.SAME


def affected(kind: str, pair: TurnPair) -> bool:
    """Whether a replayed turn is one the proposal is about.  A knowledge draft: a concerned turn
    (its words meet the draft's) that nothing answered before.  Wording and boundary wording: a
    turn whose reply says the changed sentence, before or after.  The order of questions: a
    turn of a conversation that went into a request (picked so, before the replay).  Prices and
    delivery: a turn that asks about the part, of the live list or the proposed one (picked so)."""
    if Kind(kind) == Kind.KNOWLEDGE_DRAFT:
        return pair.concerned and not pair.before.cited and not pair.before.failed
    if Kind(kind) in (Kind.WORDING, Kind.BOUNDARY_WORDING):
        return pair.before.says_changed or pair.after.says_changed
    return pair.concerned


@dataclass
class Counts:
    """The replay's figures; every list holds pointers (`message:<id>` in `session:<uuid>`), never text."""

    replayed: int = 0
    failed: int = 0
    affected: int = 0
    affected_cited_before: int = 0
    affected_cited_after: int = 0
    affected_changed: int = 0  # affected turns whose reply would differ
    elsewhere: int = 0
    elsewhere_changed: int = 0
    elsewhere_lost_citation: int = 0
    elsewhere_now_blocked: int = 0
    blocked_before: int = 0
    blocked_after: int = 0
    pointers: dict[str, list[dict[str, object]]] = field(default_factory=dict)

    @property
    def elsewhere_worse(self) -> int:
        return self.elsewhere_lost_citation + self.elsewhere_now_blocked

    def figures(self) -> dict[str, int]:
        return {
            "replayed": self.replayed,
            "failed": self.failed,
            "affected": self.affected,
            "affected_cited_before": self.affected_cited_before,
            "affected_cited_after": self.affected_cited_after,
            "affected_changed": self.affected_changed,
            "elsewhere": self.elsewhere,
            "elsewhere_changed": self.elsewhere_changed,
            "elsewhere_worse": self.elsewhere_worse,
            "elsewhere_lost_citation": self.elsewhere_lost_citation,
            "elsewhere_now_blocked": self.elsewhere_now_blocked,
            "blocked_before": self.blocked_before,
            "blocked_after": self.blocked_after,
        }

    def point(self, key: str, pair: TurnPair) -> None:
        kept = self.pointers.setdefault(key, [])
        if len(kept) < POINTERS:
            kept.append({"message": pair.message_id, "session": pair.session_id})


def tally(kind: str, pairs: Iterable[TurnPair]) -> Counts:
    counts = Counts()
    for pair in pairs:
        counts.replayed += 1
        if pair.before.failed or pair.after.failed:
            counts.failed += 1
            continue
        counts.blocked_before += bool(pair.before.blocked)
        if pair.after.blocked:
            counts.blocked_after += 1
            counts.point("blocked_after", pair)
        if affected(kind, pair):
            counts.affected += 1
            counts.point("affected", pair)
            counts.affected_cited_before += bool(pair.before.cited)
            if pair.after.cited:
                counts.affected_cited_after += 1
                counts.point("affected_cited_after", pair)
            counts.affected_changed += change_of(pair.before, pair.after) != Change.SAME
            continue
        counts.elsewhere += 1
        change = change_of(pair.before, pair.after)
        if change == Change.SAME:
            continue
        counts.elsewhere_changed += 1
        counts.point("elsewhere_changed", pair)
        if change == Change.LOST_CITATION:
            counts.elsewhere_lost_citation += 1
            counts.point("elsewhere_worse", pair)
        elif change == Change.NOW_BLOCKED:
            counts.elsewhere_now_blocked += 1
            counts.point("elsewhere_worse", pair)
    return counts


def terms_meet(question: Iterable[str], draft: Iterable[str]) -> bool:
    """Whether a question's search terms meet a draft's (the cheap pick of the turns a
    knowledge draft concerns; the replay itself decides whether it now answers them)."""
    return bool(set(question) & set(draft))
