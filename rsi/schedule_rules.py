"""When the nightly re-check, the nightly review and the morning observe are due: pure functions,
no I/O.

Each tenant's days are counted in its own IANA time zone.  The re-check of delivered replies
(guard/recheck.py) runs at 03:00 local time and the review at 03:30, both covering the previous
local day; observe runs at 05:00 local time and is that day's digest.  A
run is due once the local wall clock has reached its time — so a day whose 03:30 does not exist
(a spring-forward gap) runs at the first instant after it, and a day whose 03:30 happens twice (a
fall-back) still yields one run, because runs are claimed once per (agent, kind, day).  Days
missed while no worker ran are caught up at the next tick, at most `CATCH_UP_DAYS` back and never
before the agent existed."""

from __future__ import annotations

import datetime as dt
from enum import StrEnum
from zoneinfo import ZoneInfo

CATCH_UP_DAYS = 7


class RunKind(StrEnum):
    RECHECK = "recheck"  # the nightly re-check of delivered replies (issue 15 §6)
    REVIEW = "review"
    OBSERVE = "observe"


AT: dict[RunKind, dt.time] = {
    RunKind.RECHECK: dt.time(3, 0),  # before the review, which reads what it found
    RunKind.REVIEW: dt.time(3, 30),
    RunKind.OBSERVE: dt.time(5, 0),
}
# The kinds whose run covers the previous local day (observe covers its own day).
OF_PREVIOUS_DAY = (RunKind.RECHECK, RunKind.REVIEW)


def local_now(now: dt.datetime, time_zone: str) -> dt.datetime:
    """`now` (aware) as the wall clock of `time_zone`."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    return now.astimezone(ZoneInfo(time_zone))


def latest_due_day(kind: RunKind, now: dt.datetime, time_zone: str) -> dt.date:
    """The latest day whose run of `kind` is due at `now`: the re-check (03:00) and the review
    (03:30) cover the day before the local date once their time has passed (else the day before
    that); observe is the local date once 05:00 has passed (else the day before)."""
    local = local_now(now, time_zone)
    reached = local.time().replace(tzinfo=None) >= AT[kind]
    today = local.date() if reached else local.date() - dt.timedelta(days=1)
    return today - dt.timedelta(days=1) if kind in OF_PREVIOUS_DAY else today


def due_days(
    kind: RunKind,
    now: dt.datetime,
    time_zone: str,
    *,
    last_done: dt.date | None,
    first_possible: dt.date,
) -> list[dt.date]:
    """The days whose run of `kind` is due and not yet claimed, oldest first: after `last_done`
    (the latest day already claimed), not before `first_possible` (the agent's first local day),
    at most CATCH_UP_DAYS of them (the most recent ones)."""
    latest = latest_due_day(kind, now, time_zone)
    start = max(first_possible, last_done + dt.timedelta(days=1) if last_done else first_possible)
    start = max(start, latest - dt.timedelta(days=CATCH_UP_DAYS - 1))
    days = []
    day = start
    while day <= latest:
        days.append(day)
        day += dt.timedelta(days=1)
    return days


def day_bounds(day: dt.date, time_zone: str) -> tuple[dt.datetime, dt.datetime]:
    """[start, end) of a local day, in UTC (23 or 25 hours apart on a DST day: aware datetimes of
    one zone subtract as wall clocks, so the bounds are given in UTC)."""
    zone = ZoneInfo(time_zone)
    start = dt.datetime.combine(day, dt.time(0, 0), tzinfo=zone)
    end = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(0, 0), tzinfo=zone)
    return start.astimezone(dt.UTC), end.astimezone(dt.UTC)
