"""The catalogue of ledger event types: the one list of what may be written to a chain.

The ledger depends on no app, so each app brings its types here: its `events.py` registers every
type it writes (name, the entity the event is about, a pydantic payload model and a one-line
description) and holds one typed constructor per type.  Each app's `AppConfig.ready` imports its
`events.py`, so the catalogue is complete once Django is set up.  `ledger_append` refuses a type
the catalogue does not hold (or an event about another kind of entity than the one registered),
so no code path can write an event nobody described; the README's table of events, the
`ledger_events` command and an auditor's filter list are generated from here.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["EventPayload", "EventType", "Catalogue", "catalogue", "register"]

# Lower-case dotted names ("session.opened", "knowledge.version_created"): an auditor filters on
# them, and the ledger's event_type column holds at most 64 characters.
_NAME = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+")
_ENTITY = re.compile(r"[a-z][a-z0-9_]*")


class EventPayload(BaseModel):
    """The base of every payload model.

    Unknown keys are refused and values must already have the declared type (strict: "5" is not
    taken for 5), so what a constructor was handed is exactly what the auditor reads.  A key that
    is not a Python name (e.g. "from") is a field with a `serialization_alias`: the payload is
    dumped by alias.
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, serialize_by_alias=True)


@dataclass(frozen=True, slots=True)
class EventType:
    """One registered type: what its events are about and what their payload holds."""

    name: str
    app: str
    entity_type: str
    payload: type[EventPayload]
    description: str

    def fields(self) -> list[tuple[str, str]]:
        """The payload's keys (as written to the ledger) with their types, in declaration order."""
        return [
            (field.serialization_alias or name, type_text(field.annotation))
            for name, field in self.payload.model_fields.items()
        ]


def type_text(annotation: Any) -> str:
    """A short, stable spelling of a payload field's type for the docs ("list[str]", "str | None")."""
    if annotation is None or annotation is type(None):
        return "None"
    origin = typing.get_origin(annotation)
    if origin is None:
        return annotation.__name__ if isinstance(annotation, type) else str(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_text(arg) for arg in args)
    if origin is typing.Literal:
        return " | ".join(repr(arg) for arg in args)
    name = origin.__name__ if isinstance(origin, type) else str(origin)
    return f"{name}[{', '.join(type_text(arg) for arg in args)}]"


class Catalogue:
    """Event types by name.  Registering happens at import time; lookups happen on every append,
    so `get` is a plain dictionary lookup."""

    def __init__(self) -> None:
        self._types: dict[str, EventType] = {}

    def register(
        self, name: str, *, app: str, entity_type: str, payload: type[EventPayload], description: str
    ) -> EventType:
        """Add a type.  Registering the same name again from the same app and module (a module
        imported twice) replaces it; the same name from elsewhere is refused."""
        if not (_NAME.fullmatch(name) and len(name) <= 64):
            raise ValueError(f"event type {name!r}: lower-case dotted words, at most 64 characters")
        if not (_ENTITY.fullmatch(entity_type) and len(entity_type) <= 64):
            raise ValueError(f"event type {name!r}: entity type {entity_type!r} is not a lower-case word")
        if not (isinstance(payload, type) and issubclass(payload, EventPayload)):
            raise ValueError(f"event type {name!r}: the payload model must derive from EventPayload")
        if payload.model_config.get("extra") != "forbid":
            raise ValueError(f"event type {name!r}: the payload model must refuse unknown keys")
        description = description.strip()
        if not description or "\n" in description or "|" in description:
            raise ValueError(f"event type {name!r}: the description is one line of text without '|'")
        if not app:
            raise ValueError(f"event type {name!r}: name the app that writes it")
        known = self._types.get(name)
        if known is not None and (known.app, known.payload.__module__) != (app, payload.__module__):
            raise ValueError(f"event type {name!r} is already registered by {known.app}")
        event_type = EventType(name, app, entity_type, payload, description)
        self._types[name] = event_type
        return event_type

    def get(self, name: str) -> EventType | None:
        return self._types.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._types

    def __len__(self) -> int:
        return len(self._types)

    def __iter__(self) -> Iterator[EventType]:
        """Every type, grouped by app and sorted by name within it (the order of the docs)."""
        return iter(sorted(self._types.values(), key=lambda t: (t.app, t.name)))

    def names(self) -> list[str]:
        return sorted(self._types)

    @contextmanager
    def extended(self, *event_types: EventType) -> Iterator[None]:
        """Hold extra types for the duration of a block — for the ledger's own tests and benches,
        which append events of no app.  A name the catalogue already holds is refused."""
        taken = [t.name for t in event_types if t.name in self._types]
        if taken:
            raise ValueError(f"already registered: {taken}")
        for event_type in event_types:
            self.register(
                event_type.name,
                app=event_type.app,
                entity_type=event_type.entity_type,
                payload=event_type.payload,
                description=event_type.description,
            )
        try:
            yield
        finally:
            for event_type in event_types:
                self._types.pop(event_type.name, None)


catalogue = Catalogue()
register = catalogue.register


def as_records(types_: Iterator[EventType] | list[EventType] | Catalogue) -> list[dict[str, Any]]:
    """The catalogue as plain data (for `ledger_events --json` and an auditor's filter list)."""
    return [
        {
            "type": t.name,
            "app": t.app,
            "entity_type": t.entity_type,
            "payload": dict(t.fields()),
            "description": t.description,
        }
        for t in types_
    ]


def as_markdown(types_: Iterator[EventType] | list[EventType] | Catalogue) -> str:
    """The catalogue as the README's table (one row per type)."""
    lines = ["| Event type | App | Entity | Payload | Description |", "| --- | --- | --- | --- | --- |"]
    for t in types_:
        # A union's "|" would end the table cell.
        fields = ", ".join(f"`{key}` {kind}".replace("|", "\\|") for key, kind in t.fields()) or "—"
        lines.append(f"| `{t.name}` | {t.app} | {t.entity_type} | {fields} | {t.description} |")
    return "\n".join(lines) + "\n"
