"""The auditor console on PostgreSQL at 100,000 and 1,000,000 events (`make bench`; issue 14).

Two tenants share the ledger table: one with a chain of `--small` events (default 100,000), one
with `--large` (default 1,000,000).  Each chain is built the same way, in four parts, so that
what an auditor looks up is spread through it:

1. filler (45%): customer sessions as the runtime records them (`session.opened`,
   `message.posted`, `run.finished`), computed in Python with the ledger's own canonical form,
   hash and keyed tag, and loaded with COPY (appending a million events one by one takes too
   long here), 30 to 16 days ago;
2. real changes, 15 days ago, through the services: knowledge entries approved, contract
   versions published by the compiler;
3. filler again (45%), 14 to 2 days ago;
4. real changes again, yesterday: new versions of some entries, another publish, a rollback.

Then, per chain, through the console's JSON API (Django's test client, an auditor signed in,
every request recorded as the console records it):

* p95 of a timeline page (50 events) at random depths, unfiltered and filtered by event type and
  by agent;
* p95 of the lineage of the agent's contract and of knowledge entries;
* the wall time of replaying the agent at a time in the middle of the chain (8 days ago);
* export throughput of the second filler's time range (JSON Lines, streamed) against reading the
  same rows with a bare `SELECT` through a server-side cursor, the peak of Python's memory
  (tracemalloc, a run of its own) during the export, and the standalone verifier
  (`tools/verify_export.py`) checking the saved export.

Prints per size and the growth 100k -> 1M (targets: timeline and lineage p95 grow at most 1.5x;
export at least 0.5x of the bare SELECT; export peak memory flat).  The chains are checked with
`ledger_verify` before anything is measured, so the loaded events are valid ones.

It uses its own database (default facade_bench_audit on DATABASE_URL's server), created afresh
and dropped at the end (`--keep` keeps it).
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fresh_db import drop_database, prepare_database  # noqa: E402

KNOWLEDGE_ENTRIES = 60
CONTRACT_PUBLISHES = 12
PAGE = 50
SAMPLES = 40


def _filler_documents(chain_id: int, agent: str, start_seq: int, count: int, begin: dt.datetime, end: dt.datetime):
    """`count` events of customer sessions (opened, then message/run pairs), in seq order from
    `start_seq`, their times spread evenly from `begin` to `end`."""
    from ledger.canonical import event_document, utc_text

    span = (end - begin) / max(1, count)
    session = ""
    message = 0
    for i in range(count):
        at = utc_text(begin + span * i)
        step = i % 9
        if step == 0:
            session = str(uuid.UUID(int=random.getrandbits(128), version=4))
            kind, entity_type, entity_id, actor_type, actor_id = "session.opened", "session", session, "human", ""
            payload: dict[str, Any] = {"agent": agent, "audience": "customer", "principal_type": "customer"}
            payload["preview"] = False
            actor_id = f"customer:{session[:8]}"
        elif step % 2 == 1:
            message += 1
            kind, entity_type, entity_id = "message.posted", "session", session
            actor_type, actor_id = "human", f"customer:{session[:8]}"
            payload = {"message_id": message, "chars": 40 + step}
        else:
            kind, entity_type, entity_id = "run.finished", "run", str(chain_id * 10_000_000 + i)
            actor_type, actor_id = "agent", f"agent:{agent}"
            payload = {
                "session": session,
                "message_id": message,
                "reply_id": message + 1,
                "status": "completed",
                "stop_reason": "final",
                "steps": 2,
                "llm_calls": 1,
                "tool_calls": 1,
                "model_units": 120,
                "provider": "offline",
                "context_hash": "0" * 64,
                "reply_chars": 120,
                "citations": 1,
            }
        yield event_document(
            chain_id=chain_id,
            seq=start_seq + i,
            event_type=kind,
            entity_type=entity_type,
            entity_id=entity_id,
            entity_version=None,
            actor_type=actor_type,
            actor_id=actor_id,
            caused_by=None,
            payload=payload,
            created_at=at,
        )


def load_filler(chain_id: int, agent: str, count: int, begin: dt.datetime, end: dt.datetime) -> float:
    """Append `count` valid events to the chain with COPY, continuing from its head; returns the
    seconds it took (computing included)."""
    from django.db import connection, transaction

    from ledger.canonical import canonical_form, chain_hash, event_mac
    from ledger.keys import ledger_keys
    from ledger.services import head_hints_reset

    started = time.perf_counter()
    mac_key = ledger_keys().mac_key
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT size, head_hash FROM ledger_chain WHERE chain_id = %s FOR UPDATE", [chain_id])
            size, head = cursor.fetchone()
            head = bytes(head)
            raw = connection.connection
            batch = 50_000
            documents = _filler_documents(chain_id, agent, size + 1, count, begin, end)
            done = 0
            while done < count:
                with raw.cursor().copy(
                    "COPY ledger_event (chain_id, seq, canonical, prev_hash, hash, mac) FROM STDIN"
                ) as copy:
                    for document in documents:
                        text, data = canonical_form(document)
                        digest = chain_hash(head, data)
                        copy.write_row((chain_id, document["seq"], text, head, digest, event_mac(mac_key, digest)))
                        head = digest
                        done += 1
                        if done % batch == 0:
                            break
            cursor.execute(
                "UPDATE ledger_chain SET size = %s, head_hash = %s WHERE chain_id = %s", [size + count, head, chain_id]
            )
    head_hints_reset()
    return time.perf_counter() - started


def real_changes(agent: Any, *, entries: int, publishes: int, rollback: bool, tag: str) -> None:
    """Knowledge entries approved and contract versions published through the services."""
    from approvals.contract import contract_compile, contract_rollback, live_contract
    from facade.tenancy.schemas import Actor
    from knowledge.models import KnowledgeEntry, SourceType
    from knowledge.schemas import SourceIn
    from knowledge.services import entry_propose

    owner = Actor.human(agent.owners.first().pk)
    for i in range(entries):
        key = f"bench-{i}"
        entry = KnowledgeEntry.objects.filter(agent=agent, origin_key=key).first()
        entry_propose(
            agent=agent,
            title=f"Opening hours of shop {i}",
            body=f"Shop {i} opens at nine and closes at six ({tag}).",
            actor=owner,
            origin_key=key,
            entry=entry,
            confidence="0.95",
            source=SourceIn(type=SourceType.OWNER_DIALOGUE, ref=f"bench:{tag}:{i}", version="1"),
        )
    for i in range(publishes):
        wording = {"en": f"I can't confirm prices or dates ({tag} {i}); the owner will."}
        contract_compile(agent=agent, changes={"boundary_wording": wording}, actor=owner, caused_by=f"bench-{tag}-{i}")
    if rollback:
        live = live_contract(agent)
        assert live is not None
        contract_rollback(agent=agent, to_version=live.version - 2, actor=owner)


def build(size: int, slug: str, now: dt.datetime) -> dict[str, Any]:
    import time_machine
    from django.contrib.auth import get_user_model

    from facade.tenancy.models import Role
    from facade.tenancy.schemas import Actor
    from facade.tenancy.services import agent_create, membership_grant, tenant_create

    platform = Actor.platform("bench")
    with time_machine.travel(now - dt.timedelta(days=31), tick=True):
        tenant = tenant_create(slug=slug, name=f"Bench {slug}", actor=platform)
        users = get_user_model().objects
        owner = users.create_user(username=f"owner-{slug}", email=f"owner@{slug}.example", password="x")
        auditor = users.create_user(username=f"auditor-{slug}", email=f"auditor@{slug}.example", password="x")
        membership_grant(tenant=tenant, user=owner, role=Role.OWNER, actor=platform)
        membership_grant(tenant=tenant, user=auditor, role=Role.AUDITOR, actor=platform)
        agent = agent_create(tenant=tenant, slug=f"{slug}-agent", name="Bench agent", owners=[owner], actor=platform)
    filler = int(size * 0.45)
    seconds = load_filler(tenant.pk, agent.slug, filler, now - dt.timedelta(days=30), now - dt.timedelta(days=16))
    with time_machine.travel(now - dt.timedelta(days=15), tick=True):
        real_changes(agent, entries=KNOWLEDGE_ENTRIES, publishes=CONTRACT_PUBLISHES, rollback=False, tag="first")
    seconds += load_filler(tenant.pk, agent.slug, filler, now - dt.timedelta(days=14), now - dt.timedelta(days=2))
    with time_machine.travel(now - dt.timedelta(days=1), tick=True):
        real_changes(agent, entries=KNOWLEDGE_ENTRIES // 3, publishes=2, rollback=True, tag="second")
    # Make the chain exactly `size` long with one more block of sessions after the changes.
    from ledger.models import Chain

    rest = size - Chain.objects.get(chain_id=tenant.pk).size
    if rest > 0:
        seconds += load_filler(tenant.pk, agent.slug, rest, now - dt.timedelta(hours=20), now - dt.timedelta(hours=1))
    return {"tenant": tenant, "agent": agent, "auditor": auditor, "load_seconds": seconds}


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * 0.95 + 0.5) - 1)]


def timed_get(client: Any, url: str) -> tuple[float, bytes, int]:
    """Seconds to answer `url` in full, the answer's first line and its number of lines (a
    streamed answer is read chunk by chunk and not kept, as a client saving it to disk would)."""
    started = time.perf_counter()
    response = client.get(url)
    first, lines = b"", 0
    for chunk in response.streaming_content if response.streaming else [response.content]:
        if not first:
            first = chunk.split(b"\n", 1)[0]
        lines += chunk.count(b"\n")
    elapsed = time.perf_counter() - started
    if response.status_code != 200:
        raise SystemExit(f"GET {url} answered {response.status_code}: {first[:300]!r}")
    return elapsed, first, lines


def measure(world: dict[str, Any], now: dt.datetime) -> dict[str, Any]:
    import json

    from django.db import connection, transaction
    from django.test import Client

    from knowledge.models import KnowledgeEntry
    from ledger.keys import ledger_keys
    from ledger.models import Chain

    tenant, agent = world["tenant"], world["agent"]
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(world["auditor"])
    size = Chain.objects.get(chain_id=tenant.pk).size
    rng = random.Random(14)
    base = f"/api/audit/events?tenant={tenant.slug}&limit={PAGE}"
    timeline: dict[str, list[float]] = {"unfiltered": [], "type": [], "agent": []}
    for _ in range(SAMPLES):
        before = rng.randint(PAGE + 1, size)
        timeline["unfiltered"].append(timed_get(client, f"{base}&before={before}")[0])
        timeline["type"].append(timed_get(client, f"{base}&type=run.finished&before={before}")[0])
        timeline["agent"].append(timed_get(client, f"{base}&agent={agent.slug}&before={before}")[0])
    entries = list(KnowledgeEntry.objects.filter(agent=agent).values_list("pk", flat=True))
    lineage: list[float] = []
    for i in range(SAMPLES):
        if i % 4 == 0:
            url = f"/api/audit/lineage?tenant={tenant.slug}&entity_type=contract&entity_id={agent.slug}"
        else:
            url = f"/api/audit/lineage?tenant={tenant.slug}&entity_type=knowledge_entry&entity_id={rng.choice(entries)}"
        lineage.append(timed_get(client, url)[0])
    middle = (now - dt.timedelta(days=8)).isoformat().replace("+00:00", "Z")
    replay = [
        timed_get(client, f"/api/audit/replay?tenant={tenant.slug}&agent={agent.slug}&at={middle}")[0] for _ in range(5)
    ]
    # Export of the second filler's days against a bare SELECT of the same rows.
    start = (now - dt.timedelta(days=14)).isoformat().replace("+00:00", "Z")
    stop = (now - dt.timedelta(days=2)).isoformat().replace("+00:00", "Z")
    url = f"/api/audit/export?tenant={tenant.slug}&from={start}&to={stop}"
    timed_get(client, url)  # warm-up (and the covering checkpoint is signed on the first export)
    export_seconds, first_line, lines = timed_get(client, url)
    tracemalloc.start()  # apart from the timed run: tracing slows Python down several times
    timed_get(client, url)
    _, export_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    header = json.loads(first_line)
    # The export as an auditor keeps it, checked offline by the standalone verifier.
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as saved:
        response = client.get(url)
        for chunk in response.streaming_content:
            saved.write(chunk)
        saved.flush()
        key = base64.b64encode(ledger_keys().public_raw).decode()
        started = time.perf_counter()
        checked = subprocess.run(
            [sys.executable, "-I", str(ROOT / "tools" / "verify_export.py"), saved.name, "--public-key", key],
            capture_output=True,
            text=True,
        )
        verifier_seconds = time.perf_counter() - started
    if checked.returncode != 0:
        raise SystemExit(f"the verifier refused the export: {checked.stdout}{checked.stderr}")
    # The export holds the range and the events after it up to its checkpoint: the bare SELECT
    # reads the same rows.
    first = header["first_seq"]
    last = header["checkpoint"]["size"] if header["checkpoint"] else header["last_seq"]
    started = time.perf_counter()
    with transaction.atomic():
        raw = connection.connection
        with raw.cursor(name="bare_export") as bare:
            bare.itersize = 5000
            bare.execute(
                "SELECT seq, prev_hash, hash, canonical FROM ledger_event "
                "WHERE chain_id = %s AND seq BETWEEN %s AND %s ORDER BY seq",
                [tenant.pk, first, last],
            )
            rows = sum(1 for _ in bare)
    bare_seconds = time.perf_counter() - started
    return {
        "size": size,
        "timeline_p95": {k: p95(v) for k, v in timeline.items()},
        "lineage_p95": p95(lineage),
        "replay": statistics.median(replay),
        "export_rows": lines - 1,
        "export_rate": (lines - 1) / export_seconds,
        "bare_rate": rows / bare_seconds,
        "export_peak": export_peak,
        "verifier_rate": (lines - 1) / verifier_seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", type=int, default=100_000)
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

    prepare_database(script="bench/audit.py", env_name="FACADE_BENCH_AUDIT_DB", default_name="facade_bench_audit")
    os.environ["REDIS_URL"] = os.environ.get("FACADE_BENCH_AUDIT_REDIS", "redis://127.0.0.1:6379/13")
    os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1,localhost")
    # Checkpoints of its own: a file left by an earlier run names chains of a dropped database.
    checkpoints = tempfile.mkdtemp(prefix="facade-bench-audit-")
    os.environ["FACADE_LEDGER_CHECKPOINT_DIR"] = checkpoints
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from ledger.selectors import ledger_verify

    call_command("migrate", verbosity=0)
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    random.seed(14)
    results = []
    try:
        for size, slug in ((args.small, "small"), (args.large, "large")):
            world = build(size, slug, now)
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE ledger_event")
            started = time.perf_counter()
            verified = ledger_verify(chain_id=world["tenant"].pk)
            if not verified.ok:
                raise SystemExit(f"the {slug} chain does not verify: {verified}")
            print(
                f"{slug}: {verified.checked:,} events loaded in {world['load_seconds']:.0f} s, "
                f"verified in {time.perf_counter() - started:.1f} s",
                flush=True,
            )
            results.append(measure(world, now))
        print("\nauditor console on PostgreSQL (seconds; p95 of", SAMPLES, "requests each)")
        for r in results:
            t = r["timeline_p95"]
            print(f"  chain of {r['size']:>9,} events")
            print(f"    timeline page p95      all {t['unfiltered']:.4f}  type {t['type']:.4f}  agent {t['agent']:.4f}")
            print(f"    lineage p95            {r['lineage_p95']:.4f}")
            print(f"    replay (median of 5)   {r['replay']:.4f}")
            print(
                f"    export                 {r['export_rate']:,.0f} events/s over {r['export_rows']:,} events "
                f"(bare SELECT {r['bare_rate']:,.0f} rows/s; ratio {r['export_rate'] / r['bare_rate']:.2f}, "
                "target >= 0.5)"
            )
            print(f"    export peak memory     {r['export_peak'] / 1024:,.0f} KiB")
            print(f"    tools/verify_export.py {r['verifier_rate']:,.0f} events/s (standard library only)")
        small, large = results
        print("  growth 100k -> 1M (target <= 1.5)")
        for key in ("unfiltered", "type", "agent"):
            print(f"    timeline {key:<12} {large['timeline_p95'][key] / small['timeline_p95'][key]:.2f}")
        print(f"    lineage               {large['lineage_p95'] / small['lineage_p95']:.2f}")
        print(f"    replay                {large['replay'] / small['replay']:.2f}")
        print(f"    export peak memory    {large['export_peak'] / small['export_peak']:.2f}")
    finally:
        shutil.rmtree(checkpoints, ignore_errors=True)
        if not args.keep:
            drop_database()


if __name__ == "__main__":
    main()
