"""The event store: one hash-chained, append-only chain per tenant.

The ledger depends on nothing else in the project: a chain is identified by an integer
(`chain_id`, the tenant's primary key), not by a foreign key.
"""

from __future__ import annotations

from typing import Any

from django.db import models

GENESIS_HASH = bytes(32)


class AppendOnlyError(Exception):
    """Raised when code tries to change or remove a ledger event."""


class Chain(models.Model):
    """The head of one chain.  Appends lock this row, so one chain's appends serialise."""

    chain_id = models.BigIntegerField(primary_key=True)
    size = models.BigIntegerField(default=0)
    head_hash = models.BinaryField(max_length=32, default=GENESIS_HASH)

    class Meta:
        db_table = "ledger_chain"


class AppendOnlyQuerySet(models.QuerySet["LedgerEvent"]):
    def update(self, **kwargs: Any) -> int:
        raise AppendOnlyError("ledger events cannot be updated")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("ledger events cannot be deleted")


class ActorType(models.TextChoices):
    HUMAN = "human"
    AGENT = "agent"
    PLATFORM = "platform"


class LedgerEvent(models.Model):
    """One event.  `canonical` holds the exact bytes that were hashed; the other columns are a
    queryable copy of what those bytes say, and verification checks they agree."""

    id = models.BigAutoField(primary_key=True)
    chain_id = models.BigIntegerField()
    seq = models.BigIntegerField()
    event_type = models.CharField(max_length=64)
    entity_type = models.CharField(max_length=64)
    entity_id = models.CharField(max_length=64)
    entity_version = models.BigIntegerField(null=True)
    actor_type = models.CharField(max_length=16, choices=ActorType.choices)
    actor_id = models.CharField(max_length=64)
    caused_by = models.BigIntegerField(null=True, help_text="seq of the causing event in the same chain")
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField()
    prev_hash = models.BinaryField(max_length=32)
    hash = models.BinaryField(max_length=32)
    canonical = models.BinaryField()
    mac = models.BinaryField(max_length=32)

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        db_table = "ledger_event"
        constraints = [models.UniqueConstraint(fields=["chain_id", "seq"], name="ledger_event_chain_seq")]
        indexes = [models.Index(fields=["chain_id", "entity_type", "entity_id"], name="ledger_event_entity")]

    def save(self, *args: Any, **kwargs: Any) -> None:
        # Events are written only by ledger.services.ledger_append; the ORM may never
        # overwrite one.
        raise AppendOnlyError("ledger events are written by ledger_append and never saved again")

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("ledger events cannot be deleted")

    def __str__(self) -> str:
        return f"{self.chain_id}#{self.seq} {self.event_type}"
