"""Monday's report (issue 13): the review of a complete Sunday in the tenant's time zone compares
each metric of the seven days ending that Sunday with the seven before — values, change,
direction and the counts behind them — stored on the report, answered by the API and shown in the
inbox in English and Chinese.  The comparison is pure and table-tested; the service is tested on
two weeks of seeded data in Asia/Shanghai."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.test import Client
from test_metrics import SHANGHAI, opened, rated, turn

from conftest import TenantWorld
from rsi.metrics import DayRow
from rsi.review import review_run
from rsi.review_models import ReviewReport
from rsi.weekly import Direction, direction_of, is_weekly_day, weekly_comparison

SUNDAY = dt.date(2026, 11, 29)
MONDAY_MORNING = dt.datetime(2026, 11, 30, 3, 45, tzinfo=ZoneInfo(SHANGHAI))


# --- the pure comparison --------------------------------------------------------------------


def back(n: int, **counts: int) -> DayRow:
    return DayRow(day=SUNDAY - dt.timedelta(days=n), **counts)


@pytest.mark.parametrize(
    ("day", "partial", "weekly"),
    [
        (SUNDAY, False, True),
        (SUNDAY, True, False),  # the Sunday is still under way: its week is not complete
        (SUNDAY - dt.timedelta(days=1), False, False),  # Saturday
        (SUNDAY + dt.timedelta(days=1), False, False),  # Monday
        (SUNDAY + dt.timedelta(days=7), False, True),
    ],
)
def test_only_a_complete_sundays_report_carries_the_weeks(day: dt.date, partial: bool, weekly: bool) -> None:
    assert is_weekly_day(day, partial=partial) is weekly


@pytest.mark.parametrize(
    ("change", "direction"),
    [(0.25, Direction.UP), (-0.01, Direction.DOWN), (0.0, Direction.SAME), (None, Direction.UNKNOWN)],
)
def test_direction_of_a_change(change: float | None, direction: Direction) -> None:
    assert direction_of(change) == direction


ROWS = [
    back(0, replies=10, blocked_replies=1, ratings=2, rating_stars=9, sessions=5, requests=1),
    back(6, replies=10, blocked_replies=1, knowledge_answered=3, knowledge_missed=1),  # still this week
    back(7, replies=20, blocked_replies=6, ratings=1, rating_stars=3, sessions=5, requests=1),  # the week before
    back(13, knowledge_answered=1, knowledge_missed=1, review_claims=4, review_dropped=1),
    back(14, replies=100, blocked_replies=100, review_claims=9, review_dropped=9),  # neither week
    back(-1, replies=100, blocked_replies=100),  # after the Sunday: neither
]


@pytest.mark.parametrize(
    ("metric", "this_week", "last_week", "change", "direction", "better", "this_counts", "last_counts"),
    [
        # a rise of over-commitment is for the worse; here it fell from 6/20 to 2/20
        ("over_commitment", 0.1, 0.3, -0.2, Direction.DOWN, True, (2, 20), (6, 20)),
        ("knowledge_hit", 0.75, 0.5, 0.25, Direction.UP, True, (3, 4), (1, 2)),
        ("satisfaction", 4.5, 3.0, 1.5, Direction.UP, True, (9, 2), (3, 1)),
        ("request_conversion", 0.2, 0.2, 0.0, Direction.SAME, None, (1, 5), (1, 5)),
        # no claim this week: nothing to compare (not "0%")
        ("hallucinated_claims", None, 0.25, None, Direction.UNKNOWN, None, (0, 0), (1, 4)),
        ("review_adoption", None, None, None, Direction.UNKNOWN, None, (0, 0), (0, 0)),
        ("clarification_completion", None, None, None, Direction.UNKNOWN, None, (0, 0), (0, 0)),
    ],
)
def test_each_metric_this_week_against_the_week_before(
    metric: str,
    this_week: float | None,
    last_week: float | None,
    change: float | None,
    direction: Direction,
    better: bool | None,
    this_counts: tuple[int, int],
    last_counts: tuple[int, int],
) -> None:
    weeks = weekly_comparison(ROWS, SUNDAY)
    assert weeks.this_week == (SUNDAY - dt.timedelta(days=6), SUNDAY)
    assert weeks.last_week == (SUNDAY - dt.timedelta(days=13), SUNDAY - dt.timedelta(days=7))
    row = {m.metric: m for m in weeks.metrics}[metric]
    assert (row.this_week, row.last_week) == (this_week, last_week)
    assert row.change == (pytest.approx(change) if change is not None else None)
    assert (row.direction, row.better) == (direction, better)
    assert (row.this_counts, row.last_counts) == (this_counts, last_counts)


def test_every_metric_of_the_overview_is_compared_and_a_worse_rise_is_worse() -> None:
    from rsi.metrics import METRICS

    weeks = weekly_comparison([back(0, replies=4, blocked_replies=1), back(7, replies=4)], SUNDAY)
    assert [m.metric for m in weeks.metrics] == [name for name, _ in METRICS]
    over = next(m for m in weeks.metrics if m.metric == "over_commitment")
    assert (over.direction, over.better) == (Direction.UP, False)


# --- the service: two weeks of data -----------------------------------------------------------


def at(day: dt.date, hour: int = 10) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(hour), tzinfo=ZoneInfo(SHANGHAI))


def two_weeks(world: TenantWorld) -> None:
    world.tenant.time_zone = SHANGHAI
    world.tenant.save(update_fields=["time_zone"])
    # This week (23–29 November): three conversations, every reply citing knowledge, none blocked;
    # ratings 5 and 4.  Sunday evening 23:30 local still counts for Sunday.
    for day, stars in ((SUNDAY - dt.timedelta(days=6), 5), (SUNDAY - dt.timedelta(days=2), 4), (SUNDAY, None)):
        when = at(day, 23) + dt.timedelta(minutes=30) if day == SUNDAY else at(day)
        session = opened(world, when)
        turn(session, when, cited=True)
        if stars:
            rated(session, stars, when + dt.timedelta(minutes=2))
    # The week before (16–22 November): two conversations, one reply blocked, one rating of 2.
    for day in (SUNDAY - dt.timedelta(days=7), SUNDAY - dt.timedelta(days=13)):
        session = opened(world, at(day))
        turn(session, at(day), guard="price" if day == SUNDAY - dt.timedelta(days=7) else "")
    rated(session, 2, at(SUNDAY - dt.timedelta(days=13)) + dt.timedelta(minutes=2))
    # Neither week: 15 November and Monday the 30th (00:30 local).
    for when in (at(SUNDAY - dt.timedelta(days=14)), at(SUNDAY + dt.timedelta(days=1), 0)):
        session = opened(world, when)
        turn(session, when, guard="price")
    # A report of the week before whose gate dropped one of its four claims.
    ReviewReport.objects.create(
        tenant=world.tenant,
        agent=world.agent,
        day=SUNDAY - dt.timedelta(days=10),
        time_zone=SHANGHAI,
        status="finished",
        partial=False,
        wins=[{"kind": "win"}] * 3,
        dropped_claims=[{"reason": "no_evidence", "kind": "win", "reviewer": "llm"}],
    )


@pytest.mark.django_db
def test_mondays_report_compares_the_two_weeks(world_a: TenantWorld) -> None:
    two_weeks(world_a)
    report = review_run(agent_id=world_a.agent.pk, day=SUNDAY, now=MONDAY_MORNING)
    assert not report.partial and report.week_over_week is not None
    weeks = report.week_over_week
    assert weeks["this_week"] == ["2026-11-23", "2026-11-29"]
    assert weeks["last_week"] == ["2026-11-16", "2026-11-22"]
    by = {m["metric"]: m for m in weeks["metrics"]}
    assert by["over_commitment"] | {"metric": "x"} == {
        "metric": "x",
        "kind": "rate",
        "this_week": 0.0,
        "last_week": 0.5,
        "change": -0.5,
        "direction": "down",
        "better": True,
        "this_counts": [0, 3],
        "last_counts": [1, 2],
    }
    assert (by["knowledge_hit"]["this_counts"], by["knowledge_hit"]["direction"]) == ([3, 3], "unknown")
    assert by["satisfaction"]["this_week"] == 4.5 and by["satisfaction"]["last_week"] == 2.0
    assert (by["satisfaction"]["direction"], by["satisfaction"]["better"]) == ("up", True)
    assert by["request_conversion"]["this_counts"] == [0, 3] and by["request_conversion"]["direction"] == "same"
    # The Sunday's own report counts among this week's claims: it made none, so no rate this week.
    assert by["hallucinated_claims"]["last_counts"] == [1, 4]
    assert by["hallucinated_claims"]["this_counts"] == [len(report.dropped_claims), len(report.dropped_claims)]


@pytest.mark.django_db
def test_other_days_and_a_sunday_under_way_carry_no_weeks(world_a: TenantWorld) -> None:
    two_weeks(world_a)
    saturday = review_run(agent_id=world_a.agent.pk, day=SUNDAY - dt.timedelta(days=1), now=MONDAY_MORNING)
    assert saturday.week_over_week is None
    sunday_evening = dt.datetime(2026, 11, 29, 22, 0, tzinfo=ZoneInfo(SHANGHAI))
    partial = review_run(agent_id=world_a.agent.pk, day=SUNDAY, now=sunday_evening)
    assert partial.partial and partial.week_over_week is None
    # The same report, once Monday's run completes it, carries the weeks.
    complete = review_run(agent_id=world_a.agent.pk, day=SUNDAY, now=MONDAY_MORNING)
    assert complete.pk == partial.pk and not complete.partial and complete.week_over_week is not None


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_the_api_and_the_inbox_show_mondays_comparison_in_english_and_chinese(world_a: TenantWorld) -> None:
    two_weeks(world_a)
    review_run(agent_id=world_a.agent.pk, day=SUNDAY, now=MONDAY_MORNING)
    owner = signed_in(world_a.owner)
    body = owner.get(f"/api/agents/{world_a.agent.slug}/reviews/{SUNDAY.isoformat()}").json()
    assert body["weekOverWeek"]["this_week"] == ["2026-11-23", "2026-11-29"]
    assert {m["metric"] for m in body["weekOverWeek"]["metrics"]} >= {"over_commitment", "satisfaction"}
    saturday = review_run(agent_id=world_a.agent.pk, day=SUNDAY - dt.timedelta(days=1), now=MONDAY_MORNING)
    body = owner.get(f"/api/agents/{world_a.agent.slug}/reviews/{saturday.day.isoformat()}").json()
    assert body["weekOverWeek"] is None

    inbox = owner.get(f"/owner/{world_a.agent.slug}/inbox?review={SUNDAY.isoformat()}").content.decode()
    assert "Daily review of 2026-11-29" in inbox and "Week over week" in inbox
    assert "2026-11-23 to 2026-11-29" in inbox
    assert "down · better" in inbox and "(0 / 3)" in inbox and "(1 / 2)" in inbox
    # Without ?review= the inbox shows the latest report (Sunday's, the latest day): the same table.
    assert "Week over week" in owner.get(f"/owner/{world_a.agent.slug}/inbox").content.decode()
    owner.cookies["django_language"] = "zh-hans"
    chinese = owner.get(f"/owner/{world_a.agent.slug}/inbox?review={SUNDAY.isoformat()}").content.decode()
    assert "周环比" in chinese and "下降 · 变好" in chinese and "上升 · 变好" in chinese
    # Saturday's report has no such table.
    owner.cookies["django_language"] = "en"
    page = owner.get(f"/owner/{world_a.agent.slug}/inbox?review={saturday.day.isoformat()}").content.decode()
    assert "Daily review of 2026-11-28" in page and "review-wow" not in page
