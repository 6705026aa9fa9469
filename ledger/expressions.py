"""Database expressions that read a field out of an event's canonical text.

Only `chain_id` and `seq` are stored as columns besides the hashed text; every other field of an
event is read from the text itself (in Python, or in the database through these expressions), so
there is no second copy that could disagree with what was hashed.
"""

from __future__ import annotations

from typing import Any

from django.db import NotSupportedError
from django.db.models import BigIntegerField, F, Field, Func, TextField

KINDS = ("text", "bigint")


class CanonicalField(Func):
    """The value of top-level key `key` of the canonical JSON in column `canonical` (or, with
    `subkey`, of that key of the object under `key`: `CanonicalField("payload", subkey="agent")`).

    On PostgreSQL the text is cast to `json` (not `jsonb`): extracting a key from `json` scans
    the text once, without building a tree, and the cast is immutable, so it may back an index.
    """

    def __init__(
        self, key: str, kind: str = "text", output_field: Field | None = None, *, subkey: str = "", **extra: Any
    ) -> None:
        if kind not in KINDS or not key.isidentifier() or (subkey and not subkey.isidentifier()):
            raise ValueError(f"bad canonical field {key!r}/{subkey!r} of kind {kind!r}")
        if output_field is None:
            output_field = BigIntegerField() if kind == "bigint" else TextField()
        super().__init__(F("canonical"), output_field=output_field, **extra)
        self.key = key
        self.subkey = subkey
        self.kind = kind

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        sql, params = compiler.compile(self.source_expressions[0])
        if self.subkey:  # one key of an object-valued field, e.g. the payload's "agent"
            text = f"(({sql})::json -> '{self.key}' ->> '{self.subkey}')"
        else:
            text = f"(({sql})::json ->> '{self.key}')"
        return (f"({text}::bigint)" if self.kind == "bigint" else text), list(params)

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        sql, params = compiler.compile(self.source_expressions[0])
        path = f"$.{self.key}.{self.subkey}" if self.subkey else f"$.{self.key}"
        if self.kind == "text" and self.subkey:
            # As PostgreSQL's `->>`: a payload's value as text.  `json_extract` gives a number as a
            # number, which SQLite never finds equal to text — `knowledge_entry: 12` did not match
            # "12", and the lineage lost the proposal that made a knowledge version.  (The
            # envelope's own fields are text already, and the indexes are made on them as they are.)
            return f"CAST(json_extract({sql}, '{path}') AS TEXT)", list(params)
        return f"json_extract({sql}, '{path}')", list(params)

    def as_sql(self, compiler: Any, connection: Any, *args: Any, **extra: Any) -> tuple[str, list[Any]]:
        raise NotSupportedError(f"canonical fields are defined for PostgreSQL and SQLite, not {connection.vendor}")
