"""The canonical form of an event and its hash: pure functions, no database.

An event is serialised with RFC 8785 (JSON Canonicalization Scheme) and hashed as

    hash_i = SHA-256( b"facade-ledger-v1\\x00" || hash_{i-1} (32 raw bytes) || canonical_i )

with hash_0 = 32 zero bytes.  Timestamps are UTC strings `YYYY-MM-DDTHH:MM:SS.ffffffZ`;
amounts are decimal strings; floats are refused because their text form is not unique.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
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
    if moment.utcoffset():
        moment = moment.astimezone(dt.timezone.utc)
    return moment.isoformat(timespec="microseconds")[:26] + "Z"


def normalise(value: Any) -> Any:
    """Return a JSON value made of str/int/bool/None/list/dict only, refusing floats."""
    return _normalise(value, [False])


def prepare_payload(value: Any) -> tuple[Any, bool]:
    """Normalise a payload and tell whether json.dumps may serialise it (see _fast_path_ok)."""
    slow = [False]
    return _normalise(value, slow), not slow[0]


# Payload keys that name a secret.  One-time codes, tokens, passwords and keys never enter the
# ledger; a payload that tries is refused rather than stored.
_SECRET_KEY = re.compile(
    r"password|passwd|secret|token|(^|_)otp($|_)|api_?key|private_?key|^key$|^code$", re.IGNORECASE
)


def _normalise(value: Any, slow: list[bool]) -> Any:
    kind = type(value)
    if kind is str:
        return value
    if kind is int:
        if not -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT:
            slow[0] = True
        return value
    if value is None or kind is bool:
        return value
    if kind is dict:
        out: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise CanonicalError(f"payload keys must be strings, got {type(key).__name__}")
            if not key.isascii() and max(key) > "\uffff":
                slow[0] = True
            if _SECRET_KEY.search(key):
                raise CanonicalError(f"{key!r} names a secret; secrets are never written to the ledger")
            try:
                out[key] = _normalise(item, slow)
            except CanonicalError as exc:
                raise CanonicalError(f"{key}: {exc}") from None
        return out
    if kind is list or kind is tuple:
        return [_normalise(item, slow) for item in value]
    if isinstance(value, float):
        raise CanonicalError("floats are refused in ledger payloads; send amounts as decimal strings")
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise CanonicalError("non-finite decimal")
        return format(value, "f")
    if isinstance(value, dt.datetime):
        return utc_text(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (str, int)):  # subclasses (e.g. StrEnum) become their plain value
        return _normalise(str(value) if isinstance(value, str) else int(value), slow)
    if isinstance(value, dict):
        return _normalise(dict(value), slow)
    if isinstance(value, (list, tuple)):
        return _normalise(list(value), slow)
    raise CanonicalError(f"{type(value).__name__} is not a ledger value")


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


_MAX_SAFE_INT = 2**53 - 1
# Built once: json.dumps with non-default options would build a new encoder on every call.
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _fast_path_ok(value: Any) -> bool:
    """Whether json.dumps(sort_keys=True) gives exactly the RFC 8785 form of `value`.

    For strings, ints, bools, null, lists and objects the two agree except on (a) the order of
    keys holding characters outside the Basic Multilingual Plane (JCS sorts by UTF-16 code
    units, Python by code points) and (b) integers beyond ±2^53, which JCS refuses."""
    if isinstance(value, str) or value is None or isinstance(value, bool):
        return True
    if isinstance(value, int):
        return -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT
    if isinstance(value, list):
        return all(_fast_path_ok(item) for item in value)
    if isinstance(value, dict):
        return all(
            isinstance(key, str) and key.isascii() or (isinstance(key, str) and max(key) <= "\uffff") for key in value
        ) and all(_fast_path_ok(item) for item in value.values())
    return False


def canonical_text(document: dict[str, Any], fast: bool | None = None) -> str:
    """The RFC 8785 serialisation of a normalised document, as text.  `fast` says whether the
    caller already knows json.dumps gives the same result (see prepare_payload)."""
    if fast if fast is not None else _fast_path_ok(document):
        return _ENCODER.encode(document)
    try:
        return rfc8785.dumps(document).decode("utf-8")
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise CanonicalError(str(exc)) from exc


def canonical_form(document: dict[str, Any], fast: bool | None = None) -> tuple[str, bytes]:
    """The canonical text of a normalised document (what is stored) and its UTF-8 bytes (what is
    hashed): the one path `ledger_append` takes."""
    text = canonical_text(document, fast)
    try:
        return text, text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate has no UTF-8 form
        raise CanonicalError(f"text that is not valid Unicode: {exc.reason}") from exc


def chain_hash(prev_hash: bytes, canonical: bytes) -> bytes:
    return hashlib.sha256(HASH_PREFIX + prev_hash + canonical).digest()


def event_mac(key: bytes, event_hash: bytes) -> bytes:
    """A keyed tag over an event's hash (BLAKE2b in its keyed MAC mode).  The key never enters
    the database, so someone who rewrites the chain there and recomputes every hash still
    cannot produce valid tags."""
    return hashlib.blake2b(event_hash, key=key, digest_size=32).digest()
