"""Ledger benchmark on PostgreSQL (`make bench`).

1. Append N events (default 20,000), one per transaction, through `ledger_append`; in the same
   run insert the same rows into a plain table with no hashing and no locking, also one per
   transaction.  The two are interleaved in blocks so that drift on the machine hits both.
   Prints both rates and append/bare (target ≥ 0.8).
2. Verify the chain (fetching it included; every link and every keyed tag) and, in the same run,
   compute the same links and tags over the same stored bytes with hashlib alone.  Prints both
   rates and verify/hashlib (target ≥ 0.25).

It uses its own database (default facade_bench on DATABASE_URL's server), created afresh.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fresh_db import prepare_database  # noqa: E402


def _prepare_database() -> None:
    prepare_database(script="bench/ledger.py", env_name="FACADE_BENCH_DB", default_name="facade_bench")


# The same rows ledger_event stores, in a table with nothing but a primary key: no chain head,
# no unique (chain, seq), no entity index, no trigger, and no hashing before the insert.
PLAIN_TABLE = """
CREATE TABLE bench_plain (
    id bigserial PRIMARY KEY, chain_id bigint, seq bigint, canonical text, prev_hash bytea, hash bytea, mac bytea
)
"""
PLAIN_INSERT = (
    "INSERT INTO bench_plain (chain_id, seq, canonical, prev_hash, hash, mac) VALUES (%s, %s, %s, %s, %s, %s)"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--blocks", type=int, default=40)
    parser.add_argument("--repeat-verify", type=int, default=5)
    args = parser.parse_args()

    _prepare_database()
    import django

    django.setup()
    import psycopg
    from django.core.management import call_command
    from django.db import connection, transaction

    from ledger.canonical import HASH_PREFIX, canonical_text, chain_hash, event_document, event_mac, utc_text
    from ledger.catalogue import EventPayload, register
    from ledger.keys import ledger_keys
    from ledger.models import GENESIS_HASH
    from ledger.selectors import ledger_verify
    from ledger.services import ledger_append

    class BenchEvent(EventPayload):
        order: str
        amount: str
        note: str
        tags: list[str]

    # The ledger writes only catalogued types: the bench's own exists in this process only.  It
    # appends through ledger_append itself, to measure the append and nothing else.
    register("bench.event", app="bench", entity_type="order", payload=BenchEvent, description="A benchmark event.")

    call_command("migrate", verbosity=0)
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute(PLAIN_TABLE)

    chain = 424242
    payloads = [
        {"order": f"ORD-{i:06d}", "amount": f"{(i % 997) * 1.25:.2f}", "note": "bench event", "tags": ["a", "b"]}
        for i in range(args.events)
    ]
    # Rows of the same shape and size as the ledger's own (built outside the timing).
    created = utc_text(dt.datetime.now(dt.timezone.utc))
    mac_key = ledger_keys().mac_key
    plain_rows, prev = [], GENESIS_HASH
    for i in range(args.events):
        text = canonical_text(
            event_document(
                chain_id=chain,
                seq=i + 1,
                event_type="bench.event",
                entity_type="order",
                entity_id=str(i),
                entity_version=1,
                actor_type="platform",
                actor_id="bench",
                caused_by=None,
                payload=payloads[i],
                created_at=created,
            )
        )
        digest = chain_hash(prev, text.encode())
        plain_rows.append((chain, i + 1, text, prev, digest, event_mac(mac_key, digest)))
        prev = digest
    block = args.events // args.blocks
    append_s = bare_s = 0.0
    paired: list[float] = []
    for b in range(args.blocks):
        rows = range(b * block, (b + 1) * block)
        started = time.perf_counter()
        for i in rows:
            with transaction.atomic():
                ledger_append(
                    chain_id=chain,
                    event_type="bench.event",
                    entity_type="order",
                    entity_id=i,
                    entity_version=1,
                    actor_type="platform",
                    actor_id="bench",
                    payload=payloads[i],
                )
        append_block = time.perf_counter() - started
        append_s += append_block
        started = time.perf_counter()
        for i in rows:
            with transaction.atomic(), psycopg.Cursor(connection.connection) as cursor:
                # The same kind of cursor ledger_append uses: server-side binding, prepared.
                cursor.execute(PLAIN_INSERT, plain_rows[i], prepare=True)
        bare_block = time.perf_counter() - started
        bare_s += bare_block
        paired.append(bare_block / append_block)
    total = block * args.blocks
    append_rate, bare_rate = total / append_s, total / bare_s

    # Statistics as autovacuum would leave them, then verification, fetching included, against
    # hashing the same bytes (link and tag) with hashlib alone.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE ledger_event")
    with connection.cursor() as cursor:
        cursor.execute("SELECT prev_hash, canonical FROM ledger_event WHERE chain_id = %s ORDER BY seq", [chain])
        stored = [(bytes(prev), canonical.encode("utf-8")) for prev, canonical in cursor.fetchall()]
    verify_best = raw_best = float("inf")
    for _ in range(args.repeat_verify):
        started = time.perf_counter()
        result = ledger_verify(chain_id=chain, checkpoints=[])
        verify_best = min(verify_best, time.perf_counter() - started)
        if not result.ok or result.checked != total:
            raise SystemExit(f"verification failed: {result}")
        # What any verifier of links and tags computes per event: the SHA-256 link and the keyed
        # BLAKE2b tag over it (verification checks every event's tag).
        sha256, mac_key = hashlib.sha256, ledger_keys().mac_key
        started = time.perf_counter()
        for prev, canonical in stored:
            event_mac(mac_key, sha256(HASH_PREFIX + prev + canonical).digest())
        raw_best = min(raw_best, time.perf_counter() - started)
    verify_rate, raw_rate = total / verify_best, total / raw_best

    print(f"ledger benchmark on PostgreSQL, {total} events, one per transaction ({args.blocks} interleaved blocks)")
    print(f"  append (ledger_append)      {append_rate:10.0f} events/s")
    print(f"  bare insert (plain table)   {bare_rate:10.0f} rows/s")
    print(f"  ratio append/bare           {append_rate / bare_rate:10.2f}   (target >= 0.80)")
    print(
        f"  median of {len(paired)} paired blocks    {statistics.median(paired):10.2f}"
        "   (robust to one-off stalls of the VM)"
    )
    print(f"  verify (fetch + check)      {verify_rate:10.0f} events/s")
    print(f"  hashlib on the same bytes   {raw_rate:10.0f} events/s (SHA-256 link + keyed BLAKE2b tag)")
    print(f"  ratio verify/hashlib        {verify_rate / raw_rate:10.2f}   (target >= 0.25)")


if __name__ == "__main__":
    main()
