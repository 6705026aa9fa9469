"""The beat's tick claims each due re-check, review and observe run once, in each tenant's own time zone
(issue 13): claims are rows unique per (agent, kind, day), so ticks running twice or at once
never claim a day twice; a run whose task expired unrun is sent again."""

from __future__ import annotations

import datetime as dt
import threading
from typing import Any

import pytest
from django.db import connection

from conftest import build_tenant
from facade.errors import ApplicationError
from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor
from facade.tenancy.services import tenant_time_zone_set
from ledger.models import LedgerEvent
from rsi.schedule import RUN_EXPIRES, tick
from rsi.schedule_models import RsiRun

UTC = dt.UTC


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).astimezone(UTC)


def zoned(world: Any, zone: str, created: str) -> Any:
    tenant_time_zone_set(tenant=world.tenant, time_zone=zone, actor=Actor.platform("tests"))
    AgentProfile.objects.filter(pk=world.agent.pk).update(created_at=at(created))
    world.agent.refresh_from_db()
    return world


def claims(world: Any) -> list[tuple[str, str]]:
    rows = RsiRun.objects.filter(agent=world.agent).order_by("kind", "day")
    return [(r.kind, r.day.isoformat()) for r in rows]


@pytest.mark.django_db
def test_each_tenant_is_reviewed_at_its_own_0330_for_its_own_previous_day(world_a: Any, world_b: Any) -> None:
    shanghai = zoned(world_a, "Asia/Shanghai", "2026-11-30T00:00:00+00:00")
    berlin = zoned(world_b, "Europe/Berlin", "2026-11-30T00:00:00+00:00")
    # 19:45 UTC on 12-01: 03:45 on 12-02 in Shanghai, 20:45 on 12-01 in Berlin.
    tick(now=at("2026-12-01T19:45:00+00:00"))
    assert ("review", "2026-12-01") in claims(shanghai) and ("observe", "2026-12-01") in claims(shanghai)
    assert ("observe", "2026-12-02") not in claims(shanghai)  # 05:00 not yet reached there
    assert ("review", "2026-11-30") in claims(berlin) and ("review", "2026-12-01") not in claims(berlin)
    # Berlin's 03:30 on 12-02 is 02:30 UTC.
    tick(now=at("2026-12-02T02:31:00+00:00"))
    assert ("review", "2026-12-01") in claims(berlin)
    # Nothing before the agent existed (created 11-30 in both zones' local time).
    assert min(day for _k, day in claims(shanghai)) == "2026-11-30"


@pytest.mark.django_db
def test_a_second_tick_claims_nothing_and_a_day_missed_is_caught_up(world_a: Any) -> None:
    world = zoned(world_a, "Europe/Berlin", "2026-11-20T00:00:00+00:00")
    first = tick(now=at("2026-12-01T04:00:00+00:00"))
    assert first and tick(now=at("2026-12-01T04:05:00+00:00")) == []
    before = set(claims(world))
    # No tick ran for three nights: the next one catches the missed days up, once each (and
    # sends again the runs claimed before whose tasks expired unrun: no worker took them here).
    tick(now=at("2026-12-04T04:00:00+00:00"))
    assert sorted(set(claims(world)) - before) == [
        ("observe", "2026-12-02"),
        ("observe", "2026-12-03"),
        ("observe", "2026-12-04"),
        ("recheck", "2026-12-01"),
        ("recheck", "2026-12-02"),
        ("recheck", "2026-12-03"),
        ("review", "2026-12-01"),
        ("review", "2026-12-02"),
        ("review", "2026-12-03"),
    ]
    assert len(set(claims(world))) == len(claims(world))


@pytest.mark.django_db
def test_a_run_whose_task_expired_unrun_is_sent_again(world_a: Any) -> None:
    zoned(world_a, "Europe/Berlin", "2026-11-30T00:00:00+00:00")
    now = at("2026-12-01T04:00:00+00:00")
    claimed = tick(now=now)
    assert claimed
    resent = tick(now=now + RUN_EXPIRES + dt.timedelta(minutes=1))
    assert {r.pk for r in resent} == {r.pk for r in claimed}
    assert tick(now=now + RUN_EXPIRES + dt.timedelta(minutes=2)) == []


@pytest.fixture
def private_queue() -> Any:
    """The run tasks the committed claims send go to a queue of this test's own (nobody
    consumes it; it is purged after), never to a worker another test started."""
    import uuid

    from facade.celery import app

    queue = f"test-schedule-{uuid.uuid4().hex[:12]}"
    previous = app.conf.task_routes
    app.conf.update(task_routes={"rsi.tasks.run": {"queue": queue}})
    yield queue
    app.conf.update(task_routes=previous)
    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge(queue)


@pytest.mark.django_db(transaction=True)
def test_two_ticks_at_once_on_postgresql_claim_each_day_once(db: Any, private_queue: str) -> None:
    assert connection.vendor == "postgresql"
    world = zoned(build_tenant("tick-race"), "Asia/Shanghai", "2026-11-25T00:00:00+00:00")
    now = at("2026-12-01T22:00:00+00:00")
    results: list[int] = []
    failures: list[BaseException] = []

    def run() -> None:
        from django.db import connection as own

        try:
            results.append(len([r for r in tick(now=now) if r.agent_id == world.agent.pk]))
        except BaseException as exc:
            failures.append(exc)
        finally:
            own.close()

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    rows = claims(world)
    assert len(rows) == len(set(rows)) == sum(results)


@pytest.mark.django_db
def test_a_time_zone_must_be_an_iana_name(world_a: Any) -> None:
    for wrong in ("+08:00", "China Standard Time", "", "Europe/Atlantis"):
        with pytest.raises(ApplicationError) as refused:
            tenant_time_zone_set(tenant=world_a.tenant, time_zone=wrong, actor=Actor.platform("tests"))
        assert refused.value.code == "invalid_time_zone"
    tenant_time_zone_set(tenant=world_a.tenant, time_zone="Asia/Shanghai", actor=Actor.platform("tests"))
    world_a.tenant.refresh_from_db()
    assert world_a.tenant.time_zone == "Asia/Shanghai"
    changed = LedgerEvent.objects.of_type("tenant.time_zone_changed").get()
    assert changed.payload == {"time_zone": "Asia/Shanghai", "previous": "UTC"}


@pytest.mark.django_db
def test_the_command_shows_and_sets_the_time_zone(world_a: Any) -> None:
    from io import StringIO

    from django.core.management import CommandError, call_command

    out = StringIO()
    call_command("tenant_time_zone", world_a.tenant.slug, "Europe/Berlin", stdout=out)
    assert out.getvalue().strip() == f"{world_a.tenant.slug}: Europe/Berlin"
    with pytest.raises(CommandError, match="not an IANA time zone"):
        call_command("tenant_time_zone", world_a.tenant.slug, "Mars/Olympus")
