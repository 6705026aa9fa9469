#!/usr/bin/env python3
"""Verify a Facade ledger export (JSON Lines from /api/audit/export) offline.

    python3 tools/verify_export.py --public-key BASE64 export.jsonl

Python's standard library only; it imports nothing from Facade.  Checks that every event hashes
to its hash (SHA-256 of b"facade-ledger-v1\\x00" + previous hash + canonical bytes), that the
events link and their seqs are contiguous, that the last event is the head of the covering
checkpoint at its size, and that the checkpoint is signed (Ed25519, RFC 8032) by the key given on
the command line — take that key from the platform's operator, outside the system you audit: the
key written in the checkpoint itself proves nothing.  The range itself (the chain, its label, the
first and last seq, the `from` and `to` asked for, and the link of the first event to the one
before it) is read only from the header's range statement, signed by the same key: an export cut
at either end, or relabelled, does not verify, and the OK line prints only what was verified.
Prints "OK: …" and exits 0, or names the first bad seq and the reason and exits 1.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import hashlib
import json
import sys
from collections.abc import Iterable
from typing import cast

HASH_PREFIX = b"facade-ledger-v1\x00"
CHECKPOINT_PREFIX = b"facade-ledger-checkpoint-v1\x00"
RANGE_PREFIX = b"facade-ledger-range-v1\x00"
GENESIS = bytes(32)

# --- Ed25519 signature verification (RFC 8032, section 5.1.7), with Python integers -----------
P = 2**255 - 19  # the field
L = 2**252 + 27742317777372353535851937790883648493  # the order of the base point
D = -121665 * pow(121666, -1, P) % P  # the curve constant d = -121665/121666
SQRT_M1 = pow(2, (P - 1) // 4, P)  # a square root of -1


Point = tuple[int, int, int, int]


def _add(a: Point, b: Point) -> Point:
    """Point addition in extended coordinates (X, Y, Z, T), x = X/Z, y = Y/Z, xy = T/Z (5.1.4)."""
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    pa, pb = (y1 - x1) * (y2 - x2) % P, (y1 + x1) * (y2 + x2) % P
    pc, pd = 2 * t1 * t2 * D % P, 2 * z1 * z2 % P
    e, f, g, h = pb - pa, pd - pc, pd + pc, pb + pa
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _times(n: int, point: Point) -> Point:
    result: Point = (0, 1, 1, 0)  # the neutral element
    while n:
        if n & 1:
            result = _add(result, point)
        point, n = _add(point, point), n >> 1
    return result


def _decode(data: bytes) -> Point | None:
    """A point from its 32-byte encoding (5.1.3), None when it is not one."""
    if len(data) != 32:
        return None
    y = int.from_bytes(data, "little")
    sign, y = y >> 255, y & ((1 << 255) - 1)
    if y >= P:
        return None
    x2 = (y * y - 1) * pow(D * y * y + 1, -1, P) % P
    x = pow(x2, (P + 3) // 8, P)
    if (x * x - x2) % P:
        x = x * SQRT_M1 % P
    if (x * x - x2) % P or (x == 0 and sign):
        return None
    if x & 1 != sign:
        x = P - x
    return (x, y, 1, x * y % P)


BASE = _decode((4 * pow(5, -1, P) % P).to_bytes(32, "little"))  # y = 4/5, x even


def ed25519_verify(public_key: bytes, message: bytes, signature: bytes) -> bool:
    """Whether `signature` is `public_key`'s Ed25519 signature of `message`: [S]B = R + [k]A."""
    if len(signature) != 64 or BASE is None:
        return False
    a, r = _decode(public_key), _decode(signature[:32])
    s = int.from_bytes(signature[32:], "little")
    if a is None or r is None or s >= L:
        return False
    k = int.from_bytes(hashlib.sha512(signature[:32] + public_key + message).digest(), "little") % L
    left, right = _times(s, BASE), _add(r, _times(k, a))
    # Projective points are equal when X1/Z1 = X2/Z2 and Y1/Z1 = Y2/Z2.
    return (left[0] * right[2] - right[0] * left[2]) % P == 0 and (left[1] * right[2] - right[1] * left[2]) % P == 0


# --- the export ------------------------------------------------------------------------------
class Bad(Exception):
    """The export does not verify: `where` is "seq N", "checkpoint" or "line N"."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")


def _jcs_message(prefix: bytes, signed: dict[str, object], where: str) -> bytes:
    fields = {key: value for key, value in signed.items() if key != "signature"}
    for value in fields.values():
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise Bad(where, "a field that is neither text nor an integer")
    # The ledger signs the RFC 8785 (JCS) form of these fields.  For an object of strings and
    # integers with ASCII keys, json.dumps with sorted keys, no spaces and ensure_ascii=False is
    # byte for byte JCS: same key order, the same escapes (\" \\ \b \f \n \r \t, other control
    # characters as lower-case \u00xx, nothing else escaped) and integers in plain decimal.
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return prefix + text.encode("utf-8")


def checkpoint_message(checkpoint: dict[str, object]) -> bytes:
    return _jcs_message(CHECKPOINT_PREFIX, checkpoint, "checkpoint")


def range_message(statement: dict[str, object]) -> bytes:
    return _jcs_message(RANGE_PREFIX, statement, "range")


def _signature_check(where: str, signed: dict[str, object], message: bytes, public_key: bytes) -> None:
    """`signed` (a checkpoint or the range statement) is signed by the key the reader trusts."""
    try:
        own_key = base64.b64decode(str(signed["public_key"]), validate=True)
        signature = base64.b64decode(str(signed["signature"]), validate=True)
    except (KeyError, binascii.Error, TypeError) as exc:
        raise Bad(where, "no readable key or signature") from exc
    if own_key != public_key:
        raise Bad(where, f"signed by another key (key id {signed.get('key_id')}), not the one you trust")
    if not ed25519_verify(public_key, message, signature):
        raise Bad(where, "signature_invalid")


def _signed_range(header: dict[str, object], public_key: bytes) -> dict[str, object]:
    """The export's range statement, its signature checked, and the header held to it."""
    statement = header.get("range")
    if not isinstance(statement, dict):
        raise Bad("line 1", "range_unsigned (the export states no signed range; nothing ties it to the ledger)")
    _signature_check("range", statement, range_message(statement), public_key)
    for key in ("chain", "first_seq", "last_seq", "through"):
        if not isinstance(statement.get(key), int) or isinstance(statement.get(key), bool):
            raise Bad("range", f"{key} is not an integer")
    for key in ("label", "from", "to", "first_prev_hash", "head_hash"):
        if not isinstance(statement.get(key), str):
            raise Bad("range", f"{key} is not text")
    for key in ("chain", "label", "from", "to", "first_seq", "last_seq"):
        said = header.get(key)
        stated = statement[key]
        if key in ("from", "to") and said is None:
            said = ""
        if key in ("first_seq", "last_seq") and said is None:
            said = 0
        if said != stated:
            raise Bad("line 1", f"header_mismatch ({key} says {said!r}, the signed range {stated!r})")
    return statement


def verify(lines: Iterable[str], public_key: bytes) -> str:
    """Verify the export's lines, one at a time (memory stays flat); answers the OK message or
    raises Bad.  The range (its ends, the chain, its label, the first event's link) is read from
    the header's signed range statement only, and the OK message says nothing else."""
    lines = iter(lines)
    try:
        header = json.loads(next(lines))
    except (StopIteration, ValueError) as exc:
        raise Bad("line 1", "no export header") from exc
    if not isinstance(header, dict) or header.get("kind") != "facade-ledger-export" or header.get("version") != 1:
        raise Bad("line 1", "not a facade-ledger-export, version 1")
    checkpoint = header.get("checkpoint")
    if header.get("range") is None and not checkpoint:
        # Nothing was signed for this export (the ledger's own verification failed when it was
        # made): walk it all the same to name the first bad seq, then fail.
        _walk_unsigned(header, lines)
        raise AssertionError("unreachable")  # pragma: no cover
    statement = _signed_range(header, public_key)
    first, last, through = (cast(int, statement[key]) for key in ("first_seq", "last_seq", "through"))
    chain, label = statement["chain"], statement["label"]
    span = _span(statement)
    if first == 0:
        if last != 0 or through != 0:
            raise Bad("range", "an empty range with seqs")
        for number, text in enumerate(lines, start=2):
            if text.strip():
                raise Bad(f"line {number}", "an event in an empty range")
        return (
            f"OK: 0 events (the range is empty) of chain {chain} ({label}){span}, "
            f"signed by key {statement.get('key_id')}"
        )
    if not 1 <= first <= last <= through:
        raise Bad("range", "first_seq, last_seq and through are not a range")
    if not isinstance(checkpoint, dict):
        raise Bad("checkpoint", "none: no signed checkpoint covers this export")
    if checkpoint.get("chain") != chain:
        raise Bad("checkpoint", "of another chain")
    if checkpoint.get("size") != through or checkpoint.get("head_hash") != statement["head_hash"]:
        raise Bad("checkpoint", "not the checkpoint the signed range is linked to")
    _signature_check("checkpoint", checkpoint, checkpoint_message(checkpoint), public_key)
    try:
        first_link = bytes.fromhex(str(statement["first_prev_hash"]))
    except ValueError as exc:
        raise Bad("range", "first_prev_hash is not hex") from exc
    if len(first_link) != 32 or (first == 1 and first_link != GENESIS):
        raise Bad("range", "first_prev_hash is not a link")
    prev = _walk(lines, chain=chain, first=first, last=last, through=through, first_link=first_link)
    if prev.hex() != statement["head_hash"]:
        raise Bad(f"seq {through}", "head_mismatch (not the head hash the checkpoint signed)")
    count = last - first + 1
    start = "from the chain's first event" if first == 1 else f"its first linked to seq {first - 1} as signed"
    return (
        f"OK: {count} events (seq {first} to {last}) of chain {chain} ({label}){span}, {start}, "
        f"linked to the checkpoint of size {through} signed by key {checkpoint.get('key_id')}"
    )


def _span(statement: dict[str, object]) -> str:
    start, end = statement.get("from") or "", statement.get("to") or ""
    if not start and not end:
        return ""
    return f", from {start or 'the start'} to {end or 'the export'}"


def _event(number: int, text: str) -> tuple[int, bytes, bytes, str, dict[str, object], object]:
    try:
        event = json.loads(text)
        seq, canonical = event["seq"], event["canonical"].encode("utf-8")
        prev_hash, claimed = bytes.fromhex(event["prev_hash"]), event["hash"]
        document = json.loads(canonical)
        in_range = event.get("in_range", True)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise Bad(f"line {number}", "not an event line") from exc
    if not isinstance(document, dict):
        raise Bad(f"line {number}", "not an event line")
    return seq, prev_hash, canonical, claimed, document, in_range


def _walk(lines: Iterable[str], *, chain: object, first: int, last: int, through: int, first_link: bytes) -> bytes:
    """Every event from `first` to `through`, hashed and linked from `first_link`; the last hash."""
    expected, prev = first, first_link
    for number, text in enumerate(lines, start=2):
        if not text.strip():
            continue
        seq, prev_hash, canonical, claimed, document, in_range = _event(number, text)
        if seq != expected:
            # Named like the ledger's own verification: a repeated seq itself, or the first one missing.
            if isinstance(seq, int) and seq < expected:
                raise Bad(f"seq {seq}", f"duplicate_seq (found {seq} again where {expected} was due)")
            raise Bad(f"seq {expected}", f"missing_seq (found {seq})")
        if seq > through:
            raise Bad(f"seq {seq}", "beyond_checkpoint (an event past the checkpoint's size)")
        if in_range != (seq <= last):
            raise Bad(f"seq {seq}", "in_range flag disagrees with the signed range")
        if document.get("seq") != seq or document.get("chain") != chain:
            raise Bad(f"seq {seq}", "seq_mismatch (the canonical text names another chain or seq)")
        if prev_hash != prev:
            if seq == first and seq > 1:
                raise Bad(f"seq {seq}", "broken_link (prev_hash is not the signed range's link to the event before)")
            raise Bad(f"seq {seq}", "broken_link (prev_hash is not the previous event's hash)")
        prev = hashlib.sha256(HASH_PREFIX + prev_hash + canonical).digest()
        if prev.hex() != claimed:
            raise Bad(f"seq {seq}", "hash_mismatch (the canonical bytes do not hash to the event's hash)")
        expected += 1
    if expected <= last:
        raise Bad(f"seq {expected}", "missing_seq (the export ends before its range does)")
    if expected <= through:
        raise Bad(f"seq {expected}", "truncated (the export ends before the checkpoint's size)")
    return prev


def _walk_unsigned(header: dict[str, object], lines: Iterable[str]) -> None:
    """An export without a signed range or checkpoint never verifies: name the first bad seq the
    events show (or the ledger's own verification found), else say that nothing was signed."""
    first, last = header.get("first_seq"), header.get("last_seq")
    if isinstance(first, int) and isinstance(last, int) and 1 <= first <= last:
        expected: int = first
        prev: bytes | None = GENESIS if first == 1 else None
        for number, text in enumerate(lines, start=2):
            if not text.strip():
                continue
            seq, prev_hash, canonical, claimed, _, _ = _event(number, text)
            if seq != expected:
                raise Bad(f"seq {expected}", f"missing_seq (found {seq})")
            if prev is not None and prev_hash != prev:
                raise Bad(f"seq {seq}", "broken_link (prev_hash is not the previous event's hash)")
            prev = hashlib.sha256(HASH_PREFIX + prev_hash + canonical).digest()
            if prev.hex() != claimed:
                raise Bad(f"seq {seq}", "hash_mismatch (the canonical bytes do not hash to the event's hash)")
            expected += 1
    found = header.get("verification") or {}
    if isinstance(found, dict) and found.get("first_bad_seq"):
        reason = f"{found.get('reason')} (found by the ledger's own verification; nothing was signed)"
        raise Bad(f"seq {found['first_bad_seq']}", reason)
    raise Bad("checkpoint", "none: no signed checkpoint covers this export")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("export", help="the .jsonl file downloaded from the auditor console")
    parser.add_argument("--public-key", required=True, help="the ledger's Ed25519 public key, base64")
    args = parser.parse_args(argv)
    try:
        key = base64.b64decode(args.public_key, validate=True)
    except binascii.Error:
        key = b""
    if len(key) != 32:
        parser.error("--public-key must be the base64 of a 32-byte Ed25519 public key")
    try:
        with open(args.export, encoding="utf-8") as handle:
            print(verify(handle, key))
    except Bad as exc:
        print(f"FAIL: {exc}")
        return 1
    except (OSError, UnicodeDecodeError) as exc:
        print(f"FAIL: cannot read {args.export}: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
