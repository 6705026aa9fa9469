"""One-time decision tokens (issue 12, DESIGN §5): 256 random bits kept only as a digest,
bound to agent + change + owner + decision, valid five minutes, consumable once — and every
refusal answers the same `invalid_token` while the ledger records why."""

from __future__ import annotations

import datetime as dt
import threading
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from approvals.authority import ConsumedToken, token_consume, token_issue
from approvals.authority_models import DecisionToken
from conftest import TenantWorld, build_tenant
from facade.errors import ApplicationError
from facade.tenancy.models import Role
from facade.tenancy.schemas import Actor
from facade.tenancy.services import agent_create, agent_owner_add, membership_grant, user_ensure
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify

CHANGE = "chg_alpha0001"
OTHER_CHANGE = "chg_alpha0002"
PLATFORM = Actor.platform("tests")


def issue(world: TenantWorld, change: str = CHANGE, decision: str = "approve", **extra: Any) -> Any:
    return token_issue(agent=world.agent, change_id=change, version=3, owner=world.owner, decision=decision, **extra)


def consume(world: TenantWorld, token: str, change: str = CHANGE, decision: str = "approve", **extra: Any) -> Any:
    bindings: dict[str, Any] = {"agent": world.agent, "owner": world.owner, **extra}
    return token_consume(token=token, change_id=change, decision=decision, **bindings)


def refused(world: TenantWorld, token: str, **extra: Any) -> ApplicationError:
    with pytest.raises(ApplicationError) as caught:
        consume(world, token, **extra)
    assert (caught.value.code, caught.value.http_status) == ("invalid_token", 403)
    return caught.value


def reasons(tenant_id: int) -> list[str]:
    rows = LedgerEvent.objects.filter(chain_id=tenant_id).of_type("authority.token_refused").order_by("seq")
    return [row.payload["reason"] for row in rows]


@pytest.mark.django_db
def test_a_token_is_256_random_bits_stored_only_as_a_digest(world_a: TenantWorld) -> None:
    issued = issue(world_a)
    assert len(issued.token) >= 43  # 32 bytes, base64url
    row = DecisionToken.objects.get()
    assert issued.token not in row.token_hash and len(row.token_hash) == 64
    assert (row.change_id, row.version, row.decision, row.assurance) == (CHANGE, 3, "approve", "click")
    assert row.expires_at - row.created_at == dt.timedelta(minutes=5)
    event = LedgerEvent.objects.of_type("authority.issued").get()
    assert issued.token not in event.canonical
    assert event.payload["authorization_id"] == issued.authorization_id == row.authorization_id
    assert issue(world_a).token != issued.token


@pytest.mark.django_db
def test_consumed_once_then_replay_is_refused(world_a: TenantWorld) -> None:
    issued = issue(world_a)
    assert consume(world_a, issued.token) == ConsumedToken(issued.authorization_id, "click", 3)
    error = refused(world_a, issued.token)
    assert issued.token not in str(error) and issued.token not in repr(error)
    assert reasons(world_a.tenant.pk) == ["used"]
    consumed = LedgerEvent.objects.of_type("authority.token_consumed").get()
    assert consumed.entity_id == CHANGE and issued.token not in consumed.canonical
    assert ledger_verify(chain_id=world_a.tenant.pk).ok


@pytest.mark.django_db
def test_each_binding_changed_in_turn_is_refused(world_a: TenantWorld, world_b: TenantWorld) -> None:
    issued = issue(world_a)
    other_agent = agent_create(tenant=world_a.tenant, slug="alpha-second", name="Second", actor=PLATFORM)
    other_owner, _ = user_ensure(email="second-owner@alpha.test", password="pw")
    membership_grant(tenant=world_a.tenant, user=other_owner, role=Role.OWNER, actor=PLATFORM)
    agent_owner_add(agent=world_a.agent, user=other_owner, actor=PLATFORM)
    refused(world_a, issued.token, agent=other_agent)
    refused(world_a, issued.token, change=OTHER_CHANGE)
    refused(world_a, issued.token, owner=other_owner)
    refused(world_a, issued.token, decision="reject")
    refused(world_a, issued.token, agent=world_b.agent, owner=world_b.owner)
    assert reasons(world_a.tenant.pk) == ["agent", "change", "owner", "decision"]
    assert reasons(world_b.tenant.pk) == ["agent"]
    refused_elsewhere = LedgerEvent.objects.filter(chain_id=world_b.tenant.pk).of_type("authority.token_refused").get()
    assert refused_elsewhere.payload["authorization_id"] == ""
    # None of the refusals used it up: with its own bindings it still works, once.
    assert consume(world_a, issued.token).authorization_id == issued.authorization_id


@pytest.mark.django_db
def test_tokens_swapped_between_two_changes_are_refused(world_a: TenantWorld) -> None:
    first, second = issue(world_a, CHANGE), issue(world_a, OTHER_CHANGE)
    refused(world_a, first.token, change=OTHER_CHANGE)
    refused(world_a, second.token, change=CHANGE)
    assert consume(world_a, first.token, change=CHANGE).authorization_id == first.authorization_id
    assert consume(world_a, second.token, change=OTHER_CHANGE).authorization_id == second.authorization_id


@pytest.mark.django_db
def test_tampered_truncated_and_foreign_strings_are_refused(world_a: TenantWorld) -> None:
    token = issue(world_a).token
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    for attempt in (flipped, token[:-1], token[:20], token + "x", "", "x" * 10_000, token.upper()):
        refused(world_a, attempt)
    assert set(reasons(world_a.tenant.pk)) == {"unknown"}
    assert consume(world_a, token).assurance == "click"


@pytest.mark.django_db
def test_a_token_expires_after_five_minutes(world_a: TenantWorld) -> None:
    start = timezone.now()
    late = issue(world_a, now=start)
    in_time = issue(world_a, now=start)
    refused(world_a, late.token, now=start + dt.timedelta(minutes=5))
    assert consume(world_a, in_time.token, now=start + dt.timedelta(minutes=4, seconds=59)).version == 3
    assert reasons(world_a.tenant.pk) == ["expired"]


@pytest.mark.django_db
def test_the_lifetime_is_a_setting(world_a: TenantWorld, settings: Any) -> None:
    settings.FACADE_DECISION_TOKEN_SECONDS = 60
    start = timezone.now()
    issued = issue(world_a, now=start)
    assert issued.expires_at == start + dt.timedelta(seconds=60)
    refused(world_a, issued.token, now=start + dt.timedelta(seconds=61))


@pytest.mark.django_db
def test_an_unknown_decision_is_not_issued(world_a: TenantWorld) -> None:
    with pytest.raises(ApplicationError) as caught:
        issue(world_a, decision="auto")
    assert caught.value.code == "invalid_decision"
    assert not DecisionToken.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_twenty_threads_consuming_one_token_exactly_one_succeeds() -> None:
    assert connection.vendor == "postgresql"
    world = build_tenant("racer")
    issued = issue(world)
    barrier = threading.Barrier(20)
    outcomes: list[str] = []
    lock = threading.Lock()

    def attempt() -> None:
        from django.db import connection as own  # each thread has its own connection

        try:
            barrier.wait()
            try:
                consume(world, issued.token)
                outcome = "ok"
            except ApplicationError as error:
                outcome = error.code
            with lock:
                outcomes.append(outcome)
        finally:
            own.close()

    threads = [threading.Thread(target=attempt) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["invalid_token"] * 19 + ["ok"]
    assert LedgerEvent.objects.of_type("authority.token_consumed").count() == 1
    assert reasons(world.tenant.pk) == ["used"] * 19
    assert ledger_verify(chain_id=world.tenant.pk).ok
