"""Governance by exception (issue 13): the pure decisions that keep the daily review from
flooding the owner's inbox.  Plain data in, plain data out — no ORM (tests/test_governance_rules.py
is the table).

- The escalation budget: a token bucket per agent.  Each proposal the agent's review sends to the
  owner's inbox takes one token; tokens come back at a steady rate up to the capacity.  A review
  that would send a proposal with no token left pauses the agent's proposing (the service keeps it
  paused until the owner has cleared the inbox).
- The owner's preferences: the recent decisions of the review's proposals, per kind.  A kind the
  owner rejected clearly more often than they approved it needs proportionally more sessions
  affected before it is proposed again; approvals bring it back."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

DAY_SECONDS = 86_400.0


class HoldReason(StrEnum):
    """Why a proposal that passed the gate did not reach the inbox."""

    DAILY_CAP = "daily_cap"  # beyond the day's number (ranked by sessions affected)
    OWNER_PREFERENCE = "owner_preference"  # a kind the owner keeps rejecting, too few sessions
    PAUSED = "paused"  # the agent's escalation budget ran out; proposing is paused


# --- the escalation budget ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bucket:
    tokens: float
    at: dt.datetime  # when `tokens` was last brought up to date


def bucket_refill(bucket: Bucket, *, now: dt.datetime, capacity: int, per_day: float) -> Bucket:
    """The bucket at `now`: `per_day` tokens a day since `bucket.at`, never above `capacity`.  A
    clock that went backwards adds nothing (and does not move `at` back)."""
    elapsed = max(0.0, (now - bucket.at).total_seconds())
    tokens = min(float(capacity), max(0.0, bucket.tokens) + elapsed / DAY_SECONDS * max(0.0, per_day))
    return Bucket(tokens=tokens, at=max(now, bucket.at))


def bucket_take(bucket: Bucket, *, now: dt.datetime, capacity: int, per_day: float) -> tuple[Bucket, bool]:
    """Take one token at `now` (after the refill): the new bucket and whether there was one."""
    refilled = bucket_refill(bucket, now=now, capacity=capacity, per_day=per_day)
    if refilled.tokens >= 1.0:
        return Bucket(tokens=refilled.tokens - 1.0, at=refilled.at), True
    return refilled, False


def bucket_full(*, now: dt.datetime, capacity: int) -> Bucket:
    """A new agent's bucket, and the one the owner's clearing of the inbox gives back."""
    return Bucket(tokens=float(max(0, capacity)), at=now)


# --- the owner's preferences -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KindPreference:
    kind: str
    approvals: int
    rejections: int
    min_sessions: int  # a proposal of this kind needs at least this many sessions affected; 0: no bar


def preference_bars(
    decisions: Iterable[tuple[str, str]], *, min_net: int, sessions_per_rejection: int
) -> dict[str, KindPreference]:
    """`decisions` are (kind, approve|reject|expire) of the recent signals.  A kind whose
    rejections exceed its approvals by `min_net` or more gets a bar of `sessions_per_rejection`
    sessions per net rejection; each approval lowers it again.  An expiry says nothing of what
    the owner wants (they did not look) and is not counted."""
    counts: dict[str, list[int]] = {}
    for kind, decision in decisions:
        pair = counts.setdefault(kind, [0, 0])
        if decision == "approve":
            pair[0] += 1
        elif decision == "reject":
            pair[1] += 1
    bars = {}
    for kind, (approved, rejected) in sorted(counts.items()):
        net = rejected - approved
        bar = sessions_per_rejection * net if min_net > 0 and net >= min_net else 0
        bars[kind] = KindPreference(kind=kind, approvals=approved, rejections=rejected, min_sessions=max(0, bar))
    return bars
