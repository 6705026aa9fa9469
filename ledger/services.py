"""Writes to the ledger.  `ledger_append` is the only way an event is created."""

from __future__ import annotations

import base64
import datetime as dt
import threading
import uuid
from pathlib import Path
from typing import Any

import psycopg
import rfc8785
from cryptography.exceptions import InvalidSignature
from django.conf import settings
from django.db import connections

from .canonical import (
    CanonicalError,
    canonical_form,
    chain_hash,
    event_document,
    event_mac,
    prepare_payload,
    utc_text,
)
from .catalogue import catalogue
from .keys import ledger_keys, public_key_from_raw
from .models import GENESIS_HASH, ActorType, LedgerEvent
from .scan import first_bad_tag
from .schemas import AppendedEvent, Checkpoint

CHECKPOINT_PREFIX = b"facade-ledger-checkpoint-v1\x00"
# A range statement (a verifiable export's signed header, issue 28) is signed under its own prefix,
# so that no range statement can be passed off as a checkpoint, nor the other way round.
RANGE_PREFIX = b"facade-ledger-range-v1\x00"

__all__ = ["LedgerError", "CanonicalError", "ledger_append", "checkpoint_issue", "ActorType"]


class LedgerError(RuntimeError):
    pass


# Per thread: the cursor the PostgreSQL append statement is prepared on, with the raw connection
# it belongs to (`_heads.cursor`, see `_append_cursor`).  It holds no head; the heads a process has
# appended are the hints in `_HEAD_HINTS`.
_heads = threading.local()
_ACTOR_TYPES = frozenset(ActorType.values)


# How many chains' heads a process remembers.  A chain whose hint was dropped costs one failed
# compare-and-swap and a locked read of its head on its next append, nothing more.
HEAD_HINTS_MAX = 4096


class _HeadHints:
    """(database alias, chain) -> (size, head hash), at most `HEAD_HINTS_MAX` of them; the chain
    appended to longest ago is dropped first.  Reads take no lock (a dict read is atomic);
    writes do, so that concurrent appenders never evict past the bound or trip over each other."""

    def __init__(self) -> None:
        self._hints: dict[tuple[str, int], tuple[int, bytes]] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[str, int], default: tuple[int, bytes]) -> tuple[int, bytes]:
        return self._hints.get(key, default)

    def __setitem__(self, key: tuple[str, int], value: tuple[int, bytes]) -> None:
        with self._lock:
            # Re-inserted at the end: the dict's order is then least recently appended first.
            self._hints.pop(key, None)
            self._hints[key] = value
            while len(self._hints) > HEAD_HINTS_MAX:
                del self._hints[next(iter(self._hints))]

    def pop(self, key: tuple[str, int], default: None = None) -> None:
        with self._lock:
            self._hints.pop(key, None)

    def __len__(self) -> int:
        return len(self._hints)

    def clear(self) -> None:
        with self._lock:
            self._hints.clear()


# The last head this process appended per (database, chain): a hint shared by all threads.  It
# may name an event that is not committed yet (the append statement then waits for that
# transaction and succeeds once it commits) or be stale (another process appended, or a
# transaction rolled back): then the statement answers with the true head and the event is hashed
# again — one more round trip, never a wrong event.
_HEAD_HINTS = _HeadHints()


# Appenders of one process take turns per chain for the length of the append statement, so each
# hashes against the head its predecessor just left in the hints.  Without turns, appenders
# queued behind one chain's lock (held by a transaction until it commits) all hash against the
# same head, and all but the first go round again.  Only an optimisation: the statement's
# compare-and-swap keeps the chain right whatever happens here, so a turn is waited for at most
# APPEND_TURN_WAIT seconds, and a transaction that appended to the chain already (and so holds
# its lock; a second event of the same transaction) does not wait at all.  A fixed set of locks,
# shared by the chains that hash alike.
APPEND_TURN_WAIT = 0.05
_APPEND_TURNS = tuple(threading.Lock() for _ in range(64))
# The chain this thread last appended to, with the transaction (its outermost atomic block).
_holding = threading.local()


def _head_cache() -> _HeadHints:
    return _HEAD_HINTS


def head_hints_reset() -> None:
    """Forget every remembered chain head (the next append of each chain reads it under lock)."""
    _HEAD_HINTS.clear()


# PostgreSQL: move the head and insert the event in one statement, i.e. one round trip, prepared
# once per connection.  The head row is updated whatever the hint says, so the statement always
# takes the row's lock — waiting for a transaction that moved the head and has not committed yet,
# then seeing what it committed — and moves the head only if it is the one the event was hashed
# against (the hint): a compare-and-swap that cannot fail on a head committed a moment ago.
# Either way it answers with the head as it stands, locked now, so a stale hint costs one more
# round trip (the same statement with the true head, which then cannot fail).
_PG_APPEND = """
WITH head AS (
    UPDATE ledger_chain
    SET size = CASE WHEN size = $1 AND head_hash = $2 THEN size + 1 ELSE size END,
        head_hash = CASE WHEN size = $1 AND head_hash = $2 THEN $3 ELSE head_hash END
    WHERE chain_id = $4
    RETURNING size, head_hash
), event AS (
    INSERT INTO ledger_event (chain_id, seq, canonical, prev_hash, hash, mac)
    SELECT $4, head.size, $5, $2, $3, $6 FROM head WHERE head.head_hash = $3
    RETURNING seq
)
SELECT head.size, head.head_hash, EXISTS (SELECT 1 FROM event) FROM head
"""


def _lock_head(alias: str, chain_id: int) -> tuple[int, bytes]:
    connection = connections[alias]
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO ledger_chain (chain_id, size, head_hash) VALUES (%s, 0, %s) ON CONFLICT DO NOTHING",
            [chain_id, GENESIS_HASH],
        )
        lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
        cursor.execute(f"SELECT size, head_hash FROM ledger_chain WHERE chain_id = %s{lock}", [chain_id])
        size, head = cursor.fetchone()
    return int(size), bytes(head)


def ledger_append(
    *,
    chain_id: int,
    event_type: str,
    entity_type: str,
    entity_id: str | int | uuid.UUID,
    actor_type: ActorType | str,
    actor_id: str | int | None,
    payload: dict[str, Any] | None = None,
    entity_version: int | None = None,
    caused_by: int | None = None,
    using: str = "default",
) -> AppendedEvent:
    """Append one event to `chain_id` inside the caller's transaction.

    The business write and its event commit or roll back together, so this refuses to run
    outside `transaction.atomic`.  Only types of the event catalogue are written, each about the
    kind of entity it was registered with; the apps call this through the typed constructors of
    their `events.py`, which validate the payload.  Payloads must not hold secrets; floats are
    refused.
    """
    connection = connections[using]
    if not connection.in_atomic_block:
        raise LedgerError("ledger_append must run inside the caller's transaction (transaction.atomic)")
    registered = catalogue.get(event_type)
    if registered is None:
        raise LedgerError(f"event type {str(event_type)[:64]!r} is not in the event catalogue (ledger.catalogue)")
    if registered.entity_type != entity_type:
        raise LedgerError(f"{registered.name} events are about a {registered.entity_type}, not {entity_type!r}")
    actor = actor_type.value if isinstance(actor_type, ActorType) else actor_type
    if actor not in _ACTOR_TYPES:
        raise LedgerError(f"actor_type must be one of {sorted(_ACTOR_TYPES)}")
    if caused_by is not None and caused_by < 1:
        raise LedgerError("caused_by must be the seq of an earlier event")
    body, fast = prepare_payload(payload or {})
    chain = int(chain_id)
    event_type, entity_type, entity_id = str(event_type), str(entity_type), str(entity_id)
    actor_id = "" if actor_id is None else str(actor_id)
    if not (
        0 < len(event_type) <= 64 and 0 < len(entity_type) <= 64 and 0 < len(entity_id) <= 64 and len(actor_id) <= 64
    ):
        raise LedgerError("event_type, entity_type and entity_id need 1 to 64 characters, actor_id at most 64")
    document = event_document(
        chain_id=chain,
        seq=0,
        event_type=event_type,
        entity_type=entity_type,
        entity_id=entity_id,
        entity_version=entity_version,
        actor_type=actor,
        actor_id=actor_id,
        caused_by=caused_by,
        payload=body,
        created_at=utc_text(dt.datetime.now(dt.timezone.utc)),
    )
    mac_key = ledger_keys().mac_key
    cache = _head_cache()
    key = (using, chain)
    # Wait for this process's other appenders to the chain (see _APPEND_TURNS) — unless this
    # transaction appended to it already and so holds its lock: then nobody can be ahead.
    outer = connection.atomic_blocks[0] if connection.atomic_blocks else None
    turn = None
    if getattr(_holding, "last", None) != (key, outer):
        lock = _APPEND_TURNS[hash(key) % len(_APPEND_TURNS)]
        turn = lock if lock.acquire(timeout=APPEND_TURN_WAIT) else None
    try:
        size, head = cache.get(key, (0, GENESIS_HASH))
        if caused_by is not None and caused_by > size:
            # This process's hint may be behind the chain (another process appended since): only
            # the head as it stands can say that `caused_by` is not an earlier event.
            size, head = _lock_head(using, chain)
            if caused_by > size:
                raise LedgerError("caused_by must be the seq of an earlier event")
        for _attempt in range(3):
            seq = document["seq"] = size + 1
            text, data = canonical_form(document, fast)
            digest = chain_hash(head, data)
            appended, current = _insert(connection, chain, size, head, text, digest, event_mac(mac_key, digest))
            if appended:
                cache[key] = (seq, digest)
                _holding.last = (key, outer)
                return AppendedEvent(chain, seq, digest)
            # The hint was stale: hash again against the head as it stands (locked now).
            size, head = current if current is not None else _lock_head(using, chain)
    finally:
        if turn is not None:
            turn.release()
    cache.pop(key, None)
    raise LedgerError("could not append: the chain head moved while locked")


def _append_cursor(raw: Any) -> psycopg.RawCursor[Any]:
    """One server-side-binding cursor per connection, so the append statement is prepared once
    and no cursor is built per event.  A raw cursor: the statement uses PostgreSQL's numbered
    placeholders, so a value used twice is sent once and the query is never rewritten."""
    held = getattr(_heads, "cursor", None)
    if held is None or held[0] is not raw or held[1].closed:
        held = _heads.cursor = (raw, psycopg.RawCursor(raw))
    return held[1]


def _insert(
    connection: Any, chain_id: int, size: int, head: bytes, canonical: str, digest: bytes, mac: bytes
) -> tuple[bool, tuple[int, bytes] | None]:
    """Move the head from (size, head) and insert the event.  Answers whether it did and, when
    it did not, the head as it stands (None when the chain has no head row yet, or the database
    cannot tell in the same statement)."""
    if connection.vendor == "postgresql":
        cursor = _append_cursor(connection.connection)
        cursor.execute(_PG_APPEND, (size, head, digest, chain_id, canonical, mac), prepare=True)
        row = cursor.fetchone()
        if row is None:
            return False, None
        return bool(row[2]), (int(row[0]), bytes(row[1]))
    # Other databases (SQLite for the embedded default): the same compare-and-swap in two
    # statements; the IMMEDIATE transaction already holds the write lock.
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE ledger_chain SET size = size + 1, head_hash = %s "
            "WHERE chain_id = %s AND size = %s AND head_hash = %s",
            [digest, chain_id, size, head],
        )
        if cursor.rowcount != 1:
            return False, None
        cursor.execute(
            "INSERT INTO ledger_event (chain_id, seq, canonical, prev_hash, hash, mac) VALUES (%s, %s, %s, %s, %s, %s)",
            [chain_id, size + 1, canonical, head, digest, mac],
        )
        return True, None


def _last_event(alias: str, chain_id: int) -> tuple[int, bytes]:
    last = (
        LedgerEvent.objects.using(alias).filter(chain_id=chain_id).order_by("-seq").values_list("seq", "hash").first()
    )
    return (0, GENESIS_HASH) if last is None else (int(last[0]), bytes(last[1]))


def _checkpoint_message(fields: dict[str, Any]) -> bytes:
    return CHECKPOINT_PREFIX + rfc8785.dumps(fields)


def checkpoint_path(chain_id: int) -> Path:
    return Path(settings.FACADE_LEDGER_CHECKPOINT_DIR) / f"chain-{int(chain_id)}.jsonl"


def load_checkpoints(chain_id: int) -> list[Checkpoint]:
    """The checkpoints held in this chain's local file, as written.  Their signatures are not
    checked here: `signed_checkpoints` is what a decision may rest on."""
    path = checkpoint_path(chain_id)
    if not path.exists():
        return []
    try:
        return [
            Checkpoint.model_validate_json(line)
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
    except ValueError as exc:
        raise LedgerError(f"the checkpoint file of chain {int(chain_id)} holds a line that is no checkpoint") from exc


def checkpoint_signature_ok(checkpoint: Checkpoint, trusted_public_key: bytes) -> bool:
    """Whether `checkpoint` was signed by the holder of `trusted_public_key`."""
    try:
        if base64.b64decode(checkpoint.public_key) != trusted_public_key:
            return False
        fields = checkpoint.model_dump(exclude={"signature"})
        public_key_from_raw(trusted_public_key).verify(
            base64.b64decode(checkpoint.signature), _checkpoint_message(fields)
        )
    except (InvalidSignature, ValueError):
        return False
    return True


def signed_checkpoints(chain_id: int) -> list[Checkpoint]:
    """The local checkpoints of a chain, each checked against this ledger's public key.  One that
    is not validly signed for this chain is an error, never a trusted starting point: someone
    who can write the file could otherwise declare forged events already sealed."""
    public = ledger_keys().public_raw
    held = load_checkpoints(chain_id)
    for checkpoint in held:
        if checkpoint.chain != int(chain_id) or not checkpoint_signature_ok(checkpoint, public):
            raise LedgerError(
                f"the checkpoint file of chain {int(chain_id)} holds a checkpoint (size {checkpoint.size}) "
                "that is not validly signed by this ledger's key"
            )
    return held


def range_statement_sign(fields: dict[str, str | int]) -> dict[str, str | int]:
    """Sign a statement about a range of a chain (audit/export.py says what its fields are) with
    the ledger's key: Ed25519 over RANGE_PREFIX and the RFC 8785 form of the fields with `key_id`
    and `public_key` added; the result carries the signature too."""
    keys = ledger_keys()
    signed: dict[str, str | int] = {
        **fields,
        "key_id": keys.key_id,
        "public_key": base64.b64encode(keys.public_raw).decode(),
    }
    signature = keys.private.sign(RANGE_PREFIX + rfc8785.dumps(signed))
    return {**signed, "signature": base64.b64encode(signature).decode()}


def checkpoint_issue(
    *, chain_id: int, label: str, size: int | None = None, head: bytes | None = None, using: str = "default"
) -> Checkpoint:
    """Sign a head of the chain and keep the checkpoint outside the database.

    Pass the `size` and `head` that a verification just established; without them the last
    stored event is taken.  The file under FACADE_LEDGER_CHECKPOINT_DIR is one place it is held;
    the returned checkpoint is meant to be copied somewhere the database's administrators cannot
    write.
    """
    keys = ledger_keys()
    if size is None or head is None:
        size, head = _last_event(using, chain_id)
    elif size > 0:
        stored = LedgerEvent.objects.using(using).filter(chain_id=chain_id, seq=size).values_list("hash", flat=True)
        if [bytes(h) for h in stored] != [head]:
            raise LedgerError(f"refusing to sign a checkpoint: event {size} is not the head that was verified")
    # Never bless events this key did not tag: a chain rewritten since the last checkpoint with
    # recomputed hashes is internally consistent, but its tags give it away.
    sealed = max((c.size for c in signed_checkpoints(chain_id) if c.size <= size), default=0)
    bad = first_bad_tag(using, chain_id, sealed, size, keys.mac_key)
    if bad is not None:
        raise LedgerError(f"refusing to sign a checkpoint: event {bad} does not carry this ledger's tag")
    fields = {
        "chain": int(chain_id),
        "label": label,
        "size": size,
        "head_hash": head.hex(),
        "issued_at": utc_text(dt.datetime.now(dt.timezone.utc)),
        "key_id": keys.key_id,
        "public_key": base64.b64encode(keys.public_raw).decode(),
    }
    signature = keys.private.sign(_checkpoint_message(fields))
    checkpoint = Checkpoint.model_validate({**fields, "signature": base64.b64encode(signature).decode()})
    path = checkpoint_path(chain_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(checkpoint.model_dump_json() + "\n")
    return checkpoint
