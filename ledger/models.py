"""The event store: one hash-chained, append-only chain per tenant.

The ledger depends on nothing else in the project: a chain is identified by an integer
(`chain_id`, the tenant's primary key), not by a foreign key.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from django.db import models
from django.db.models import F
from django.utils.functional import cached_property

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

    def __str__(self) -> str:
        return f"chain {self.chain_id} ({self.size} events)"


class ActorType(models.TextChoices):
    HUMAN = "human"
    AGENT = "agent"
    PLATFORM = "platform"


class _FromText:
    """A field of an event, read from its canonical text (the only copy)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = name

    def __get__(self, event: "LedgerEvent | None", owner: type | None = None) -> Any:
        return self if event is None else event.document[self.key]


class AppendOnlyQuerySet(models.QuerySet["LedgerEvent"]):
    def update(self, **kwargs: Any) -> int:
        raise AppendOnlyError("ledger events cannot be updated")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("ledger events cannot be deleted")

    def of_type(self, event_type: str) -> "AppendOnlyQuerySet":
        return self.alias(_event_type=CanonicalField("event_type")).filter(_event_type=event_type)

    def for_entity(self, chain_id: int, entity_type: str, entity_id: str) -> "AppendOnlyQuerySet":
        """Events about one entity, found through the functional index on the canonical text."""
        return self.alias(_entity_type=CanonicalField("entity_type"), _entity_id=CanonicalField("entity_id")).filter(
            chain_id=chain_id, _entity_type=entity_type, _entity_id=str(entity_id)
        )


class LedgerEvent(models.Model):
    """One event.  `canonical` holds the exact text that was hashed and is the only copy of the
    event's fields; `chain_id` and `seq` are stored beside it to order and find rows (if someone
    edits them, the chain walk finds a gap or a broken link).  The other fields are properties
    read from the text."""

    id = models.BigAutoField(primary_key=True)
    chain_id = models.BigIntegerField()
    seq = models.BigIntegerField()
    canonical = models.TextField(help_text="the exact UTF-8 text that was hashed")
    prev_hash = models.BinaryField(max_length=32)
    hash = models.BinaryField(max_length=32)
    mac = models.BinaryField(
        max_length=32, help_text="keyed BLAKE2b tag of hash, under a key kept outside the database"
    )

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        db_table = "ledger_event"
        constraints = [models.UniqueConstraint(fields=["chain_id", "seq"], name="ledger_event_chain_seq")]
        # Every index leads with the chain and ends with `seq`, so that a reader pages one chain's
        # events by sequence number (keyset) under any one filter without sorting: the auditor
        # console's timeline filters, lineage (entity), caused-by links in both directions, replay
        # at a time (created_at) and the agent a payload names.
        indexes = [
            models.Index(
                F("chain_id"),
                CanonicalField("entity_type"),
                CanonicalField("entity_id"),
                F("seq"),
                name="ledger_event_entity_seq",
            ),
            models.Index(F("chain_id"), CanonicalField("event_type"), F("seq"), name="ledger_event_type_seq"),
            models.Index(F("chain_id"), CanonicalField("actor_id"), F("seq"), name="ledger_event_actor_seq"),
            models.Index(F("chain_id"), CanonicalField("caused_by", "bigint"), name="ledger_event_caused_by"),
            models.Index(F("chain_id"), CanonicalField("created_at"), name="ledger_event_created_at"),
            models.Index(
                F("chain_id"), CanonicalField("payload", subkey="agent"), F("seq"), name="ledger_event_agent_seq"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.chain_id}#{self.seq} {self.event_type}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # Events are written only by ledger.services.ledger_append; the ORM may never
        # overwrite one.
        raise AppendOnlyError("ledger events are written by ledger_append and never saved again")

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("ledger events cannot be deleted")

    @cached_property
    def document(self) -> dict[str, Any]:
        return json.loads(self.canonical)

    event_type = _FromText()
    entity_type = _FromText()
    entity_id = _FromText()
    entity_version = _FromText()
    actor_type = _FromText()
    actor_id = _FromText()
    caused_by = _FromText()
    payload = _FromText()

    @property
    def created_at(self) -> dt.datetime:
        return dt.datetime.strptime(self.document["created_at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
            tzinfo=dt.timezone.utc
        )
