"""The event store: one hash-chained, append-only chain per tenant.

The ledger depends on nothing else in the project: a chain is identified by an integer
(`chain_id`, the tenant's primary key), not by a foreign key.
"""

from __future__ import annotations

from typing import Any

from django.db import models

from .expressions import CanonicalField

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


def _generated(key: str, kind: str, output_field: models.Field) -> models.GeneratedField:
    return models.GeneratedField(
        expression=CanonicalField(key, kind), output_field=output_field, db_persist=True
    )


GENERATED_COLUMNS = (
    "chain_id", "seq", "event_type", "entity_type", "entity_id", "entity_version",
    "actor_type", "actor_id", "caused_by", "payload", "created_at",
)


class ActorType(models.TextChoices):
    HUMAN = "human"
    AGENT = "agent"
    PLATFORM = "platform"


class LedgerEvent(models.Model):
    """One event.  `canonical` holds the exact bytes that were hashed; every other field except
    the hashes is a column *generated* from those bytes, so the two cannot disagree."""

    id = models.BigAutoField(primary_key=True)
    canonical = models.BinaryField()
    prev_hash = models.BinaryField(max_length=32)
    hash = models.BinaryField(max_length=32)
    mac = models.BinaryField(max_length=32)
    chain_id = _generated("chain", "bigint", models.BigIntegerField())
    seq = _generated("seq", "bigint", models.BigIntegerField())
    event_type = _generated("event_type", "text", models.CharField(max_length=64))
    entity_type = _generated("entity_type", "text", models.CharField(max_length=64))
    entity_id = _generated("entity_id", "text", models.CharField(max_length=64))
    entity_version = _generated("entity_version", "bigint", models.BigIntegerField(null=True))
    actor_type = _generated("actor_type", "text", models.CharField(max_length=16, choices=ActorType.choices))
    actor_id = _generated("actor_id", "text", models.CharField(max_length=64))
    caused_by = _generated("caused_by", "bigint", models.BigIntegerField(null=True))
    payload = _generated("payload", "json", models.JSONField())
    created_at = _generated("created_at", "timestamp", models.DateTimeField())

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
