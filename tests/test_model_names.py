"""What a row is called (`str(obj)`: the admin, logs, error reports) names it by id and state,
never by a customer's words — the same rule as the ledger's."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from django.db import models

from facade.dialogue.models import CustomerRequest, DailyUsage, DialogueSession, Message, Rating, Run, Span, TrustChange
from facade.tenancy.models import Customer, PeerCredential
from knowledge.models import EntryVersion, IngestJob, KnowledgeEntry, KnowledgeHit, KnowledgeMiss, RegulatedTerm
from ledger.models import Chain

WORDS = "please keep my wedding on 5 May a secret"
SESSION = uuid.UUID("00000000-0000-4000-8000-000000000001")
CUSTOMER = uuid.UUID("00000000-0000-4000-8000-000000000002")
RUN = uuid.UUID("00000000-0000-4000-8000-000000000003")

CASES: list[tuple[models.Model, str]] = [
    (
        DialogueSession(id=SESSION, audience="customer", status="open"),
        f"customer session {SESSION} (open)",
    ),
    (
        Message(id=7, session_id=SESSION, role="principal", text=WORDS),
        f"principal message 7 in session {SESSION} ({len(WORDS)} chars)",
    ),
    (Run(id=RUN, status="over_budget", stop_reason="daily_budget"), f"run {RUN} (over_budget: daily_budget)"),
    (Run(id=RUN, status="completed"), f"run {RUN} (completed)"),
    (
        Span(kind="tool", name="search_knowledge", run_id=RUN, outcome="ok"),
        f"tool span search_knowledge of run {RUN}: ok",
    ),
    (DailyUsage(tenant_id=4, day=dt.date(2025, 5, 1), model_calls=12), "tenant 4 on 2025-05-01: 12 model calls"),
    (CustomerRequest(id=3, kind="request", state="submitted", summary=WORDS), "request #3 (submitted)"),
    (Rating(session_id=SESSION, stars=4, comment=WORDS), f"4 stars for session {SESSION}"),
    (
        TrustChange(customer_id=CUSTOMER, delta=5, reason="request_completed", score=55),
        f"customer {CUSTOMER} trust +5 (request_completed) to 55",
    ),
    (Customer(id=CUSTOMER, tenant_id=4), f"customer {CUSTOMER} of tenant 4"),
    (PeerCredential(name="Booking bot", key_prefix="ab12cd34", key_hash="0" * 64), "Booking bot (fpk_ab12cd34_…)"),
    (
        PeerCredential(name="Old bot", key_prefix="ab12cd35", revoked_at=dt.datetime(2025, 5, 1, tzinfo=dt.UTC)),
        "Old bot (fpk_ab12cd35_…, revoked)",
    ),
    (KnowledgeEntry(id=9, kind="fact", agent_id=2, latest_number=3), "fact entry 9 of agent 2 (latest v3)"),
    (EntryVersion(entry_id=9, number=3, status="pending", body=WORDS), "entry 9 v3 (pending)"),
    (RegulatedTerm(term="insulin", category="medical"), "insulin (medical)"),
    (KnowledgeHit(version_id=11, agent_id=2), "hit on version 11 of agent 2"),
    (KnowledgeMiss(id=5, agent_id=2, topic_key="wedding secret"), "miss 5 of agent 2"),
    (IngestJob(id=8, state="running", created=2, total=5), "ingest job 8 (running, 2 new of 5)"),
    (Chain(chain_id=4, size=17), "chain 4 (17 events)"),
]


@pytest.mark.parametrize(("row", "name"), CASES, ids=[type(row).__name__ for row, _ in CASES])
def test_a_row_is_named_by_id_and_state(row: models.Model, name: str) -> None:
    assert str(row) == name
    assert "wedding" not in str(row)
