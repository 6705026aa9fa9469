"""A contract publish and a customer's conversation take their locks in one order (issue 12).

bench/approvals.py found two deadlocks between `contract_compile` and the chat on PostgreSQL:
a turn holds its session row and then wants the tenant's ledger chain head, while the publish
held the chain head and then wanted the row to close it; and a session opening held the chain
head and at its commit wanted a KEY SHARE lock on the agent row, which the publish's FOR UPDATE
blocked while it wanted the chain head.  Each test holds the customer's transaction open at the
dangerous point until the publish is seen waiting on a lock, then lets it go on: both must
finish (PostgreSQL would otherwise end one of them with `deadlock detected` after its
deadlock_timeout)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction

from approvals.contract import contract_compile
from approvals.models import AgentContract
from conftest import build_tenant
from facade.dialogue.models import DialogueSession, Message
from facade.dialogue.services import run_start, session_open
from facade.tenancy.models import Customer
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor

pytestmark = pytest.mark.django_db(transaction=True)

# A publish that takes away what open conversations rely on (a skill), so that it ends them.
CHANGE = {"skill_ids": ["knowledge_answers", "request_intake"]}


def _waiting_on_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


def test_a_turn_that_holds_its_session_while_a_publish_closes_it_finishes(db: Any) -> None:
    assert connection.vendor == "postgresql"
    world = build_tenant("locks-turn")
    session = session_open(
        agent=world.agent, audience=Audience.CUSTOMER, customer=Customer.objects.create(tenant=world.tenant)
    )
    go = threading.Event()

    def turn(held: threading.Event) -> None:
        # What a turn's first statement does (it touches the session under its row lock), then —
        # once the publish waits for that row — what the same transaction does next: store the
        # message and append its event to the tenant's chain.
        with transaction.atomic():
            DialogueSession.objects.filter(pk=session.pk, status="open").update(last_activity_at=session.created_at)
            held.set()
            go.wait(30)
            run_start(
                session=session,
                text="Do you frame maps?",
                provider="offline",
                context_hash="0" * 64,
                contract_version=2,  # the version a turn reads once the publish is live
            )

    failures = _race(world, turn, go)
    # No deadlock: the publish went live first, so the turn's message is refused (its session
    # is of the old version now) and the session is closed — by the turn or by the batches.
    assert [getattr(f, "code", repr(f)) for f in failures] == ["session_continued"]
    assert AgentContract.objects.get(agent=world.agent, is_live=True).version == 2
    assert not Message.objects.filter(session=session, role="principal").exists()
    closed = DialogueSession.objects.get(pk=session.pk)
    assert (closed.status, closed.closed_reason) == ("closed", "contract_republished")


def test_a_session_opening_while_a_publish_runs_finishes(db: Any) -> None:
    assert connection.vendor == "postgresql"
    world = build_tenant("locks-open")
    customer = Customer.objects.create(tenant=world.tenant)
    go = threading.Event()
    opened: list[DialogueSession] = []

    def open_session(held: threading.Event) -> None:
        # The new session's row and its ledger event, uncommitted until the publish waits; its
        # commit then checks the session's foreign key to the agent (a KEY SHARE lock on the row).
        with transaction.atomic():
            opened.append(session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer))
            held.set()
            go.wait(30)

    failures = _race(world, open_session, go)
    assert failures == []
    assert AgentContract.objects.get(agent=world.agent, is_live=True).version == 2
    assert DialogueSession.objects.filter(pk=opened[0].pk).exists()


def _race(world: Any, step: Callable[[threading.Event], None], go: threading.Event) -> list[BaseException]:
    """Run the customer's `step` in a thread until it sets `held` (it then waits for `go`), start
    a publish in another, set `go` once the publish waits on a lock, and return what failed."""
    held = threading.Event()
    publisher_pid: list[int] = []
    failures: list[BaseException] = []

    def customer() -> None:
        from django.db import connection as own

        try:
            step(held)
        except BaseException as exc:
            failures.append(exc)
        finally:
            own.close()

    def publisher() -> None:
        from django.db import connection as own

        try:
            with own.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                publisher_pid.append(cursor.fetchone()[0])
            contract_compile(agent=world.agent, changes=CHANGE, actor=Actor.human(world.owner.pk))
        except BaseException as exc:
            failures.append(exc)
        finally:
            own.close()

    first = threading.Thread(target=customer)
    first.start()
    assert held.wait(30), "the customer's transaction did not get going"
    second = threading.Thread(target=publisher)
    second.start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and second.is_alive():
        if publisher_pid and _waiting_on_a_lock(publisher_pid[0]):
            break
        time.sleep(0.01)
    go.set()
    first.join(60)
    second.join(60)
    return failures
