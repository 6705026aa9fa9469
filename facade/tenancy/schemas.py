"""Typed values the tenancy app hands to others."""

from __future__ import annotations

from dataclasses import dataclass

from ledger.models import ActorType


@dataclass(frozen=True)
class Actor:
    """Who performs a write, as the ledger records it."""

    type: ActorType
    id: str

    @classmethod
    def human(cls, user_id: object) -> "Actor":
        return cls(ActorType.HUMAN, f"user:{user_id}")

    @classmethod
    def platform(cls, what: str) -> "Actor":
        return cls(ActorType.PLATFORM, what)

    @classmethod
    def customer(cls, customer_id: object) -> "Actor":
        return cls(ActorType.HUMAN, f"customer:{customer_id}")

    @classmethod
    def peer(cls, credential_id: object) -> "Actor":
        return cls(ActorType.AGENT, f"peer:{credential_id}")


@dataclass(frozen=True)
class IssuedPeerKey:
    credential_id: str
    name: str
    key: str  # shown once to its creator, never stored
