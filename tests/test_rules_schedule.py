"""When the review (03:30) and observe (05:00) are due in each tenant's own time zone (issue 13):
pure functions, table-tested, daylight-saving days included."""

from __future__ import annotations

import datetime as dt

import pytest

from rsi.schedule_rules import RunKind, day_bounds, due_days, latest_due_day

UTC = dt.UTC


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).astimezone(UTC)


LATEST = [
    # Asia/Shanghai is UTC+8: 03:30 local on 12-02 is 19:30 UTC on 12-01.
    ("review", "2026-12-01T19:29:00+00:00", "Asia/Shanghai", "2026-11-30"),
    ("review", "2026-12-01T19:30:00+00:00", "Asia/Shanghai", "2026-12-01"),
    # Europe/Berlin is UTC+1 in winter: 03:30 local on 12-02 is 02:30 UTC on 12-02.
    ("review", "2026-12-02T02:29:00+00:00", "Europe/Berlin", "2026-11-30"),
    ("review", "2026-12-02T02:30:00+00:00", "Europe/Berlin", "2026-12-01"),
    # The same instant, two tenants, two different days covered.
    ("review", "2026-12-01T20:00:00+00:00", "Asia/Shanghai", "2026-12-01"),
    ("review", "2026-12-01T20:00:00+00:00", "Europe/Berlin", "2026-11-30"),
    # Observe at 05:00 is that local day's digest.
    ("observe", "2026-12-01T20:59:00+00:00", "Asia/Shanghai", "2026-12-01"),
    ("observe", "2026-12-01T21:00:00+00:00", "Asia/Shanghai", "2026-12-02"),
    ("observe", "2026-12-02T04:00:00+00:00", "Europe/Berlin", "2026-12-02"),
    # Spring forward in Berlin (2026-03-29: 02:00 → 03:00): 03:30 exists, 01:30 UTC.
    ("review", "2026-03-29T01:29:00+00:00", "Europe/Berlin", "2026-03-27"),
    ("review", "2026-03-29T01:30:00+00:00", "Europe/Berlin", "2026-03-28"),
    # Fall back in Berlin (2026-10-25: 03:00 → 02:00): 03:30 local is 02:30 UTC, once.
    ("review", "2026-10-25T02:29:00+00:00", "Europe/Berlin", "2026-10-23"),
    ("review", "2026-10-25T02:30:00+00:00", "Europe/Berlin", "2026-10-24"),
    # New York (UTC-5 in winter): 03:30 local on 12-02 is 08:30 UTC.
    ("review", "2026-12-02T08:30:00+00:00", "America/New_York", "2026-12-01"),
]


@pytest.mark.parametrize(("kind", "now", "zone", "day"), LATEST)
def test_the_latest_due_day_follows_the_tenants_clock(kind: str, now: str, zone: str, day: str) -> None:
    assert latest_due_day(RunKind(kind), at(now), zone) == dt.date.fromisoformat(day)


def test_a_missed_day_is_caught_up_and_a_done_day_never_again() -> None:
    now = at("2026-12-05T03:00:00+00:00")  # Berlin 04:00 on 12-05: reviews up to 12-04 due
    created = dt.date(2026, 11, 1)
    assert due_days(RunKind.REVIEW, now, "Europe/Berlin", last_done=dt.date(2026, 12, 4), first_possible=created) == []
    # Workers were down for two nights: both days are caught up, oldest first.
    caught = due_days(RunKind.REVIEW, now, "Europe/Berlin", last_done=dt.date(2026, 12, 2), first_possible=created)
    assert caught == [dt.date(2026, 12, 3), dt.date(2026, 12, 4)]
    # Never before the agent existed, and at most a week back.
    fresh = due_days(RunKind.REVIEW, now, "Europe/Berlin", last_done=None, first_possible=dt.date(2026, 12, 4))
    assert fresh == [dt.date(2026, 12, 4)]
    old = due_days(RunKind.REVIEW, now, "Europe/Berlin", last_done=None, first_possible=dt.date(2020, 1, 1))
    assert old[0] == dt.date(2026, 11, 28) and old[-1] == dt.date(2026, 12, 4) and len(old) == 7


def test_a_dst_day_is_23_or_25_hours_long() -> None:
    spring = day_bounds(dt.date(2026, 3, 29), "Europe/Berlin")
    autumn = day_bounds(dt.date(2026, 10, 25), "Europe/Berlin")
    assert spring[1] - spring[0] == dt.timedelta(hours=23)
    assert autumn[1] - autumn[0] == dt.timedelta(hours=25)
    start, end = day_bounds(dt.date(2026, 12, 1), "Asia/Shanghai")
    assert start.astimezone(UTC) == at("2026-11-30T16:00:00+00:00") and end - start == dt.timedelta(hours=24)


def test_a_naive_now_is_refused() -> None:
    with pytest.raises(ValueError):
        latest_due_day(RunKind.REVIEW, dt.datetime(2026, 12, 1, 3, 30), "Europe/Berlin")
