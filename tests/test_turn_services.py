"""A turn's writes as services: `run_start`, `model_call_count` and `run_finish`.

On PostgreSQL they are single statements (facade/dialogue/turn_sql.py); on other databases they
go through the ORM.  Both paths run here on PostgreSQL and must write the same rows, refuse the
same things and append the same ledger events."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from facade.dialogue import services
from facade.dialogue.models import (
    DailyUsage,
    DialogueSession,
    Message,
    Run,
    RunStatus,
    SessionStatus,
    Span,
    TrustChange,
)
from facade.dialogue.services import RunOutcome, model_call_count, run_finish, run_start, session_open
from facade.errors import ApplicationError
from facade.tenancy.models import Customer
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from guard.outgoing import RULESET_HASH
from knowledge.models import KnowledgeHit
from knowledge.schemas import SourceIn
from knowledge.services import entry_propose
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify

pytestmark = pytest.mark.django_db

PATHS = ["one_statement", "orm"]


@pytest.fixture(params=PATHS)
def path(request: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "orm":
        monkeypatch.setattr(services, "_one_statement", lambda: False)
    return str(request.param)


def customer_session(world: Any) -> DialogueSession:
    customer = Customer.objects.create(tenant=world.tenant)
    return session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer)


def start(session: DialogueSession, text: str = "Do you frame mirrors?", cid: str = "") -> services.RunStart:
    return run_start(session=session, text=text, client_message_id=cid, provider="offline", context_hash="c" * 64)


def posted() -> list[dict[str, Any]]:
    return [e.payload for e in LedgerEvent.objects.of_type("message.posted")]


def test_run_start_stores_the_message_its_run_and_the_first_count(world_a: Any, path: str) -> None:
    session = customer_session(world_a)
    before = session.last_activity_at
    started = start(session, cid="m-1")
    assert started.created and started.counted and started.run is not None
    message = Message.objects.get(pk=started.message.pk)
    assert (message.role, message.text, message.client_message_id, message.citations, message.stop_reason) == (
        "principal",
        "Do you frame mirrors?",
        "m-1",
        [],
        "",
    )
    assert message.reply_to_id is None and message.created_at == started.message.created_at
    run = Run.objects.get(pk=started.run.pk)
    fields = ("tenant_id", "session_id", "message_id", "status", "stop_reason", "needs_input", "step_index")
    assert tuple(getattr(run, f) for f in fields) == (
        session.tenant_id,
        session.pk,
        message.pk,
        RunStatus.PLANNING,
        "",
        False,
        0,
    )
    assert (run.llm_call_count, run.tool_call_count, run.prompt_tokens, run.completion_tokens) == (0, 0, 0, 0)
    assert (run.provider, run.context_hash, run.guard_category, run.finished_at) == ("offline", "c" * 64, "", None)
    assert DailyUsage.objects.get(tenant_id=session.tenant_id).model_calls == 1
    fresh = DialogueSession.objects.get(pk=session.pk)
    assert fresh.last_activity_at > before and fresh.last_activity_at == session.last_activity_at
    assert posted() == [{"message_id": message.pk, "chars": len("Do you frame mirrors?")}]


def test_a_resent_client_message_id_writes_nothing_and_counts_nothing(world_a: Any, path: str) -> None:
    session = customer_session(world_a)
    first = start(session, cid="m-1")
    again = start(session, text="something else", cid="m-1")
    assert (again.created, again.run, again.counted, again.message.pk) == (False, None, False, first.message.pk)
    assert Message.objects.filter(session=session).count() == 1 and Run.objects.count() == 1
    assert DailyUsage.objects.get(tenant_id=session.tenant_id).model_calls == 1
    assert len(posted()) == 1


@pytest.mark.parametrize("status", [SessionStatus.CLOSED, SessionStatus.EXPIRED])
def test_a_session_that_is_not_open_stores_nothing_but_answers_a_resend(
    world_a: Any, path: str, status: SessionStatus
) -> None:
    session = customer_session(world_a)
    stored = start(session, cid="m-1")
    DialogueSession.objects.filter(pk=session.pk).update(status=status)
    with pytest.raises(ApplicationError) as refused:
        start(session, cid="m-2")
    assert (refused.value.code, refused.value.http_status) == (f"session_{status}", 409)
    assert start(session, cid="m-1").message.pk == stored.message.pk  # a resend still finds its message
    assert Message.objects.count() == 1 and Run.objects.count() == 1 and len(posted()) == 1
    assert DailyUsage.objects.get(tenant_id=session.tenant_id).model_calls == 1


@pytest.mark.parametrize("limit, counted", [(0, False), (1, True), (2, True)])
def test_the_first_count_respects_the_daily_budget(
    world_a: Any, path: str, settings: Any, limit: int, counted: bool
) -> None:
    settings.FACADE_DAILY_MODEL_CALLS = limit
    session = customer_session(world_a)
    assert start(session, cid="a").counted is counted
    usage = DailyUsage.objects.filter(tenant_id=session.tenant_id).first()
    assert (usage.model_calls if usage else 0) == (1 if counted else 0)
    # The message and its run are stored whether or not the budget had room.
    assert Run.objects.filter(session=session).count() == 1


def test_later_model_calls_are_counted_up_to_the_limit(world_a: Any, path: str, settings: Any) -> None:
    settings.FACADE_DAILY_MODEL_CALLS = 3
    session = customer_session(world_a)
    start(session, cid="a")
    assert [model_call_count(tenant_id=session.tenant_id) for _ in range(3)] == [True, True, False]
    assert DailyUsage.objects.get(tenant_id=session.tenant_id).model_calls == 3


def teach(world: Any, title: str) -> Any:
    return entry_propose(
        agent=world.agent,
        title=title,
        body=f"{title}: all about it.",
        actor=Actor.human(world.owner.pk),
        source=SourceIn(type="owner_dialogue", ref=f"chat:{title}", version="1"),
    )


def finish(session: DialogueSession, run: Run, **changes: Any) -> Message:
    run.step_index, run.llm_call_count, run.tool_call_count, run.prompt_tokens, run.completion_tokens = 1, 2, 1, 30, 12
    wall = timezone.now() - dt.timedelta(seconds=1)
    spans = [
        Span(tenant_id=session.tenant_id, run=run, kind="model", name="offline", outcome="tool_calls",
             started_at=wall, duration_ms=1.25, prompt_tokens=20, completion_tokens=8),
        Span(tenant_id=session.tenant_id, run=run, kind="tool", name="search_knowledge", outcome="ok",
             started_at=wall, duration_ms=0.5),
    ]  # fmt: skip
    outcome = RunOutcome(
        status=changes.pop("status", RunStatus.COMPLETED),
        stop_reason="",
        needs_input=False,
        guard_category=changes.pop("guard_category", ""),
        guard_rule=changes.pop("guard_rule", ""),
        text="Here is what I found: mirrors.",
        citations=[{"entry_id": 1, "version": 1, "title": "Mirrors"}],
    )
    return run_finish(session=session, run=run, outcome=outcome, spans=spans, agent=session.agent, **changes)


def test_run_finish_stores_the_reply_outcome_spans_and_hits(world_a: Any, world_b: Any, path: str) -> None:
    session = customer_session(world_a)
    mine, foreign = teach(world_a, "Mirrors"), teach(world_b, "Elsewhere")
    started = start(session, cid="m-1")
    assert started.run is not None
    reply = finish(session, started.run, hits=[mine.pk, foreign.pk])
    stored = Message.objects.get(pk=reply.pk)
    assert (stored.role, stored.text, stored.reply_to_id, stored.stop_reason) == (
        "agent",
        "Here is what I found: mirrors.",
        started.message.pk,
        "",
    )
    assert stored.citations == [{"entry_id": 1, "version": 1, "title": "Mirrors"}]
    # The rule set of the outgoing check that passed it, for the nightly re-check (guard/recheck.py).
    assert stored.ruleset_hash == reply.ruleset_hash == RULESET_HASH
    run = Run.objects.get(pk=started.run.pk)
    assert (run.status, run.step_index, run.llm_call_count, run.tool_call_count) == (RunStatus.COMPLETED, 1, 2, 1)
    assert (run.prompt_tokens, run.completion_tokens, run.finished_at is not None) == (30, 12, True)
    spans = list(
        Span.objects.filter(run=run)
        .order_by("pk")
        .values_list("kind", "name", "outcome", "duration_ms", "prompt_tokens", "completion_tokens")
    )
    assert spans == [("model", "offline", "tool_calls", 1.25, 20, 8), ("tool", "search_knowledge", "ok", 0.5, 0, 0)]
    # Only this agent's version counts as a hit; another tenant's id is dropped by the same statement.
    assert list(KnowledgeHit.objects.values_list("version_id", "session_id")) == [(mine.pk, session.pk)]
    finished = [e.payload for e in LedgerEvent.objects.of_type("run.finished")]
    assert finished[0]["reply_id"] == reply.pk and finished[0]["status"] == "completed"
    assert finished[0]["llm_calls"] == 2 and finished[0]["citations"] == 1
    assert not LedgerEvent.objects.of_type("guard.blocked").exists()
    assert ledger_verify(chain_id=world_a.tenant.pk).ok


def test_a_guarded_reply_is_recorded_and_costs_no_trust(world_a: Any, path: str) -> None:
    session = customer_session(world_a)
    started = start(session, cid="m-1")
    assert started.run is not None
    finish(
        session,
        started.run,
        hits=[],
        status=RunStatus.WAITING_INPUT,
        guard_category="price",
        guard_rule="price.en.money",
    )
    assert Run.objects.get(pk=started.run.pk).guard_category == "price"
    assert [e.payload for e in LedgerEvent.objects.of_type("guard.blocked")] == [
        {"category": "price", "audience": "customer", "entry_id": None, "rule": "price.en.money", "reason": None}
    ]
    # The guard blocked the agent's own reply: the customer did nothing (issue 11, point 5).
    assert Customer.objects.get(pk=session.customer_id).trust == 50
    assert not TrustChange.objects.exists()
    assert not LedgerEvent.objects.of_type("customer.trust_changed").exists()


def test_an_owners_reply_carries_no_rule_set_hash(world_a: Any, path: str) -> None:
    """Only customer and peer replies pass the outgoing check, so only they are re-checked."""
    session = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    started = start(session, cid="o-1")
    assert started.run is not None
    reply = finish(session, started.run, hits=[])
    assert Message.objects.get(pk=reply.pk).ruleset_hash == "" == reply.ruleset_hash
