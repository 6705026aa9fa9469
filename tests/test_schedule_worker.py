"""Real Celery workers on Redis run the scheduled review end to end (issue 13; not
`task_always_eager`): the beat's tick claims the day and sends the run's task; the same task sent
twice more, and two workers taking them at once, still yield one report and one run."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from worker_support import celery_workers

from conftest import build_tenant
from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor
from facade.tenancy.services import tenant_time_zone_set
from rsi.observe_models import Digest
from rsi.review_models import ReviewReport
from rsi.schedule import tick
from rsi.schedule_models import RsiRun, RunStatus


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_two_real_workers_and_a_task_sent_three_times_make_one_report(db: Any) -> None:
    from rsi.tasks import run_task

    assert connection.vendor == "postgresql" and not settings.CELERY_TASK_ALWAYS_EAGER
    world = build_tenant("worker-review")
    tenant_time_zone_set(tenant=world.tenant, time_zone="Asia/Shanghai", actor=Actor.platform("tests"))
    AgentProfile.objects.filter(pk=world.agent.pk).update(created_at=dt.datetime(2026, 11, 30, tzinfo=dt.UTC))
    with celery_workers(["rsi.tasks.run"], count=2):
        # 03:45 in Shanghai on 12-02: the reviews of 12-01 and 11-30 are due, and observe of both.
        claimed = [r for r in tick(now=dt.datetime(2026, 12, 1, 19, 45, tzinfo=dt.UTC)) if r.kind == "review"]
        assert sorted(r.day.isoformat() for r in claimed) == ["2026-11-30", "2026-12-01"]
        run = next(r for r in claimed if r.day == dt.date(2026, 12, 1))
        for _ in range(2):  # delivered again, as a broker may
            run_task.apply_async(args=[run.pk], expires=600)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            states = set(RsiRun.objects.filter(agent=world.agent).values_list("status", flat=True))
            if states <= {RunStatus.DONE, RunStatus.FAILED}:
                break
            time.sleep(0.3)
        done = RsiRun.objects.get(pk=run.pk)
        assert (done.status, done.attempts, done.error) == (RunStatus.DONE, 1, "")
        reports = ReviewReport.objects.filter(agent=world.agent)
        assert sorted(r.day.isoformat() for r in reports) == ["2026-11-30", "2026-12-01"]
        assert not any(r.partial for r in reports)
        # Observe ran at the same tick (05:00 had passed in Shanghai for 12-01): one digest a day.
        observed = RsiRun.objects.filter(agent=world.agent, kind="observe").order_by("day")
        assert [(r.day.isoformat(), r.status) for r in observed] == [
            ("2026-11-30", RunStatus.DONE),
            ("2026-12-01", RunStatus.DONE),
        ]
        assert sorted(d.day.isoformat() for d in Digest.objects.filter(agent=world.agent)) == [
            "2026-11-30",
            "2026-12-01",
        ]
