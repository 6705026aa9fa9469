"""Streaming reads of a chain, shared by verification and checkpointing."""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Iterator
from typing import Any

import psycopg
from django.db import connections

_FETCH_CHUNK = 5000


def rows(alias: str, chain_id: int, columns: str, where: str = "", params: Iterable[Any] = ()) -> Iterator[tuple[Any, ...]]:
    connection = connections[alias]
    sql = f"SELECT {columns} FROM ledger_event WHERE chain_id = %s{where} ORDER BY seq, id"
    if connection.vendor == "postgresql":
        # Binary results: bytea arrives as raw bytes instead of hex text to decode.
        connection.ensure_connection()
        with psycopg.Cursor(connection.connection) as cursor:
            cursor.execute(sql, (chain_id, *params), binary=True)
            while batch := cursor.fetchmany(_FETCH_CHUNK):
                yield from batch
        return
    with connection.cursor() as cursor:
        cursor.execute(sql, [chain_id, *params])
        while batch := cursor.fetchmany(_FETCH_CHUNK):
            for row in batch:
                yield tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)


def first_bad_tag(alias: str, chain_id: int, low: int, high: int, mac_key: bytes) -> int | None:
    """Within (low, high], the first event whose keyed tag does not match its hash."""
    for seq, digest, mac in rows(alias, chain_id, "seq, hash, mac", " AND seq > %s AND seq <= %s", [low, high]):
        if not hmac.compare_digest(hmac.digest(mac_key, bytes(digest), "sha256"), bytes(mac)):
            return int(seq)
    return None
