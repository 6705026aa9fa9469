"""Issue 33 §4: peer traffic is its own audience in the owner's metrics and the daily review —
counted apart, never mixed into the customers' figures — and a peer's words reach neither the
review input nor the owner's overview (the same rule as customers': figures and pointers only,
and a peer's unanswered question is counted, never named)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client
from django.urls import reverse
from test_metrics import DAY, DETAILS, NOW, local, missed, opened, row_of, seed_day, turn
from test_review_input_fields import _strings

from conftest import TenantWorld
from facade.dialogue.models import CustomerRequest, DialogueSession, Message, Run
from facade.dialogue.services import request_submit, session_open
from facade.peers.models import PeerTask
from facade.tenancy.models import PeerCredential
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from facade.tenancy.services import peer_key_create
from guard.models import DeliveredViolation
from knowledge.services import knowledge_miss_record
from rsi.metrics import agent_metrics
from rsi.review_input import ReviewInput, local_today, review_input_build
from rsi.review_rules import Figures, offline_review

pytestmark = pytest.mark.django_db

MARKER = "qzxw771mkz"  # a peer's words: must reach no figure, label, pointer or page


def _peer(world: TenantWorld, name: str = "supplier") -> PeerCredential:
    issued = peer_key_create(agent=world.agent, name=name, actor=Actor.human(world.owner.pk))
    return PeerCredential.objects.get(pk=issued.credential_id)


def peer_opened(world: TenantWorld, at: dt.datetime, peer: PeerCredential | None = None) -> DialogueSession:
    session = session_open(agent=world.agent, audience=Audience.PEER, peer=peer or _peer(world))
    DialogueSession.objects.filter(pk=session.pk).update(created_at=at)
    return session


def seed_peers(world: TenantWorld) -> DialogueSession:
    """DAY: one peer conversation with four replies (one blocked, one citing, one confirmed
    request flow), a miss and a registered request, and a delivered violation of one reply."""
    session = peer_opened(world, local(DAY, 10))
    turn(session, local(DAY, 10, 1), cited=True)
    blocked = turn(session, local(DAY, 10, 2), guard="price")
    turn(session, local(DAY, 10, 3), tool="ok")
    turn(session, local(DAY, 10, 4))
    missed(world, session, local(DAY, 10, 4))
    request = request_submit(session=session, summary="pallets", details=DETAILS)
    CustomerRequest.objects.filter(pk=request.pk).update(created_at=local(DAY, 10, 3))
    reply = Message.objects.get(reply_to=blocked.message)
    DeliveredViolation.objects.create(
        tenant=world.tenant,
        agent=world.agent,
        message=reply,
        run=blocked,
        delivered_at=local(DAY, 10, 2),
        found_at=local(DAY + dt.timedelta(days=1), 3),
        category="price",
        failed_check="guard",
        rule="price.en.money",
        ruleset_hash="x",
    )
    return session


@pytest.fixture
def shanghai(world_a: TenantWorld) -> TenantWorld:
    world_a.tenant.time_zone = "Asia/Shanghai"
    world_a.tenant.save(update_fields=["time_zone"])
    world_a.agent.refresh_from_db()
    return world_a


def test_peers_are_counted_apart_and_never_in_the_customers_figures(shanghai: TenantWorld) -> None:
    seed_day(shanghai)
    seed_peers(shanghai)
    row = row_of(shanghai)  # the customers' day, as test_metrics counts it without peers
    assert row.sessions == 2
    assert (row.replies, row.blocked_replies) == (5, 1)
    assert (row.knowledge_answered, row.knowledge_missed) == (1, 1)
    assert (row.flows_confirmed, row.flows_started, row.requests) == (1, 2, 1)
    assert row.delivered_violations == 0
    data = agent_metrics(shanghai.agent, days=7, now=NOW)
    peers = {r.day: r for r in data.peers.rows}[DAY]
    assert peers.sessions == 1
    assert (peers.replies, peers.blocked_replies, peers.over_commitment) == (4, 1, 0.25)
    assert (peers.knowledge_answered, peers.knowledge_missed, peers.knowledge_hit) == (1, 1, 0.5)
    assert (peers.flows_confirmed, peers.flows_started, peers.requests) == (1, 1, 1)
    assert peers.delivered_violations == 1
    assert (peers.review_decided, peers.ratings) == (0, 0)  # the review's figures are the agent's
    assert data.peers.totals.sessions == 1 and data.totals.sessions == 2


def test_the_api_gives_the_peers_apart(world_a: TenantWorld) -> None:
    now = dt.datetime.now(dt.UTC)
    for _ in range(2):
        opened(world_a, now)
    peer_opened(world_a, now)
    client = Client()
    client.force_login(world_a.owner)
    body = client.get(f"/api/agents/{world_a.agent.slug}/metrics?days=7").json()
    assert body["peers"]["audience"] == "peer"
    assert body["peers"]["totals"]["sessions"] == 1 and body["totals"]["sessions"] == 2
    assert len(body["peers"]["rows"]) == 7


def test_the_overview_shows_other_agents_apart_without_their_words(world_a: TenantWorld) -> None:
    session = peer_opened(world_a, dt.datetime.now(dt.UTC))
    asked = Message.objects.create(session=session, role="principal", text=f"{MARKER} do you ship pallets")
    Run.objects.create(tenant_id=session.tenant_id, session=session, message=asked, status="completed")
    Message.objects.create(session=session, role="agent", text="We do.", reply_to=asked)
    client = Client()
    client.force_login(world_a.owner)
    page = client.get(reverse("owner-overview", args=[world_a.agent.slug])).content.decode()
    section = page[page.index('id="peer-traffic"') : page.index('aria-labelledby="charts-h"')]
    assert '<tr id="peer-conversations"><th scope="row">Conversations</th><td>1</td>' in section
    assert '<tr id="peer-replies"><th scope="row">Replies</th><td>1</td>' in section
    assert MARKER not in page
    assert reverse("owner-peers", args=[world_a.agent.slug]) in page  # the way to the keys and tasks


def test_an_overview_with_no_peers_says_so(world_a: TenantWorld) -> None:
    client = Client()
    client.force_login(world_a.owner)
    page = client.get(reverse("owner-overview", args=[world_a.agent.slug])).content.decode()
    assert "No conversations with other agents in these 30 days." in page


# --- the daily review's input ------------------------------------------------------------------


def _peer_turn(world: TenantWorld, peer: PeerCredential, text: str, *, miss: bool = False) -> DialogueSession:
    session = session_open(agent=world.agent, audience=Audience.PEER, peer=peer)
    message = Message.objects.create(session=session, role="principal", text=text, client_message_id=f"{MARKER}-id")
    run = Run.objects.create(tenant=world.tenant, session=session, message=message, status="completed")
    if miss:
        knowledge_miss_record(agent=world.agent, session_id=session.pk, query=text, asker=f"peer:{peer.pk}")
    PeerTask.objects.create(
        tenant=world.tenant,
        agent=world.agent,
        peer=peer,
        session=session,
        state="TASK_STATE_COMPLETED",
        updated_at=run.started_at,
    )
    return session


def test_the_review_input_counts_peers_apart_and_names_none_of_their_words(world_a: TenantWorld) -> None:
    from test_review_input_fields import _day

    _day(world_a)  # the customers' day: three sessions asking one shown topic
    # Three peers (three keys) ask one question the knowledge does not answer, with the marker.
    for name in ("a", "b", "c"):
        _peer_turn(world_a, _peer(world_a, name), f"do you sell {MARKER} pallets wholesale", miss=True)
    built = review_input_build(agent=world_a.agent, day=local_today(world_a.tenant), partial=True)
    review = built.review_input
    figures = review.figures
    assert figures["sessions.total"] == 3 and figures["knowledge.misses"] == 3  # the customers' only
    assert figures["peers.sessions.total"] == 3 and figures["peers.knowledge.misses"] == 3
    assert figures["peers.runs.total"] == 3 and figures["peers.runs.completed"] == 3
    assert figures["peers.tasks.completed"] == 3
    assert review.ratios["peers.completed"] == 1.0
    assert len(review.sessions["peers.sessions.total"]) == 3
    # The peers' topic, asked by three of them, is counted and never named.
    assert [t.askers for t in review.topics] == [3] and "pallets" not in review.topics[0].label
    dumped = review.model_dump(mode="json")
    leaks = [f for f in ReviewInput.model_fields if any(MARKER in t.casefold() for t in _strings(dumped[f]))]
    assert leaks == []
    assert not any("pallets" in t for t in _strings(dumped))


def test_a_peers_delivered_violation_is_a_miss_of_its_own(shanghai: TenantWorld) -> None:
    seed_peers(shanghai)
    built = review_input_build(agent=shanghai.agent, day=DAY, partial=False).review_input
    assert built.figures["guard.delivered_violations"] == 0
    assert built.figures["peers.guard.delivered_violations"] == 1
    assert built.figures["peers.violations.rule.price.en.money"] == 1
    figures = Figures(values=built.figures, sessions={k: tuple(v) for k, v in built.sessions.items()}, topics=[])
    (claim,) = [c for c in offline_review(figures) if c["figure"]["key"].endswith("delivered_violations")]
    assert claim["figure"] == {"key": "peers.guard.delivered_violations", "value": 1}
    assert "to other agents" in claim["text"]
