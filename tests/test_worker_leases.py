"""A worker killed while it works (issue 16, point 4): the work is found by its lease, run again
from the start once, and ends done or failed — never "running" forever — and the owner sees the
retry or the failure.  Real Celery worker processes on Redis and the test database, killed with
SIGKILL; the work is held at a known point by a trigger that waits on an advisory lock the test
holds (no sleeps: the test waits until PostgreSQL shows the worker waiting)."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import re
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from worker_support import Workers, celery_worker_pool

from conftest import TenantWorld, build_tenant
from facade.leases import MAX_RUNS, WORKER_LOST, Verdict, lease_verdict
from facade.tenancy.schemas import Actor
from knowledge.models import EntryVersion, IngestJob
from knowledge.tasks import sweep
from ledger.models import LedgerEvent
from rsi.observe_models import Digest
from rsi.review_input import local_today
from rsi.review_models import ReviewReport
from rsi.review_trigger import review_request
from rsi.schedule import LEASED, run_claim, runs_lost
from rsi.schedule_models import RsiRun, RunStatus
from rsi.schedule_rules import RunKind

INGEST = "knowledge.tasks.ingest_job_run"
RUN = "rsi.tasks.run"
# A short lease for the workers of these tests (renewed every second); one section per batch, so
# the killed run has committed the first section when it dies.
WORKER_ENV = {"FACADE_LEASE_SECONDS": "3", "FACADE_UPLOAD_BATCH_SECTIONS": "1"}
GATE = 7_160_401  # the advisory lock the trigger waits on
WAIT = 90.0  # seconds: a bound for hangs, never a measure of speed

MARKDOWN = (
    "# Delivery\nWe deliver within 3 days in Germany.\n\n"
    "# Pickup\nPickup in Hamburg on weekdays.\n\n"
    "# 包装\n所有包裹都使用可回收材料。"
).encode()

T = TypeVar("T")


def wait_for(what: Callable[[], T], *, timeout: float = WAIT, state: Callable[[], object] = lambda: "") -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = what()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"gave up waiting after {timeout} s {state()}")


class Gate:
    """While closed, every insert the trigger watches waits (the test holds the advisory lock the
    trigger asks for, on a connection of its own)."""

    def __init__(self) -> None:
        db = settings.DATABASES["default"]
        self.conn = psycopg.connect(
            host=db["HOST"], port=db["PORT"], user=db["USER"], dbname=db["NAME"], autocommit=True
        )

    def close(self) -> None:
        self.conn.execute("SELECT pg_advisory_lock(%s)", [GATE])

    def open(self) -> None:
        self.conn.execute("SELECT pg_advisory_unlock(%s)", [GATE])

    def waiting(self) -> int:
        row = self.conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = %s", [GATE]
        ).fetchone()
        return int(row[0]) if row else 0


@contextlib.contextmanager
def gate_on(table: str, when: str = "true") -> Iterator[Gate]:
    """A trigger on `table` that makes each insert matching `when` pass the gate first."""
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE OR REPLACE FUNCTION lease_test_gate() RETURNS trigger AS $$ BEGIN "
            f"PERFORM pg_advisory_xact_lock_shared({GATE}); RETURN NEW; END $$ LANGUAGE plpgsql"
        )
        cursor.execute(
            f"CREATE TRIGGER lease_test_gate BEFORE INSERT ON {table} FOR EACH ROW WHEN ({when}) "
            "EXECUTE FUNCTION lease_test_gate()"
        )
    gate = Gate()
    try:
        yield gate
    finally:
        gate.conn.close()
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TRIGGER IF EXISTS lease_test_gate ON {table}")
            cursor.execute("DROP FUNCTION IF EXISTS lease_test_gate()")


def let_the_dead_go(gate: Gate) -> None:
    """Open the gate so the killed worker's database session, waiting at it, runs into its closed
    connection and rolls back; closing the gate again waits for that rollback."""
    gate.open()
    gate.close()
    gate.open()


def events(world: TenantWorld, name: str) -> list[dict[str, Any]]:
    rows = LedgerEvent.objects.filter(chain_id=world.tenant.pk).of_type(name).order_by("seq")
    return [json.loads(row.canonical)["payload"] for row in rows]


def upload(client: Client, world: TenantWorld) -> dict[str, Any]:
    handle = io.BytesIO(MARKDOWN)
    handle.name = "shop.md"
    response = client.post(f"/api/agents/{world.agent.slug}/knowledge/uploads", {"file": handle})
    assert response.status_code == 202, response.content
    return dict(response.json())


def job_status(client: Client, world: TenantWorld, job_id: int, language: str = "en") -> dict[str, Any]:
    response = client.get(f"/api/agents/{world.agent.slug}/knowledge/jobs/{job_id}", HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200
    return dict(response.json())


def owner(world: TenantWorld) -> Client:
    client = Client()
    client.force_login(world.owner)
    return client


# The gate of the upload tests: the worker's insert of the second section waits at it.
AT_PICKUP = ("knowledge_entryversion", "NEW.title = 'Pickup'")


@contextlib.contextmanager
def upload_held(name: str) -> Iterator[tuple[TenantWorld, Client, Gate, Workers, dict[str, Any]]]:
    """A new tenant's owner uploads MARKDOWN with a worker on the test's own queue and the gate
    closed: the worker stores the first section and waits at the second."""
    world = build_tenant(name)
    client = owner(world)
    with gate_on(*AT_PICKUP) as gate, celery_worker_pool([INGEST], **WORKER_ENV) as workers:
        gate.close()
        yield world, client, gate, workers, upload(client, world)


# --- the rule ------------------------------------------------------------------------------------


def test_a_lost_run_is_retried_once_then_failed() -> None:
    assert MAX_RUNS == 2
    assert lease_verdict(1) == Verdict.RETRY
    assert lease_verdict(2) == Verdict.FAIL
    assert lease_verdict(3) == Verdict.FAIL


def start(run: RsiRun, now: dt.datetime) -> int:
    """What run_execute does when a worker starts the run (its lease already run out, here)."""
    attempt = RsiRun.objects.get(pk=run.pk).attempts + 1
    RsiRun.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, attempts=attempt, lease_expires_at=now - dt.timedelta(seconds=1)
    )
    return attempt


@pytest.mark.django_db
def test_a_day_claimed_again_keeps_its_fence_and_judges_only_the_new_claims_runs(db: Any) -> None:
    world = build_tenant("lease-fence")
    now = timezone.now()
    day = local_today(world.tenant) - dt.timedelta(days=1)
    # An owner's review of the day while it was under way, ended after one run.
    run = RsiRun.objects.create(
        agent=world.agent,
        kind=RunKind.REVIEW.value,
        day=day,
        status=RunStatus.DONE,
        partial=True,
        attempts=1,
        queued_at=now,
    )
    again = run_claim(agent=world.agent, kind=RunKind.REVIEW, day=day, now=now)
    assert again is not None
    assert (again.status, again.partial, again.attempts, again.runs_started) == (RunStatus.QUEUED, False, 1, 0)
    attempt = start(again, now)
    assert attempt == 2
    # The earlier claim's worker, waking up, holds nothing; the new one does.
    assert not LEASED.held(run.pk, 1).exists() and LEASED.held(run.pk, 2).exists()
    # The new claim's first run lost its worker: it is run again, not failed as a second loss.
    assert [r.pk for r in runs_lost(now=now)] == [run.pk]
    assert RsiRun.objects.get(pk=run.pk).status == RunStatus.QUEUED
    start(again, now)
    assert runs_lost(now=now) == []
    lost = RsiRun.objects.get(pk=run.pk)
    assert (lost.status, lost.error, lost.attempts, lost.runs_started) == (RunStatus.FAILED, WORKER_LOST, 3, 2)

    # The owner asks for the day again: the count goes on from 3, and the owner sees no retry.
    requested = review_request(agent=world.agent, day=day, actor=Actor.human(world.owner.pk))
    assert requested.queued and requested.run is not None
    fresh = RsiRun.objects.get(pk=run.pk)
    assert (fresh.status, fresh.attempts, fresh.runs_started) == (RunStatus.QUEUED, 3, 0)
    assert start(fresh, now) == 4
    assert not any(LEASED.held(run.pk, old).exists() for old in (1, 2, 3))
    client = owner(world)
    view = review_status(client, world, day, "en")
    assert view["phase"] == "running" and view["retry"] is False


# --- an upload's ingest job ----------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_an_ingest_job_whose_worker_is_killed_runs_again_once_and_stores_nothing_twice(db: Any) -> None:
    with upload_held("lease-ingest") as (world, client, gate, workers, job):
        wait_for(lambda: gate.waiting() == 1)  # the worker is storing the second section
        running = IngestJob.objects.get(pk=job["id"])
        assert (running.state, running.attempts, running.total) == ("running", 1, 3)
        assert list(EntryVersion.objects.filter(agent=world.agent).values_list("title", flat=True)) == ["Delivery"]

        workers.kill(workers.processes[0])
        let_the_dead_go(gate)
        assert IngestJob.objects.get(pk=job["id"]).state == "running"  # as before: until the lease runs out
        # The sweep (the beat's knowledge.tasks.sweep, run here directly) finds the lease run out.
        swept = wait_for(lambda: (result := sweep())["retried"] and result)
        assert swept["retried"] == 1 and swept["redispatched"] == 0
        queued = IngestJob.objects.get(pk=job["id"])
        assert (queued.state, queued.attempts, queued.lease_expires_at) == ("queued", 1, None)
        status = job_status(client, world, job["id"])
        assert (status["state"], status["retry"], status["attempt"], status["error"]) == ("queued", True, 1, None)

        workers.start()  # a worker comes back; the job runs again from the start
        wait_for(lambda: IngestJob.objects.get(pk=job["id"]).state in ("done", "failed"))
        done = IngestJob.objects.get(pk=job["id"])
        assert (done.state, done.attempts, done.created, done.unchanged) == ("done", 2, 2, 1)
        assert done.lease_expires_at is None and bytes(done.data) == b""
        assert sweep()["retried"] == 0  # nothing more to do

    versions = EntryVersion.objects.filter(agent=world.agent)
    assert sorted(versions.values_list("title", flat=True)) == ["Delivery", "Pickup", "包装"]
    assert versions.values("source_ref").distinct().count() == 3 and versions.count() == 3
    assert len(events(world, "knowledge.version_created")) == 3  # no event of the rolled-back insert
    assert events(world, "knowledge.ingest_job_retried") == [
        {"agent": world.agent.slug, "job": job["id"], "sha256": done.sha256, "attempts": 1, "reason": WORKER_LOST}
    ]
    assert events(world, "knowledge.ingest_job_failed") == []
    status = job_status(client, world, job["id"])
    assert (status["state"], status["retry"], status["attempt"], status["created"]) == ("done", False, 2, 2)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_an_ingest_job_whose_retry_is_killed_too_ends_failed_and_says_why(db: Any) -> None:
    with upload_held("lease-ingest-twice") as (world, client, gate, workers, job):
        for attempt in (1, 2):
            if attempt == 2:
                workers.start()
            wait_for(lambda: gate.waiting() == 1)
            assert IngestJob.objects.get(pk=job["id"]).attempts == attempt
            if attempt == 2:  # the owner sees the retry while it runs
                status = job_status(client, world, job["id"])
                assert (status["state"], status["retry"], status["attempt"]) == ("running", True, 2)
            workers.kill(workers.processes[-1])
            gate.open()
            gate.close()  # waits for the killed worker's session to roll back
            wait_for(lambda: sweep()["retried"] == 1 or IngestJob.objects.get(pk=job["id"]).state == "failed")
        gate.open()

    failed = IngestJob.objects.get(pk=job["id"])
    assert (failed.state, failed.attempts, failed.error_code) == ("failed", 2, WORKER_LOST)
    assert failed.lease_expires_at is None
    assert bytes(failed.data) == b"" and failed.finished_at is not None
    assert list(EntryVersion.objects.filter(agent=world.agent).values_list("title", flat=True)) == ["Delivery"]
    assert [e["attempts"] for e in events(world, "knowledge.ingest_job_retried")] == [1]
    assert events(world, "knowledge.ingest_job_failed") == [
        {"agent": world.agent.slug, "job": job["id"], "sha256": failed.sha256, "attempts": 2, "reason": WORKER_LOST}
    ]
    # The owner is told why, in their language; a later sweep leaves the failed job alone.
    english = job_status(client, world, job["id"])
    assert (english["state"], english["retry"]) == ("failed", False)
    assert english["error"]["error"] == WORKER_LOST
    assert english["error"]["detail"].startswith("The worker processing this upload stopped twice")
    chinese = job_status(client, world, job["id"], "zh-hans")
    assert chinese["error"]["detail"].startswith("处理此上传的后台进程两次中断")
    assert sweep()["retried"] == 0 and IngestJob.objects.get(pk=job["id"]).state == "failed"


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_live_worker_keeps_its_lease_however_long_it_works(db: Any) -> None:
    """The heartbeat: a job held longer than its lease is not taken for dead while its worker lives."""
    world = build_tenant("lease-alive")
    client = owner(world)
    with (
        gate_on("knowledge_entryversion", "NEW.title = 'Pickup'") as gate,
        celery_worker_pool([INGEST], **WORKER_ENV) as workers,
    ):
        gate.close()
        job = upload(client, world)
        wait_for(lambda: gate.waiting() == 1)
        first = IngestJob.objects.get(pk=job["id"]).lease_expires_at
        assert first is not None
        wait_for(lambda: timezone.now() > first + dt.timedelta(seconds=1))  # the first lease is over
        renewed = IngestJob.objects.get(pk=job["id"]).lease_expires_at
        assert renewed is not None and renewed > timezone.now()
        assert sweep()["retried"] == 0
        gate.open()
        wait_for(lambda: IngestJob.objects.get(pk=job["id"]).state in ("done", "failed"))
        assert workers.processes[0].poll() is None
    done = IngestJob.objects.get(pk=job["id"])
    assert (done.state, done.attempts, done.created) == ("done", 1, 3)
    assert events(world, "knowledge.ingest_job_retried") == []


# --- the rsi runs: the same rule -----------------------------------------------------------------


def review_status(client: Client, world: TenantWorld, day: dt.date, language: str) -> dict[str, Any]:
    url = reverse("owner-review-status", args=[world.agent.slug, day.isoformat()])
    response = client.get(url, HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200
    return dict(response.json())


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_review_run_whose_workers_are_killed_is_retried_once_then_failed_for_the_owner(db: Any) -> None:
    world = build_tenant("lease-review")
    client = owner(world)
    day = local_today(world.tenant)
    with gate_on("rsi_reviewreport") as gate, celery_worker_pool([RUN], **WORKER_ENV) as workers:
        gate.close()
        run = review_request(agent=world.agent, day=day, actor=Actor.human(world.owner.pk)).run
        assert run is not None
        for attempt in (1, 2):
            if attempt == 2:
                workers.start()
            wait_for(
                lambda: gate.waiting() == 1, state=lambda: RsiRun.objects.filter(pk=run.pk).values().first()
            )  # the review is writing its report
            held = RsiRun.objects.get(pk=run.pk)
            assert (held.status, held.attempts) == (RunStatus.RUNNING, attempt)
            assert held.lease_expires_at is not None
            if attempt == 2:
                view = review_status(client, world, day, "en")
                assert view["phase"] == "running" and view["retry"] is True
                assert view["message"].startswith("The worker running this review stopped; it is being run again")
            workers.kill(workers.processes[-1])
            gate.open()
            gate.close()  # waits for the killed worker's session to roll back; the retry waits here too
            lost = wait_for(lambda: runs_lost() or RsiRun.objects.get(pk=run.pk).status == RunStatus.FAILED)
            if attempt == 1:
                assert isinstance(lost, list) and [r.pk for r in lost] == [run.pk]
                queued = RsiRun.objects.get(pk=run.pk)
                assert (queued.status, queued.attempts) == (RunStatus.QUEUED, 1)
                view = review_status(client, world, day, "zh-hans")
                assert view["phase"] == "queued" and view["retry"] is True
                assert view["message"].startswith("运行此复盘的后台进程中断了")
        gate.open()

    failed = RsiRun.objects.get(pk=run.pk)
    assert (failed.status, failed.attempts, failed.error) == (RunStatus.FAILED, 2, WORKER_LOST)
    assert failed.lease_expires_at is None and failed.finished_at is not None
    assert not ReviewReport.objects.filter(agent=world.agent).exists()  # nothing half-applied
    retried = events(world, "rsi.run_retried")
    assert [(e["run"], e["kind"], e["attempts"], e["reason"]) for e in retried] == [(run.pk, "review", 1, WORKER_LOST)]
    lost = events(world, "rsi.run_lost")
    assert [(e["run"], e["kind"], e["attempts"], e["reason"]) for e in lost] == [(run.pk, "review", 2, WORKER_LOST)]
    assert runs_lost() == []
    english = review_status(client, world, day, "en")
    assert english["phase"] == "failed" and english["retry"] is False
    assert english["message"].startswith(f"The review of {day.isoformat()} failed: the worker running it stopped")
    chinese = review_status(client, world, day, "zh-hans")
    assert chinese["message"].startswith(f"{day.isoformat()} 的复盘失败：运行它的后台进程中断")
    # The run's own task, delivered late (the broker gives an unacknowledged task back), runs nothing.
    from rsi.schedule import run_execute

    assert run_execute(run.pk) == "skipped"


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_an_observe_run_whose_worker_is_killed_runs_again_once_and_makes_one_digest(db: Any) -> None:
    world = build_tenant("lease-observe")
    day = local_today(world.tenant)
    with gate_on("rsi_digest") as gate, celery_worker_pool([RUN], **WORKER_ENV) as workers:
        gate.close()
        run = run_claim(agent=world.agent, kind=RunKind.OBSERVE, day=day, now=timezone.now())
        assert run is not None
        wait_for(lambda: gate.waiting() == 1)
        workers.kill(workers.processes[0])
        let_the_dead_go(gate)
        lost = wait_for(runs_lost)
        assert [r.pk for r in lost] == [run.pk]
        workers.start()
        wait_for(lambda: RsiRun.objects.get(pk=run.pk).status in (RunStatus.DONE, RunStatus.FAILED))
    done = RsiRun.objects.get(pk=run.pk)
    assert (done.status, done.attempts, done.error, done.lease_expires_at) == (RunStatus.DONE, 2, "", None)
    assert Digest.objects.filter(agent=world.agent, day=day).count() == 1
    assert [e["attempts"] for e in events(world, "rsi.run_retried")] == [1]
    assert events(world, "rsi.run_lost") == []


# --- the owner's progress bar, in a real browser -------------------------------------------------


@pytest.mark.browser
@pytest.mark.slow
def test_the_upload_page_shows_the_retry_and_then_the_failure(page: Any, site: str, world: TenantWorld) -> None:
    from playwright.sync_api import expect

    with (
        gate_on(*AT_PICKUP) as gate,
        celery_worker_pool([INGEST], **WORKER_ENV) as workers,
    ):
        gate.close()
        page.goto(f"{site}/accounts/login/?next=/owner/{world.agent.slug}/knowledge")
        page.get_by_label("Email").fill("owner@alpha.test")
        page.get_by_label("Password").fill("pw-alpha")
        page.get_by_role("button", name="Sign in").click()
        upload = page.get_by_role("region", name="Add a document")
        upload.get_by_label("Document", exact=True).set_input_files(
            files=[{"name": "shop.md", "mimeType": "text/markdown", "buffer": MARKDOWN}]
        )
        upload.get_by_role("button", name="Upload").click()
        live = upload.locator("#upload-text")
        wait_for(lambda: gate.waiting() == 1)
        expect(live).to_have_text(re.compile(r"^[0-3] of 3 sections · working$"))

        workers.kill(workers.processes[0])
        gate.open()
        gate.close()
        wait_for(lambda: sweep()["retried"] == 1)
        workers.start()
        wait_for(lambda: gate.waiting() == 1)  # the retry runs, and waits where the first run died
        expect(live).to_have_text(
            re.compile(r"^[0-3] of 3 sections · the worker stopped; running it again from the start · working$")
        )
        expect(upload.get_by_role("alert")).to_be_hidden()

        workers.kill(workers.processes[1])
        gate.open()
        gate.close()
        wait_for(lambda: sweep() is not None and IngestJob.objects.filter(state="failed").exists())
        gate.open()
        expect(upload.get_by_role("alert")).to_have_text(
            "The upload failed: The worker processing this upload stopped twice (it was run again from the start "
            "once). Nothing was stored twice; please upload the document again."
        )
        expect(upload.get_by_role("button", name="Upload")).to_be_enabled()
    assert IngestJob.objects.get().state == "failed"
