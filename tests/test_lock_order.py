"""Issue 28 §4: one `POST /api/agents/<slug>/changes` during a running replay answered 500 after
PostgreSQL reported a deadlock (an FK check on the agent against the ledger chain's head).  Real
concurrent transactions on PostgreSQL, each on its own connection:

- locking a proposal or a replay (to decide, apply or finish it) leaves the agent row free for
  the FK check every new row of the agent makes (`services._locked`, `replay.replay_locked`):
  the agent is locked in one place, the contract publish, FOR NO KEY UPDATE;
- a new change proposed while a replay holds its rows goes through at once;
- a transaction the database picks as a deadlock's victim answers a JSON 503 with Retry-After,
  never a 500, and the same request sent again succeeds."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection, connections, transaction
from django.test import Client

from approvals.models import ChangeProposal, ProposalReplay
from approvals.replay import replay_locked
from approvals.rules import Origin
from approvals.services import _locked, proposal_create
from conftest import TenantWorld
from facade.tenancy.schemas import Actor
from tests.test_approvals_decide import strict_client

pytestmark = pytest.mark.django_db(transaction=True)

GREETING = {"language": "en", "situation": "greeting", "text": "Welcome! Ask me anything."}
DRAFT = {"title": "Parking", "text": "Free parking behind the shop."}


def _changes(world: TenantWorld) -> str:
    return f"/api/agents/{world.agent.slug}/changes"


def _pending(world: TenantWorld) -> ChangeProposal:
    return proposal_create(
        agent=world.agent,
        kind="knowledge_draft",
        payload=DRAFT,
        summary="a draft",
        origin=Origin.REVIEW_REPORT,
        actor=Actor.platform("review"),
    )


@contextmanager
def held(lock: Callable[[], Any]) -> Iterator[threading.Event]:
    """Run `lock` in a transaction of another thread (its own connection) and keep that
    transaction open until the block ends."""
    taken, release, failed = threading.Event(), threading.Event(), []

    def hold() -> None:
        try:
            with transaction.atomic():
                lock()
                taken.set()
                release.wait(30)
        except Exception as exc:  # noqa: BLE001 (reported to the test below)
            failed.append(exc)
            taken.set()
        finally:
            connections.close_all()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    assert taken.wait(30)
    assert not failed, failed
    try:
        yield release
    finally:
        release.set()
        thread.join(30)


def _agent_key_share_free(world: TenantWorld) -> bool:
    """Whether an FK check on the agent (FOR KEY SHARE) could go ahead now, asked without waiting."""
    from psycopg.errors import LockNotAvailable

    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM tenancy_agentprofile WHERE id = %s FOR KEY SHARE NOWAIT", [world.agent.pk])
    except Exception as exc:  # noqa: BLE001
        if isinstance(exc.__cause__, LockNotAvailable):
            return False
        raise
    return True


def test_locking_a_proposal_leaves_the_agent_free_for_fk_checks(world_a: TenantWorld) -> None:
    proposal = _pending(world_a)
    with held(lambda: _locked(ChangeProposal.objects.filter(pk=proposal.pk)).get()):
        assert _agent_key_share_free(world_a)


def test_locking_a_replay_leaves_the_agent_free_for_fk_checks(world_a: TenantWorld) -> None:
    proposal = _pending(world_a)
    replay = ProposalReplay.objects.create(proposal=proposal, proposal_version=proposal.version, days=7)
    with held(lambda: replay_locked(replay.pk)):
        assert _agent_key_share_free(world_a)


def test_locking_a_knowledge_version_to_decide_it_leaves_the_agent_free_for_fk_checks(world_a: TenantWorld) -> None:
    from knowledge.schemas import SourceIn
    from knowledge.services import _locked as version_locked
    from knowledge.services import entry_propose

    version = entry_propose(
        agent=world_a.agent,
        title="Parking",
        body="Free parking behind the shop.",
        actor=Actor.human(world_a.owner.pk),
        source=SourceIn(type="owner_dialogue", ref="session:1", version="run:1"),
    )
    with held(lambda: version_locked(version)):
        assert _agent_key_share_free(world_a)


def test_a_change_proposed_while_a_replay_holds_its_rows_goes_through(world_a: TenantWorld) -> None:
    proposal = _pending(world_a)
    replay = ProposalReplay.objects.create(proposal=proposal, proposal_version=proposal.version, days=7)
    owner = strict_client(world_a.owner)
    with held(lambda: replay_locked(replay.pk)):
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '3s'")  # on the old lock order the FK check waits
        try:
            response = owner.post(
                _changes(world_a), {"kind": "wording", "payload": GREETING, "summary": "greet"}, format="json"
            )
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET lock_timeout")
    assert response.status_code == 201, response.content


def _blocked_by(waiter: int, holder: int) -> bool:
    """Whether backend `waiter` waits for a lock `holder` holds (asked of the lock manager now;
    pg_stat_activity would answer from a snapshot kept for the whole transaction)."""
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT %s = ANY(pg_blocking_pids(%s))", [holder, waiter])
        return bool(cursor.fetchone()[0])


def _post_change(world: TenantWorld, way: str) -> Any:
    if way == "api":
        owner = strict_client(world.owner)
        return owner.post(_changes(world), {"kind": "wording", "payload": GREETING, "summary": "greet"}, format="json")
    page = Client()
    page.force_login(world.owner)
    form = {"kind": "wording", "summary": "greet", **GREETING}
    return page.post(f"/owner/{world.agent.slug}/contract/change", form)


@pytest.mark.parametrize("way", ["api", "page"])
def test_a_deadlock_victim_answers_503_with_retry_after_and_the_retry_succeeds(world_a: TenantWorld, way: str) -> None:
    """Another transaction takes what the old replay's finish took — the agent row FOR UPDATE,
    then the tenant's ledger head — around the POST, whose new rows check their foreign keys at
    commit (Django's constraints are deferred), after its own append took the head: a lock
    cycle, which PostgreSQL breaks by rolling the POST back (its deadlock check runs first:
    100 ms against the other's 20 s)."""
    _pending(world_a)  # the chain's head row exists
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        post_pid = int(cursor.fetchone()[0])
        cursor.execute("SET deadlock_timeout = '100ms'")
    steps: list[str] = []
    started = threading.Event()
    failed: list[Exception] = []

    def cycle() -> None:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                own = int(cursor.fetchone()[0])
                cursor.execute("SET LOCAL deadlock_timeout = '20s'")
                cursor.execute("SELECT 1 FROM tenancy_agentprofile WHERE id = %s FOR UPDATE", [world_a.agent.pk])
                steps.append("agent")
                started.set()
                deadline = time.monotonic() + 20
                while not _blocked_by(post_pid, own):  # the POST's commit waits for the agent now
                    assert time.monotonic() < deadline, "the POST never waited for the agent"
                    time.sleep(0.02)
                steps.append("post waits")
                cursor.execute("SELECT 1 FROM ledger_chain WHERE chain_id = %s FOR UPDATE", [world_a.tenant.pk])
                steps.append("head")
        except Exception as exc:  # noqa: BLE001 (reported below)
            failed.append(exc)
            started.set()
        finally:
            connections.close_all()

    thread = threading.Thread(target=cycle, daemon=True)
    thread.start()
    assert started.wait(20)
    try:
        response = _post_change(world_a, way)
    finally:
        thread.join(30)
        with connection.cursor() as cursor:
            cursor.execute("RESET deadlock_timeout")
    assert steps == ["agent", "post waits", "head"] and not failed, (steps, failed)
    assert response.status_code == 503, response.content
    assert response["Retry-After"] == "1"
    if way == "api":
        assert response.json()["error"] == "conflict_retry"
    else:
        assert "Busy for a moment" in response.content.decode() and "send it again" in response.content.decode()
    assert not ChangeProposal.objects.filter(kind="wording").exists()  # nothing of it was saved
    again = _post_change(world_a, way)
    assert again.status_code == (201 if way == "api" else 302), again.content
    assert ChangeProposal.objects.filter(kind="wording").count() == 1
