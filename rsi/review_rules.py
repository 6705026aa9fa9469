"""The daily review's pure decisions (issue 13, "The daily review"): how a topic made from
customer words is scrubbed before an owner may read it, the deterministic offline reviewer's
rules over the day's aggregates, and the gate every reviewer's claims pass.  Plain data in,
plain data out — no ORM (tests/test_review_rules.py is the table).

A claim is `{kind: win|miss|gap, text, evidence: [pointer], figure?, proposal?}`; a pointer is
`{"type": "session", "id": "<uuid>"}`, `{"type": "knowledge_version", "id": n}` or
`{"type": "aggregate", "key": "<key>"}` (an aggregate row stored with the report)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from approvals.schemas import REVIEW_DRAFT_PLACEHOLDER
from knowledge.rules import topic_ref, topic_shown

# --- scrub -------------------------------------------------------------------------------------

# A topic's words had their personal data removed before the topic was made (knowledge.personal,
# applied by knowledge.text.topic_key); a label is scrubbed again here, with the same rules, for
# topics recorded before that and as the review's own second wall.


def scrub_topic(label: str) -> str:
    """A topic label without e-mail addresses, phone and card-like numbers or long digit runs
    (and without any term `knowledge.rules.topic_for_owner` refuses); empty when nothing is left."""
    return topic_shown(label)


def topic_aggregate_key(topic_key: str) -> str:
    """The aggregate key of a topic: a hash, so that the key itself carries no customer word."""
    return topic_ref(topic_key)


@dataclass(frozen=True, slots=True)
class TopicCount:
    key: str  # the raw topic key (never shown; hashed into the aggregate key)
    label: str  # topic_label(key), not yet scrubbed
    misses: int
    askers: int
    sessions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ShownTopic:
    aggregate_key: str
    label: str
    misses: int
    askers: int
    sessions: tuple[str, ...]


def topics_for_review(topics: list[TopicCount], *, min_askers: int) -> tuple[list[ShownTopic], int, int]:
    """The topics the review may name: asked by at least `min_askers` distinct customers that day
    and with a label left after the scrub.  Returns (shown, other topics, their misses)."""
    shown: list[ShownTopic] = []
    other, other_misses = 0, 0
    for topic in topics:
        label = scrub_topic(topic.label)
        if topic.askers < min_askers or not label:
            other += 1
            other_misses += topic.misses
            continue
        shown.append(ShownTopic(topic_aggregate_key(topic.key), label, topic.misses, topic.askers, topic.sessions))
    shown.sort(key=lambda t: (-t.askers, -t.misses, t.aggregate_key))
    return shown, other, other_misses


# --- the offline reviewer ----------------------------------------------------------------------

GAP_MIN_MISSES = 3  # a topic missed this often (by >= min_askers customers) is a gap
EXPIRY_MISS_RATIO = 0.3  # over this share of the day's sessions expired: a miss
EXPIRY_MIN_SESSIONS = 5
WIN_COMPLETION_RATIO = 0.8  # at least this share of runs completed: a win
WIN_MIN_RUNS = 5
DRAFT_PLACEHOLDER = REVIEW_DRAFT_PLACEHOLDER


@dataclass(frozen=True, slots=True)
class Figures:
    """What the offline reviewer reads: the aggregates (key → value, key → a few session ids) and
    the shown topics."""

    values: Mapping[str, int]
    sessions: Mapping[str, tuple[str, ...]]
    topics: list[ShownTopic]
    clarification_order: tuple[str, ...] = ()


def _pointers(figures: Figures, key: str, limit: int = 3) -> list[dict[str, Any]]:
    return [{"type": "aggregate", "key": key}] + [
        {"type": "session", "id": s} for s in figures.sessions.get(key, ())[:limit]
    ]


def offline_review(figures: Figures) -> list[dict[str, Any]]:
    """The deterministic reviewer: rules over the aggregates, never over words."""
    claims: list[dict[str, Any]] = []
    for topic in figures.topics:
        if topic.misses < GAP_MIN_MISSES:
            continue
        claims.append(
            {
                "kind": "gap",
                "text": f"“{topic.label}” was asked {topic.misses} times by {topic.askers} customers and "
                "no approved knowledge answered it.",
                "evidence": _pointers(figures, topic.aggregate_key),
                "figure": {"key": topic.aggregate_key, "value": topic.misses},
                "proposal": {
                    "kind": "knowledge_draft",
                    "payload": {"title": topic.label[:300], "text": DRAFT_PLACEHOLDER, "topic": topic.aggregate_key},
                    "summary": f"Answer “{topic.label[:120]}” (a draft from the daily review: write the answer)",
                    # The pointers are a few sessions only: the customers who asked count them all.
                    "sessions_affected": max(len(figures.sessions.get(topic.aggregate_key, ())), topic.askers),
                    "topic": topic.aggregate_key,
                },
            }
        )
    total = figures.values.get("sessions.total", 0)
    expired = figures.values.get("sessions.expired", 0)
    if total >= EXPIRY_MIN_SESSIONS and expired / total > EXPIRY_MISS_RATIO:
        claim: dict[str, Any] = {
            "kind": "miss",
            "text": f"{expired} of {total} conversations expired before they finished.",
            "evidence": _pointers(figures, "sessions.expired"),
            "figure": {"key": "sessions.expired", "value": expired},
        }
        if figures.clarification_order:
            # Asking for the contact first keeps a conversation that stops half-way answerable.
            order = list(figures.clarification_order)
            reordered = ["contact"] + [f for f in order if f != "contact"] if "contact" in order else order[::-1]
            if reordered != order:
                claim["proposal"] = {
                    "kind": "clarification_order",
                    "payload": {"fields": reordered},
                    "summary": "Ask for the contact first: many conversations expired before they finished",
                    "sessions_affected": expired,
                }
        claims.append(claim)
    # Delivered violations must be 0: any is a miss, pointing at the figure (and the day's own
    # conversations among them); the reviewer never sees the replies' words.
    # Replies to other agents (peers) are counted apart, and must be 0 too.
    for key, whom in (("guard.delivered_violations", ""), ("peers.guard.delivered_violations", " to other agents")):
        violations = figures.values.get(key, 0)
        if violations:
            claims.append(
                {
                    "kind": "miss",
                    "text": f"{violations} replies sent{whom} that day fail the current outgoing check (delivered "
                    "violations, which must be 0).",
                    "evidence": _pointers(figures, key),
                    "figure": {"key": key, "value": violations},
                }
            )
    runs = figures.values.get("runs.total", 0)
    completed = figures.values.get("runs.completed", 0)
    if runs >= WIN_MIN_RUNS and completed / runs >= WIN_COMPLETION_RATIO:
        claims.append(
            {
                "kind": "win",
                "text": f"{completed} of {runs} replies completed without a stop.",
                "evidence": _pointers(figures, "runs.completed"),
                "figure": {"key": "runs.completed", "value": completed},
            }
        )
    return claims


# --- the gate ----------------------------------------------------------------------------------


class DropReason(StrEnum):
    MALFORMED = "malformed"
    UNKNOWN_KIND = "unknown_kind"
    NO_EVIDENCE = "no_evidence"
    UNRESOLVED_POINTER = "unresolved_pointer"
    FIGURE_MISMATCH = "figure_mismatch"
    UNKNOWN_PROPOSAL = "unknown_proposal"


CLAIM_KINDS = frozenset({"win", "miss", "gap"})
PROPOSAL_KINDS = frozenset({"knowledge_draft", "clarification_order", "wording", "lesson"})
# What a reviewer may not decide: the platform assigns who decides (always the owner).
AUTHORITY_KEYS = ("requires", "level", "confirm")


@dataclass(frozen=True, slots=True)
class Known:
    """What this agent and day's pointers may resolve to (the service looks up only the ids the
    claims cite, scoped to the agent and the day)."""

    aggregates: Mapping[str, int]
    sessions: frozenset[str]
    versions: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class Dropped:
    reason: DropReason
    kind: str
    index: int  # the claim's position in the reviewer's output


@dataclass(slots=True)
class GateResult:
    kept: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    proposals: list[dict[str, Any]] = field(default_factory=list)  # ranked, at most `cap`
    held_back: int = 0  # beyond the daily cap
    # kind → how many proposals of it were held back because the owner keeps rejecting the kind
    held_by_preference: dict[str, int] = field(default_factory=dict)
    overrides: int = 0


def _resolves(pointer: object, known: Known) -> dict[str, Any] | None:
    """The pointer in its clean shape, or None when it names nothing of this agent and day."""
    if not isinstance(pointer, Mapping):
        return None
    kind = pointer.get("type")
    if kind == "aggregate":
        key = pointer.get("key")
        return {"type": "aggregate", "key": key} if isinstance(key, str) and key in known.aggregates else None
    if kind == "session":
        sid = str(pointer.get("id", "")).lower()
        return {"type": "session", "id": sid} if sid in known.sessions else None
    if kind == "knowledge_version":
        vid = pointer.get("id")
        return {"type": "knowledge_version", "id": vid} if isinstance(vid, int) and vid in known.versions else None
    return None


def affected_bound(pointers: list[dict[str, Any] | None], figure: object, known: Known) -> int:
    """The most sessions a claim's evidence can speak for: the largest aggregate it cites (as a
    pointer or as its figure), else the number of distinct conversations it points at."""
    keys = [p["key"] for p in pointers if p and p["type"] == "aggregate"]
    if isinstance(figure, Mapping) and figure.get("key") in known.aggregates:
        keys.append(figure["key"])
    values = [known.aggregates[k] for k in keys if k in known.aggregates]
    if values:
        return max(0, max(values))
    return len({p["id"] for p in pointers if p and p["type"] == "session"})


def gate(claims: list[object], known: Known, *, cap: int, min_sessions: Mapping[str, int] | None = None) -> GateResult:
    """Every claim passes here, whoever wrote it.  Fails closed: a claim is kept only when it is
    well formed, has evidence, every pointer resolves to this agent and day and its cited figure
    equals the stored aggregate.  A proposal's `requires`/`level`/`confirm` is removed and
    recorded as an override (the owner always decides).  A proposal of a kind the owner keeps
    rejecting (`min_sessions`: kind → the sessions it must affect, from
    governance_rules.preference_bars) that affects fewer is held back, counted per kind; the
    others are ranked by sessions affected and beyond `cap` held back (counted).  A held-back
    proposal's claim is kept: the report still says what was seen."""
    result = GateResult()
    candidates: list[dict[str, Any]] = []
    for index, raw in enumerate(claims):
        kind = raw.get("kind") if isinstance(raw, Mapping) else None
        label = kind if isinstance(kind, str) and kind in CLAIM_KINDS else "unknown"

        def drop(reason: DropReason, label: str = label, index: int = index) -> None:
            result.dropped.append(Dropped(reason, label, index))

        if not isinstance(raw, Mapping) or not isinstance(raw.get("text"), str) or not raw["text"].strip():
            drop(DropReason.MALFORMED)
            continue
        if kind not in CLAIM_KINDS:
            drop(DropReason.UNKNOWN_KIND)
            continue
        evidence = raw.get("evidence")
        if not isinstance(evidence, list) or not evidence:
            drop(DropReason.NO_EVIDENCE)
            continue
        pointers = [_resolves(p, known) for p in evidence]
        if any(p is None for p in pointers):
            drop(DropReason.UNRESOLVED_POINTER)
            continue
        figure = raw.get("figure")
        if figure is not None:
            if (
                not isinstance(figure, Mapping)
                or figure.get("key") not in known.aggregates
                or type(figure.get("value")) is not int
                or known.aggregates[figure["key"]] != figure["value"]
            ):
                drop(DropReason.FIGURE_MISMATCH)
                continue
        claim: dict[str, Any] = {"kind": kind, "text": raw["text"].strip()[:500], "evidence": pointers}
        if isinstance(raw.get("reviewer"), str):  # set by the service, not by the reviewer
            claim["reviewer"] = raw["reviewer"][:32]
        if figure is not None:
            claim["figure"] = {"key": figure["key"], "value": figure["value"]}
        proposal = raw.get("proposal")
        if proposal is not None:
            if not isinstance(proposal, Mapping) or proposal.get("kind") not in PROPOSAL_KINDS:
                drop(DropReason.UNKNOWN_PROPOSAL)
                continue
            claimed = {k: str(proposal[k]) for k in AUTHORITY_KEYS if k in proposal}
            affected = proposal.get("sessions_affected")
            affected = affected if type(affected) is int and affected >= 0 else 0
            # What ranks a proposal and clears the owner's preference bar is not the reviewer's to
            # say: at most the largest figure its claim cites, or its conversations when it cites
            # no figure.  A larger claim is cut down and recorded like an authority claim.
            bound = affected_bound(pointers, claim.get("figure"), known)
            if affected > bound:
                claimed["sessions_affected"] = str(affected)
                affected = bound
            clean = {
                "kind": proposal["kind"],
                "payload": proposal.get("payload"),
                "summary": str(proposal.get("summary", ""))[:300],
                "sessions_affected": affected,
                "topic": str(proposal.get("topic", "")),
                "claimed": claimed,
                "evidence": [p for p in pointers if p and p["type"] != "aggregate"],
            }
            result.overrides += 1 if claimed else 0
            claim["proposal"] = clean
            candidates.append(claim)
        result.kept.append(claim)
    bars = min_sessions or {}
    wanted = []
    for candidate in candidates:
        proposal = candidate["proposal"]
        if proposal["sessions_affected"] < bars.get(proposal["kind"], 0):
            result.held_by_preference[proposal["kind"]] = result.held_by_preference.get(proposal["kind"], 0) + 1
        else:
            wanted.append(candidate)
    ranked = sorted(wanted, key=lambda c: -c["proposal"]["sessions_affected"])
    result.proposals = [c["proposal"] for c in ranked[: max(0, cap)]]
    result.held_back = max(0, len(ranked) - max(0, cap))
    return result
