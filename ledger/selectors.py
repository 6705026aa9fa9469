"""Reads of the ledger: verification against the chain itself and against signed checkpoints."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
from collections.abc import Iterable, Iterator
from typing import Any

import rfc8785
from cryptography.exceptions import InvalidSignature
from django.db import connections

from .canonical import HASH_PREFIX
from .keys import ledger_keys, public_key_from_raw
from .models import GENESIS_HASH, LedgerEvent
from .schemas import Checkpoint, VerifyResult
from .services import CHECKPOINT_PREFIX, checkpoint_path

_FETCH_CHUNK = 5000


def _rows(alias: str, chain_id: int, columns: str, where: str = "", params: Iterable[Any] = ()) -> Iterator[tuple[Any, ...]]:
    connection = connections[alias]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {columns} FROM ledger_event WHERE chain_id = %s{where} ORDER BY seq, id",
            [chain_id, *params],
        )
        while True:
            batch = cursor.fetchmany(_FETCH_CHUNK)
            if not batch:
                return
            yield from batch


def _column_mismatch_pg(alias: str, chain_id: int) -> int | None:
    """First seq whose queryable columns disagree with its hashed bytes (done inside PostgreSQL)."""
    sql = """
    SELECT min(seq) FROM (
        SELECT e.*, convert_from(e.canonical, 'UTF8')::jsonb AS c FROM ledger_event e WHERE e.chain_id = %s
    ) x
    WHERE (c->>'seq')::bigint IS DISTINCT FROM seq
       OR (c->>'chain')::bigint IS DISTINCT FROM chain_id
       OR c->>'event_type' IS DISTINCT FROM event_type
       OR c->>'entity_type' IS DISTINCT FROM entity_type
       OR c->>'entity_id' IS DISTINCT FROM entity_id
       OR (c->>'entity_version')::bigint IS DISTINCT FROM entity_version
       OR c->>'actor_type' IS DISTINCT FROM actor_type
       OR c->>'actor_id' IS DISTINCT FROM actor_id
       OR (c->>'caused_by')::bigint IS DISTINCT FROM caused_by
       OR c->'payload' IS DISTINCT FROM payload
       OR c->>'created_at' IS DISTINCT FROM
          to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
    """
    with connections[alias].cursor() as cursor:
        cursor.execute(sql, [chain_id])
        (seq,) = cursor.fetchone()
    return None if seq is None else int(seq)


def _column_mismatch_python(alias: str, chain_id: int) -> int | None:
    """The same check for databases without a JSON operator set we rely on (SQLite)."""
    for event in LedgerEvent.objects.using(alias).filter(chain_id=chain_id).order_by("seq", "id").iterator():
        doc = json.loads(bytes(event.canonical))
        created = event.created_at.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        if (
            doc.get("seq") != event.seq
            or doc.get("chain") != event.chain_id
            or doc.get("event_type") != event.event_type
            or doc.get("entity_type") != event.entity_type
            or doc.get("entity_id") != event.entity_id
            or doc.get("entity_version") != event.entity_version
            or doc.get("actor_type") != event.actor_type
            or doc.get("actor_id") != event.actor_id
            or doc.get("caused_by") != event.caused_by
            or doc.get("payload") != event.payload
            or doc.get("created_at") != created
        ):
            return event.seq
    return None


def load_checkpoints(chain_id: int) -> list[Checkpoint]:
    path = checkpoint_path(chain_id)
    if not path.exists():
        return []
    return [Checkpoint.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def checkpoint_signature_ok(checkpoint: Checkpoint, trusted_public_key: bytes) -> bool:
    if base64.b64decode(checkpoint.public_key) != trusted_public_key:
        return False
    fields = checkpoint.model_dump(exclude={"signature"})
    try:
        public_key_from_raw(trusted_public_key).verify(
            base64.b64decode(checkpoint.signature), CHECKPOINT_PREFIX + rfc8785.dumps(fields)
        )
    except (InvalidSignature, ValueError):
        return False
    return True


def _first_bad_tag(alias: str, chain_id: int, low: int, high: int, mac_key: bytes) -> int | None:
    """Within (low, high], the first event whose keyed tag does not match its hash."""
    for seq, digest, mac in _rows(alias, chain_id, "seq, hash, mac", " AND seq > %s AND seq <= %s", [low, high]):
        if not hmac.compare_digest(hmac.digest(mac_key, bytes(digest), "sha256"), bytes(mac)):
            return int(seq)
    return None


def ledger_verify(
    *, chain_id: int, checkpoints: list[Checkpoint] | None = None, using: str = "default"
) -> VerifyResult:
    """Walk the chain from seq 1, hashing the stored canonical bytes, then hold it against the
    signed checkpoints (from the checkpoint directory unless given).

    `first_bad_seq` is the first position that cannot be trusted: a missing, duplicated or
    altered event, a broken link, or — via a checkpoint — the first rewritten event (found by
    its keyed tag) or the first event cut off the tail.
    """
    sha256 = hashlib.sha256
    prefix = HASH_PREFIX
    prev = GENESIS_HASH
    hashes: list[bytes] = []
    expected = 1
    first_bad: int | None = None
    reason: str | None = None
    for seq, prev_hash, digest, canonical in _rows(using, chain_id, "seq, prev_hash, hash, canonical"):
        if seq != expected:
            first_bad, reason = min(seq, expected), ("duplicate_seq" if seq < expected else "missing_seq")
            break
        if prev_hash != prev:
            first_bad, reason = seq, "broken_link"
            break
        if sha256(prefix + prev + canonical).digest() != digest:
            first_bad, reason = seq, "hash_mismatch"
            break
        prev = digest
        hashes.append(prev)
        expected += 1
    checked = len(hashes)

    connection = connections[using]
    mismatch = (
        _column_mismatch_pg(using, chain_id)
        if connection.vendor == "postgresql"
        else _column_mismatch_python(using, chain_id)
    )
    if mismatch is not None and (first_bad is None or mismatch < first_bad):
        first_bad, reason = mismatch, "column_mismatch"

    keys = ledger_keys()
    held = load_checkpoints(chain_id) if checkpoints is None else checkpoints
    good_until = 0
    for checkpoint in sorted(held, key=lambda c: c.size):
        if checkpoint.chain != chain_id or not checkpoint_signature_ok(checkpoint, keys.public_raw):
            return VerifyResult(
                ok=False, checked=checked, first_bad_seq=first_bad, reason="checkpoint_signature_invalid",
                checkpoints_checked=len(held),
            )
        if checkpoint.size == 0:
            continue
        if checkpoint.size > checked and first_bad is None:
            # The chain is internally sound but shorter than a signed checkpoint: truncated.
            first_bad, reason = checked + 1, "truncated"
            break
        if checkpoint.size <= checked and hashes[checkpoint.size - 1].hex() != checkpoint.head_hash:
            tagged = _first_bad_tag(using, chain_id, good_until, checkpoint.size, keys.mac_key)
            seq = tagged if tagged is not None else checkpoint.size
            if first_bad is None or seq < first_bad:
                first_bad, reason = seq, "rewritten"
            break
        if checkpoint.size <= checked:
            good_until = checkpoint.size
    return VerifyResult(
        ok=first_bad is None, checked=checked, first_bad_seq=first_bad, reason=reason, checkpoints_checked=len(held)
    )
