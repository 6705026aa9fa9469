"""Reads of the ledger: verification against the chain itself and against signed checkpoints."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json

import rfc8785
from cryptography.exceptions import InvalidSignature
from django.db import connections

from .canonical import HASH_PREFIX
from .keys import ledger_keys, public_key_from_raw
from .models import GENERATED_COLUMNS, GENESIS_HASH, LedgerEvent
from .schemas import Checkpoint, VerifyResult
from .scan import first_bad_tag, rows
from .services import CHECKPOINT_PREFIX, load_checkpoints

_FETCH_CHUNK = 5000


def generated_columns_intact(alias: str) -> bool:
    """Whether every queryable column of ledger_event is still generated from `canonical`.

    While they are, the database itself refuses to let a column disagree with the hashed bytes;
    someone who turns one into a plain column to edit it shows up here."""
    connection = connections[alias]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = 'ledger_event'::regclass "
                "AND attgenerated = 's' AND NOT attisdropped"
            )
            generated = {name for (name,) in cursor.fetchall()}
        else:
            cursor.execute("PRAGMA table_xinfo(ledger_event)")
            # column 6 of table_xinfo is "hidden": 3 marks a STORED generated column.
            generated = {row[1] for row in cursor.fetchall() if row[6] == 3}
    return set(GENERATED_COLUMNS) <= generated


def _column_mismatch(alias: str, chain_id: int) -> int | None:
    """First seq whose columns disagree with its hashed bytes.  Only needed when the columns are
    no longer generated (see generated_columns_intact), so it may be slow."""
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
            return int(event.seq)
    return None


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
    for seq, prev_hash, digest, canonical in rows(using, chain_id, "seq, prev_hash, hash, canonical"):
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

    schema_altered = not generated_columns_intact(using)
    if schema_altered:
        mismatch = _column_mismatch(using, chain_id)
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
            tagged = first_bad_tag(using, chain_id, good_until, checkpoint.size, keys.mac_key)
            seq = tagged if tagged is not None else checkpoint.size
            if first_bad is None or seq < first_bad:
                first_bad, reason = seq, "rewritten"
            break
        if checkpoint.size <= checked:
            good_until = checkpoint.size
    if schema_altered and reason is None:
        # Every event still agrees with its bytes, but someone made the columns editable.
        reason = "schema_altered"
    return VerifyResult(
        ok=reason is None, checked=checked, first_bad_seq=first_bad, reason=reason, checkpoints_checked=len(held)
    )
