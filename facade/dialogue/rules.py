"""Pure decisions of the dialogue app: request transitions, trust, rate windows, idle sessions."""

from __future__ import annotations

import datetime as dt
from typing import Any

TRUST_MIN, TRUST_MAX = 0, 100
TRUST_DELTA = {"request_completed": +5, "guard_blocked": -5, "rate_limited": -2}


def request_can_move(flow: dict[str, Any], state: str, to: str) -> bool:
    """Whether the request flow allows `state` → `to`; an unknown state allows nothing."""
    states = flow.get("states") or {}
    return to in states and to in (states.get(state) or {}).get("to", [])


def trust_after(score: int, reason: str) -> int:
    return max(TRUST_MIN, min(TRUST_MAX, score + TRUST_DELTA[reason]))


def parse_rate(spec: str) -> tuple[int, int]:
    """ "20/60" → (20 messages, per 60 seconds)."""
    count, _, seconds = spec.partition("/")
    limit, window = int(count), int(seconds or 60)
    if limit < 1 or window < 1:
        raise ValueError(f"rate {spec!r} must be COUNT/SECONDS with both at least 1")
    return limit, window


def is_idle(last_activity: dt.datetime, now: dt.datetime, idle_minutes: int) -> bool:
    return now - last_activity >= dt.timedelta(minutes=idle_minutes)
