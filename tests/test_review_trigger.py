"""The owner runs a daily review from the UI and watches it (issue 13): `review_request` claims the
day's run — the schedule's own `RsiRun` row — and queues `rsi.tasks.run` after the commit; a click
while it waits or runs queues nothing; a day reviewed whole just shows its report; today's run is
queued again once it ended; the nightly tick claims a day again that an owner reviewed while it was
under way.  The pages are owner-only (another tenant's owner: 404; a customer: sent to sign in) and
CSRF-protected, and a real worker runs the requested review end to end."""

from __future__ import annotations

import datetime as dt
import threading
import time
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.test import Client
from test_review import customer_turn
from worker_support import celery_workers

from conftest import TenantWorld
from facade.dialogue.services import session_open
from facade.errors import ApplicationError
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from facade.tenancy.services import customer_create
from ledger.models import LedgerEvent
from rsi import schedule
from rsi.review import review_run
from rsi.review_input import local_today
from rsi.review_models import ReviewReport
from rsi.review_trigger import Phase, phase_of, review_progress, review_request
from rsi.run_progress import STEPS
from rsi.schedule import run_execute, tick
from rsi.schedule_models import RsiRun, RunStatus

OWNER = Actor.human(1)


# --- the pure phase ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("run_status", "report_finished", "report_final", "phase"),
    [
        (None, False, False, Phase.NONE),
        (None, True, False, Phase.FINISHED),  # today's, reviewed through the API or the command
        (None, True, True, Phase.FINISHED),
        ("queued", False, False, Phase.QUEUED),
        ("queued", True, False, Phase.QUEUED),  # today's report, asked for again
        ("queued", True, True, Phase.QUEUED),  # the tick re-sent a run whose report the API completed
        ("running", True, False, Phase.RUNNING),
        ("done", True, False, Phase.FINISHED),
        ("done", True, True, Phase.FINISHED),
        ("done", False, False, Phase.NONE),
        ("failed", False, False, Phase.FAILED),
        ("failed", True, False, Phase.FAILED),  # a re-run of today that failed: say so, not the old report
        ("failed", True, True, Phase.FINISHED),  # failed once, reviewed whole since (the API, the command)
    ],
)
def test_where_a_days_review_stands(
    run_status: str | None, report_finished: bool, report_final: bool, phase: Phase
) -> None:
    assert phase_of(run_status, report_finished, report_final=report_final) == phase


# --- the service ------------------------------------------------------------------------------


def events(kind: str) -> list[LedgerEvent]:
    return list(LedgerEvent.objects.of_type(kind).order_by("chain_id", "seq"))


@pytest.mark.django_db
def test_a_request_queues_one_run_and_a_second_click_joins_it(
    world_a: TenantWorld, django_capture_on_commit_callbacks: Any
) -> None:
    today = local_today(world_a.tenant)
    with django_capture_on_commit_callbacks(execute=False) as sent:
        first = review_request(agent=world_a.agent, day=today, actor=Actor.human(world_a.owner.pk))
        again = review_request(agent=world_a.agent, day=today, actor=Actor.human(world_a.owner.pk))
    assert first.queued and not again.queued and first.run is not None and again.run is not None
    assert again.run.pk == first.run.pk and len(sent) == 1  # one task sent, after the claim's commit
    run = RsiRun.objects.get(agent=world_a.agent)
    assert (run.kind, run.day, run.status, run.partial) == ("review", today, RunStatus.QUEUED, True)
    [requested] = events("review.requested")
    assert (requested.entity_type, requested.entity_id, requested.actor_type, requested.actor_id) == (
        "rsi_run",
        str(run.pk),
        "human",
        f"user:{world_a.owner.pk}",
    )
    assert requested.payload == {
        "agent": world_a.agent.slug,
        "run": run.pk,
        "day": today.isoformat(),
        "partial": True,
        "rerun": False,
    }
    assert review_progress(world_a.agent, today).phase == Phase.QUEUED


@pytest.mark.django_db
def test_the_run_reports_its_steps_and_today_can_be_run_again(
    world_a: TenantWorld, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    for _ in range(3):
        customer_turn(world_a, "do you deliver on sundays?", miss=True)
    today = local_today(world_a.tenant)
    with django_capture_on_commit_callbacks(execute=False):
        run = review_request(agent=world_a.agent, day=today, actor=OWNER).run
    assert run is not None
    seen: list[tuple[str, str]] = []

    def record(run: RsiRun, step: str) -> None:
        # What the status endpoint reads at each step, while the review's transaction is open.
        schedule_step_record(run, step)
        seen.append((step, review_progress(world_a.agent, today).step))

    schedule_step_record = schedule.step_record
    monkeypatch.setattr(schedule, "step_record", record)
    assert run_execute(run.pk) == "done"
    assert seen == [(step, step) for step in STEPS]
    progress = review_progress(world_a.agent, today)
    assert progress.phase == Phase.FINISHED and progress.partial and not progress.final
    assert progress.counts == {
        "wins": 0,
        "misses": 0,
        "gaps": 1,
        "proposals": 1,
        "held_back": 0,
        "dropped_claims": 0,
    }
    assert progress.step == ""
    # Today's report is partial: asking again queues the same run again (and the report is updated
    # in place: the same row, a second run, the proposal not made twice).
    with django_capture_on_commit_callbacks(execute=False) as sent:
        again = review_request(agent=world_a.agent, day=today, actor=OWNER)
    assert again.queued and len(sent) == 1 and again.run is not None and again.run.pk == run.pk
    assert events("review.requested")[-1].payload["rerun"] is True
    assert run_execute(run.pk) == "done"
    report = ReviewReport.objects.get(agent=world_a.agent, day=today)
    assert report.runs == 2 and len(report.proposals) == 1


@pytest.mark.django_db
def test_a_past_day_reviewed_whole_is_shown_not_run_and_a_future_day_is_refused(
    world_a: TenantWorld, django_capture_on_commit_callbacks: Any
) -> None:
    yesterday = local_today(world_a.tenant) - dt.timedelta(days=1)
    review_run(agent_id=world_a.agent.pk, day=yesterday)
    with django_capture_on_commit_callbacks(execute=False) as sent:
        requested = review_request(agent=world_a.agent, day=yesterday, actor=OWNER)
    assert not requested.queued and requested.run is None and sent == []
    assert not RsiRun.objects.exists() and events("review.requested") == []
    progress = review_progress(world_a.agent, yesterday)
    assert progress.phase == Phase.FINISHED and progress.final
    with pytest.raises(ApplicationError) as refused:
        review_request(agent=world_a.agent, day=local_today(world_a.tenant) + dt.timedelta(days=1), actor=OWNER)
    assert refused.value.code == "future_day"


@pytest.mark.django_db
def test_a_failed_run_says_so_in_the_ledger_and_can_be_run_again(
    world_a: TenantWorld, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    today = local_today(world_a.tenant)
    with django_capture_on_commit_callbacks(execute=False):
        run = review_request(agent=world_a.agent, day=today, actor=OWNER).run
    assert run is not None

    def broken(**kwargs: Any) -> None:
        raise RuntimeError("the database went away, with a customer's words in the message")

    monkeypatch.setattr("rsi.review.review_run", broken)
    assert run_execute(run.pk) == "failed"
    progress = review_progress(world_a.agent, today)
    assert (progress.phase, progress.error) == (Phase.FAILED, "RuntimeError")
    [failed] = events("review.run_failed")
    assert failed.payload == {
        "agent": world_a.agent.slug,
        "run": run.pk,
        "day": today.isoformat(),
        "attempts": 1,
        "error": "RuntimeError",
    }
    owner = signed_in(world_a.owner)
    page = owner.get(f"/owner/{world_a.agent.slug}/reviews/{today.isoformat()}").content.decode()
    assert f"The review of {today.isoformat()} failed (RuntimeError)" in page and "Run it again" in page
    assert "customer" not in page.split("failed (RuntimeError)")[1].split("</p>")[0]
    monkeypatch.undo()
    with django_capture_on_commit_callbacks(execute=False) as sent:
        assert review_request(agent=world_a.agent, day=today, actor=OWNER).queued
    assert len(sent) == 1 and RsiRun.objects.get(pk=run.pk).status == RunStatus.QUEUED
    assert run_execute(run.pk) == "done"


@pytest.mark.django_db
def test_the_nightly_tick_claims_again_a_day_an_owner_reviewed_while_it_was_under_way(
    world_a: TenantWorld, django_capture_on_commit_callbacks: Any
) -> None:
    world_a.tenant.time_zone = "Asia/Shanghai"
    world_a.tenant.save(update_fields=["time_zone"])
    zone = ZoneInfo("Asia/Shanghai")
    evening = dt.datetime(2026, 11, 24, 21, 0, tzinfo=zone)
    world_a.agent.__class__.objects.filter(pk=world_a.agent.pk).update(created_at=evening - dt.timedelta(days=1))
    day = evening.date()
    with time_machine.travel(evening, tick=False):
        with django_capture_on_commit_callbacks(execute=False):
            run = review_request(agent=world_a.agent, day=day, actor=OWNER).run
        assert run is not None and run_execute(run.pk) == "done"
    assert ReviewReport.objects.get(agent=world_a.agent, day=day).partial
    assert RsiRun.objects.get(pk=run.pk).partial

    night = dt.datetime(2026, 11, 25, 3, 45, tzinfo=zone)
    with time_machine.travel(night, tick=False):
        with django_capture_on_commit_callbacks(execute=False) as sent:
            claimed = [r for r in tick(now=night) if r.kind == "review"]
        assert [r.day for r in claimed] == [day - dt.timedelta(days=1), day]  # the day before was never run
        again = RsiRun.objects.get(pk=run.pk)
        assert (again.status, again.partial) == (RunStatus.QUEUED, False) and len(sent) >= 2
        with django_capture_on_commit_callbacks(execute=False):
            assert [r for r in tick(now=night) if r.kind == "review"] == []  # claimed once
        assert run_execute(run.pk) == "done"
    report = ReviewReport.objects.get(agent=world_a.agent, day=day)
    assert not report.partial and report.runs == 2
    assert RsiRun.objects.get(pk=run.pk).partial is False


# --- the pages --------------------------------------------------------------------------------


def signed_in(user: Any, **kwargs: Any) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_the_overview_offers_the_review_and_the_post_needs_csrf(
    world_a: TenantWorld, django_capture_on_commit_callbacks: Any
) -> None:
    owner = signed_in(world_a.owner, enforce_csrf_checks=True)
    slug = world_a.agent.slug
    today = local_today(world_a.tenant).isoformat()
    page = owner.get(f"/owner/{slug}/").content.decode()
    assert "Run today&#x27;s review" in page or "Run today's review" in page
    assert f'max="{today}"' in page and 'type="date"' in page
    assert owner.post(f"/owner/{slug}/reviews/run", {"date": today}).status_code == 403  # no CSRF token
    assert not RsiRun.objects.exists()
    token = owner.cookies["csrftoken"].value
    with django_capture_on_commit_callbacks(execute=False) as sent:
        response = owner.post(f"/owner/{slug}/reviews/run", {"date": today, "csrfmiddlewaretoken": token})
        twice = owner.post(f"/owner/{slug}/reviews/run", {"date": today, "csrfmiddlewaretoken": token})
    assert response.status_code == 303 and response["Location"] == f"/owner/{slug}/reviews/{today}"
    assert twice.status_code == 303 and twice["Location"] == response["Location"]
    assert len(sent) == 1 and RsiRun.objects.count() == 1 and len(events("review.requested")) == 1
    page = owner.get(response["Location"]).content.decode()
    assert "Queued at" in page and "already under way" in page
    assert '<meta http-equiv="refresh" content="3">' in page  # inside <noscript>: no JS, it refreshes
    assert 'aria-live="polite"' in page
    status = owner.get(f"/owner/{slug}/reviews/{today}/status").json()
    assert (status["phase"], status["active"], status["canRun"]) == ("queued", True, False)
    # The overview says a review is under way.
    assert "is under way" in owner.get(f"/owner/{slug}/").content.decode()
    # A future day, or no day at all, queues nothing.
    later = (local_today(world_a.tenant) + dt.timedelta(days=1)).isoformat()
    refused = owner.post(f"/owner/{slug}/reviews/run", {"date": later, "csrfmiddlewaretoken": token}, follow=True)
    assert "has not begun yet" in refused.content.decode()
    bad = owner.post(f"/owner/{slug}/reviews/run", {"date": "31/12/2026", "csrfmiddlewaretoken": token}, follow=True)
    assert "YYYY-MM-DD" in bad.content.decode() and RsiRun.objects.count() == 1


@pytest.mark.django_db
def test_only_the_agents_owners_may_run_or_watch_it(
    world_a: TenantWorld, world_b: TenantWorld, django_capture_on_commit_callbacks: Any
) -> None:
    slug = world_a.agent.slug
    today = local_today(world_a.tenant).isoformat()
    with django_capture_on_commit_callbacks(execute=False):
        review_request(agent=world_a.agent, day=local_today(world_a.tenant), actor=OWNER)
    paths = [f"/owner/{slug}/reviews/{today}", f"/owner/{slug}/reviews/{today}/status"]
    for user in (world_b.owner, world_a.auditor, world_a.member):
        client = signed_in(user)
        # An auditor is refused every write before any view (audit/readonly.py): 403 read_only.
        refused = 403 if user == world_a.auditor else 404
        assert client.post(f"/owner/{slug}/reviews/run", {"date": today}).status_code == refused
        assert [client.get(path).status_code for path in paths] == [404, 404]
    # A customer (the customer cookie of a conversation with the agent) is sent to sign in.
    customer = Client()
    assert customer.post(f"/api/agents/{slug}/sessions", {}, content_type="application/json").status_code == 201
    refused = customer.post(f"/owner/{slug}/reviews/run", {"date": today})
    assert refused.status_code == 302 and refused["Location"].startswith("/accounts/login/")
    assert customer.get(paths[0]).status_code == 302
    assert customer.get(paths[1]).status_code == 401
    assert RsiRun.objects.count() == 1 and len(events("review.requested")) == 1
    # The other tenant's owner watching their own agent sees nothing of this one's run.
    other = signed_in(world_b.owner)
    assert other.get(f"/owner/{world_b.agent.slug}/reviews/{today}/status").json()["phase"] == "none"


def wait_for(predicate: Any, what: str, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_the_requested_review_and_two_tabs_make_one_run(db: Any) -> None:
    from conftest import build_tenant

    world = build_tenant("trigger-worker")
    for _ in range(3):
        customer_turn(world, "can I pay with a voucher?", miss=True)
    session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer_create(tenant=world.tenant))
    slug = world.agent.slug
    today = local_today(world.tenant).isoformat()
    tabs = [signed_in(world.owner), signed_in(world.owner)]
    with celery_workers(["rsi.tasks.run"]):
        answers: list[int] = []
        clicks = [
            threading.Thread(
                target=lambda tab=tab: answers.append(
                    tab.post(f"/owner/{slug}/reviews/run", {"date": today}).status_code
                )
            )
            for tab in tabs
        ]
        for click in clicks:
            click.start()
        for click in clicks:
            click.join()
        assert answers == [303, 303]
        wait_for(lambda: tabs[0].get(f"/owner/{slug}/reviews/{today}/status").json()["phase"] == "finished", "done")
    status = tabs[1].get(f"/owner/{slug}/reviews/{today}/status").json()
    assert status["message"].startswith("Finished. Wins: 0, misses: 0, gaps: 1;")
    assert {c["id"]: c["value"] for c in status["counts"]}["proposals"] == 1
    assert [s["state"] for s in status["steps"]] == ["done"] * 4
    assert status["reportUrl"] == f"/owner/{slug}/inbox?review={today}#review-h"
    assert status["canRun"] is True  # today: the day goes on, it may be run again
    run = RsiRun.objects.get(agent=world.agent)
    assert (run.status, run.attempts, run.partial) == (RunStatus.DONE, 1, True)
    assert ReviewReport.objects.get(agent=world.agent).runs == 1
    assert len(events("review.requested")) == 1 and len(events("review.started")) == 1
    inbox = tabs[0].get(status["reportUrl"].split("#")[0]).content.decode()
    assert f"Daily review of {today}" in inbox and "Gaps (1)" in inbox
