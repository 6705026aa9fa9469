"""A task sent while `rsi_simulate` has moved the clock to a past day expires on the wall clock
(issue 26 §6, facade/clock.py): the replay preview of the night review's draft was sent with an
expiry "15 minutes after last Monday 03:30", and the worker discarded it as revoked — the card
said "Replaying…" for ever."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from typing import Any

import pytest
import time_machine
from celery.signals import before_task_publish
from django.test import Client
from worker_support import celery_worker_pool, celery_workers

from approvals.models import ChangeProposal, ProposalReplay
from approvals.services import proposal_create
from conftest import build_tenant
from facade.tenancy.schemas import Actor
from rsi.schedule import run_send
from rsi.simulate import simulation_run

REPLAY = "approvals.tasks.proposal_replay"
RUN = "rsi.tasks.run"


@pytest.fixture
def published() -> Iterator[list[dict[str, Any]]]:
    """The headers of every task message published meanwhile (Celery's own signal)."""
    sent: list[dict[str, Any]] = []

    def record(sender: Any = None, headers: Any = None, **_: Any) -> None:
        sent.append({"task": sender, **(headers or {})})

    before_task_publish.connect(record, weak=False)
    try:
        yield sent
    finally:
        before_task_publish.disconnect(record)


@pytest.mark.django_db
def test_a_task_sent_on_a_simulated_day_expires_on_the_wall_clock(
    world_a: Any, published: list[dict[str, Any]], django_capture_on_commit_callbacks: Any
) -> None:
    real = dt.datetime.now(dt.UTC)
    last_week = real - dt.timedelta(days=6)
    with celery_worker_pool([REPLAY, RUN], count=0), time_machine.travel(last_week, tick=True):
        with django_capture_on_commit_callbacks(execute=True):
            proposal_create(
                agent=world_a.agent,
                kind="knowledge_draft",
                payload={"title": "Parcels abroad", "text": "We ship parcels abroad."},
                summary="A draft",
                origin="owner_dialogue",
                actor=Actor.human(world_a.owner.pk),
            )
        run_send(987654)
    sent = {message["task"]: message for message in published}
    assert set(sent) == {REPLAY, RUN}
    for task, minutes in ((REPLAY, 15), (RUN, 120)):
        expires = dt.datetime.fromisoformat(sent[task]["expires"])
        # On the wall clock: after the real now, within the task's own window (not last week's).
        assert real < expires <= dt.datetime.now(dt.UTC) + dt.timedelta(minutes=minutes), (task, expires)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_replay_of_a_simulated_nights_draft_is_run_by_a_real_worker(db: Any) -> None:
    world = build_tenant("simulated-clock")
    with celery_workers([REPLAY]):
        [played] = list(simulation_run(agent=world.agent, days=1, customers=3))
        draft = ChangeProposal.objects.get(agent=world.agent, origin="review_report")
        assert played.report is not None and played.report.proposals[0]["change_id"] == draft.pk
        deadline = time.monotonic() + 120
        replay = None
        while time.monotonic() < deadline:
            replay = ProposalReplay.objects.filter(proposal=draft).first()
            if replay is not None and replay.status != "running":
                break
            time.sleep(0.3)
    # The worker ran it (today's main: discarded as revoked, no row, "Replaying…" for ever): a
    # draft still to be written is skipped, and its card says what the owner does next.
    assert replay is not None and replay.status == "skipped"
    client = Client()
    client.force_login(world.owner)
    html = client.get(f"/owner/{world.agent.slug}/inbox/{draft.pk}/card").content.decode()
    assert "The replay runs once you have written the answer into this draft." in html
    assert "Replaying this change on the past conversations it concerns" not in html
