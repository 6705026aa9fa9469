"""Typed shapes of the ledger: appended events, checkpoints and verification results."""

from __future__ import annotations

from typing import NamedTuple

from pydantic import BaseModel, ConfigDict


class AppendedEvent(NamedTuple):
    """What ledger_append hands back (a plain tuple: it is built on every write)."""

    chain_id: int
    seq: int
    hash: bytes


class Checkpoint(BaseModel):
    """A signed statement "chain `chain` had `size` events ending in `head_hash` at `issued_at`".

    The signature is Ed25519 over b"facade-ledger-checkpoint-v1\\x00" followed by the RFC 8785
    form of every field except `signature`.
    """

    model_config = ConfigDict(frozen=True)

    chain: int
    label: str
    size: int
    head_hash: str
    issued_at: str
    key_id: str
    public_key: str
    signature: str


class VerifyResult(BaseModel):
    ok: bool
    checked: int
    first_bad_seq: int | None
    reason: str | None = None
    checkpoints_checked: int = 0
    head_hash: str = ""  # hex hash of event `checked`, the last one that verified
    detail: str | None = None  # what went wrong, in words, when `reason` alone does not say
