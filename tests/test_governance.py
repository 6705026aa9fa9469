"""Governance by exception (issue 13): the escalation budget (a token bucket per agent) pauses an
agent's proposing until the owner clears the inbox; the owner's decisions are preference signals
(with an optional reason) that hold back a kind they keep rejecting.  Real PostgreSQL; the
decisions go through the API as the inbox card sends them."""

from __future__ import annotations

import datetime as dt
import hashlib
import threading
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from approvals.models import ChangeProposal, PreferenceSignal
from approvals.services import proposal_create, proposals_expire
from conftest import TenantWorld
from facade.dialogue.models import DialogueSession
from facade.tenancy.schemas import Actor
from knowledge.models import KnowledgeMiss
from ledger.models import LedgerEvent
from rsi.governance_models import EscalationBudget
from rsi.review import report_view, review_run
from rsi.review_input import local_today
from rsi.review_models import ReviewReport
from tests.test_review import customer_turn, signed_in

pytestmark = pytest.mark.django_db

TOPICS = (
    "gift wrapping parcels",
    "parking bicycles nearby",
    "weekend opening hours",
    "student discount",
    "repair warranty",
    "wheelchair access",
)


def gaps(world: TenantWorld, topics: tuple[str, ...], days_ago: int, askers: int = 3) -> dt.date:
    """`askers` customers ask each topic, `days_ago` days back (the rows made now are moved there)."""
    since = timezone.now()
    for words in topics:
        for _ in range(askers):
            customer_turn(world, words, miss=True)
    when = timezone.now() - dt.timedelta(days=days_ago)
    DialogueSession.objects.filter(agent=world.agent, created_at__gte=since).update(created_at=when)
    KnowledgeMiss.objects.filter(agent=world.agent, created_at__gte=since).update(created_at=when)
    return local_today(world.tenant) - dt.timedelta(days=days_ago)


def changes(world: TenantWorld, change: str, tail: str = "") -> str:
    return f"/api/agents/{world.agent.slug}/changes/{change}{tail}"


def decide(owner: Client, world: TenantWorld, change: ChangeProposal, decision: str, reason: Any = None) -> Any:
    """Decide as the inbox card does: authorize, then decide with the token (and the reason)."""
    if decision == "approve" and change.kind == "knowledge_draft":
        written = {"title": change.payload["title"], "text": "Yes, we do: ask at the counter."}
        edited = owner.patch(
            changes(world, change.pk), {"payload": written, "expected_version": change.version}, "application/json"
        )
        assert edited.status_code == 200, edited.content
        change.refresh_from_db()
    granted = owner.post(changes(world, change.pk, "/authorize"), {"decision": decision}, "application/json")
    assert granted.status_code == 200, granted.content
    body = {"token": granted.json()["token"], "decision": decision, "expected_version": change.version}
    if reason is not None:
        body["reason"] = reason
    return owner.post(changes(world, change.pk, "/decide"), body, "application/json")


def event_types(world: TenantWorld, prefix: str) -> list[str]:
    found = [e.event_type for e in LedgerEvent.objects.filter(chain_id=world.tenant.pk).order_by("seq")]
    return [t for t in found if t.startswith(prefix)]


def events_of(world: TenantWorld, event_type: str) -> Any:
    return LedgerEvent.objects.filter(chain_id=world.tenant.pk).of_type(event_type).order_by("seq")


def test_an_agent_over_its_escalation_budget_stops_proposing_until_the_inbox_is_cleared(
    world_a: TenantWorld, settings: Any
) -> None:
    settings.FACADE_REVIEW_ESCALATION_CAPACITY = 2
    first_day = gaps(world_a, TOPICS[:3], days_ago=2)
    first = review_run(agent_id=world_a.agent.pk, day=first_day)
    # Three gaps, a daily cap of five, but two tokens: two proposals, then proposing pauses.
    assert len(first.gaps) == 3 and len(first.proposals) == 2 and first.paused
    assert first.held_back == 1 and first.held_back_reasons == {"daily_cap": 0, "owner_preference": 0, "paused": 1}
    budget = EscalationBudget.objects.get(agent=world_a.agent)
    assert budget.paused and budget.paused_day == first_day and budget.tokens < 1
    paused = events_of(world_a, "review.paused").get()
    assert paused.payload["capacity"] == 2 and paused.payload["pending"] == 2
    assert paused.payload["report"] == str(first.pk)

    # The next day's review proposes nothing at all, and its report says why.
    second_day = gaps(world_a, TOPICS[3:5], days_ago=1)
    second = review_run(agent_id=world_a.agent.pk, day=second_day)
    assert len(second.gaps) == 2 and second.proposals == [] and second.paused
    assert second.held_back_reasons["paused"] == 2 and second.held_back == 2
    view = report_view(second)
    assert view["paused"] is True and view["pausedReason"] == "escalation_budget_spent"
    assert view["heldBackReasons"]["paused"] == 2
    assert ChangeProposal.objects.filter(origin="review_report").count() == 2
    assert event_types(world_a, "review.paused") == ["review.paused"]  # paused once, not per proposal
    finished = events_of(world_a, "review.finished").order_by("-seq")[0]
    assert finished.payload["paused"] is True and finished.payload["held_back_reasons"]["paused"] == 2
    inbox = f"/owner/{world_a.agent.slug}/inbox"
    page = signed_in(world_a.owner).get(inbox).content.decode()
    assert "Proposing is paused" in page and "escalation budget (2 proposals, 5 more a day)" in page
    assert "Held back for that: 2." in page
    zh = signed_in(world_a.owner).get(inbox, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "提议已暂停" in zh and "因此暂缓：2 条" in zh

    # A review while one proposal still waits stays paused.
    owner = signed_in(world_a.owner)
    pending = list(ChangeProposal.objects.filter(origin="review_report", status="pending").order_by("created_at"))
    assert decide(owner, world_a, pending[0], "approve").status_code == 200
    today = gaps(world_a, TOPICS[5:], days_ago=0)
    assert review_run(agent_id=world_a.agent.pk, day=today).paused
    assert ChangeProposal.objects.filter(origin="review_report").count() == 2

    # The owner decides the last pending proposal: the next review resumes, with a full bucket.
    assert decide(owner, world_a, pending[1], "reject", "not now").status_code == 200
    again = review_run(agent_id=world_a.agent.pk, day=today)
    assert not again.paused and len(again.proposals) == 1 and again.held_back_reasons["paused"] == 0
    assert ChangeProposal.objects.filter(origin="review_report", status="pending").count() == 1
    budget.refresh_from_db()
    assert not budget.paused and budget.tokens == pytest.approx(1, abs=0.01)  # full (2), one taken
    resumed = events_of(world_a, "review.resumed").get()
    assert resumed.payload["paused_day"] == first_day.isoformat() and resumed.payload["capacity"] == 2
    page = signed_in(world_a.owner).get(inbox).content.decode()
    assert "Proposing is paused" not in page


def test_three_rejections_of_a_kind_hold_back_the_same_gap(world_a: TenantWorld) -> None:
    day = gaps(world_a, TOPICS[:3], days_ago=1)
    report = review_run(agent_id=world_a.agent.pk, day=day)
    owner = signed_in(world_a.owner)
    reason = "We answer these on the phone, not in the chat"
    for change in ChangeProposal.objects.filter(pk__in=[p["change_id"] for p in report.proposals]):
        assert decide(owner, world_a, change, "reject", reason).status_code == 200
    signals = PreferenceSignal.objects.filter(agent=world_a.agent)
    assert signals.count() == 3 and {s.decision for s in signals} == {"reject"}
    assert {(s.kind, s.origin, s.reason, s.decided_by_id) for s in signals} == {
        ("knowledge_draft", "review_report", reason, world_a.owner.pk)
    }

    # The same gap today: seen and reported, but not proposed — held back by the owner's preference;
    # a gap of the same kind that 15 customers asked clears the bar (3 net rejections × 5).
    today = gaps(world_a, TOPICS[:1], days_ago=0)
    gaps(world_a, TOPICS[4:5], days_ago=0, askers=15)
    again = review_run(agent_id=world_a.agent.pk, day=today)
    assert len(again.gaps) == 2 and not again.paused
    [made] = again.proposals
    assert ChangeProposal.objects.get(pk=made["change_id"]).payload["title"] == "repair warranty"
    assert again.held_back_reasons == {"daily_cap": 0, "owner_preference": 1, "paused": 0}
    assert again.preferences == [
        {"kind": "knowledge_draft", "approvals": 0, "rejections": 3, "min_sessions": 15, "held_back": 1}
    ]
    assert report_view(again)["heldBackReasons"]["owner_preference"] == 1
    inbox = f"/owner/{world_a.agent.slug}/inbox"
    page = signed_in(world_a.owner).get(inbox).content.decode()
    assert "Held back: 1 (Knowledge entry) because you rejected this kind of proposal 3 times" in page
    assert reason not in page.split('id="review-h"', 1)[1].split("</section>", 1)[0]  # not in the report
    zh = signed_in(world_a.owner).get(inbox, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "因为您最近拒绝了这类提议 3 次" in zh


def test_a_decision_with_a_reason_records_a_signal_and_its_event(world_a: TenantWorld) -> None:
    actor = Actor.platform("tests")
    draft = {"title": "Opening hours", "text": "We open at nine on Saturdays."}
    owner = signed_in(world_a.owner)

    def made(origin: str = "review_report", kind: str = "knowledge_draft", payload: Any = None) -> ChangeProposal:
        return proposal_create(
            agent=world_a.agent,
            kind=kind,
            payload=payload or draft,
            summary="a change",
            origin=origin,
            actor=actor,
        )

    # A reason over 200 characters is refused before anything moves (the token stays usable).
    change = made()
    granted = owner.post(changes(world_a, change.pk, "/authorize"), {"decision": "approve"}, "application/json")
    body = {"token": granted.json()["token"], "decision": "approve", "expected_version": 1}
    refused = owner.post(changes(world_a, change.pk, "/decide"), {**body, "reason": "x" * 201}, "application/json")
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_reason"
    refused = owner.post(changes(world_a, change.pk, "/decide"), {**body, "reason": 7}, "application/json")
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_reason"
    assert not PreferenceSignal.objects.exists()
    reason = "  Good,\n short   and right "
    decided = owner.post(changes(world_a, change.pk, "/decide"), {**body, "reason": reason}, "application/json")
    assert decided.status_code == 200 and decided.json()["status"] == "applied", decided.content
    signal = PreferenceSignal.objects.get(proposal_id=change.pk)
    assert (signal.decision, signal.kind, signal.origin, signal.reason) == (
        "approve",
        "knowledge_draft",
        "review_report",
        "Good, short and right",
    )
    assert owner.get(changes(world_a, change.pk)).json()["decision_reason"] == "Good, short and right"
    event = events_of(world_a, "preference.signal_recorded").get()
    assert event.entity_type == "preference_signal" and event.entity_id == str(signal.pk)
    assert event.actor_type == "human"
    assert event.payload == {
        "agent": world_a.agent.slug,
        "proposal": change.pk,
        "kind": "knowledge_draft",
        "origin": "review_report",
        "decision": "approve",
        "reason_length": 21,
        "reason_sha256": hashlib.sha256(b"Good, short and right").hexdigest(),
    }
    # The signal's event is caused by the decision's (one transaction); the proposal's own chain
    # goes on from the decision to what applying it wrote.
    decided = events_of(world_a, "proposal.decided").get()
    assert event.caused_by == decided.seq
    assert events_of(world_a, "proposal.applied").get().caused_by == decided.seq
    # The card shows the owner's reason to the owner.
    card = owner.get(f"/owner/{world_a.agent.slug}/inbox/{change.pk}/card").content.decode()
    assert "Good, short and right" in card

    # A rejection without a reason; observe's candidate counts too.
    observed = made(origin="observe_digest", payload={"title": "News", "text": "A new rule."})
    assert decide(owner, world_a, observed, "reject").status_code == 200
    signal = PreferenceSignal.objects.get(proposal_id=observed.pk)
    assert (signal.decision, signal.origin, signal.reason) == ("reject", "observe_digest", "")
    last = events_of(world_a, "preference.signal_recorded").order_by("-seq")[0]
    assert last.payload["reason_length"] == 0 and last.payload["reason_sha256"] == ""

    # The owner's own change says nothing new of their preferences: no signal.
    own = proposal_create(
        agent=world_a.agent,
        kind="knowledge_draft",
        payload={"title": "Own", "text": "Own words."},
        summary="mine",
        origin="owner_direct",
        actor=Actor.human(world_a.owner.pk),
    )
    assert decide(owner, world_a, own, "reject", "changed my mind").status_code == 200
    assert not PreferenceSignal.objects.filter(proposal_id=own.pk).exists()

    # A model's proposal left to expire is recorded as such (not counted as a rejection).
    waiting = made(payload={"title": "Late", "text": "Too late."})
    ChangeProposal.objects.filter(pk=waiting.pk).update(expires_at=timezone.now() - dt.timedelta(minutes=1))
    assert proposals_expire() == 1
    signal = PreferenceSignal.objects.get(proposal_id=waiting.pk)
    assert signal.decision == "expire" and signal.decided_by_id is None
    assert event_types(world_a, "preference.") == ["preference.signal_recorded"] * 3


@pytest.mark.django_db(transaction=True)
def test_two_reviews_at_once_do_not_overspend_the_budget(world_a: TenantWorld, settings: Any) -> None:
    settings.FACADE_REVIEW_ESCALATION_CAPACITY = 3
    days = [gaps(world_a, TOPICS[:3], days_ago=2), gaps(world_a, TOPICS[3:], days_ago=1)]
    barrier, errors = threading.Barrier(2), []

    def run(day: dt.date) -> None:
        try:
            barrier.wait()
            review_run(agent_id=world_a.agent.pk, day=day)
        except Exception as exc:  # noqa: BLE001 — reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(day,)) for day in days]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    # Six gaps, three tokens: three proposals in all; the other three held back because paused.
    assert ChangeProposal.objects.filter(origin="review_report").count() == 3
    reports = list(ReviewReport.objects.filter(agent=world_a.agent))
    assert sum(len(r.proposals) for r in reports) == 3
    assert sum(r.held_back_reasons["paused"] for r in reports) == 3
    budget = EscalationBudget.objects.get(agent=world_a.agent)
    assert budget.paused and budget.tokens < 1
    assert event_types(world_a, "review.paused") == ["review.paused"]
