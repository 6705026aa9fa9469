"""The knowledge base: L1 approval, red lines 3 and 6, retrieval in English and Chinese,
tenant isolation, expiry, restore and quarantine — with the ledger verifying after all of it."""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

import pytest
from django.utils import timezone

from facade.tenancy.schemas import Actor
from knowledge.models import EntryVersion, KnowledgeEntry, KnowledgeMiss, Status
from knowledge.schemas import SourceIn
from knowledge.selectors import knowledge_search
from knowledge.services import (
    KnowledgeError,
    entry_approve,
    entry_propose,
    entry_reject,
    entry_restore,
    knowledge_expire,
    knowledge_hits_record,
    knowledge_quarantine,
    knowledge_unquarantine,
    regulated_term_add,
)
from knowledge.text import search_text, topic_key
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify

OWNER = Actor.platform("tests")


def src(kind: str = "owner_dialogue", ref: str = "chat:1", version: str = "1") -> SourceIn:
    return SourceIn(type=kind, ref=ref, version=version)


def propose(agent: Any, title: str, body: str, **extra: Any) -> EntryVersion:
    extra.setdefault("source", src())
    return entry_propose(agent=agent, title=title, body=body, actor=OWNER, **extra)


# --- search text (no database) -------------------------------------------------------------


def test_search_terms_cut_chinese_into_bigrams() -> None:
    assert search_text("增值税 VAT rate") == "增值 值税 vat rate"
    assert topic_key("Do you ship to the local warehouse in Germany?") == "germany local ship warehouse"


# --- services ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_owner_material_is_approved_and_served(world_a: Any) -> None:
    version = propose(world_a.agent, "Shipping to Germany", "We ship to Germany from our Hamburg warehouse.")
    assert (version.status, version.decision_reasons) == (Status.APPROVED, ["l1_auto_approved"])
    [hit] = knowledge_search(agent=world_a.agent, query="ship germany", audience="customer")
    assert (hit.entry_id, hit.version, hit.source) == (
        version.entry_id,
        1,
        {"type": "owner_dialogue", "ref": "chat:1", "version": "1"},
    )
    assert "Hamburg" in hit.snippet


@pytest.mark.django_db
@pytest.mark.parametrize("confidence", ["0", "0.5", "0.9", "1"])
def test_customer_content_only_ever_creates_pending_candidates(world_a: Any, confidence: str) -> None:
    version = propose(
        world_a.agent,
        "Opening hours",
        "We open on Sundays.",
        source=src("customer_candidate", "session:x"),
        confidence=confidence,
    )
    assert version.status == Status.PENDING and "customer_candidate" in version.decision_reasons
    assert knowledge_search(agent=world_a.agent, query="sundays", audience="customer") == []
    assert KnowledgeEntry.objects.get(pk=version.entry_id).current_version is None


@pytest.mark.django_db
def test_material_without_a_source_is_refused(world_a: Any) -> None:
    with pytest.raises(KnowledgeError) as info:
        entry_propose(agent=world_a.agent, title="X", body="Y", source=None, actor=OWNER)
    assert info.value.code == "source_required"
    assert not EntryVersion.objects.exists()
    with pytest.raises(ValueError):
        SourceIn(type="upload", ref="  ", version="1")


@pytest.mark.django_db
def test_regulated_and_contradicting_material_waits(world_a: Any) -> None:
    regulated = propose(world_a.agent, "VAT", "Prices include 19% VAT.")
    assert regulated.status == Status.PENDING and "regulated" in regulated.decision_reasons
    propose(world_a.agent, "Return window", "Returns are accepted within 14 days.", source=src(ref="chat:2"))
    contradiction = propose(
        world_a.agent, "Return window", "Returns are accepted within 30 days.", source=src(ref="chat:3")
    )
    assert contradiction.status == Status.PENDING and contradiction.decision_reasons == ["contradicts_approved"]
    [served] = knowledge_search(agent=world_a.agent, query="returns accepted", audience="customer")
    assert "14 days" in served.snippet
    owner_view = knowledge_search(agent=world_a.agent, query="returns accepted", audience="owner")
    assert {r.status for r in owner_view} == {"approved", "pending"}
    entry_reject(version=contradiction, actor=OWNER, reason="wrong")
    with pytest.raises(KnowledgeError):
        entry_approve(version=contradiction, actor=OWNER)


@pytest.mark.django_db
def test_an_approved_version_is_served_at_once_and_recorded(world_a: Any) -> None:
    pending = propose(world_a.agent, "Deposit", "A deposit of 20% is due on ordering.", confidence="0.5")
    assert pending.status == Status.PENDING
    assert knowledge_search(agent=world_a.agent, query="deposit ordering", audience="customer") == []
    approved = entry_approve(version=pending, actor=Actor.human(world_a.owner.pk))
    assert approved.status == Status.APPROVED
    [served] = knowledge_search(agent=world_a.agent, query="deposit ordering", audience="customer")
    assert (served.entry_id, served.version) == (pending.entry_id, 1)
    [event] = LedgerEvent.objects.of_type("knowledge.version_approved")
    assert (event.entity_type, event.entity_id, event.entity_version, event.actor_id) == (
        "knowledge_entry",
        str(pending.entry_id),
        1,
        f"user:{world_a.owner.pk}",
    )
    assert event.payload == {
        "agent": world_a.agent.slug,
        "entry": pending.entry_id,
        "version": 1,
        "status": "approved",
        "kind": "fact",
        "source_type": "owner_dialogue",
        "source_ref": "chat:1",
        "source_version": "1",
        "content_sha256": hashlib.sha256(b"Deposit\nA deposit of 20% is due on ordering.").hexdigest(),
    }


@pytest.mark.django_db
def test_every_served_result_has_a_source_and_version(world_a: Any) -> None:
    for i in range(5):
        propose(world_a.agent, f"Fact {i}", f"Parcel fact number {i}", source=src(ref=f"chat:{i}", version=f"v{i}"))
    results = knowledge_search(agent=world_a.agent, query="parcel fact", audience="customer", limit=10)
    assert len(results) == 5
    assert all(r.source["type"] and r.source["ref"] and r.source["version"] for r in results)


@pytest.mark.django_db
def test_chinese_content_and_queries(world_a: Any) -> None:
    propose(world_a.agent, "退货政策", "收到货物七天内可以无理由退货。")
    propose(world_a.agent, "发货时间", "工作日下午四点前的订单当天发货。", source=src(ref="chat:2"))
    assert [r.title for r in knowledge_search(agent=world_a.agent, query="怎么退货？", audience="customer")] == [
        "退货政策"
    ]
    assert [r.title for r in knowledge_search(agent=world_a.agent, query="什么时候发货", audience="customer")] == [
        "发货时间"
    ]
    assert knowledge_search(agent=world_a.agent, query="保修", audience="customer") == []


@pytest.mark.django_db
def test_identical_text_in_two_tenants_never_crosses(world_a: Any, world_b: Any) -> None:
    a = propose(world_a.agent, "Secret discount code policy", "Loyal customers get free gift wrapping.")
    b = propose(world_b.agent, "Secret discount code policy", "Loyal customers get free gift wrapping.")
    for audience in ("customer", "peer", "owner"):
        assert [
            r.entry_id for r in knowledge_search(agent=world_a.agent, query="gift wrapping", audience=audience)
        ] == [a.entry_id]
        assert [
            r.entry_id for r in knowledge_search(agent=world_b.agent, query="gift wrapping", audience=audience)
        ] == [b.entry_id]


@pytest.mark.django_db
def test_expired_entries_are_never_served(world_a: Any) -> None:
    now = timezone.now()
    soon = propose(
        world_a.agent, "Winter sale", "The winter sale runs until Sunday.", valid_until=now + dt.timedelta(hours=1)
    )
    later = propose(
        world_a.agent,
        "Spring sale",
        "The spring sale starts next month.",
        valid_from=now + dt.timedelta(days=30),
        source=src(ref="chat:2"),
    )
    assert [r.title for r in knowledge_search(agent=world_a.agent, query="sale", audience="customer")] == [
        "Winter sale"
    ]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(timezone, "now", lambda: now + dt.timedelta(days=31))
        # Past valid_until before any job ran: not served; the spring sale has started.
        assert [r.title for r in knowledge_search(agent=world_a.agent, query="sale", audience="customer")] == [
            "Spring sale"
        ]
        assert knowledge_expire() == 1
    soon.refresh_from_db()
    later.refresh_from_db()
    assert (soon.status, later.status) == (Status.EXPIRED, Status.APPROVED)
    assert KnowledgeEntry.objects.get(pk=soon.entry_id).current_version is None


@pytest.mark.django_db
def test_restore_makes_a_new_version(world_a: Any) -> None:
    v1 = propose(world_a.agent, "Gift wrap", "Gift wrapping costs nothing.")
    entry = KnowledgeEntry.objects.get(pk=v1.entry_id)
    v2 = entry_propose(
        agent=world_a.agent,
        title="Gift wrap",
        body="Gift wrapping is available in red.",
        source=src(ref="chat:2", version="2"),
        actor=OWNER,
        entry=entry,
    )
    assert v2.status == Status.APPROVED and KnowledgeEntry.objects.get(pk=entry.pk).current_version_id == v2.pk
    v3 = entry_restore(entry=entry, number=1, actor=OWNER)
    v2.refresh_from_db()
    assert (v3.number, v3.body, v3.restored_from_id, v2.status) == (3, v1.body, v1.pk, Status.ROLLED_BACK)
    assert [r.version for r in knowledge_search(agent=world_a.agent, query="gift wrapping", audience="customer")] == [3]
    pending = propose(world_a.agent, "Tax", "VAT included.", source=src(ref="chat:9"))
    with pytest.raises(KnowledgeError) as info:
        entry_restore(entry=KnowledgeEntry.objects.get(pk=pending.entry_id), number=1, actor=OWNER)
    assert info.value.code == "not_restorable"


@pytest.mark.django_db
def test_quarantine_by_source_and_release(world_a: Any) -> None:
    good = propose(world_a.agent, "Store hours", "Open nine to five.", source=src("upload", "good.md#s1", "aaa"))
    bad = propose(
        world_a.agent,
        "Store hours extra",
        "Open all night for crypto payments.",
        source=src("upload", "poisoned.md#s1", "bbb"),
    )
    bad2 = propose(
        world_a.agent, "Payment", "Send gift cards to this address.", source=src("upload", "poisoned.md#s2", "bbb")
    )
    assert knowledge_quarantine(agent=world_a.agent, actor=OWNER, source_version="bbb") == 2
    assert [r.entry_id for r in knowledge_search(agent=world_a.agent, query="open", audience="customer")] == [
        good.entry_id
    ]
    assert knowledge_search(agent=world_a.agent, query="gift cards", audience="owner") == []
    with pytest.raises(KnowledgeError):
        knowledge_quarantine(agent=world_a.agent, actor=OWNER)
    assert knowledge_unquarantine(agent=world_a.agent, actor=OWNER, source_type="upload") == 2
    for version in (bad, bad2):
        version.refresh_from_db()
        assert version.status == Status.APPROVED
    since = timezone.now() - dt.timedelta(minutes=5)
    assert knowledge_quarantine(agent=world_a.agent, actor=OWNER, since=since) == 3
    assert knowledge_search(agent=world_a.agent, query="open", audience="customer") == []


@pytest.mark.django_db
def test_hits_misses_and_the_ledger(world_a: Any) -> None:
    version = propose(world_a.agent, "Shipping", "We ship worldwide.")
    knowledge_hits_record(agent=world_a.agent, session_id=None, versions=[version])
    regulated_term_add(agent=world_a.agent, term="Pfand", category="law", actor=OWNER)
    assert propose(world_a.agent, "Deposit", "Pfand is 25 cents.", source=src(ref="chat:7")).status == Status.PENDING
    knowledge_quarantine(agent=world_a.agent, actor=OWNER, source_ref="chat:1")
    knowledge_unquarantine(agent=world_a.agent, actor=OWNER, source_ref="chat:1")
    result = ledger_verify(chain_id=world_a.tenant.pk)
    assert result.ok and result.checked > 10


@pytest.mark.django_db
def test_misses_keep_only_a_topic_key(world_a: Any) -> None:
    # Misses come from runs (the runtime's search tool); a GET search records none.
    from knowledge.services import knowledge_miss_record

    knowledge_miss_record(agent=world_a.agent, session_id=None, query="Do you deliver to Mars, my friend Bob?")
    [miss] = KnowledgeMiss.objects.all()
    assert miss.topic_key == "deliver friend mars bob" or set(miss.topic_key.split()) <= {
        "deliver",
        "friend",
        "mars",
        "bob",
    }
    assert "Do you" not in miss.topic_key


@pytest.mark.django_db
def test_very_common_terms_do_not_collect_candidates_alone(world_a: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from knowledge import selectors
    from knowledge.search import BACKENDS

    propose(world_a.agent, "Shipping to Germany", "We ship to Germany.")
    propose(world_a.agent, "Shipping to France", "We ship to France.", source=src(ref="chat:2"))
    propose(world_a.agent, "Returns", "Returns are free.", source=src(ref="chat:3"))
    common = ("default", time.monotonic(), frozenset({"ship", "shipping"}))
    monkeypatch.setattr(BACKENDS["postgresql"], "_common", common)
    sql, params = selectors.search_sql(
        agent_id=world_a.agent.pk,
        terms=["ship", "germany"],
        audience=selectors.Audience.CUSTOMER,
        now=timezone.now(),
        limit=5,
    )
    assert params["rare"] == "germany" and params["any"] == "ship | germany"
    assert [r.title for r in knowledge_search(agent=world_a.agent, query="ship germany", audience="customer")][
        0
    ] == "Shipping to Germany"
    # A query of common terms only still finds what holds all of them.
    assert {r.title for r in knowledge_search(agent=world_a.agent, query="ship", audience="customer")} == {
        "Shipping to Germany",
        "Shipping to France",
    }
    assert knowledge_search(agent=world_a.agent, query="returns ship", audience="customer")[0].title == "Returns"


@pytest.mark.django_db
def test_the_candidate_cap_keeps_entries_holding_every_term(world_a: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """More versions hold one of the terms than are ranked; the version holding all of them,
    written last, still comes first, and no version is returned twice."""
    from knowledge.search import postgres

    monkeypatch.setattr(postgres, "CANDIDATES", 3)
    for i in range(6):
        propose(world_a.agent, f"Note {i}", f"Parcels to Germany, note {i}.", source=src(ref=f"chat:{i}"))
    propose(
        world_a.agent, "Customs", "Customs forms for parcels to Germany are filled in by us.", source=src(ref="chat:9")
    )
    results = knowledge_search(agent=world_a.agent, query="germany customs", audience="customer", limit=10)
    assert results[0].title == "Customs"
    assert len(results) == 1 + 3  # the all-terms match plus the capped any-term candidates
    assert len({r.version_id for r in results}) == len(results)
    # One term, or only common terms: a single branch, and it is still capped.
    single = knowledge_search(agent=world_a.agent, query="germany", audience="customer", limit=10)
    assert len(single) == 3 and len({r.version_id for r in single}) == 3


@pytest.mark.django_db
def test_a_small_knowledge_base_answers_questions_holding_other_words(
    world_a: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a small table every term is frequent by share; none may count as common there, or a
    question with one word the entry lacks would find nothing."""
    from django.db import connection

    from knowledge.search import BACKENDS

    propose(world_a.agent, "停车", "店后面有停车场，顾客可以停车。")
    propose(world_a.agent, "Bikes", "Bike racks are next to the entrance.", source=src(ref="chat:2"))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE knowledge_entryversion")
    backend = BACKENDS["postgresql"]
    monkeypatch.setattr(backend, "_common", None)
    assert backend.common_terms(connection) == frozenset()
    assert [r.title for r in knowledge_search(agent=world_a.agent, query="店里可以停车吗", audience="customer")] == [
        "停车"
    ]
    assert [
        r.title for r in knowledge_search(agent=world_a.agent, query="where do I leave my bike", audience="customer")
    ] == ["Bikes"]
