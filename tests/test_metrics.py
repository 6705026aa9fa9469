"""The owner's metrics (rsi/metrics.py): each definition on one seeded local day of a tenant in
Asia/Shanghai — a few conversations, a blocked reply, a hit and a miss, request flows, ratings,
decided review proposals — with a preview, the owner's own chat and another tenant's data that
must not count, and rows just inside and outside the local day's bounds.  Then the week over
week arithmetic, the API's validation and owner-only access, and the overview page."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from approvals.models import ChangeProposal
from conftest import TenantWorld
from facade.dialogue.models import CustomerRequest, DialogueSession, Message, Rating, Run, Span
from facade.dialogue.services import request_submit, session_open
from facade.tenancy.rules import Audience
from facade.tenancy.services import customer_create
from knowledge.models import KnowledgeMiss
from rsi.metrics import Counts, DayRow, agent_metrics, total, week_over_week

SHANGHAI = "Asia/Shanghai"
DAY = dt.date(2026, 6, 10)
# Noon of 12 June in Shanghai: DAY is two days back, a complete day.
NOW = dt.datetime(2026, 6, 12, 12, 0, tzinfo=ZoneInfo(SHANGHAI))
DETAILS = {"need": "a birthday cake", "when": "next Friday", "contact": "ana@example.com"}
CITED = [{"entry_id": 1, "version": 1, "title": "Opening hours"}]


def local(day: dt.date, hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(hour, minute), tzinfo=ZoneInfo(SHANGHAI)).astimezone(dt.UTC)


def opened(world: TenantWorld, at: dt.datetime, **kwargs: Any) -> DialogueSession:
    if kwargs.get("audience") == Audience.OWNER or kwargs.get("preview"):
        session = session_open(agent=world.agent, user=world.owner, **{"audience": Audience.CUSTOMER, **kwargs})
    else:
        session = session_open(
            agent=world.agent, audience=Audience.CUSTOMER, customer=customer_create(tenant=world.tenant)
        )
    DialogueSession.objects.filter(pk=session.pk).update(created_at=at)
    return session


def turn(session: DialogueSession, at: dt.datetime, *, cited: bool = False, guard: str = "", tool: str = "") -> Run:
    """A principal message, its run and the agent's reply; `tool` is the outcome of a
    submit_request call in the run."""
    asked = Message.objects.create(session=session, role="principal", text="a question")
    run = Run.objects.create(tenant_id=session.tenant_id, session=session, message=asked, guard_category=guard)
    reply = Message.objects.create(
        session=session, role="agent", text="an answer", reply_to=asked, citations=CITED if cited else []
    )
    Message.objects.filter(pk__in=[asked.pk, reply.pk]).update(created_at=at)
    Run.objects.filter(pk=run.pk).update(started_at=at)
    if tool:
        Span.objects.create(
            tenant_id=session.tenant_id,
            run=run,
            kind="tool",
            name="submit_request",
            outcome=tool,
            started_at=at,
            duration_ms=1,
        )
    return run


def missed(world: TenantWorld, session: DialogueSession, at: dt.datetime) -> None:
    miss = KnowledgeMiss.objects.create(agent=world.agent, session_id=session.pk, topic_key="parking")
    KnowledgeMiss.objects.filter(pk=miss.pk).update(created_at=at)


def requested(session: DialogueSession, at: dt.datetime) -> None:
    request = request_submit(session=session, summary="a cake", details=DETAILS)
    CustomerRequest.objects.filter(pk=request.pk).update(created_at=at)


def rated(session: DialogueSession, stars: int, at: dt.datetime) -> None:
    rating = Rating.objects.create(session=session, tenant_id=session.tenant_id, stars=stars)
    Rating.objects.filter(pk=rating.pk).update(created_at=at)


def proposal(world: TenantWorld, status: str, decided: dt.datetime | None, origin: str = "review_report") -> None:
    ChangeProposal.objects.create(
        tenant=world.tenant,
        agent=world.agent,
        kind="knowledge_draft",
        level=2,
        payload={},
        summary="a draft",
        origin=origin,
        requires="owner_approval",
        status=status,
        base="x",
        decided_at=decided,
        expires_at=timezone.now() + dt.timedelta(days=7),
    )


def seed_day(world: TenantWorld) -> None:
    """DAY in Shanghai: two conversations (one opened at 00:30 local, still the previous day in
    UTC), five replies (one blocked, one citing, three in request flows), one miss, one request,
    two ratings, three decided review proposals (two yeses)."""
    first = opened(world, local(DAY, 9))
    early = opened(world, local(DAY, 0, 30))
    turn(first, local(DAY, 9, 1), cited=True)
    turn(first, local(DAY, 9, 2), guard="price")
    turn(first, local(DAY, 9, 3), tool="needs_confirmation")
    turn(first, local(DAY, 9, 4), tool="ok")
    requested(first, local(DAY, 9, 4))
    turn(early, local(DAY, 0, 31), tool="failed")
    missed(world, early, local(DAY, 0, 31))
    rated(first, 4, local(DAY, 9, 5))
    rated(early, 2, local(DAY, 23, 59))
    proposal(world, "approved", local(DAY, 8))
    proposal(world, "applied", local(DAY, 8))
    proposal(world, "rejected", local(DAY, 8))
    proposal(world, "expired", None)
    proposal(world, "pending", None)
    proposal(world, "approved", local(DAY, 8), origin="owner_direct")  # not a review's


def seed_noise(world: TenantWorld) -> None:
    """What must not count on DAY: a preview, the owner's own chat, and rows just past midnight."""
    preview = opened(world, local(DAY, 10), preview=True)
    turn(preview, local(DAY, 10), cited=True)
    turn(preview, local(DAY, 10, 1), guard="price", tool="ok")
    missed(world, preview, local(DAY, 10))
    requested(preview, local(DAY, 10, 2))
    rated(preview, 5, local(DAY, 10, 3))
    own = opened(world, local(DAY, 11), audience=Audience.OWNER)
    turn(own, local(DAY, 11), cited=True, guard="price")
    late = opened(world, local(DAY + dt.timedelta(days=1), 0, 10))  # 16:10 UTC on DAY
    turn(late, local(DAY + dt.timedelta(days=1), 0, 10), guard="price")
    rated(late, 1, local(DAY + dt.timedelta(days=1), 0, 10))


def row_of(world: TenantWorld, day: dt.date = DAY) -> DayRow:
    rows = {row.day: row for row in agent_metrics(world.agent, days=7, now=NOW).rows}
    return rows[day]


@pytest.fixture
def shanghai(world_a: TenantWorld) -> TenantWorld:
    world_a.tenant.time_zone = SHANGHAI
    world_a.tenant.save(update_fields=["time_zone"])
    world_a.agent.refresh_from_db()
    return world_a


def test_each_metric_on_a_seeded_day(shanghai: TenantWorld, world_b: TenantWorld) -> None:
    seed_day(shanghai)
    seed_noise(shanghai)
    seed_day(world_b)  # another tenant, same day, same shapes
    row = row_of(shanghai)
    assert row.sessions == 2
    assert (row.replies, row.blocked_replies, row.over_commitment) == (5, 1, 0.2)
    assert row.delivered_violations == 0
    assert (row.knowledge_answered, row.knowledge_questions, row.knowledge_hit) == (1, 2, 0.5)
    assert (row.flows_confirmed, row.flows_started, row.clarification_completion) == (1, 2, 0.5)
    assert (row.requests, row.request_conversion) == (1, 0.5)
    assert (row.ratings, row.satisfaction) == (2, 3.0)
    assert (row.review_adopted, row.review_decided, row.review_adoption) == (2, 3, 0.6667)
    assert row.partial is False


def test_local_day_bounds_not_utc(shanghai: TenantWorld) -> None:
    seed_day(shanghai)
    seed_noise(shanghai)
    after = row_of(shanghai, DAY + dt.timedelta(days=1))
    before = row_of(shanghai, DAY - dt.timedelta(days=1))
    # The 00:10 conversation of the next local day is 16:10 UTC on DAY: counted the next day.
    assert (after.sessions, after.replies, after.blocked_replies, after.ratings) == (1, 1, 1, 1)
    # The 00:30 conversation of DAY is 16:30 UTC the day before: not counted on the day before.
    assert before.sessions == 0 and before.replies == 0


def test_an_empty_day_has_no_rates(shanghai: TenantWorld) -> None:
    row = row_of(shanghai)
    assert row.sessions == 0
    assert [row.review_adoption, row.over_commitment, row.knowledge_hit, row.satisfaction] == [None] * 4
    assert row.delivered_violations == 0


def test_the_period_and_today(shanghai: TenantWorld) -> None:
    seed_day(shanghai)
    data = agent_metrics(shanghai.agent, days=3, now=NOW)
    assert [r.day for r in data.rows] == [DAY, DAY + dt.timedelta(days=1), DAY + dt.timedelta(days=2)]
    assert [r.partial for r in data.rows] == [False, False, True]
    assert data.totals.sessions == 2 and data.totals.knowledge_hit == 0.5
    with pytest.raises(ValueError):
        agent_metrics(shanghai.agent, days=91, now=NOW)


# --- week over week (pure) -------------------------------------------------------------------

END = dt.date(2026, 6, 14)


def days_back(n: int, **counts: int) -> DayRow:
    return DayRow(day=END - dt.timedelta(days=n), **counts)


def test_week_over_week_compares_ratios_of_sums() -> None:
    rows = [
        days_back(0, replies=10, blocked_replies=1, ratings=1, rating_stars=5),
        days_back(6, replies=10, blocked_replies=3),  # still this week
        days_back(7, replies=40, blocked_replies=4, ratings=2, rating_stars=6),  # the week before
        days_back(13, sessions=4, requests=1),
        days_back(14, replies=100, blocked_replies=100),  # neither week
    ]
    wow = week_over_week(rows, END)
    assert wow.this_week == (END - dt.timedelta(days=6), END)
    assert wow.last_week == (END - dt.timedelta(days=13), END - dt.timedelta(days=7))
    by = {m.metric: m for m in wow.metrics}
    assert (by["over_commitment"].this_week, by["over_commitment"].last_week) == (0.2, 0.1)
    assert by["over_commitment"].change == pytest.approx(0.1)
    assert (by["satisfaction"].this_week, by["satisfaction"].last_week, by["satisfaction"].change) == (5.0, 3.0, 2.0)
    assert by["request_conversion"].this_week is None and by["request_conversion"].change is None
    assert by["request_conversion"].last_week == 0.25


def test_totals_add_counts_not_rates() -> None:
    summed = total([Counts(replies=1, blocked_replies=1), Counts(replies=9)])
    assert summed.over_commitment == 0.1  # not the mean of 1.0 and 0.0


# --- the API --------------------------------------------------------------------------------


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def metrics_url(world: TenantWorld) -> str:
    return reverse("agent-metrics", args=[world.agent.slug])


@pytest.mark.parametrize("days", ["0", "91", "-1", "abc", "7.5", "３"])
def test_api_refuses_days_out_of_range(world_a: TenantWorld, days: str) -> None:
    answer = signed_in(world_a.owner).get(metrics_url(world_a), {"days": days})
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_input"


def test_api_answers_the_owner(shanghai: TenantWorld) -> None:
    client = signed_in(shanghai.owner)
    body = client.get(metrics_url(shanghai)).json()
    assert body["days"] == 30 and len(body["rows"]) == 30 and body["time_zone"] == SHANGHAI
    assert body["rows"][-1]["partial"] is True
    assert body["totals"]["delivered_violations"] == 0
    assert {m["metric"] for m in body["week_over_week"]["metrics"]} >= {"review_adoption", "satisfaction"}
    assert len(client.get(metrics_url(shanghai), {"days": "90"}).json()["rows"]) == 90
    assert len(client.get(metrics_url(shanghai), {"days": "1"}).json()["rows"]) == 1


def test_api_is_for_owners_only(world_a: TenantWorld, world_b: TenantWorld) -> None:
    assert Client().get(metrics_url(world_a)).status_code in (401, 403)
    assert signed_in(world_b.owner).get(metrics_url(world_a)).status_code == 404
    assert signed_in(world_a.member).get(metrics_url(world_a)).status_code == 404
    assert signed_in(world_a.auditor).get(metrics_url(world_a)).status_code == 404


# --- the page -------------------------------------------------------------------------------


def test_overview_page_for_owners_only(shanghai: TenantWorld, world_b: TenantWorld) -> None:
    seed_day(shanghai)
    url = reverse("owner-overview", args=[shanghai.agent.slug])
    page = signed_in(shanghai.owner).get(url)
    assert page.status_code == 200
    html = page.content.decode()
    # Seven metrics, each a chart with its table — or, when no metric has a figure on any of the 30
    # days (DAY is long past), one sentence naming them.
    if 'class="metric-empty charts-empty"' in html:
        assert "<canvas" not in html and all(f'id="metric-{s}"' in html for s in ("review_adoption", "satisfaction"))
    else:
        assert html.count("<canvas") == 7 and html.count("<details>") == 7
    assert 'id="metrics-data"' in html and "vendor/chart.js/chart.umd.min.js" in html
    island = json.loads(html.split('id="metrics-data" type="application/json">')[1].split("</script>")[0])
    assert len(island["days"]) == 30 and [s["id"] for s in island["series"]][0] == "review_adoption"
    for name in ("owner-chat", "owner-inbox", "owner-knowledge", "owner-contract", "owner-requests"):
        assert reverse(name, args=[shanghai.agent.slug]) in html
    assert signed_in(world_b.owner).get(url).status_code == 404
    assert signed_in(shanghai.member).get(url).status_code == 404
    assert Client().get(url).status_code == 302  # to sign in
    home = signed_in(shanghai.owner).get(reverse("home")).content.decode()
    assert url in home


@pytest.mark.django_db
def test_the_hallucinated_claim_rate_is_the_reviews_dropped_claims_of_all_its_claims(world_a: Any) -> None:
    from rsi.review_models import ReviewReport

    day = dt.date(2026, 11, 20)
    ReviewReport.objects.create(
        tenant=world_a.tenant,
        agent=world_a.agent,
        day=day,
        time_zone="UTC",
        partial=False,
        wins=[{"kind": "win"}],
        gaps=[{"kind": "gap"}, {"kind": "gap"}],
        dropped_claims=[{"reason": "no_evidence"}],
    )
    from rsi.metrics import day_counts

    counted = day_counts(world_a.agent, day, day)[day]
    assert (counted["review_claims"], counted["review_dropped"]) == (4, 1)
    from rsi.metrics import Counts

    assert Counts(**counted).hallucinated_claims == 0.25
    assert Counts().hallucinated_claims is None  # no review that day: no rate, not 0
