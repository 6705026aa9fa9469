"""The canonical form of an event and its hash: pure functions, no database.

An event is serialised with RFC 8785 (JSON Canonicalization Scheme) and hashed as

    hash_i = SHA-256( b"facade-ledger-v1\\x00" || hash_{i-1} (32 raw bytes) || canonical_i )

with hash_0 = 32 zero bytes.  Timestamps are UTC strings `YYYY-MM-DDTHH:MM:SS.ffffffZ`;
amounts are decimal strings; floats are refused because their text form is not unique.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
from decimal import Decimal
from typing import Any

import rfc8785

HASH_PREFIX = b"facade-ledger-v1\x00"
CANONICAL_VERSION = 1


class CanonicalError(ValueError):
    """The payload cannot be put into canonical form (a float, a non-string key, ...)."""


def utc_text(moment: dt.datetime) -> str:
    if moment.tzinfo is None:
        raise CanonicalError("ledger timestamps must be timezone-aware")
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def normalise(value: Any, path: str = "payload") -> Any:
    """Return a JSON value with only str/int/bool/None/list/dict, refusing floats."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        raise CanonicalError(f"{path}: floats are refused in ledger payloads; send amounts as decimal strings")
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise CanonicalError(f"{path}: non-finite decimal")
        return format(value, "f")
    if isinstance(value, dt.datetime):
        return utc_text(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [normalise(item, f"{path}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise CanonicalError(f"{path}: keys must be strings, got {type(key).__name__}")
            out[key] = normalise(item, f"{path}.{key}")
        return out
    raise CanonicalError(f"{path}: {type(value).__name__} is not a ledger value")


def event_document(
    *,
    chain_id: int,
    seq: int,
    event_type: str,
    entity_type: str,
    entity_id: str,
    entity_version: int | None,
    actor_type: str,
    actor_id: str,
    caused_by: int | None,
    payload: dict[str, Any],
    created_at: str,
) -> dict[str, Any]:
    return {
        "v": CANONICAL_VERSION,
        "chain": chain_id,
        "seq": seq,
        "event_type": event_type,
        "entity_type": entity_type,
        "entity_id": entity_id,
        "entity_version": entity_version,
        "actor_type": actor_type,
        "actor_id": actor_id,
        "caused_by": caused_by,
        "payload": payload,
        "created_at": created_at,
    }


def canonical_bytes(document: dict[str, Any]) -> bytes:
    try:
        return rfc8785.dumps(document)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise CanonicalError(str(exc)) from exc


def chain_hash(prev_hash: bytes, canonical: bytes) -> bytes:
    return hashlib.sha256(HASH_PREFIX + prev_hash + canonical).digest()


def event_mac(key: bytes, event_hash: bytes) -> bytes:
    """A keyed tag over an event's hash.  The key never enters the database, so someone who
    rewrites the chain there and recomputes every hash still cannot produce valid tags."""
    return hmac.new(key, event_hash, hashlib.sha256).digest()
