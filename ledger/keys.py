"""The ledger's signing key, kept outside the database.

FACADE_LEDGER_SIGNING_KEY (base64 of a 32-byte Ed25519 seed) wins; otherwise a seed is generated
once into var/.  Checkpoints are signed with Ed25519 so that anyone holding the public key can
check them; per-event tags use a keyed-BLAKE2b key derived from the same seed.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.conf import settings


class SigningKeyError(RuntimeError):
    pass


@dataclass(frozen=True)
class LedgerKeys:
    private: Ed25519PrivateKey
    public_raw: bytes
    key_id: str
    mac_key: bytes


def _decode_seed(text: str) -> bytes:
    try:
        seed = base64.urlsafe_b64decode(text.strip() + "=" * (-len(text.strip()) % 4))
    except (binascii.Error, ValueError) as exc:
        raise SigningKeyError("FACADE_LEDGER_SIGNING_KEY is not base64") from exc
    if len(seed) != 32:
        raise SigningKeyError("FACADE_LEDGER_SIGNING_KEY must decode to exactly 32 bytes")
    return seed


def _seed_from_file(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _decode_seed(path.read_text())
    except FileNotFoundError:
        pass
    text = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process won the race; use its key
        return _decode_seed(path.read_text())
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    return _decode_seed(text)


def ledger_keys() -> LedgerKeys:
    return _keys_for(settings.FACADE_LEDGER_SIGNING_KEY, str(settings.FACADE_LEDGER_SIGNING_KEY_FILE))


# Keyed by the configuration, so that changed settings (tests) get their own keys; a process
# serves one configuration, and a handful is plenty for tests that switch between a few.
KEYS_CACHE_SIZE = 8


@functools.lru_cache(maxsize=KEYS_CACHE_SIZE)
def _keys_for(configured: str, key_file: str) -> LedgerKeys:
    seed = _decode_seed(configured) if configured else _seed_from_file(Path(key_file))
    private = Ed25519PrivateKey.from_private_bytes(seed)
    public_raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return LedgerKeys(
        private=private,
        public_raw=public_raw,
        key_id=hashlib.sha256(public_raw).hexdigest()[:16],
        mac_key=hashlib.sha256(b"facade-ledger-mac-v1\x00" + seed).digest(),
    )


def ledger_keys_reset() -> None:
    """Forget the loaded keys (the next use reads the setting or the key file again)."""
    _keys_for.cache_clear()


def public_key_from_raw(raw: bytes) -> Ed25519PublicKey:
    return Ed25519PublicKey.from_public_bytes(raw)
