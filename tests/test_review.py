"""The daily review (issue 13, "The daily review (Reflect)"): its input from aggregates, the
report per (agent, day), the proposals it files, the API, the command and the inbox section —
and red line 5: no customer word reaches any of them."""

from __future__ import annotations

import datetime as dt
import json
import threading
from typing import Any
from uuid import uuid4

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client

from approvals.models import ChangeProposal
from approvals.services import proposal_authorize, proposal_decide
from facade.dialogue.models import Message, Rating, Run
from facade.dialogue.services import session_open
from facade.tenancy.rules import Audience
from facade.tenancy.services import customer_create
from knowledge.models import KnowledgeMiss
from knowledge.services import knowledge_miss_record
from ledger.models import LedgerEvent
from rsi.review import review_run
from rsi.review_input import local_today, review_input_build
from rsi.review_models import ReviewAggregate, ReviewReport
from rsi.review_rules import DRAFT_PLACEHOLDER

pytestmark = pytest.mark.django_db

MARKER = "ZQX-MARKER-7731"
QUESTION = "do you offer gift wrapping for parcels"


def customer_turn(world: Any, text: str, *, customer: Any = None, miss: bool = False, status: str = "completed") -> Any:
    """A customer's session with one question and its run; a miss when nothing answered it."""
    customer = customer or customer_create(tenant=world.tenant)
    session = session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer)
    message = Message.objects.create(session=session, role="principal", text=text)
    Run.objects.create(tenant=world.tenant, session=session, message=message, status=status)
    if miss:
        knowledge_miss_record(agent=world.agent, session_id=session.pk, query=text, asker=str(customer.pk))
    return session


def move_to_yesterday(world: Any) -> dt.date:
    from facade.dialogue.models import DialogueSession

    DialogueSession.objects.filter(agent=world.agent).update(created_at=dt.datetime.now(dt.UTC) - dt.timedelta(days=1))
    KnowledgeMiss.objects.filter(agent=world.agent).update(created_at=dt.datetime.now(dt.UTC) - dt.timedelta(days=1))
    return local_today(world.tenant) - dt.timedelta(days=1)


def gap_day(world: Any) -> None:
    for _ in range(3):
        customer_turn(world, f"{QUESTION}?", miss=True)


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_question_three_customers_asked_becomes_a_gap_and_a_pending_draft_in_the_inbox(world_a: Any) -> None:
    gap_day(world_a)
    customer_turn(world_a, "where can I park my bike", miss=True)  # one asker: "other topics"
    report = review_run(agent_id=world_a.agent.pk, day=local_today(world_a.tenant))
    assert report.partial and report.status == "finished"
    assert len(report.gaps) == 1
    gap = report.gaps[0]
    proposal = ChangeProposal.objects.get(pk=gap["change_id"])
    assert proposal.status == "pending" and proposal.origin == "review_report" and proposal.kind == "knowledge_draft"
    assert proposal.requires == "owner_approval"
    assert proposal.payload["text"] == DRAFT_PLACEHOLDER
    assert "gift" in proposal.payload["title"] and "example.com" not in proposal.payload["title"]
    assert len(proposal.evidence) == 3 and all(p["type"] == "session" for p in proposal.evidence)
    # Every pointer of the gap resolves to a stored aggregate or a session of this agent and day.
    aggregate = ReviewAggregate.objects.get(report=report, key=gap["figure"]["key"])
    assert aggregate.value == gap["figure"]["value"] == 3 and "gift" in aggregate.label
    figures = report.review_input["figures"]
    assert figures["knowledge.misses"] == 4 and figures["topics.other"] == 1 and figures["sessions.total"] == 4
    page = signed_in(world_a.owner).get(f"/owner/{world_a.agent.slug}/inbox").content.decode()
    assert (
        "Daily review of" in page and "was asked 3 times" in page and "Claims dropped for lack of evidence: 0." in page
    )
    assert f'href="#{proposal.pk}-h"' in page and f'id="{proposal.pk}-h"' in page
    assert "placeholder" in page and "Conversation with a customer" in page  # evidence as its summary
    assert "park" not in page  # one asker: never named
    assert f"/owner/{world_a.agent.slug}/knowledge/unanswered" in page
    events = {e.event_type for e in LedgerEvent.objects.for_entity(world_a.tenant.pk, "review_report", str(report.pk))}
    # The placeholder cannot be approved; once the owner wrote the answer, the draft can.
    owner = signed_in(world_a.owner)
    changes = f"/api/agents/{world_a.agent.slug}/changes/{proposal.pk}"
    refused = owner.post(f"{changes}/authorize", {"decision": "approve"}, content_type="application/json")
    assert refused.status_code == 409 and refused.json()["error"] == "draft_unwritten"
    assert (
        owner.post(f"{changes}/authorize", {"decision": "reject"}, content_type="application/json").status_code == 200
    )
    written = {"title": proposal.payload["title"], "text": "Yes: gift wrapping costs nothing extra."}
    edited = owner.patch(changes, {"payload": written, "expected_version": 1}, content_type="application/json")
    assert edited.status_code == 200, edited.content
    token = owner.post(f"{changes}/authorize", {"decision": "approve"}, content_type="application/json")
    assert token.status_code == 200 and "token" in token.json()
    assert events == {"review.started", "review.proposal_made", "review.finished"}


def test_red_line_5_no_customer_word_reaches_the_review(world_a: Any) -> None:
    gap_day(world_a)
    # The marker in customers' messages (one of them a miss, asked by one customer only) and in a
    # rating's comment.
    session = customer_turn(world_a, f"{MARKER} please call 0170 1234567", miss=True)
    customer_turn(world_a, f"hello {MARKER} again")
    Rating.objects.create(session=session, tenant=world_a.tenant, stars=1, comment=MARKER)
    day = local_today(world_a.tenant)
    built = review_input_build(agent=world_a.agent, day=day, partial=True)
    assert (
        MARKER not in built.review_input.model_dump_json()
        and MARKER.lower() not in built.review_input.model_dump_json()
    )
    report = review_run(agent_id=world_a.agent.pk, day=day)
    report.refresh_from_db()
    stored = json.dumps(
        [report.review_input, report.wins, report.misses, report.gaps, report.proposals, report.dropped_claims]
    )
    stored += json.dumps(
        list(ReviewAggregate.objects.filter(report=report).values("key", "label", "session_ids")), default=str
    )
    proposals = json.dumps(list(ChangeProposal.objects.values("payload", "summary", "diff", "evidence")), default=str)
    ledger = "".join(LedgerEvent.objects.values_list("canonical", flat=True))
    client = signed_in(world_a.owner)
    api = client.get(f"/api/agents/{world_a.agent.slug}/reviews/{day}").content.decode()
    page = client.get(f"/owner/{world_a.agent.slug}/inbox").content.decode()
    assert report.gaps  # the review did see the day
    for where in (stored, proposals, ledger, api, page):
        assert MARKER.lower() not in where.lower()
        assert "1234567" not in where and "example.com" not in where


def test_red_line_5_holds_for_delivered_violations_the_review_reads(world_a: Any) -> None:
    """The day's delivered violations (guard/recheck.py) reach the review as counts, rule ids and
    pointers — neither the customer's message nor the agent's reply."""
    from guard.recheck import recheck_day

    session = customer_turn(world_a, f"{MARKER} how much for a cake, call 0170 1234567")
    asked = Message.objects.get(session=session, role="principal")
    reply = Message.objects.create(
        session=session,
        role="agent",
        text=f"It will cost €45 {MARKER}, guaranteed.",
        reply_to=asked,
        ruleset_hash="0" * 64,
    )
    day = local_today(world_a.tenant)
    result = recheck_day(agent_id=world_a.agent.pk, day=day)
    assert result.violations == 1
    built = review_input_build(agent=world_a.agent, day=day, partial=True).review_input
    assert built.figures["guard.delivered_violations"] == 1 and built.figures["violations.rule.price.en.money"] == 1
    assert [(v.message_id, v.category, v.check) for v in built.violations] == [(reply.pk, "price", "guard")]
    assert built.sessions["guard.delivered_violations"] == [str(session.pk)]
    dumped = built.model_dump_json()
    assert MARKER not in dumped and MARKER.lower() not in dumped and "1234567" not in dumped and "€45" not in dumped
    report = review_run(agent_id=world_a.agent.pk, day=day)
    missed = [m for m in report.misses if m.get("figure", {}).get("key") == "guard.delivered_violations"]
    assert missed and missed[0]["figure"]["value"] == 1  # the reviewer reports it, and the gate kept it
    stored = json.dumps([report.review_input, report.wins, report.misses, report.gaps, report.dropped_claims])
    assert MARKER not in stored and "€45" not in stored


def test_running_twice_gives_one_report_and_a_finished_day_is_final(world_a: Any) -> None:
    gap_day(world_a)
    day = move_to_yesterday(world_a)
    first = review_run(agent_id=world_a.agent.pk, day=day)
    second = review_run(agent_id=world_a.agent.pk, day=day)
    assert first.pk == second.pk and not second.partial and second.runs == 1
    assert ReviewReport.objects.filter(agent=world_a.agent).count() == 1
    assert ChangeProposal.objects.filter(origin="review_report").count() == 1
    # Today the same topic again: while yesterday's draft waits, today's gap links to it.
    gap_day(world_a)
    today = local_today(world_a.tenant)
    waiting = review_run(agent_id=world_a.agent.pk, day=today)
    assert waiting.proposals == [] and waiting.gaps[0]["change_id"] == first.proposals[0]["change_id"]
    # Once the owner rejected it, the topic is proposed again — and today's partial report is
    # updated in place and makes no proposal twice.
    draft = first.proposals[0]["change_id"]
    token = proposal_authorize(agent=world_a.agent, proposal_id=draft, owner=world_a.owner, decision="reject")
    proposal_decide(
        agent=world_a.agent,
        proposal_id=draft,
        owner=world_a.owner,
        token=token.token or "",
        decision="reject",
        expected_version=1,
    )
    partial = review_run(agent_id=world_a.agent.pk, day=today)
    assert partial.pk == waiting.pk and len(partial.proposals) == 1
    customer_turn(world_a, "anything else")
    again = review_run(agent_id=world_a.agent.pk, day=today)
    assert again.pk == partial.pk and again.runs == 3 and again.partial
    assert again.review_input["figures"]["sessions.total"] == partial.review_input["figures"]["sessions.total"] + 1
    assert again.input_digest != partial.input_digest
    assert ChangeProposal.objects.filter(origin="review_report").count() == 2
    with pytest.raises(Exception, match="has not begun"):
        review_run(agent_id=world_a.agent.pk, day=today + dt.timedelta(days=1))


@pytest.mark.django_db(transaction=True)
def test_two_processes_at_once_give_one_report(world_a: Any) -> None:
    gap_day(world_a)
    day = move_to_yesterday(world_a)
    barrier, results, errors = threading.Barrier(2), [], []

    def run() -> None:
        try:
            barrier.wait()
            results.append(review_run(agent_id=world_a.agent.pk, day=day).pk)
        except Exception as exc:  # noqa: BLE001 — reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(results)) == 1
    assert ReviewReport.objects.filter(agent=world_a.agent).count() == 1
    assert ChangeProposal.objects.filter(origin="review_report").count() == 1


def test_the_cap_holds_back_the_rest(world_a: Any, settings: Any) -> None:
    topics = [
        "gift wrapping parcels",
        "parking bicycles nearby",
        "weekend opening",
        "student discount",
        "repair warranty",
        "wheelchair access",
        "invoice copies",
    ]
    for words in topics:
        for _ in range(3):
            customer_turn(world_a, words, miss=True)
    report = review_run(agent_id=world_a.agent.pk, day=local_today(world_a.tenant))
    assert len(report.gaps) == 7
    assert len(report.proposals) == 5 and report.held_back == 2
    assert ChangeProposal.objects.filter(origin="review_report", status="pending").count() == 5
    page = signed_in(world_a.owner).get(f"/owner/{world_a.agent.slug}/inbox").content.decode()
    assert "More proposals held back: 2" in page
    zh = signed_in(world_a.owner).get(f"/owner/{world_a.agent.slug}/inbox", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "另有被暂缓的提议：2 条" in zh.content.decode() and "每日复盘" in zh.content.decode()
    finished = (
        LedgerEvent.objects.for_entity(world_a.tenant.pk, "review_report", str(report.pk))
        .of_type("review.finished")
        .get()
    )
    assert finished.payload["held_back"] == 2 and finished.payload["proposals"] == 5


def test_the_api_is_the_owners_and_idempotent(world_a: Any, world_b: Any) -> None:
    gap_day(world_a)
    day = str(local_today(world_a.tenant))
    url = f"/api/agents/{world_a.agent.slug}/reviews"
    owner = signed_in(world_a.owner)
    first = owner.post(url, {"date": day}, content_type="application/json")
    assert first.status_code == 200, first.content
    second = owner.post(url, {"date": day}, content_type="application/json")
    assert second.json()["id"] == first.json()["id"] and second.json()["runs"] == 2
    body = owner.get(f"{url}/{day}").json()
    assert body["gaps"] and body["droppedClaims"] == 0 and body["partial"] is True
    assert owner.post(url, {"date": "2999-01-01"}, content_type="application/json").json()["error"] == "future_day"
    assert owner.post(url, {"date": "yesterday"}, content_type="application/json").status_code == 400
    for outsider in (world_b.owner, world_a.member, world_a.auditor):
        # An auditor is refused every write before any view (audit/readonly.py): 403 read_only.
        refused = 403 if outsider == world_a.auditor else 404
        assert signed_in(outsider).post(url, {"date": day}, content_type="application/json").status_code == refused
        assert signed_in(outsider).get(f"{url}/{day}").status_code == 404
    csrf = Client(enforce_csrf_checks=True)
    csrf.force_login(world_a.owner)
    assert csrf.post(url, {"date": day}, content_type="application/json").status_code == 403


def test_the_command_reviews_yesterday_by_default(world_a: Any, capsys: Any) -> None:
    gap_day(world_a)
    day = move_to_yesterday(world_a)
    call_command("rsi_review", "--agent", world_a.agent.slug)
    out = capsys.readouterr().out
    assert str(day) in out and "1 gaps" in out and "partial" not in out
    assert ReviewReport.objects.get(agent=world_a.agent).day == day


@pytest.fixture
def llm_configured(settings: Any) -> Any:
    from facade.dialogue.runtime import providers

    def configure(server: Any) -> None:
        settings.FACADE_LLM_PROVIDER = "openai"
        settings.FACADE_LLM_BASE_URL = server.url
        settings.FACADE_LLM_MODEL = "review-model"
        settings.FACADE_LLM_MAX_RETRIES = 0
        providers._shared_openai.cache_clear()

    yield configure
    providers._shared_openai.cache_clear()


def test_the_llm_reviewer_sees_no_customer_word_and_passes_the_gate(world_a: Any, llm_configured: Any) -> None:
    from llm_server import LLMServer, text_reply

    gap_day(world_a)
    session = customer_turn(world_a, f"{MARKER} is my order number, call me", miss=True)
    real = str(session.pk)
    claims = [
        {"kind": "win", "text": "Customers loved it."},  # no evidence
        {"kind": "miss", "text": "A customer was lost.", "evidence": [{"type": "session", "id": str(uuid4())}]},
        {
            "kind": "miss",
            "text": "Nine conversations.",
            "evidence": [{"type": "aggregate", "key": "sessions.total"}, {"type": "session", "id": real}],
            "figure": {"key": "sessions.total", "value": 9},
        },
        {
            "kind": "gap",
            "text": "Opening hours are not known.",
            "evidence": [{"type": "aggregate", "key": "knowledge.misses"}, {"type": "session", "id": real}],
            "figure": {"key": "knowledge.misses", "value": 4},
            "proposal": {
                "kind": "knowledge_draft",
                "payload": {"title": "Opening hours", "text": "We open at nine."},
                "summary": "Say when the shop opens",
                "sessions_affected": 1,
                "requires": "auto",
                "level": 0,
            },
        },
    ]
    with LLMServer([text_reply(json.dumps({"claims": claims}))]) as server:
        llm_configured(server)
        report = review_run(agent_id=world_a.agent.pk, day=local_today(world_a.tenant))
        prompt = server.requests[0].raw.decode()
    assert MARKER.lower() not in prompt.lower() and "gift wrapping parcels" in prompt  # the shown topic only
    assert report.reviewer == "offline-rules-v1+llm" and report.model == "review-model"
    reasons = sorted(d["reason"] for d in report.dropped_claims if d["reviewer"] == "llm")
    assert reasons == ["figure_mismatch", "no_evidence", "unresolved_pointer"]
    made = ChangeProposal.objects.get(origin="review_report", summary="Say when the shop opens")
    assert made.status == "pending" and made.requires == "owner_approval"
    override = LedgerEvent.objects.for_entity(world_a.tenant.pk, "change_proposal", made.pk).of_type(
        "proposal.override_recorded"
    )
    assert override.count() == 1 and report.overrides == 1
    assert [g["reviewer"] for g in report.gaps] == ["offline-rules-v1", "llm"]
    dropped_events = LedgerEvent.objects.for_entity(world_a.tenant.pk, "review_report", str(report.pk)).of_type(
        "review.claim_dropped"
    )
    assert dropped_events.count() == 3


def test_an_unreadable_llm_answer_is_counted(world_a: Any, llm_configured: Any) -> None:
    from llm_server import LLMServer, text_reply

    gap_day(world_a)
    with LLMServer([text_reply("I think the day went well.")]) as server:
        llm_configured(server)
        report = review_run(agent_id=world_a.agent.pk, day=local_today(world_a.tenant))
    assert {"reason": "unreadable_output", "kind": "unknown", "reviewer": "llm"} in report.dropped_claims
    assert len(report.gaps) == 1  # the offline reviewer's claims stand
