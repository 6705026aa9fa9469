"""The replay preview of a proposal (issue 13, approvals/replay.py): a proposal that changes what
customers are told is replayed on the past days' customer turns with the agent's own model,
before and after, and its card shows counts and pointers only — never a customer's words.
Nothing of a replay reaches a real session, the knowledge base or the ledger but its own row and
its `proposal.replayed` event."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from worker_support import celery_workers

from approvals.models import ChangeProposal, ProposalReplay
from approvals.replay import proposal_replay_run
from approvals.schemas import REVIEW_DRAFT_PLACEHOLDER
from approvals.services import proposal_create, proposal_edit
from conftest import build_tenant
from facade.dialogue.models import CustomerRequest, DailyUsage, DialogueSession, Message, Run, Span
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.offline import OfflineProvider
from facade.dialogue.services import session_open
from facade.tenancy.models import Customer
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from knowledge.models import EntryVersion, KnowledgeEntry, KnowledgeHit, KnowledgeMiss
from knowledge.schemas import SourceIn
from knowledge.services import entry_propose
from ledger.models import LedgerEvent

MARKER = "ZQX-REPLAY-5517"
SHIPPING = f"Do you ship parcels abroad? {MARKER}"


def teach(world: Any, title: str, body: str) -> Any:
    return entry_propose(
        agent=world.agent,
        title=title,
        body=body,
        actor=Actor.human(world.owner.pk),
        source=SourceIn(type="owner_dialogue", ref=f"chat:{title}", version="1"),
    )


def ask(world: Any, text: str) -> DialogueSession:
    """A real customer turn through the run loop with the offline model (the default)."""
    customer = Customer.objects.create(tenant=world.tenant)
    session = session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer)
    turn_handle(session=session, text=text, provider=OfflineProvider(world.agent))
    return session


def propose(world: Any, kind: str, payload: Any, summary: str = "A change") -> ChangeProposal:
    return proposal_create(
        agent=world.agent,
        kind=kind,
        payload=payload,
        summary=summary,
        origin="owner_dialogue",
        actor=Actor.human(world.owner.pk),
    )


def snapshot(world: Any) -> dict[str, int]:
    """Everything a replay must not touch."""
    return {
        "messages": Message.objects.filter(session__agent=world.agent).count(),
        "runs": Run.objects.filter(session__agent=world.agent).count(),
        "spans": Span.objects.filter(run__session__agent=world.agent).count(),
        "sessions": DialogueSession.objects.filter(agent=world.agent).count(),
        "requests": CustomerRequest.objects.filter(agent=world.agent).count(),
        "misses": KnowledgeMiss.objects.filter(agent=world.agent).count(),
        "hits": KnowledgeHit.objects.filter(agent=world.agent).count(),
        "entries": KnowledgeEntry.objects.filter(agent=world.agent).count(),
        "versions": EntryVersion.objects.filter(agent=world.agent).count(),
        "usage": sum(DailyUsage.objects.filter(tenant=world.tenant).values_list("model_calls", flat=True)),
        "ledger": LedgerEvent.objects.filter(chain_id=world.tenant.pk).count(),
    }


def card_html(world: Any, proposal: ChangeProposal, language: str = "en") -> str:
    client = Client()
    client.force_login(world.owner)
    response = client.get(f"/owner/{world.agent.slug}/inbox/{proposal.pk}/card", HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.django_db
def test_a_draft_answering_a_repeatedly_missed_question_is_replayed_without_a_trace(world_a: Any) -> None:
    teach(world_a, "Opening hours", "We open at nine every weekday.")
    missed = [ask(world_a, SHIPPING) for _ in range(3)]
    answered = [ask(world_a, "When do you open?") for _ in range(2)]
    assert KnowledgeMiss.objects.filter(agent=world_a.agent).count() == 3
    proposal = propose(
        world_a, "knowledge_draft", {"title": "Shipping parcels abroad", "text": "We ship parcels to every EU country."}
    )
    before = snapshot(world_a)

    replay = proposal_replay_run(proposal_id=proposal.pk)

    assert replay is not None and replay.status == "done" and replay.model == "offline"
    counts = replay.counts
    assert (counts["affected"], counts["affected_cited_before"], counts["affected_cited_after"]) == (3, 0, 3)
    assert (counts["elsewhere"], counts["elsewhere_changed"], counts["elsewhere_worse"]) == (2, 0, 0)
    assert (counts["blocked_before"], counts["blocked_after"], counts["failed"]) == (0, 0, 0)
    shipping_turns = set(Message.objects.filter(session__in=missed, role="principal").values_list("pk", flat=True))
    assert {p["message"] for p in replay.pointers["affected_cited_after"]} == shipping_turns
    assert {p["session"] for p in replay.pointers["affected_cited_after"]} == {str(s.pk) for s in missed}
    assert answered  # asked, answered before and after: counted elsewhere, unchanged

    # Nothing but the replay's own event: no message, run, miss, hit, knowledge or usage moved.
    after = snapshot(world_a)
    assert after == {**before, "ledger": before["ledger"] + 1}
    event = LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).order_by("-seq").first()
    assert event is not None and event.event_type == "proposal.replayed"
    assert event.payload["counts"]["affected_cited_after"] == 3 and event.payload["version"] == proposal.version
    # Red line: the customers' words are in no part of the result.
    stored = json.dumps([replay.counts, replay.pointers, replay.model, event.payload])
    html = card_html(world_a, proposal)
    for where in (stored, html):
        assert MARKER.lower() not in where.lower() and "ship parcels abroad?" not in where
    assert "Questions it concerns: 3. Answered with a citation: 0 before, 3 after." in html
    assert "No answer elsewhere gets worse." in html
    assert f"message #{min(shipping_turns)}" in html
    # Running it again is harmless: the same version's row comes back, no second event.
    assert proposal_replay_run(proposal_id=proposal.pk) == replay
    assert snapshot(world_a) == after


@pytest.mark.django_db
def test_a_draft_that_steals_answers_elsewhere_says_so_on_its_card(world_a: Any) -> None:
    for title, body in (
        ("Chocolate cake", "Our chocolate cake is baked fresh every morning."),
        ("Lemon cake", "Our lemon cake is baked fresh every morning."),
        ("Cake flavours", "We bake chocolate and lemon cake."),
    ):
        teach(world_a, title, body)
    for _ in range(2):
        ask(world_a, "What cake do you bake?")
    ask(world_a, "What are your opening hours?")  # a miss the draft does not concern
    proposal = propose(world_a, "knowledge_draft", {"title": "Cake bake", "text": "Cake: we bake every cake to order."})

    replay = proposal_replay_run(proposal_id=proposal.pk)

    assert replay is not None and replay.status == "done"
    counts = replay.counts
    # Answered before, so not a question the draft is for: the draft pushes one of their three
    # cited entries out of the search's results.
    assert (counts["affected"], counts["elsewhere"]) == (0, 3)
    assert (counts["elsewhere_changed"], counts["elsewhere_lost_citation"], counts["elsewhere_worse"]) == (2, 2, 2)
    assert len(replay.pointers["elsewhere_worse"]) == 2
    html = card_html(world_a, proposal)
    assert "2 answers elsewhere would lose their citation." in html and 'class="replay-warning"' in html
    assert "No answer elsewhere gets worse." not in html
    assert 'data-action="approve"' in html  # the owner still decides
    chinese = card_html(world_a, proposal, "zh-hans")
    assert "2 个其他问题的回答将失去其引用。" in chinese


@pytest.mark.django_db
def test_a_wording_proposal_counts_where_the_sentence_is_said_and_what_the_guard_blocks(world_a: Any) -> None:
    teach(world_a, "Opening hours", "We open at nine every weekday.")
    for _ in range(2):
        ask(world_a, SHIPPING)  # nothing answers it: the agent says its "unknown" sentence
    ask(world_a, "When do you open?")
    calm = propose(
        world_a,
        "wording",
        {"language": "en", "situation": "unknown", "text": "That one is new to me; the owner will get back to you."},
    )
    rash = propose(
        world_a,
        "wording",
        {"language": "en", "situation": "unknown", "text": "We guarantee the owner will call you back by tomorrow."},
    )
    before = snapshot(world_a)

    first = proposal_replay_run(proposal_id=calm.pk)
    second = proposal_replay_run(proposal_id=rash.pk)

    assert first is not None and second is not None
    assert (first.counts["affected"], first.counts["elsewhere"], first.counts["elsewhere_changed"]) == (2, 1, 0)
    assert (first.counts["blocked_after"], first.counts["elsewhere_worse"], first.counts["affected_changed"]) == (
        0,
        0,
        2,
    )
    # A promise in the new sentence: the guard would block every reply that says it.
    assert (second.counts["affected"], second.counts["blocked_before"], second.counts["blocked_after"]) == (2, 0, 2)
    assert snapshot(world_a) == {**before, "ledger": before["ledger"] + 2}
    assert "Replies the guard would block: 0 before, 2 after." in card_html(world_a, rash)
    assert "守卫会拦截的回复：之前 0 条，之后 2 条。" in card_html(world_a, rash, "zh-hans")


@pytest.mark.django_db
def test_a_review_draft_waits_for_its_answer_and_each_version_is_replayed(
    world_a: Any, django_capture_on_commit_callbacks: Any
) -> None:
    for _ in range(3):
        ask(world_a, SHIPPING)
    with django_capture_on_commit_callbacks() as sent:
        proposal = propose(
            world_a, "knowledge_draft", {"title": "Ship parcels abroad", "text": REVIEW_DRAFT_PLACEHOLDER}
        )
    assert len(sent) == 1  # the replay is sent after the commit
    html = card_html(world_a, proposal)
    assert "Replaying this change on the past conversations it concerns…" in html and 'data-state="running"' in html

    skipped = proposal_replay_run(proposal_id=proposal.pk)
    assert skipped is not None and skipped.status == "skipped" and skipped.counts == {}
    assert "The replay runs once you have written the answer into this draft." in card_html(world_a, proposal)

    with django_capture_on_commit_callbacks() as sent:
        edited = proposal_edit(
            proposal_id=proposal.pk,
            agent=world_a.agent,
            payload={"title": "Ship parcels abroad", "text": "We ship parcels abroad to every EU country."},
            expected_version=proposal.version,
            actor=Actor.human(world_a.owner.pk),
        )
    assert len(sent) == 1
    done = proposal_replay_run(proposal_id=proposal.pk)
    assert done is not None and done.proposal_version == edited.version and done.status == "done"
    assert (done.counts["affected"], done.counts["affected_cited_after"]) == (3, 3)
    assert ProposalReplay.objects.filter(proposal=proposal).count() == 2
    # A kind that changes nothing customers are told is not replayed.
    lesson = propose(world_a, "lesson", {"kind": "preference", "title": "Tone", "text": "Be brief."})
    assert proposal_replay_run(proposal_id=lesson.pk) is None


@pytest.mark.django_db
def test_an_order_of_questions_concerns_the_conversations_that_went_into_a_request(world_a: Any) -> None:
    teach(world_a, "Opening hours", "We open at nine every weekday.")
    customer = Customer.objects.create(tenant=world_a.tenant)
    session = session_open(agent=world_a.agent, audience=Audience.CUSTOMER, customer=customer)
    for text in ("I want to order a birthday cake", "A chocolate cake for ten", "Friday", "ana@example.com", "yes"):
        turn_handle(session=session, text=text, provider=OfflineProvider(world_a.agent))
    assert CustomerRequest.objects.filter(session=session).count() == 1
    ask(world_a, "When do you open?")
    proposal = propose(world_a, "clarification_order", {"fields": ["contact", "need", "when"]})
    before = snapshot(world_a)

    replay = proposal_replay_run(proposal_id=proposal.pk)

    assert replay is not None and replay.status == "done"
    counts = replay.counts
    assert (counts["affected"], counts["elsewhere"], counts["elsewhere_changed"], counts["blocked_after"]) == (
        5,
        1,
        0,
        0,
    )
    assert {p["session"] for p in replay.pointers["affected"]} == {str(session.pk)}
    assert counts["affected_changed"] >= 1  # the contact is asked first now
    assert "Customer turns it concerns: 5. Their replies would change:" in card_html(world_a, proposal)
    # The replayed "yes" registered nothing: a writing tool is not run in a replay.
    assert snapshot(world_a) == {**before, "ledger": before["ledger"] + 1}


def searching_model(request: Any) -> Any:
    """A remote model that searches the customer's question, then quotes what it found."""
    from llm_server import completion, tool_call

    messages = request["messages"]
    last = messages[-1]
    if last["role"] == "tool":
        found = json.loads(last["content"]).get("results") or []
        if not found:
            return 200, {}, completion(text="I don't know that yet.")
        first = found[0]
        return 200, {}, completion(text=f"[{first['cite']}] {first['title']}: {first['snippet']}")
    return 200, {}, completion(text=None, tool_calls=[tool_call("c1", "search_knowledge", {"query": last["content"]})])


@pytest.mark.django_db
def test_a_remote_model_replays_through_the_configured_provider(world_a: Any, settings: Any) -> None:
    from llm_server import LLMServer

    from facade.dialogue.runtime import providers

    teach(world_a, "Opening hours", "We open at nine every weekday.")
    for _ in range(2):
        ask(world_a, SHIPPING)  # asked while the offline model served
    proposal = propose(world_a, "knowledge_draft", {"title": "Parcels abroad", "text": "We ship parcels abroad."})
    before = snapshot(world_a)
    with LLMServer(responder=searching_model) as server:
        settings.FACADE_LLM_PROVIDER = "openai"
        settings.FACADE_LLM_BASE_URL = server.url
        settings.FACADE_LLM_MODEL = "replay-model"
        settings.FACADE_LLM_MAX_RETRIES = 0
        providers._shared_openai.cache_clear()
        try:
            replay = proposal_replay_run(proposal_id=proposal.pk)
        finally:
            providers._shared_openai.cache_clear()
        asked = len(server.requests)
    assert replay is not None and (replay.status, replay.model) == ("done", "openai:replay-model")
    assert (
        replay.counts["affected"],
        replay.counts["affected_cited_before"],
        replay.counts["affected_cited_after"],
    ) == (
        2,
        0,
        2,
    )
    assert asked == 8  # two turns, before and after, a search and an answer each
    # No model call of the replay is counted against the tenant's daily budget; nothing else moved.
    assert snapshot(world_a) == {**before, "ledger": before["ledger"] + 1}


@pytest.mark.django_db
def test_the_sweep_finds_the_replays_never_sent_or_left_running(world_a: Any) -> None:
    import datetime as dt

    from approvals.replay import replays_due

    never = propose(world_a, "wording", {"language": "en", "situation": "greeting", "text": "Welcome!"})
    finished = propose(world_a, "wording", {"language": "en", "situation": "handoff", "text": "A person follows."})
    proposal_replay_run(proposal_id=finished.pk)
    died = propose(world_a, "wording", {"language": "zh-hans", "situation": "greeting", "text": "欢迎！"})
    running = propose(world_a, "wording", {"language": "zh-hans", "situation": "handoff", "text": "稍后有人联系您。"})
    for proposal, age in ((died, dt.timedelta(hours=1)), (running, dt.timedelta(minutes=1))):
        row = ProposalReplay.objects.create(proposal=proposal, proposal_version=proposal.version)
        ProposalReplay.objects.filter(pk=row.pk).update(started_at=dt.datetime.now(dt.UTC) - age)
    propose(world_a, "lesson", {"kind": "preference", "title": "Tone", "text": "Be brief."})  # not replayed
    assert replays_due() == [never.pk, died.pk]
    # The one left running by a dead worker is taken over and finished.
    taken = proposal_replay_run(proposal_id=died.pk)
    assert taken is not None and taken.status == "done"
    assert replays_due() == [never.pk]


class Broken(OfflineProvider):
    name = "broken"

    def complete(self, **kwargs: Any) -> Any:
        raise RuntimeError("a bug in the model's client")


@pytest.mark.django_db
def test_a_replay_out_of_time_or_broken_says_so_and_the_owner_still_decides(world_a: Any, settings: Any) -> None:
    for _ in range(2):
        ask(world_a, SHIPPING)
    draft = {"title": "Parcels abroad", "text": "We ship parcels abroad."}
    settings.FACADE_REPLAY_SECONDS = 0
    late = proposal_replay_run(proposal_id=propose(world_a, "knowledge_draft", draft).pk)
    assert late is not None and (late.status, late.timed_out, late.counts["replayed"]) == ("done", True, 0)
    assert "It stopped at its time limit: the counts cover the turns replayed." in card_html(world_a, late.proposal)
    settings.FACADE_REPLAY_SECONDS = 300
    proposal = propose(world_a, "knowledge_draft", draft)
    broken = proposal_replay_run(proposal_id=proposal.pk, provider=Broken(world_a.agent))
    assert broken is not None and (broken.status, broken.error, broken.counts) == ("failed", "RuntimeError", {})
    html = card_html(world_a, proposal)
    assert "The replay could not be completed. You can decide without it." in html and 'data-action="approve"' in html
    event = LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).order_by("-seq").first()
    assert event is not None and event.event_type == "proposal.replayed" and event.payload["status"] == "failed"


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_replays_a_new_proposal_after_its_commit(db: Any) -> None:
    assert connection.vendor == "postgresql" and not settings.CELERY_TASK_ALWAYS_EAGER
    world = build_tenant("replay-worker")
    teach(world, "Opening hours", "We open at nine every weekday.")
    for _ in range(2):
        ask(world, SHIPPING)
    with celery_workers(["approvals.tasks.proposal_replay"]):
        proposal = propose(world, "knowledge_draft", {"title": "Parcels abroad", "text": "We ship parcels abroad."})
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            replay = ProposalReplay.objects.filter(proposal=proposal).first()
            if replay is not None and replay.status != "running":
                break
            time.sleep(0.3)
    replay = ProposalReplay.objects.get(proposal=proposal)
    assert (replay.status, replay.proposal_version, replay.model) == ("done", 1, "offline")
    assert (replay.counts["affected"], replay.counts["affected_cited_after"]) == (2, 2)
    replayed = [e for e in LedgerEvent.objects.filter(chain_id=world.tenant.pk) if e.event_type == "proposal.replayed"]
    assert len(replayed) == 1 and replayed[0].payload["counts"] == replay.counts
