"""The simulated week (issue 13): seeded customer traffic that keeps asking a question the
knowledge base cannot answer → the next review reports the gap with evidence and proposes a
knowledge draft → the owner writes the answer into the draft and approves it through the real
flow → the next day the same questions are answered with a citation and the knowledge-hit rate
for that topic rises; the over-commitment rate stays 0 throughout; the ledger explains every
change.  Played with rsi/simulate.py through the real customer runtime on PostgreSQL, and the
command `rsi_simulate` itself."""

from __future__ import annotations

import datetime as dt
import io
import zoneinfo
from typing import Any

import pytest
import time_machine
from django.core.management import call_command
from django.core.management.base import CommandError
from django.middleware.csrf import _get_new_csrf_string  # type: ignore[attr-defined]
from rest_framework.test import APIClient

from approvals.models import ChangeProposal
from facade.dialogue.models import Message
from facade.tenancy.management.commands.seed_demo import seed_knowledge
from facade.tenancy.schemas import Actor
from facade.tenancy.services import tenant_time_zone_set
from knowledge.models import KnowledgeHit, KnowledgeMiss
from knowledge.text import topic_key
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify
from rsi.metrics import agent_metrics
from rsi.review_input import local_today
from rsi.review_models import ReviewAggregate, ReviewReport
from rsi.review_rules import DRAFT_PLACEHOLDER
from rsi.simulate import GAP_QUESTION, DayPlayed, day_play, night_review

pytestmark = pytest.mark.django_db

ZONE = zoneinfo.ZoneInfo("Asia/Shanghai")  # local days that are not UTC days
SATURDAY = dt.datetime(2026, 11, 21, 12, 0, tzinfo=ZONE)  # "today" while the week is played
MONDAY = dt.date(2026, 11, 16)
CUSTOMERS, SEED = 8, 13
ANSWER = "Yes: we wrap any purchase in recycled paper at no extra charge. Ask at the till."


def owner_client(user: Any) -> APIClient:
    """The owner's signed-in browser: Django's CSRF check passes only with the cookie's token."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    secret = _get_new_csrf_string()
    client.cookies["csrftoken"] = secret
    client.credentials(HTTP_X_CSRFTOKEN=secret)
    return client


def gap_replies(played: DayPlayed) -> list[Message]:
    """The agent's replies to the gap question that day (the question's sessions)."""
    asked = Message.objects.filter(session_id__in=played.session_ids, role="principal", text=GAP_QUESTION)
    return list(Message.objects.filter(session_id__in=asked.values("session_id"), role="agent").order_by("created_at"))


def topic_hit_rate(played: DayPlayed, version_id: int | None) -> float:
    """The gap topic's knowledge-hit rate that day: its questions answered from knowledge over
    its questions (answered plus the misses recorded under its topic key)."""
    asked = Message.objects.filter(session_id__in=played.session_ids, role="principal", text=GAP_QUESTION)
    sessions = [str(s) for s in asked.values_list("session_id", flat=True)]
    missed = KnowledgeMiss.objects.filter(session_id__in=sessions, topic_key=topic_key(GAP_QUESTION)).count()
    answered = KnowledgeHit.objects.filter(session_id__in=sessions, version_id=version_id).count()
    return answered / (answered + missed)


def caused_by_walk(start: LedgerEvent) -> list[LedgerEvent]:
    by_seq = {e.seq: e for e in LedgerEvent.objects.filter(chain_id=start.chain_id)}
    walked, event = [], start
    while event is not None:
        walked.append(event)
        event = by_seq.get(event.caused_by) if event.caused_by else None
    return walked


def test_a_week_of_the_same_unanswered_question_closes_the_loop(world_a: Any) -> None:
    agent, tenant = world_a.agent, world_a.tenant
    tenant_time_zone_set(tenant=tenant, time_zone=str(ZONE), actor=Actor.platform("tests"))
    seed_knowledge(agent, Actor.platform("tests"))  # the demo's knowledge: hours and cakes, no gift wrapping
    agent.refresh_from_db()
    days = [MONDAY + dt.timedelta(days=i) for i in range(5)]
    played: dict[dt.date, DayPlayed] = {}
    reports: dict[dt.date, ReviewReport] = {}

    def play(day: dt.date) -> None:
        played[day] = day_play(agent=agent, day=day, customers=CUSTOMERS, seed=SEED)
        reports[day] = night_review(agent=agent, day=day)

    with time_machine.travel(SATURDAY, tick=True):
        assert local_today(tenant) == dt.date(2026, 11, 21)
        # Monday: the customers keep asking what nothing answers; that night's review names it.
        play(days[0])
        monday = played[days[0]]
        assert monday.sessions == CUSTOMERS and monday.gap_askers >= 3 and monday.gap_answered == 0
        report = reports[days[0]]
        assert not report.partial and report.day == days[0] and len(report.gaps) == 1
        gap = report.gaps[0]
        assert "gift" in gap["text"] and "wrapping" in gap["text"]
        aggregate = ReviewAggregate.objects.get(report=report, key=gap["figure"]["key"])
        assert aggregate.value == gap["figure"]["value"] == monday.gap_askers
        sessions = [p["id"] for p in gap["evidence"] if p["type"] == "session"]
        assert sessions and set(sessions) <= set(monday.session_ids)  # evidence: Monday's own conversations
        draft = ChangeProposal.objects.get(pk=gap["change_id"])
        assert (draft.status, draft.origin, draft.kind, draft.requires) == (
            "pending",
            "review_report",
            "knowledge_draft",
            "owner_approval",
        )
        assert draft.payload["text"] == DRAFT_PLACEHOLDER
        assert {p["id"] for p in draft.evidence} <= set(monday.session_ids)

        # Tuesday: the same again; the gap links to Monday's draft, which still waits (no copy).
        play(days[1])
        tuesday_report = reports[days[1]]
        assert [g["change_id"] for g in tuesday_report.gaps] == [draft.pk] and tuesday_report.proposals == []
        assert ChangeProposal.objects.filter(agent=agent, origin="review_report").count() == 1

        # Wednesday 08:00: the owner writes the answer into the draft and approves it with a
        # one-time token, as the inbox card does.
        with time_machine.travel(dt.datetime.combine(days[2], dt.time(8), tzinfo=ZONE), tick=True):
            owner = owner_client(world_a.owner)
            change = f"/api/agents/{agent.slug}/changes/{draft.pk}"
            unwritten = owner.post(f"{change}/authorize", {"decision": "approve"}, format="json")
            assert unwritten.status_code == 409 and unwritten.json()["error"] == "draft_unwritten"
            written = {"title": draft.payload["title"], "text": ANSWER}
            edited = owner.patch(change, {"payload": written, "expected_version": 1}, format="json")
            assert edited.status_code == 200, edited.content
            version = edited.json()["version"]
            token = owner.post(f"{change}/authorize", {"decision": "approve"}, format="json")
            assert token.status_code == 200, token.content
            decided = owner.post(
                f"{change}/decide",
                {"token": token.json()["token"], "decision": "approve", "expected_version": version},
                format="json",
            )
            assert decided.status_code == 200 and decided.json()["status"] == "applied", decided.content
        applied = (
            LedgerEvent.objects.for_entity(tenant.pk, "change_proposal", draft.pk).of_type("proposal.applied").get()
        )
        published = applied.payload["knowledge_version"]

        # Wednesday to Friday: the same questions are answered from the owner's text, cited.
        for day in days[2:]:
            play(day)
        for day in days[2:]:
            replies = gap_replies(played[day])
            assert len(replies) == played[day].gap_askers >= 3
            for reply in replies:
                assert [c["title"] for c in reply.citations] == [draft.payload["title"]], reply.citations
                assert ANSWER in reply.text
            assert KnowledgeHit.objects.filter(
                session_id__in=[r.session_id for r in replies], version_id=published
            ).count() == len(replies)
            assert reports[day].gaps == []  # nothing left unanswered by three customers
        assert ChangeProposal.objects.filter(agent=agent, origin="review_report").count() == 1

        # The metrics: that topic's hit rate rises from 0 to 1, the day's rate with it, and the
        # over-commitment rate is 0 every day.
        assert [topic_hit_rate(played[d], published) for d in days] == [0.0, 0.0, 1.0, 1.0, 1.0]
        rows = {row.day: row for row in agent_metrics(agent, days=7).rows}
        before = max(rows[d].knowledge_hit or 0 for d in days[:2])
        assert all((rows[d].knowledge_hit or 0) > before for d in days[2:]), [rows[d].knowledge_hit for d in days]
        assert [rows[d].over_commitment for d in days] == [0.0] * 5
        assert all(rows[d].replies > 0 and rows[d].sessions == CUSTOMERS for d in days)
        assert rows[days[2]].review_adoption == 1.0  # the decision counts on the day it was made

    # The ledger explains it: from the knowledge the customers now read, back through the owner's
    # decision and its token and the owner's edit, to the review that proposed it.
    walk = caused_by_walk(applied)
    assert [(e.event_type, e.entity_type) for e in walk] == [
        ("proposal.applied", "change_proposal"),
        ("proposal.decided", "change_proposal"),
        ("authority.token_consumed", "change_proposal"),
        ("authority.issued", "change_proposal"),
        ("proposal.edited", "change_proposal"),
        ("proposal.created", "change_proposal"),
        ("review.started", "review_report"),
    ]
    assert walk[-1].entity_id == str(report.pk) and walk[1].actor_id == f"user:{world_a.owner.pk}"
    assert walk[1].payload["decision"] == "approve" and walk[4].actor_id == f"user:{world_a.owner.pk}"
    # The knowledge's own event names the owner and the proposal as the version's source.
    entry = LedgerEvent.objects.for_entity(tenant.pk, "knowledge_entry", str(applied.payload["knowledge_entry"]))
    created = entry.of_type("knowledge.version_created").get()
    assert created.actor_id == f"user:{world_a.owner.pk}" and created.payload["source_ref"] == draft.pk
    assert created.payload["status"] == "approved" and created.seq < applied.seq
    # Each played day says which sessions were simulated, written at the real time.
    days_played = LedgerEvent.objects.of_type("simulation.day_played").order_by("seq")
    assert [e.payload["day"] for e in days_played] == [d.isoformat() for d in days]
    assert [sorted(e.payload["sessions"]) for e in days_played] == [sorted(played[d].session_ids) for d in days]
    assert all(e.created_at > SATURDAY for e in days_played)
    assert ledger_verify(chain_id=tenant.pk).ok


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("rsi_simulate", *args, stdout=out)
    return out.getvalue()


def test_the_command_refuses_bad_input_and_plays_nothing(world_a: Any, settings: Any) -> None:
    slug = world_a.agent.slug
    for args, message in (
        (["--agent", "no-such-agent"], "no agent 'no-such-agent'"),
        (["--agent", slug, "--days", "0"], "days must be 1 to 30"),
        (["--agent", slug, "--days", "31"], "days must be 1 to 30"),
        (["--agent", slug, "--customers-per-day", "2"], "customers per day must be 3 to 40"),
    ):
        with pytest.raises(CommandError, match=message):
            run(*args)
    settings.FACADE_LLM_PROVIDER = "openai"
    settings.FACADE_LLM_BASE_URL = "http://127.0.0.1:9/v1"
    with pytest.raises(CommandError, match="--remote-model"):
        run("--agent", slug, "--days", "1")
    assert not Message.objects.exists() and not ReviewReport.objects.exists()
    assert not LedgerEvent.objects.of_type("simulation.day_played").exists()


def test_the_command_run_twice_plays_each_day_once_then_today(world_a: Any) -> None:
    slug = world_a.agent.slug
    first = run("--agent", slug, "--days", "2", "--customers-per-day", "3", "--seed", "5")
    today = local_today(world_a.tenant)
    days = [today - dt.timedelta(days=2), today - dt.timedelta(days=1)]
    assert all(d.isoformat() in first for d in days)
    reports = ReviewReport.objects.filter(agent=world_a.agent).order_by("day")
    assert [r.day for r in reports] == days and not any(r.partial for r in reports)
    draft = ChangeProposal.objects.get(agent=world_a.agent, origin="review_report")
    assert f"proposed {draft.pk} (knowledge_draft)" in first and f"{draft.pk} is still waiting" in first
    assert f"write the answer into the draft {draft.pk}" in first and f"/owner/{slug}/inbox" in first
    messages = Message.objects.count()

    # Again: both days have their review, so nothing is played and no report is made twice.
    second = run("--agent", slug, "--days", "2", "--customers-per-day", "3", "--seed", "5")
    assert second.count("skipped — reviewed already") == 2 and "Nothing played" in second
    assert Message.objects.count() == messages
    assert ReviewReport.objects.filter(agent=world_a.agent).count() == 2
    assert ChangeProposal.objects.filter(agent=world_a.agent, origin="review_report").count() == 1

    # Today: played at the real time, reviewed as a partial day; again, the same report grows.
    run("--agent", slug, "--today", "--customers-per-day", "3")
    run("--agent", slug, "--today", "--customers-per-day", "3")
    partial = ReviewReport.objects.get(agent=world_a.agent, day=today)
    assert partial.partial and partial.runs == 2 and partial.review_input["figures"]["sessions.total"] == 6
    assert ChangeProposal.objects.filter(agent=world_a.agent, origin="review_report").count() == 1
    assert LedgerEvent.objects.of_type("simulation.day_played").count() == 4


def test_the_same_seed_plays_the_same_conversations(world_a: Any, world_b: Any) -> None:
    day = local_today(world_a.tenant) - dt.timedelta(days=3)
    texts = []
    for world in (world_a, world_b):
        played = day_play(agent=world.agent, day=day, customers=6, seed=7)
        texts.append(
            [
                list(Message.objects.filter(session_id=s, role="principal").order_by("created_at").values_list("text"))
                for s in played.session_ids
            ]
        )
        created = Message.objects.filter(session_id__in=played.session_ids).values_list("created_at", flat=True)
        assert {c.astimezone(zoneinfo.ZoneInfo(str(world.tenant.time_zone))).date() for c in created} == {day}
    assert texts[0] == texts[1]


def test_a_waiting_draft_past_its_expiry_no_longer_holds_the_topic_back(world_a: Any, settings: Any) -> None:
    agent = world_a.agent
    first_day = local_today(world_a.tenant) - dt.timedelta(days=settings.FACADE_PROPOSAL_EXPIRY_DAYS + 2)
    later_days = [
        first_day + dt.timedelta(days=1),
        first_day + dt.timedelta(days=settings.FACADE_PROPOSAL_EXPIRY_DAYS + 1),
    ]
    for day in (first_day, *later_days):
        day_play(agent=agent, day=day, customers=3, seed=SEED)
        night_review(agent=agent, day=day)
    first, second, third = (ReviewReport.objects.get(agent=agent, day=d) for d in (first_day, *later_days))
    draft = first.proposals[0]["change_id"]
    assert second.proposals == [] and second.gaps[0]["change_id"] == draft  # still waiting: linked
    # Fourteen nights after it was proposed, the first draft has expired unseen: the topic is proposed afresh.
    assert len(third.proposals) == 1 and third.gaps[0]["change_id"] == third.proposals[0]["change_id"] != draft
