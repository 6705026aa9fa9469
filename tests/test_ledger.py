"""The ledger: canonical form, append-only storage, and a mutation catalogue in which every
kind of tampering is detected at exactly the right seq."""

from __future__ import annotations

import hashlib
import json
import threading
from decimal import Decimal
from typing import Any

import pytest
from django.db import DatabaseError, connection, connections, transaction

from ledger.canonical import HASH_PREFIX, CanonicalError, canonical_form, chain_hash, event_document
from ledger.catalogue import EventPayload, EventType, catalogue
from ledger.models import AppendOnlyError, Chain, LedgerEvent
from ledger.selectors import ledger_verify, load_checkpoints
from ledger.services import LedgerError, checkpoint_issue, ledger_append

CHAIN = 4242


class AnyShape(EventPayload):
    """The ledger's own tests append payloads of many shapes straight through ledger_append; the
    model only documents the types (payloads are validated by the apps' constructors)."""


# The ledger accepts only catalogued types, so its tests bring their own for their duration.
TEST_TYPES = [
    EventType("test.event", "tests", "thing", AnyShape, "An event of the ledger's tests."),
    EventType("test.ghost", "tests", "thing", AnyShape, "An event whose transaction rolls back."),
    EventType("a.b", "tests", "order", AnyShape, "A first event about an order."),
    EventType("a.c", "tests", "order", AnyShape, "An event caused by the first."),
]


@pytest.fixture(autouse=True)
def _test_event_types() -> Any:
    with catalogue.extended(*TEST_TYPES):
        yield


def append(n: int, chain: int = CHAIN, **extra: Any) -> None:
    for i in range(n):
        with transaction.atomic():
            ledger_append(
                chain_id=chain,
                event_type="test.event",
                entity_type="thing",
                entity_id=i,
                actor_type="platform",
                actor_id="tests",
                payload={"i": i, "amount": "1.50", **extra},
            )


def sql(statement: str, params: list[Any] | None = None) -> Any:
    with connection.cursor() as cursor:
        cursor.execute(statement, params or [])
        return cursor.rowcount


def as_attacker() -> None:
    """Someone with database access: the append-only trigger is the first thing they switch off."""
    sql("ALTER TABLE ledger_event DISABLE TRIGGER ledger_event_append_only")


def row(seq: int, chain: int = CHAIN) -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, canonical, prev_hash, hash, mac FROM ledger_event WHERE chain_id = %s AND seq = %s",
            [chain, seq],
        )
        rid, canonical, prev, digest, mac = cursor.fetchone()
    return {"id": rid, "canonical": canonical, "prev_hash": bytes(prev), "hash": bytes(digest), "mac": bytes(mac)}


def canonical_bytes(document: dict[str, Any]) -> bytes:
    """The bytes ledger_append hashes for `document`."""
    return canonical_form(document)[1]


def rewritten_canonical(at: int, **changes: Any) -> str:
    doc = json.loads(row(at)["canonical"])
    doc.update(changes)
    return canonical_bytes(doc).decode()


# --- canonical form ------------------------------------------------------------------------


def test_reordered_keys_and_whitespace_hash_the_same() -> None:
    a = canonical_bytes(json.loads('{"b": 1, "a": {"y": [1, 2], "x": "é"}}'))
    b = canonical_bytes(json.loads('{\n  "a": {"x": "é",   "y": [1,2]},\n "b":1 }'))
    assert a == b == '{"a":{"x":"é","y":[1,2]},"b":1}'.encode()
    assert chain_hash(bytes(32), a) == chain_hash(bytes(32), b)


def test_integer_and_string_hash_differently() -> None:
    assert chain_hash(bytes(32), canonical_bytes({"v": 1})) != chain_hash(bytes(32), canonical_bytes({"v": "1"}))


def test_hash_is_sha256_over_prefix_prev_and_bytes() -> None:
    prev, body = b"\x07" * 32, b'{"a":1}'
    assert chain_hash(prev, body) == hashlib.sha256(b"facade-ledger-v1\x00" + prev + body).digest()
    assert HASH_PREFIX == b"facade-ledger-v1\x00"


@pytest.mark.django_db
@pytest.mark.parametrize("payload", [{"amount": 1.5}, {"nested": {"list": [1, 2.0]}}, {"x": float("nan")}])
def test_floats_are_refused_and_nothing_is_written(payload: dict[str, Any]) -> None:
    with pytest.raises(CanonicalError, match="float"), transaction.atomic():
        ledger_append(
            chain_id=CHAIN,
            event_type="test.event",
            entity_type="thing",
            entity_id=1,
            actor_type="platform",
            actor_id="x",
            payload=payload,
        )
    assert not LedgerEvent.objects.filter(chain_id=CHAIN).exists()


@pytest.mark.django_db
def test_decimals_become_strings() -> None:
    with transaction.atomic():
        ledger_append(
            chain_id=CHAIN,
            event_type="test.event",
            entity_type="thing",
            entity_id=1,
            actor_type="platform",
            actor_id="x",
            payload={"amount": Decimal("12.30")},
        )
    assert json.loads(row(1)["canonical"])["payload"] == {"amount": "12.30"}
    assert LedgerEvent.objects.get(chain_id=CHAIN, seq=1).payload == {"amount": "12.30"}


@pytest.mark.django_db(transaction=True)
def test_append_outside_a_transaction_is_refused() -> None:
    with pytest.raises(LedgerError, match="inside the caller's transaction"):
        ledger_append(
            chain_id=CHAIN,
            event_type="test.event",
            entity_type="thing",
            entity_id=1,
            actor_type="platform",
            actor_id="x",
        )


@pytest.mark.django_db
def test_columns_are_what_the_hashed_bytes_say() -> None:
    with transaction.atomic():
        first = ledger_append(
            chain_id=CHAIN,
            event_type="a.b",
            entity_type="order",
            entity_id="o-1",
            entity_version=3,
            actor_type="human",
            actor_id="user:7",
            payload={"k": "v"},
        )
        ledger_append(
            chain_id=CHAIN,
            event_type="a.c",
            entity_type="order",
            entity_id="o-1",
            actor_type="agent",
            actor_id="agent:x",
            caused_by=first.seq,
        )
    event = LedgerEvent.objects.get(chain_id=CHAIN, seq=2)
    doc = json.loads(event.canonical)
    assert (
        event.event_type,
        event.entity_type,
        event.entity_id,
        event.actor_type,
        event.actor_id,
        event.caused_by,
    ) == (
        "a.c",
        "order",
        "o-1",
        "agent",
        "agent:x",
        1,
    )
    assert doc["created_at"] == event.created_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert LedgerEvent.objects.get(chain_id=CHAIN, seq=1).entity_version == 3
    assert bytes(event.prev_hash) == bytes(LedgerEvent.objects.get(chain_id=CHAIN, seq=1).hash)
    with pytest.raises(LedgerError, match="caused_by"), transaction.atomic():
        ledger_append(
            chain_id=CHAIN,
            event_type="a.c",
            entity_type="order",
            entity_id=1,
            actor_type="platform",
            actor_id="x",
            caused_by=3,
        )


@pytest.mark.django_db
def test_a_cause_appended_by_another_process_is_accepted_with_a_stale_head_hint() -> None:
    """Another process appended the cause: this process's head hint is behind, and only the
    head as it stands may refuse `caused_by`."""
    from ledger.services import _head_cache

    with transaction.atomic():
        append(3)
    key = ("default", CHAIN)
    stale = _head_cache().get(key, (0, b""))
    with transaction.atomic():
        cause = ledger_append(
            chain_id=CHAIN, event_type="a.b", entity_type="order", entity_id="o-9", actor_type="platform", actor_id="p"
        )
    _head_cache()[key] = stale  # as in a process that did not see `cause` appended
    with transaction.atomic():
        effect = ledger_append(
            chain_id=CHAIN,
            event_type="a.c",
            entity_type="order",
            entity_id="o-9",
            actor_type="platform",
            actor_id="p",
            caused_by=cause.seq,
        )
    assert (cause.seq, effect.seq) == (4, 5)
    assert LedgerEvent.objects.get(chain_id=CHAIN, seq=5).caused_by == 4
    with pytest.raises(LedgerError, match="caused_by"), transaction.atomic():
        ledger_append(
            chain_id=CHAIN,
            event_type="a.c",
            entity_type="order",
            entity_id=1,
            actor_type="platform",
            actor_id="x",
            caused_by=6,
        )


# --- append-only ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_orm_refuses_to_change_or_delete_events() -> None:
    append(2)
    event = LedgerEvent.objects.get(chain_id=CHAIN, seq=1)
    with pytest.raises(AppendOnlyError):
        event.save()
    with pytest.raises(AppendOnlyError):
        event.delete()
    with pytest.raises(AppendOnlyError):
        LedgerEvent.objects.filter(chain_id=CHAIN).update(mac=b"x")
    with pytest.raises(AppendOnlyError):
        LedgerEvent.objects.filter(chain_id=CHAIN).delete()
    assert LedgerEvent.objects.filter(chain_id=CHAIN).count() == 2


@pytest.mark.django_db
@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE ledger_event SET mac = '\\x00'::bytea WHERE chain_id = %s",
        "UPDATE ledger_event SET canonical = canonical WHERE chain_id = %s",
        "DELETE FROM ledger_event WHERE chain_id = %s",
    ],
)
def test_the_database_refuses_update_and_delete(statement: str) -> None:
    append(2)
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        sql(statement, [CHAIN])
    assert LedgerEvent.objects.filter(chain_id=CHAIN).count() == 2


@pytest.mark.django_db
def test_a_rolled_back_business_transaction_leaves_no_event() -> None:
    from facade.tenancy.models import Tenant

    append(3)
    with pytest.raises(RuntimeError), transaction.atomic():
        Tenant.objects.create(slug="ghost", name="Ghost")
        ledger_append(
            chain_id=CHAIN,
            event_type="test.ghost",
            entity_type="thing",
            entity_id=1,
            actor_type="platform",
            actor_id="x",
        )
        raise RuntimeError("business failure")
    assert not Tenant.objects.filter(slug="ghost").exists()
    assert not LedgerEvent.objects.of_type("test.ghost").exists()
    assert Chain.objects.get(chain_id=CHAIN).size == 3
    append(1)  # the writer's cached head is stale now; the next append must still fit
    result = ledger_verify(chain_id=CHAIN)
    assert (result.ok, result.checked) == (True, 4)


@pytest.mark.django_db(transaction=True)
def test_eight_threads_appending_leave_one_gapless_valid_chain() -> None:
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(500):
                with transaction.atomic():
                    ledger_append(
                        chain_id=CHAIN,
                        event_type="test.event",
                        entity_type="thing",
                        entity_id=n,
                        actor_type="platform",
                        actor_id=f"w{n}",
                        payload={"i": i},
                    )
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            connections.close_all()

    # A second chain appended at the same time must neither block nor disturb the first.
    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    append(50, chain=CHAIN + 1)
    for thread in threads:
        thread.join()
    assert errors == []
    seqs = list(LedgerEvent.objects.filter(chain_id=CHAIN).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, 4001))
    result = ledger_verify(chain_id=CHAIN)
    assert (result.ok, result.checked, result.first_bad_seq) == (True, 4000, None)
    assert ledger_verify(chain_id=CHAIN + 1).checked == 50


@pytest.mark.django_db
@pytest.mark.parametrize("shift", [-2, 3])
def test_a_stale_head_hint_is_corrected_under_lock_and_never_makes_a_wrong_event(
    shift: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hint behind the chain (another process appended) or ahead of it (a rolled-back append
    of this one) is answered by the append statement itself with the head as it stands, locked:
    one more statement, no separate locking read, and the event at the right place."""
    from ledger import services

    append(5)
    size, head = services._head_cache().get(("default", CHAIN), (0, b""))
    services._head_cache()[("default", CHAIN)] = (size + shift, hashlib.sha256(head).digest())
    locked: list[int] = []
    lock_head = services._lock_head
    monkeypatch.setattr(services, "_lock_head", lambda alias, chain: locked.append(chain) or lock_head(alias, chain))
    statements: list[str] = []
    raw = services.psycopg.Cursor.execute

    def counted(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        statements.append(str(query))
        return raw(self, query, *args, **kwargs)

    monkeypatch.setattr(services.psycopg.Cursor, "execute", counted)
    append(1)
    assert locked == [] and len([q for q in statements if "ledger_event" in q]) == 2
    assert services._head_cache().get(("default", CHAIN), (0, b""))[0] == 6
    seqs = list(LedgerEvent.objects.filter(chain_id=CHAIN).order_by("seq").values_list("seq", flat=True))
    assert seqs == [1, 2, 3, 4, 5, 6]
    assert ledger_verify(chain_id=CHAIN).ok


class RecordingTurn:
    """A stand-in for a chain's turn lock that is never granted and records who asked."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    def acquire(self, timeout: float = -1) -> bool:
        self.asked.append(timeout)
        return False

    def release(self) -> None:
        raise AssertionError("a turn that was not granted is never released")


@pytest.mark.django_db(transaction=True)  # each atomic block below is a transaction of its own
def test_appends_do_not_depend_on_their_turn_and_a_transaction_asks_once_per_chain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Turns only spare retries: an append whose turn is not granted (another appender of the
    process holds it too long) goes ahead on the compare-and-swap, and a second event of the same
    transaction, which holds the chain's lock already, does not ask for a turn at all."""
    from ledger import services

    turn = RecordingTurn()
    monkeypatch.setattr(services, "_APPEND_TURNS", (turn,))
    services._holding.__dict__.clear()
    with transaction.atomic():
        for i in range(3):
            ledger_append(
                chain_id=CHAIN, event_type="test.event", entity_type="thing", entity_id=i,
                actor_type="platform", actor_id="tests", payload={"i": i},
            )  # fmt: skip
    assert turn.asked == [services.APPEND_TURN_WAIT]
    append(1)  # a new transaction asks again
    assert len(turn.asked) == 2
    assert ledger_verify(chain_id=CHAIN).checked == 4


# --- the mutation catalogue ----------------------------------------------------------------


@pytest.fixture
def chain10(db: Any) -> None:
    append(10)
    assert ledger_verify(chain_id=CHAIN).ok
    checkpoint_issue(chain_id=CHAIN, label="test")
    as_attacker()


def verdict() -> tuple[bool, int | None, str | None]:
    result = ledger_verify(chain_id=CHAIN)
    return result.ok, result.first_bad_seq, result.reason


def test_fields_are_read_from_the_hashed_text(chain10: None) -> None:
    event = LedgerEvent.objects.get(chain_id=CHAIN, seq=4)
    assert (event.event_type, event.entity_type, event.entity_id, event.payload["i"]) == ("test.event", "thing", "3", 3)
    assert [e.seq for e in LedgerEvent.objects.for_entity(CHAIN, "thing", "3")] == [4]
    with connection.cursor() as cursor:
        cursor.execute("SELECT column_name FROM information_schema.columns WHERE table_name = 'ledger_event'")
        columns = {name for (name,) in cursor.fetchall()}
    assert columns == {"id", "chain_id", "seq", "canonical", "prev_hash", "hash", "mac"}


@pytest.mark.parametrize(
    "field, value",
    [
        ("event_type", "forged.type"),
        ("entity_type", "invoice"),
        ("entity_id", "someone-else"),
        ("entity_version", 7),
        ("actor_type", "human"),
        ("actor_id", "user:999"),
        ("caused_by", 1),
        ("payload", {"i": 4, "amount": "999.00"}),
        ("created_at", "2030-01-01T00:00:00.000000Z"),
    ],
)
def test_a_changed_field_is_found_at_its_seq(chain10: None, field: str, value: Any) -> None:
    # These fields exist only inside the hashed text, so changing one changes the text.
    sql(
        "UPDATE ledger_event SET canonical = %s WHERE chain_id = %s AND seq = 4",
        [rewritten_canonical(4, **{field: value}), CHAIN],
    )
    assert getattr(LedgerEvent.objects.get(chain_id=CHAIN, seq=4), field) != getattr(
        LedgerEvent.objects.get(chain_id=CHAIN, seq=3), field
    ) or field in ("event_type", "entity_type", "actor_type", "actor_id", "caused_by")
    assert verdict() == (False, 4, "hash_mismatch")


def test_a_changed_seq_column_is_found(chain10: None) -> None:
    sql("UPDATE ledger_event SET seq = 40 WHERE chain_id = %s AND seq = 4", [CHAIN])
    assert verdict() == (False, 4, "missing_seq")


def test_a_changed_chain_column_is_found(chain10: None) -> None:
    sql("UPDATE ledger_event SET chain_id = %s WHERE chain_id = %s AND seq = 4", [CHAIN + 7, CHAIN])
    assert verdict() == (False, 4, "missing_seq")


def test_a_changed_tag_in_the_unsealed_tail_blocks_the_next_checkpoint(chain10: None) -> None:
    append(3)
    sql("UPDATE ledger_event SET mac = %s WHERE chain_id = %s AND seq = 12", [b"\x00" * 32, CHAIN])
    with pytest.raises(LedgerError, match="event 12"):
        checkpoint_issue(chain_id=CHAIN, label="test")


def test_changed_bytes_are_found(chain10: None) -> None:
    sql(
        "UPDATE ledger_event SET canonical = %s WHERE chain_id = %s AND seq = 4",
        [rewritten_canonical(4, actor_id="user:999"), CHAIN],
    )
    assert verdict() == (False, 4, "hash_mismatch")


def test_a_changed_hash_is_found(chain10: None) -> None:
    sql("UPDATE ledger_event SET hash = %s WHERE chain_id = %s AND seq = 4", [b"\x01" * 32, CHAIN])
    assert verdict() == (False, 4, "hash_mismatch")


def test_a_changed_prev_hash_is_found(chain10: None) -> None:
    sql("UPDATE ledger_event SET prev_hash = %s WHERE chain_id = %s AND seq = 4", [b"\x01" * 32, CHAIN])
    assert verdict() == (False, 4, "broken_link")


def test_a_deleted_row_is_found(chain10: None) -> None:
    sql("DELETE FROM ledger_event WHERE chain_id = %s AND seq = 4", [CHAIN])
    assert verdict() == (False, 4, "missing_seq")


def test_an_inserted_row_is_found(chain10: None) -> None:
    sql("ALTER TABLE ledger_event DROP CONSTRAINT ledger_event_chain_seq")
    forged = rewritten_canonical(6, event_type="forged")
    prev = row(5)["hash"]
    sql(
        "INSERT INTO ledger_event (chain_id, seq, canonical, prev_hash, hash, mac) VALUES (%s, 6, %s, %s, %s, %s)",
        [CHAIN, forged, prev, chain_hash(prev, forged.encode()), b"\x00" * 32],
    )
    ok, seq, _ = verdict()
    assert (ok, seq) == (False, 6)


def test_a_row_appended_with_a_made_up_link_is_found(chain10: None) -> None:
    forged = rewritten_canonical(10, seq=11)
    sql(
        "INSERT INTO ledger_event (chain_id, seq, canonical, prev_hash, hash, mac) VALUES (%s, 11, %s, %s, %s, %s)",
        [CHAIN, forged, b"\x02" * 32, chain_hash(b"\x02" * 32, forged.encode()), b"\x00" * 32],
    )
    assert verdict() == (False, 11, "broken_link")


def test_swapped_rows_are_found(chain10: None) -> None:
    four, five = row(4), row(5)
    sql("UPDATE ledger_event SET seq = -1 WHERE id = %s", [four["id"]])
    sql("UPDATE ledger_event SET seq = 4 WHERE id = %s", [five["id"]])
    sql("UPDATE ledger_event SET seq = 5 WHERE id = %s", [four["id"]])
    assert verdict() == (False, 4, "broken_link")


def test_a_duplicated_row_is_found(chain10: None) -> None:
    sql("ALTER TABLE ledger_event DROP CONSTRAINT ledger_event_chain_seq")
    four = row(4)
    sql(
        "INSERT INTO ledger_event (chain_id, seq, canonical, prev_hash, hash, mac) VALUES (%s, 4, %s, %s, %s, %s)",
        [CHAIN, four["canonical"], four["prev_hash"], four["hash"], four["mac"]],
    )
    assert verdict() == (False, 4, "duplicate_seq")


def test_a_truncated_tail_is_found_by_the_checkpoint(chain10: None) -> None:
    sql("DELETE FROM ledger_event WHERE chain_id = %s AND seq >= 8", [CHAIN])
    sql("UPDATE ledger_chain SET size = 7, head_hash = %s WHERE chain_id = %s", [row(7)["hash"], CHAIN])
    assert ledger_verify(chain_id=CHAIN, checkpoints=[]).ok  # the chain alone cannot tell
    assert verdict() == (False, 8, "truncated")


@pytest.mark.parametrize("start", [1, 3])
def test_a_rewritten_chain_with_recomputed_hashes_is_found_by_its_tags(chain10: None, start: int) -> None:
    prev = row(start - 1)["hash"] if start > 1 else bytes(32)
    for seq in range(start, 11):
        old = row(seq)
        doc = json.loads(old["canonical"])
        if seq == start:
            doc["payload"]["amount"] = "0.01"
        body = canonical_bytes(doc).decode()
        digest = chain_hash(prev, body.encode())
        # The attacker knows the hash rule but not the key, so keeps the old tags.
        sql(
            "UPDATE ledger_event SET canonical = %s, prev_hash = %s, hash = %s WHERE id = %s",
            [body, prev, digest, old["id"]],
        )
        prev = digest
    sql("UPDATE ledger_chain SET head_hash = %s WHERE chain_id = %s", [prev, CHAIN])
    # Internally consistent, yet every rewritten event lacks this ledger's tag: found with or
    # without a checkpoint, at the first rewritten event.
    without = ledger_verify(chain_id=CHAIN, checkpoints=[])
    assert (without.ok, without.first_bad_seq, without.reason) == (False, start, "bad_tag")
    assert verdict() == (False, start, "bad_tag")


def forge_tail(count: int, tag: bytes = b"\x00" * 32) -> None:
    """Append events past the last checkpoint the way someone with the database but not the key
    would: canonical text, link and SHA-256 right, the tag made up."""
    head = row(10)
    prev, seq = bytes(head["hash"]), 10
    for _ in range(count):
        seq += 1
        body = rewritten_canonical(10, seq=seq, actor_id="user:forger")
        digest = chain_hash(prev, body.encode())
        sql(
            "INSERT INTO ledger_event (chain_id, seq, canonical, prev_hash, hash, mac) VALUES (%s, %s, %s, %s, %s, %s)",
            [CHAIN, seq, body, prev, digest, tag],
        )
        prev = digest
    sql("UPDATE ledger_chain SET size = %s, head_hash = %s WHERE chain_id = %s", [seq, prev, CHAIN])


def test_a_forged_tail_past_the_last_checkpoint_is_found_at_its_first_event(chain10: None) -> None:
    forge_tail(3)
    assert verdict() == (False, 11, "bad_tag")
    result = ledger_verify(chain_id=CHAIN)
    assert (result.checked, result.head_hash) == (10, row(10)["hash"].hex())  # the last event that holds
    with pytest.raises(LedgerError, match="event 11"):
        checkpoint_issue(chain_id=CHAIN, label="test")


def test_a_forged_tail_with_another_keys_tags_is_found_too(chain10: None) -> None:
    from ledger.canonical import event_mac

    head = row(10)
    body = rewritten_canonical(10, seq=11, actor_id="user:forger")
    digest = chain_hash(bytes(head["hash"]), body.encode())
    forge_tail(1, tag=event_mac(b"k" * 32, digest))
    assert verdict() == (False, 11, "bad_tag")


def test_a_forged_local_checkpoint_is_never_a_starting_point(chain10: None) -> None:
    """A line written into the local checkpoint file by someone without the signing key (here: a
    genuine checkpoint moved forward over forged events) is refused, not trusted."""
    from ledger.services import checkpoint_path, signed_checkpoints

    forge_tail(2)
    genuine = load_checkpoints(CHAIN)[0]
    forged = genuine.model_copy(update={"size": 12, "head_hash": row(12)["hash"].hex()})
    with checkpoint_path(CHAIN).open("a", encoding="utf-8") as handle:
        handle.write(forged.model_dump_json() + "\n")
    with pytest.raises(LedgerError, match="not validly signed"):
        signed_checkpoints(CHAIN)
    with pytest.raises(LedgerError):
        checkpoint_issue(chain_id=CHAIN, label="test", size=12, head=bytes(row(12)["hash"]))
    result = ledger_verify(chain_id=CHAIN)  # the forged checkpoint is reported; the forged events too
    assert (result.ok, result.first_bad_seq, result.reason) == (False, 11, "checkpoint_signature_invalid")
    assert len(load_checkpoints(CHAIN)) == 2  # nothing new was signed


def test_a_checkpoint_file_with_a_line_that_is_no_checkpoint_is_an_error(chain10: None) -> None:
    from ledger.services import checkpoint_path

    with checkpoint_path(CHAIN).open("a", encoding="utf-8") as handle:
        handle.write("{not a checkpoint}\n")
    with pytest.raises(LedgerError, match="no checkpoint"):
        load_checkpoints(CHAIN)


def test_a_forged_checkpoint_is_refused(chain10: None) -> None:
    genuine = load_checkpoints(CHAIN)[0]
    forged = genuine.model_copy(update={"size": 3})
    result = ledger_verify(chain_id=CHAIN, checkpoints=[forged])
    assert (result.ok, result.reason) == (False, "checkpoint_signature_invalid")
    assert ledger_verify(chain_id=CHAIN, checkpoints=[genuine]).ok


def test_document_form_is_stable() -> None:
    doc = event_document(
        chain_id=1,
        seq=2,
        event_type="e",
        entity_type="t",
        entity_id="9",
        entity_version=None,
        actor_type="platform",
        actor_id="p",
        caused_by=None,
        payload={"b": 1, "a": "x"},
        created_at="2026-01-01T00:00:00.000000Z",
    )
    assert canonical_bytes(doc) == (
        b'{"actor_id":"p","actor_type":"platform","caused_by":null,"chain":1,"created_at":"2026-01-01T00:00:00.000000Z",'
        b'"entity_id":"9","entity_type":"t","entity_version":null,"event_type":"e","payload":{"a":"x","b":1},"seq":2,"v":1}'
    )


def test_a_checkpoint_is_never_signed_over_a_rewritten_tail(chain10: None) -> None:
    """Events appended after the last checkpoint and then rewritten with recomputed hashes are
    internally consistent; verifying finds them by their tags, and signing a checkpoint refuses
    them all the same."""
    start = 11
    append(3)
    prev = row(start - 1)["hash"]
    for seq in range(start, 14):
        old = row(seq)
        body = rewritten_canonical(seq, actor_id="user:forger")
        digest = chain_hash(prev, body.encode())
        sql(
            "UPDATE ledger_event SET canonical = %s, prev_hash = %s, hash = %s WHERE id = %s",
            [body, prev, digest, old["id"]],
        )
        prev = digest
    sql("UPDATE ledger_chain SET head_hash = %s WHERE chain_id = %s", [prev, CHAIN])
    # Nothing sealed covers seq 11..13 yet, but their tags give them away.
    assert verdict() == (False, 11, "bad_tag")
    with pytest.raises(LedgerError, match="event 11"):
        checkpoint_issue(chain_id=CHAIN, label="test")
    assert [c.size for c in load_checkpoints(CHAIN)] == [10]


@pytest.mark.parametrize(
    "document",
    [
        {"b": 1, "a": [True, False, None], "é": "ü", "\u00ff": {"z": "", "": "x"}},
        {"ctrl": '\x00\x01\x1f\t\n\r\b\f"\\/', "quote": '"', "unicode": "汉字 ✓ \u2028 \ufeff"},
        {"emoji key 😀": 1, "\ufb01": 2, "a": 3},  # non-BMP key: JCS orders by UTF-16 code units
        {"big": 2**53 - 1, "neg": -(2**53 - 1), "zero": 0, "nested": [[{"k": [1, {"j": "v"}]}]]},
    ],
)
def test_canonical_text_is_exactly_rfc8785(document: dict[str, Any]) -> None:
    import rfc8785

    assert canonical_bytes(document) == rfc8785.dumps(document)


def test_integers_beyond_the_jcs_range_are_refused() -> None:
    with pytest.raises(CanonicalError):
        canonical_bytes({"n": 2**53 + 1})


def test_lone_surrogates_are_refused() -> None:
    with pytest.raises(CanonicalError):
        canonical_bytes({"s": "\ud800"})


@pytest.mark.parametrize(
    "key",
    ["token", "one_time_token", "otp", "otp_code", "password", "client_secret", "api_key", "apiKey", "code", "key"],
)
def test_payload_keys_naming_secrets_are_refused(key: str) -> None:
    from ledger.canonical import normalise

    with pytest.raises(CanonicalError, match="secret"):
        normalise({"outer": {key: "x"}})


@pytest.mark.parametrize("key", ["key_prefix", "error_code_count", "entity_key_type", "chars", "session", "footprint"])
def test_ordinary_payload_keys_pass(key: str) -> None:
    from ledger.canonical import normalise

    assert normalise({key: 1}) == {key: 1}


def test_a_checkpoint_signs_only_the_head_that_was_verified(chain10: None) -> None:
    result = ledger_verify(chain_id=CHAIN)
    assert result.head_hash == row(10)["hash"].hex()
    with pytest.raises(LedgerError, match="not the head that was verified"):
        checkpoint_issue(chain_id=CHAIN, label="test", size=10, head=b"\x05" * 32)
    signed = checkpoint_issue(chain_id=CHAIN, label="test", size=result.checked, head=bytes.fromhex(result.head_hash))
    assert (signed.size, signed.head_hash) == (10, result.head_hash)
