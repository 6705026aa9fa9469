"""Pure rules of the proposals: the level of a change and who decides it.  No I/O here: the
level depends only on what the payload touches, never on what a model claims."""

from __future__ import annotations

import re
from enum import IntEnum, StrEnum

from .schemas import Kind


class Level(IntEnum):
    L1 = 1  # knowledge and lessons
    L2 = 2  # how the agent words things, the order of its questions and how its replies are composed
    L3 = 3  # the contract: skills, delivery, pricing, the request state machine


class Origin(StrEnum):
    REVIEW_REPORT = "review_report"
    OWNER_DIALOGUE = "owner_dialogue"
    OBSERVE_DIGEST = "observe_digest"
    CUSTOMER_CANDIDATE = "customer_candidate"
    OWNER_DIRECT = "owner_direct"


class Requires(StrEnum):
    OWNER_APPROVAL = "owner_approval"  # waits for the owner's decision through the token flow
    OWNER_DIRECT = "owner_direct"  # the owner's own change: applies on the next turn, with rollback


LEVELS: dict[Kind, Level] = {
    Kind.KNOWLEDGE_DRAFT: Level.L1,
    Kind.LESSON: Level.L1,
    Kind.WORDING: Level.L2,
    Kind.CLARIFICATION_ORDER: Level.L2,
    Kind.BOUNDARY_WORDING: Level.L2,
    Kind.COMPOSITION_MODE: Level.L2,
    Kind.SKILL_IDS: Level.L3,
    Kind.DELIVERY: Level.L3,
    Kind.PRICING: Level.L3,
    Kind.STATE_CONTRACT: Level.L3,
}

MODEL_ORIGINS = frozenset(
    {Origin.REVIEW_REPORT, Origin.OWNER_DIALOGUE, Origin.OBSERVE_DIGEST, Origin.CUSTOMER_CANDIDATE}
)


def level_for(kind: str, payload: object = None, undoes: str | None = None) -> Level:
    """The level of a change: what its payload touches.  A rollback (`kind` "rollback") has the
    level of the kind of change it undoes (`undoes`).  `payload` is taken so that a kind whose
    level depends on its content can say so; none does today."""
    if Kind(kind) == Kind.ROLLBACK:
        if undoes is None or Kind(undoes) == Kind.ROLLBACK:
            raise ValueError("a rollback's level is the level of the kind of change it undoes")
        return LEVELS[Kind(undoes)]
    return LEVELS[Kind(kind)]


def who_decides(origin: str, kind: str, level: int, touches_commitments: bool) -> Requires:
    """Who decides (DESIGN.md red line 4, issue 12): a proposal the model made always waits for
    the owner; the owner's own L2 change applies directly, except one that touches external
    commitments (boundary wording always, wording the commitment guard flags); L3 always waits
    for the token flow.  The owner's own L1 change follows the knowledge step's rule, which the
    knowledge services apply when it is decided: here it waits like any other."""
    if Origin(origin) in MODEL_ORIGINS:
        return Requires.OWNER_APPROVAL
    if level == Level.L2 and Kind(kind) != Kind.BOUNDARY_WORDING and not touches_commitments:
        return Requires.OWNER_DIRECT
    return Requires.OWNER_APPROVAL


# The owner's own words for a decision in the owner chat: "approve chg_…" / "reject chg_…" (also
# 批准 / 同意 / 拒绝 / 驳回).  They only bring up the proposal's card with its buttons; the
# decision itself is the card's (a token, or the e-mailed code for L3), never the model's.
_DECISION_WORDS = re.compile(
    r"^\s*(?P<word>approve|reject|批准|同意|拒绝|驳回)\s*[:：]?\s*(?P<id>chg_[A-Za-z0-9_-]{4,40})\s*[.!。！]?\s*$",
    re.IGNORECASE,
)
_APPROVING = frozenset({"approve", "批准", "同意"})


def decision_words(text: str) -> tuple[str, str] | None:
    """`("approve"|"reject", "chg_…")` when the message is exactly such a decision, else None."""
    match = _DECISION_WORDS.match(text or "")
    if match is None:
        return None
    return ("approve" if match.group("word").lower() in _APPROVING else "reject"), match.group("id")
