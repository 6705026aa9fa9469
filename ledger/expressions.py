"""Database expressions that read a field out of an event's canonical bytes.

The queryable columns of `ledger_event` are *generated* from `canonical`, so they cannot say
anything the hashed bytes do not say: PostgreSQL and SQLite refuse to UPDATE a generated column,
and verification checks that the columns are still generated.
"""

from __future__ import annotations

from typing import Any

from django.db import NotSupportedError
from django.db.models import F, Field, Func

# PostgreSQL: convert_from() and text→timestamptz are only STABLE (they depend on session
# settings in general), and generated columns need IMMUTABLE functions.  For our input — UTF-8
# bytes and ISO-8601 UTC timestamps ending in "Z" — the result never depends on the session,
# so these wrappers may honestly be declared IMMUTABLE.
PG_FUNCTIONS = """
CREATE OR REPLACE FUNCTION ledger_canon(bytea) RETURNS jsonb
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT convert_from($1, 'UTF8')::jsonb $$;
CREATE OR REPLACE FUNCTION ledger_ts(text) RETURNS timestamptz
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT $1::timestamptz $$;
"""
PG_FUNCTIONS_DROP = "DROP FUNCTION IF EXISTS ledger_canon(bytea); DROP FUNCTION IF EXISTS ledger_ts(text);"

KINDS = ("text", "bigint", "json", "timestamp")


class CanonicalField(Func):
    """The value of top-level key `key` of the canonical JSON in column `canonical`."""

    def __init__(self, key: str, kind: str, output_field: Field | None = None, **extra: Any) -> None:
        if kind not in KINDS or not key.isidentifier():
            raise ValueError(f"bad canonical field {key!r} of kind {kind!r}")
        super().__init__(F("canonical"), output_field=output_field, **extra)
        self.key = key
        self.kind = kind

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        sql, params = compiler.compile(self.source_expressions[0])
        doc = f"ledger_canon({sql})"
        if self.kind == "json":
            return f"({doc} -> '{self.key}')", list(params)
        text = f"({doc} ->> '{self.key}')"
        if self.kind == "bigint":
            return f"({text}::bigint)", list(params)
        if self.kind == "timestamp":
            return f"ledger_ts({text})", list(params)
        return text, list(params)

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        sql, params = compiler.compile(self.source_expressions[0])
        value = f"json_extract(CAST({sql} AS TEXT), '$.{self.key}')"
        if self.kind == "timestamp":
            # Django keeps SQLite datetimes as 'YYYY-MM-DD HH:MM:SS.ffffff' (UTC).
            return f"replace(replace({value}, 'T', ' '), 'Z', '')", list(params)
        return value, list(params)

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        raise NotSupportedError(f"canonical fields are defined for PostgreSQL and SQLite, not {connection.vendor}")
