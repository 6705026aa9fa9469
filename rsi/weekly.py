"""Monday's report (issue 13): the review whose covered day is a Sunday in the tenant's time zone —
run on Monday morning by the schedule — also compares the seven local days ending that Sunday with
the seven before, for every metric of rsi/metrics.py: each week's value, the change, its direction
and the counts it was computed from.  Figures only, never a customer's words.

`weekly_comparison` is pure (rows of counts in, the comparison out); `weekly_report` reads the
fourteen days' counts with the metrics' own queries and is called by `review_run` inside its
transaction."""

from __future__ import annotations

import datetime as dt
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from facade.tenancy.models import AgentProfile

from .metrics import METRICS, PARTS, Counts, DayRow, day_counts, total, week_over_week

SUNDAY = 6  # date.weekday()
# A rise of these is for the worse; of every other metric, for the better.
LOWER_IS_BETTER = frozenset({"hallucinated_claims", "over_commitment"})


class Direction(StrEnum):
    UP = "up"
    DOWN = "down"
    SAME = "same"
    UNKNOWN = "unknown"  # one of the weeks counted nothing: there is no rate to compare


class MetricWeeks(BaseModel):
    """One metric, this week against the week before (a rate's change in rate units: 0.05 is five
    percentage points; satisfaction's in stars)."""

    metric: str
    kind: str  # rate | stars
    this_week: float | None
    last_week: float | None
    change: float | None
    direction: Direction
    better: bool | None  # the change is for the better (None: the same, or unknown)
    # (numerator, denominator) of each week, e.g. (blocked replies, replies); for satisfaction
    # (stars summed, ratings)
    this_counts: tuple[int, int]
    last_counts: tuple[int, int]


class WeeklyComparison(BaseModel):
    this_week: tuple[dt.date, dt.date]
    last_week: tuple[dt.date, dt.date]
    metrics: list[MetricWeeks]


def is_weekly_day(day: dt.date, *, partial: bool) -> bool:
    """Whether the report of `day` carries the week over week: a Sunday, complete."""
    return day.weekday() == SUNDAY and not partial


def direction_of(change: float | None) -> Direction:
    if change is None:
        return Direction.UNKNOWN
    if change > 0:
        return Direction.UP
    return Direction.DOWN if change < 0 else Direction.SAME


def _better(metric: str, direction: Direction) -> bool | None:
    if direction in (Direction.SAME, Direction.UNKNOWN):
        return None
    return (direction == Direction.DOWN) == (metric in LOWER_IS_BETTER)


def _counts(row: Counts, metric: str) -> tuple[int, int]:
    top, bottom = PARTS[metric]
    return int(getattr(row, top)), int(getattr(row, bottom))


def weekly_comparison(rows: list[DayRow], last_day: dt.date) -> WeeklyComparison:
    """The seven days ending `last_day` against the seven before them; days missing from `rows`
    count as empty, days outside the fourteen are ignored."""
    weeks = week_over_week(rows, last_day)
    this = total(r for r in rows if weeks.this_week[0] <= r.day <= weeks.this_week[1])
    last = total(r for r in rows if weeks.last_week[0] <= r.day <= weeks.last_week[1])
    kinds = dict(METRICS)
    metrics = []
    for change in weeks.metrics:
        direction = direction_of(change.change)
        metrics.append(
            MetricWeeks(
                metric=change.metric,
                kind=kinds[change.metric],
                this_week=change.this_week,
                last_week=change.last_week,
                change=change.change,
                direction=direction,
                better=_better(change.metric, direction),
                this_counts=_counts(this, change.metric),
                last_counts=_counts(last, change.metric),
            )
        )
    return WeeklyComparison(this_week=weeks.this_week, last_week=weeks.last_week, metrics=metrics)


def weekly_report(agent: AgentProfile, day: dt.date, *, own_claims: int, own_dropped: int) -> dict[str, Any]:
    """The comparison for the report of `day` (a Sunday), as stored on the report.  The report
    being written is not saved yet, so its own claims are passed in rather than read."""
    first = day - dt.timedelta(days=13)
    counted = day_counts(agent, first, day)
    counted.setdefault(day, {}).update(review_claims=own_claims, review_dropped=own_dropped)
    days = (first + dt.timedelta(days=i) for i in range(14))
    rows = [DayRow.model_validate({"day": d, **counted.get(d, {})}) for d in days]
    return weekly_comparison(rows, day).model_dump(mode="json")
