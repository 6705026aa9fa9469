"""Streaming reads of a chain, shared by verification and checkpointing.

On PostgreSQL the rows come through a server-side cursor read by a helper thread, so that the
next batch travels over the network while this thread hashes the current one (psycopg releases
the GIL while it waits on the socket).  The helper thread is the only user of the connection
until the scan ends; callers must not touch the connection while they iterate.
"""

from __future__ import annotations

import hmac
import queue
import threading
from collections.abc import Iterator
from typing import Any

from django.db import connections
from psycopg.types.string import ByteaBinaryLoader

from .canonical import event_mac

_BATCH = 1000
_QUEUE_DEPTH = 4
_DONE = object()


def rows(alias: str, chain_id: int, columns: str, low: int = 0, high: int | None = None) -> Iterator[tuple[Any, ...]]:
    """Yield `(columns...)` for events with low < seq <= high, in seq order."""
    connection = connections[alias]
    where = "chain_id = %s AND seq > %s" + ("" if high is None else " AND seq <= %s")
    params: tuple[Any, ...] = (chain_id, low) if high is None else (chain_id, low, high)
    sql = f"SELECT {columns} FROM ledger_event WHERE {where} ORDER BY seq"
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(sql, list(params))
            while batch := cursor.fetchmany(_BATCH):
                for row in batch:
                    yield tuple(_as_bytes(v) for v in row)
        return
    connection.ensure_connection()
    yield from _pg_stream(connection.connection, sql, params)


def _as_bytes(value: Any) -> Any:
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    return value


def _pg_stream(raw: Any, sql: str, params: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    batches: queue.Queue[Any] = queue.Queue(maxsize=_QUEUE_DEPTH)
    stop = threading.Event()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                batches.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            # A server-side cursor needs a transaction (a savepoint when one is already open).
            with raw.transaction():
                with raw.cursor(name="ledger_scan", binary=True) as cursor:
                    # Text columns (the canonical form) arrive as the exact UTF-8 bytes stored.
                    cursor.adapters.register_loader("text", ByteaBinaryLoader)
                    cursor.execute(sql, params)
                    while not stop.is_set():
                        batch = cursor.fetchmany(_BATCH)
                        if not batch or not put(batch):
                            break
            put(_DONE)
        except BaseException as exc:  # handed to the consuming thread, which re-raises it
            put(exc)

    producer = threading.Thread(target=produce, name="ledger-scan", daemon=True)
    producer.start()
    try:
        while True:
            item = batches.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield from item
    finally:
        stop.set()
        while producer.is_alive():
            try:
                batches.get(timeout=0.1)
            except queue.Empty:
                pass
        producer.join()


def first_bad_tag(alias: str, chain_id: int, low: int, high: int, mac_key: bytes) -> int | None:
    """Within (low, high], the first event whose keyed tag does not match its hash."""
    for seq, digest, mac in rows(alias, chain_id, "seq, hash, mac", low, high):
        if not hmac.compare_digest(event_mac(mac_key, bytes(digest)), bytes(mac)):
            return int(seq)
    return None
