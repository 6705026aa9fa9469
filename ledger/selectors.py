"""Reads of the ledger: verification against the chain itself and against signed checkpoints."""

from __future__ import annotations

import hashlib
from hmac import compare_digest

from .canonical import HASH_PREFIX, event_mac
from .keys import ledger_keys
from .models import GENESIS_HASH
from .scan import first_bad_tag, rows
from .schemas import Checkpoint, VerifyResult
from .services import LedgerError, checkpoint_signature_ok, load_checkpoints


def ledger_verify(
    *, chain_id: int, checkpoints: list[Checkpoint] | None = None, using: str = "default"
) -> VerifyResult:
    """Walk the chain from seq 1, hashing the stored canonical bytes, then hold it against the
    signed checkpoints (from the checkpoint directory unless given).

    `first_bad_seq` is the first position that cannot be trusted: a missing, duplicated or
    altered event, a broken link, or an event whose keyed tag this ledger did not write (a tail
    forged or rewritten with recomputed hashes: nobody without the key, which is kept outside
    the database, can recompute a tag); or, via a checkpoint, the first event cut off the tail.
    """
    keys = ledger_keys()
    unreadable: str | None = None
    try:
        held = load_checkpoints(chain_id) if checkpoints is None else checkpoints
    except LedgerError as exc:  # reported below, after the chain itself was checked
        held, unreadable = [], str(exc)
    wanted = {checkpoint.size for checkpoint in held}
    at: dict[int, bytes] = {}
    sha256 = hashlib.sha256
    prefix = HASH_PREFIX
    prev = GENESIS_HASH
    expected = 1
    first_bad: int | None = None
    reason: str | None = None
    mac_key = keys.mac_key
    for seq, prev_hash, digest, canonical, mac in rows(using, chain_id, "seq, prev_hash, hash, canonical, mac"):
        if seq != expected:
            first_bad, reason = min(seq, expected), ("duplicate_seq" if seq < expected else "missing_seq")
            break
        if prev_hash != prev:
            first_bad, reason = seq, "broken_link"
            break
        if sha256(prefix + prev + canonical).digest() != digest:
            first_bad, reason = seq, "hash_mismatch"
            break
        if not compare_digest(event_mac(mac_key, digest), mac):
            # Linked and hashed right, but not tagged with this ledger's key: appended or rewritten
            # by someone who knows the hash rule and not the key (past the last checkpoint too).
            first_bad, reason = seq, "bad_tag"
            break
        prev = digest
        if seq in wanted:
            at[seq] = digest
        expected += 1
    checked = expected - 1

    good_until = 0
    for checkpoint in sorted(held, key=lambda c: c.size):
        if checkpoint.chain != chain_id or not checkpoint_signature_ok(checkpoint, keys.public_raw):
            return VerifyResult(
                ok=False,
                checked=checked,
                first_bad_seq=first_bad,
                reason="checkpoint_signature_invalid",
                checkpoints_checked=len(held),
                head_hash=prev.hex(),
            )
        if checkpoint.size == 0:
            continue
        if checkpoint.size > checked and first_bad is None:
            # The chain is internally sound but shorter than a signed checkpoint: truncated.
            first_bad, reason = checked + 1, "truncated"
            break
        if checkpoint.size <= checked and at[checkpoint.size].hex() != checkpoint.head_hash:
            tagged = first_bad_tag(using, chain_id, good_until, checkpoint.size, keys.mac_key)
            seq = tagged if tagged is not None else checkpoint.size
            if first_bad is None or seq < first_bad:
                first_bad, reason = seq, "rewritten"
            break
        if checkpoint.size <= checked:
            good_until = checkpoint.size
    if unreadable is not None and reason is None:
        return VerifyResult(
            ok=False,
            checked=checked,
            first_bad_seq=None,
            reason="checkpoint_file_invalid",
            head_hash=prev.hex(),
            detail=unreadable,
        )
    return VerifyResult(
        ok=reason is None,
        checked=checked,
        first_bad_seq=first_bad,
        reason=reason,
        checkpoints_checked=len(held),
        head_hash=prev.hex(),
    )
