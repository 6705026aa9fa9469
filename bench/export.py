"""Auditor export benchmark on PostgreSQL: is the export's memory flat in the length of the range?

Appends events to one tenant's chain through `ledger_append` (a thousand per transaction) and
streams the export of the whole chain (`audit.export.export_lines`, what `GET /api/audit/export`
sends, each chunk consumed as a client reads it) once at --small events (default 2,000) and again
at --large (default 20,000); each export signs its own covering checkpoint first.  Prints for
each: events, bytes, seconds and the peak of Python memory allocated while streaming
(tracemalloc), then the ratio of the two peaks (target: about 1, i.e. flat, while the bytes grow
tenfold).  Then it runs `tools/verify_export.py` over the large export written to a file and
prints its time and verdict.

It uses its own database (default facade_bench_export on DATABASE_URL's server), created afresh.
"""

from __future__ import annotations

import argparse
import base64
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fresh_db import prepare_database  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", type=int, default=2_000)
    parser.add_argument("--large", type=int, default=20_000)
    args = parser.parse_args()

    prepare_database(script="bench/export.py", env_name="FACADE_BENCH_DB", default_name="facade_bench_export")
    # A fresh database needs fresh checkpoints: old ones of another chain 1 would not match it.
    os.environ["FACADE_LEDGER_CHECKPOINT_DIR"] = tempfile.mkdtemp(prefix="bench-export-checkpoints-")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import transaction

    from audit.export import export_lines, export_plan
    from facade.tenancy.schemas import Actor
    from facade.tenancy.services import tenant_create
    from ledger.catalogue import EventPayload, register
    from ledger.keys import ledger_keys
    from ledger.services import ledger_append

    class BenchEvent(EventPayload):
        order: str
        amount: str
        note: str

    register("bench.export_event", app="bench", entity_type="order", payload=BenchEvent, description="A bench event.")
    call_command("migrate", verbosity=0)
    tenant = tenant_create(slug="bench", name="Bench", actor=Actor.platform("bench"))
    have = 0

    def grow_to(size: int) -> None:
        nonlocal have
        while have < size:
            with transaction.atomic():
                for _ in range(min(1000, size - have)):
                    have += 1
                    ledger_append(
                        chain_id=tenant.pk,
                        event_type="bench.export_event",
                        entity_type="order",
                        entity_id=f"o-{have}",
                        actor_type="platform",
                        actor_id="bench",
                        payload={"order": f"o-{have}", "amount": "12.50", "note": "x" * 200},
                    )

    from ledger.models import LedgerEvent

    def measure(upto: int) -> tuple[int, int, float, int]:
        """Stream the export of events 1..upto as a client reads it: (events, bytes, s, peak)."""
        plan = export_plan(tenant=tenant, start=None, end=None)
        assert plan.last_seq == upto
        started = time.perf_counter()
        size = sum(len(chunk) for chunk in export_lines(plan))
        seconds = time.perf_counter() - started
        tracemalloc.start()  # a second pass: tracing slows everything down several times
        sum(len(chunk) for chunk in export_lines(plan))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return plan.events, size, seconds, peak

    # Each export is of the whole chain as it stands, so that it ends at its own checkpoint (an
    # export of an early range would carry the events up to the next checkpoint too).
    grow_to(args.small)
    small = measure(LedgerEvent.objects.filter(chain_id=tenant.pk).count())
    grow_to(args.large)
    large = measure(LedgerEvent.objects.filter(chain_id=tenant.pk).count())
    for events, size, seconds, peak in (small, large):
        print(f"export of {events:,} events: {size:,} bytes in {seconds:.2f} s, peak Python memory {peak:,} bytes")
    print(
        f"peak ratio large/small: {large[3] / small[3]:.2f} (flat: about 1; the bytes grew {large[1] / small[1]:.1f}x)"
    )

    with tempfile.NamedTemporaryFile("wb", suffix=".jsonl", delete=False) as handle:
        for chunk in export_lines(export_plan(tenant=tenant, start=None, end=None)):
            handle.write(chunk)
    key = base64.b64encode(ledger_keys().public_raw).decode()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-I", str(ROOT / "tools" / "verify_export.py"), "--public-key", key, handle.name],
        capture_output=True,
        text=True,
    )
    print(f"verify_export.py: {time.perf_counter() - started:.2f} s: {done.stdout.strip()}")
    Path(handle.name).unlink()


if __name__ == "__main__":
    main()
