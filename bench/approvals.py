"""Contract publish benchmark on PostgreSQL (`make bench`; issue 12).

1. Publish time.  For each size (default 100, 10,000 and 100,000) an agent of its own gets that
   many open customer sessions on its live contract version (each with its customer, written in
   one INSERT … SELECT), then `contract_compile` publishes a change that takes a transition away
   from the request flow (one that ends the open sessions; a price change ends none, issue 26).  The publish time is
   the service call up to its commit: the new version is live and every session of the old one
   refuses its next message from then on (the turn compares versions).  The old sessions' rows
   are closed after the commit, in batches (`stale_sessions_close`, timed in place, run by the
   same call here), and printed apart as the close.  Repeated `--repeats` times per size (fresh
   open sessions each time; the ones closed before stay in the table, as they would in
   production); prints each time, the median, the close's median, and the ratio largest /
   smallest of the publish (target ≤ 10×) and of publish + close.  After every
   publish it checks that every session on the old version is closed with reason
   `contract_republished` and that no open customer session is left on another version, and
   stops with an error if not.  Then the smallest size again on the largest size's agent, its
   closed sessions in the table (what finding the sessions to close costs).  With `--explain` it
   also prints EXPLAIN (ANALYZE, BUFFERS, WAL) of the close statement over the smallest and the
   largest size on that agent (each in a transaction rolled back) of the close's select.
2. A customer's turn while publishes run.  One customer of a seeded agent (bench/chat.py's 50
   approved entries and its mix of questions) takes turns one after another in this process
   through the runtime (`turn_handle`, the offline model, guard and ledger as in production), the
   way bench/chat.py's in-process measurement drives them.  A third of the phases run alone, a
   third while a process of its own (as another web process or worker would be) publishes
   continuously to the same agent: reopen `--background` (default 10,000) customer sessions on
   the live version, publish a change of the request flow (which ends them and the customer's own
   session; the batches close their rows after the commit), again.  When the customer's session
   was ended under it, the turn goes on in the session that continues it and sends again (what
   the chat page does on `session_continued`), and that turn's time includes both.  The last
   third is the baseline, measured in the same run: the same publisher on another tenant's agent
   (the same work for the machine and the database, nothing of the customer's agent locked or
   ended).  Prints p50/p95 of each, the p95 ratio publishing/alone (target ≤ 1.5×) and how much
   of it the baseline already shows.

It uses its own database (default facade_bench_approvals on DATABASE_URL's server), created
afresh and dropped at the end (`--keep` keeps it), and Redis db 12 (FACADE_BENCH_APPROVALS_REDIS).
"""

from __future__ import annotations

import argparse
import datetime as dt
import multiprocessing
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fresh_db import drop_database, prepare_database  # noqa: E402

# The background sessions of part 2 carry this creation time, so the publisher finds them again.
MARK = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)

FILL = """
WITH c AS (
    INSERT INTO tenancy_customer (id, tenant_id, trust, created_at)
    SELECT gen_random_uuid(), %(tenant)s, 50, %(at)s FROM generate_series(1, %(count)s)
    RETURNING id
)
INSERT INTO dialogue_dialoguesession (id, tenant_id, agent_id, audience, principal_type, user_id, customer_id, peer_id,
                                      status, preview, contract_version, closed_reason, created_at, last_activity_at)
SELECT gen_random_uuid(), %(tenant)s, %(agent)s, 'customer', 'customer', NULL, c.id, NULL,
       'open', false, %(version)s, '', %(at)s, %(at)s
FROM c
"""

REOPEN = """
UPDATE dialogue_dialoguesession SET status = 'open', closed_reason = '', contract_version = %(version)s
WHERE agent_id = %(agent)s AND created_at = %(at)s
"""

# What `stale_sessions_close` selects once (it then closes the rows by primary key, in batches).
CLOSE = """
SELECT id FROM dialogue_dialoguesession
WHERE agent_id = %(agent)s AND audience = 'customer' AND status = 'open'
  AND (contract_version < %(version)s OR contract_version IS NULL)
"""


CHECK = """
SELECT count(*) FILTER (WHERE contract_version = %(old)s AND status = 'open'),
       count(*) FILTER (WHERE contract_version = %(old)s AND status = 'closed'
                              AND closed_reason = 'contract_republished'),
       count(*) FILTER (WHERE status = 'open' AND contract_version IS DISTINCT FROM %(new)s)
FROM dialogue_dialoguesession WHERE agent_id = %(agent)s AND audience = 'customer'
"""


def _prepare() -> None:
    prepare_database(
        script="bench/approvals.py", env_name="FACADE_BENCH_APPROVALS_DB", default_name="facade_bench_approvals"
    )
    os.environ["REDIS_URL"] = os.environ.get("FACADE_BENCH_APPROVALS_REDIS", "redis://127.0.0.1:6379/12")
    os.environ["FACADE_LLM_PROVIDER"] = "offline"
    os.environ["FACADE_DAILY_MODEL_CALLS"] = str(10**9)


def pct(values: list[float], p: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1] * 1000


def _sql(sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall()) if cursor.description else []


def _breaking(n: int) -> dict[str, Any]:
    """A change that ends the open customer sessions of the version before it: each takes away a
    transition of the request flow the previous one had (a price change ends none, issue 26 §2)."""
    from facade.tenancy.models import default_request_flow

    flow: dict[str, Any] = default_request_flow()
    states = flow["states"]
    if n % 2:
        states["accepted"] = {"next_actor": "owner", "to": ["in_progress"]}
    else:
        states["in_progress"] = {"next_actor": "owner", "to": ["done"]}
    return {"request_flow": flow}


class CloseTimer:
    """Times `stale_sessions_close`, the batches after the publish's commit (wrapped in place,
    restored on exit)."""

    def __init__(self) -> None:
        self.spent: dict[int, float] = {}

    def __enter__(self) -> CloseTimer:
        from approvals import contract

        self.original: Callable[..., int] = contract.stale_sessions_close

        def timed(**kwargs: Any) -> int:
            started = time.perf_counter()
            try:
                return self.original(**kwargs)
            finally:
                self.spent[threading.get_ident()] = time.perf_counter() - started

        contract.stale_sessions_close = timed  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        from approvals import contract

        contract.stale_sessions_close = self.original  # type: ignore[assignment]

    def last(self) -> float:
        return self.spent.get(threading.get_ident(), 0.0)


def publish_once(agent: Any, size: int, n: int, actor: Any, timer: CloseTimer) -> tuple[float, float]:
    """Open `size` customer sessions on the live version, publish a change that ends them, check that it
    closed exactly those; (publish up to its commit, close after it) seconds."""
    from approvals.contract import contract_compile, live_contract

    live = live_contract(agent)
    assert live is not None
    at = dt.datetime.now(dt.UTC)
    _sql(FILL, {"tenant": agent.tenant_id, "agent": agent.pk, "count": size, "version": live.version, "at": at})
    _sql("ANALYZE dialogue_dialoguesession", {})
    started = time.perf_counter()
    published = contract_compile(agent=agent, changes=_breaking(n), actor=actor, caused_by="bench")
    spent = time.perf_counter() - started  # the close ran at the commit, inside the call
    still_open, closed, stray = _sql(CHECK, {"agent": agent.pk, "old": live.version, "new": published.version})[0]
    if still_open or closed != size or stray or published.version != live.version + 1:
        raise SystemExit(
            f"publish of version {published.version} with {size} open sessions on version "
            f"{live.version}: {still_open} still open, {closed} closed with contract_republished, "
            f"{stray} open on another version"
        )
    return spent - timer.last(), timer.last()


def publish_times(sizes: list[int], repeats: int, actor: Any) -> dict[str, list[tuple[float, float]]]:
    """(publish, close) seconds per repetition, per size; then, on the largest size's agent (its
    closed sessions now in the table), the smallest size again."""
    from facade.tenancy.services import agent_create, tenant_create

    out: dict[str, list[tuple[float, float]]] = {}
    agent = None
    with CloseTimer() as timer:
        for size in sizes:
            tenant = tenant_create(slug=f"publish-{size}", name=f"Publish {size}", actor=actor)
            agent = agent_create(tenant=tenant, slug=f"publish-{size}", name=f"Publish {size}", actor=actor)
            out[str(size)] = [publish_once(agent, size, rep, actor, timer) for rep in range(repeats)]
        assert agent is not None
        history = f"{min(sizes)} (+{repeats * max(sizes)} closed)"
        out[history] = [publish_once(agent, min(sizes), repeats + rep, actor, timer) for rep in range(repeats)]
    return out


def explain_close(agent_of: int, size: int) -> list[str]:
    """EXPLAIN (ANALYZE, BUFFERS, WAL) of the close over `size` open sessions of the agent of
    size `agent_of`, rolled back."""
    from django.db import transaction

    from approvals.contract import live_contract
    from facade.tenancy.models import AgentProfile

    agent = AgentProfile.objects.get(slug=f"publish-{agent_of}")
    live = live_contract(agent)
    assert live is not None
    lines: list[str] = []

    class Rollback(Exception):
        pass

    try:
        with transaction.atomic():
            at = dt.datetime.now(dt.UTC)
            _sql(
                FILL,
                {"tenant": agent.tenant_id, "agent": agent.pk, "count": size, "version": live.version - 1, "at": at},
            )
            _sql("ANALYZE dialogue_dialoguesession", {})
            rows = _sql("EXPLAIN (ANALYZE, BUFFERS, WAL) " + CLOSE, {"agent": agent.pk, "version": live.version})
            lines = [str(r[0]) for r in rows]
            raise Rollback
    except Rollback:
        pass
    return lines


class Publisher:
    """Publishes to one agent continuously in a process of its own (as another web process or
    worker would: not this process's interpreter lock): reopen the background sessions on the
    live version, publish a change that ends them, again, until stopped."""

    def __init__(self, agent_id: int, actor: Any) -> None:
        from django.db import connections

        connections.close_all()  # the child opens its own connection
        context = multiprocessing.get_context("fork")
        self.stop = context.Event()
        self.results = context.Queue()
        self.process = context.Process(target=self._run, args=(agent_id, actor), daemon=True)
        self.publishes: list[tuple[float, float]] = []
        self.error: str | None = None

    def start(self) -> None:
        self.process.start()

    def join(self) -> None:
        self.stop.set()
        outcome = self.results.get(timeout=600)
        self.process.join(60)
        if isinstance(outcome, str):
            self.error = outcome
        else:
            self.publishes = outcome

    def _run(self, agent_id: int, actor: Any) -> None:
        from django.db import connection

        from approvals.contract import contract_compile, live_contract
        from facade.tenancy.models import AgentProfile

        publishes: list[tuple[float, float]] = []
        try:
            with CloseTimer() as timer:
                agent = AgentProfile.objects.get(pk=agent_id)
                n = 0
                while not self.stop.is_set():
                    live = live_contract(agent)
                    assert live is not None
                    _sql(REOPEN, {"agent": agent.pk, "version": live.version, "at": MARK})
                    started = time.perf_counter()
                    contract_compile(agent=agent, changes=_breaking(n), actor=actor, caused_by="bench")
                    spent = time.perf_counter() - started
                    publishes.append((spent - timer.last(), timer.last()))
                    n += 1
            self.results.put(publishes)
        except BaseException as exc:  # reported by the parent
            self.results.put(repr(exc))
        finally:
            connection.close()


def customer_turns(agent: Any, texts: list[str]) -> tuple[list[float], list[float], int]:
    """One customer's turns one after another; a turn whose session a publish closed goes on in
    the session that continues it and sends again.  Returns each turn's seconds, those of the
    turns that found their session open, and how many sessions the turns continued in so."""
    from facade.dialogue.models import DialogueSession
    from facade.dialogue.runtime.loop import turn_handle
    from facade.dialogue.services import session_open
    from facade.errors import ApplicationError
    from facade.tenancy.rules import Audience
    from facade.tenancy.services import customer_create

    customer = customer_create(tenant=agent.tenant)
    session = session_open(agent=agent, audience=Audience.CUSTOMER, customer=customer)
    latencies: list[float] = []
    undisturbed: list[float] = []
    reopened = 0
    for text in texts:
        started = time.perf_counter()
        before = reopened
        for attempt in range(5):
            try:
                turn_handle(session=session, text=text)
                break
            except ApplicationError as exc:
                # Publishes follow each other closely here: a new session may be closed again.
                if exc.code != "session_continued" or attempt == 4:
                    raise
                session = DialogueSession.objects.get(pk=exc.extra["session"])  # what the chat page does
                reopened += 1
        latencies.append(time.perf_counter() - started)
        if reopened == before:
            undisturbed.append(latencies[-1])
    return latencies, undisturbed, reopened


def _background(agent: Any, count: int) -> None:
    from approvals.contract import live_contract

    live = live_contract(agent)
    assert live is not None
    _sql(FILL, {"tenant": agent.tenant_id, "agent": agent.pk, "count": count, "version": live.version, "at": MARK})


def turn_ratio(args: argparse.Namespace, actor: Any) -> None:
    """The customer's turns alone, while their own agent publishes, and — the baseline, measured
    in the same run — while another tenant's agent publishes the same way (the same work for the
    machine and the database, nothing of this customer's agent locked or ended)."""
    from chat import script as chat_script
    from chat import seed
    from django.db import connection

    from facade.tenancy.models import AgentProfile
    from facade.tenancy.services import agent_create, tenant_create

    seed(0)  # the chat benchmark's agent (bench-frames) and its 50 approved entries
    agent = AgentProfile.objects.select_related("tenant").get(slug="bench-frames")
    other = agent_create(
        tenant=tenant_create(slug="bench-other", name="Other", actor=actor),
        slug="bench-other",
        name="Other",
        actor=actor,
    )
    _background(agent, args.background)
    _background(other, args.background)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    customer_turns(agent, [t for _k, t in chat_script(1, 30)])  # warm

    turns: dict[str, list[float]] = {"alone": [], "own": [], "other": []}
    kept: list[float] = []
    reopened = 0
    publishes: list[tuple[float, float]] = []
    loaded_wall = busy = 0.0
    order = ["alone", "own", "other", "other", "own", "alone"]
    for phase in range(3 * args.rounds):
        texts = [t for _k, t in chat_script(100 + phase, args.turns)]
        kind = order[phase % len(order)]
        if kind == "alone":
            turns["alone"] += customer_turns(agent, texts)[0]
            continue
        publisher = Publisher((agent if kind == "own" else other).pk, actor)
        publisher.start()
        time.sleep(0.2)  # the first reopen and publish are under way
        started = time.perf_counter()
        latencies, undisturbed, n = customer_turns(agent, texts)
        publisher.join()
        if publisher.error is not None:
            raise SystemExit(f"the publisher failed: {publisher.error}")
        turns[kind] += latencies
        if kind == "own":
            loaded_wall += time.perf_counter() - started
            kept += undisturbed
            reopened += n
            publishes += publisher.publishes
            busy += sum(p + c for p, c in publisher.publishes)
    alone, loaded, baseline = turns["alone"], turns["own"], turns["other"]
    print(
        f"  customer turns (in-process, offline model; the publisher in a process of its own), {len(alone)} alone, "
        f"{len(loaded)} while their agent publishes and {len(baseline)} while another tenant's agent does "
        f"(each publish ending {args.background} background sessions; on their own agent, the customer's too):"
    )
    print(f"    {'':40}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    rows = [("alone", alone), ("while their agent publishes", loaded)]
    if len(kept) >= 2:
        rows.append(("  turns whose session stayed open", kept))
    rows.append(("while another agent publishes (baseline)", baseline))
    for label, values in rows:
        print(f"    {label:40}{pct(values, 50):9.1f}{pct(values, 95):9.1f}{1000 * max(values):9.1f}")
    if publishes:
        pubs = [p for p, _c in publishes]
        print(
            f"    own publishes meanwhile: {len(pubs)} (median {1000 * statistics.median(pubs):.0f} ms, then the "
            f"close {1000 * statistics.median(c for _p, c in publishes):.0f} ms); a publish or its close was running "
            f"{100 * min(busy / max(loaded_wall, 1e-9), 1):.0f}% of the time; the customer's session was found "
            f"ended {reopened} times (a new one opened and the message sent again)"
        )
    ratio = pct(loaded, 95) / pct(alone, 95)
    print(f"    ratio p95 publishing/alone {ratio:6.2f}   (target <= 1.50: {'met' if ratio <= 1.5 else 'NOT met'})")
    shared = pct(baseline, 95) / pct(alone, 95)
    own = pct(loaded, 95) / pct(baseline, 95)
    print(
        f"    of which the machine's share (another agent publishing / alone) {shared:6.2f}, and what publishing to "
        f"the customer's own agent adds (own / another) {own:6.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,10000,100000", help="open sessions on the old version, comma-separated")
    parser.add_argument("--repeats", type=int, default=3, help="publishes per size")
    parser.add_argument("--background", type=int, default=10_000, help="sessions each publish of part 2 closes")
    parser.add_argument("--turns", type=int, default=250, help="customer turns per phase of part 2")
    parser.add_argument(
        "--rounds", type=int, default=2, help="rounds of phases (alone, own agent publishing, another agent) in part 2"
    )
    parser.add_argument("--explain", action="store_true", help="EXPLAIN ANALYZE the close over the largest size")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark's database")
    parser.add_argument("--skip-turns", action="store_true", help="measure the publish times only")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    _prepare()
    import django

    django.setup()
    from django.core.management import call_command

    from facade.tenancy.schemas import Actor

    call_command("migrate", verbosity=0)
    actor = Actor.platform("bench")
    try:
        print(f"contract publish benchmark on PostgreSQL, {args.repeats} publishes per size")
        times = publish_times(sizes, args.repeats, actor)
        print(f"  {'open sessions':>26}{'publish ms (each)':>30}{'median':>9}{'close median':>14}")
        for label, runs in times.items():
            each = " ".join(f"{1000 * p:7.1f}" for p, _c in runs)
            print(
                f"  {label:>26}{each:>30}{1000 * statistics.median(p for p, _c in runs):9.1f}"
                f"{1000 * statistics.median(c for _p, c in runs):14.1f}"
            )
        small, large = times[str(min(sizes))], times[str(max(sizes))]
        ratio = statistics.median(p for p, _c in large) / statistics.median(p for p, _c in small)
        whole = statistics.median(p + c for p, c in large) / statistics.median(p + c for p, c in small)
        print(
            f"  ratio {max(sizes)}/{min(sizes)} publish median {ratio:6.1f}x   "
            f"(target <= 10: {'met' if ratio <= 10 else 'NOT met'}); every session on the old version was closed "
            "with contract_republished"
        )
        print(f"  the same ratio with the close after the commit (publish + close): {whole:5.1f}x (no target)")
        if args.explain:
            for size in (min(sizes), max(sizes)):
                print(
                    f"  EXPLAIN (ANALYZE, BUFFERS, WAL) of the close's select over {size} open sessions "
                    f"(the agent of {max(sizes)}, its closed sessions in the table; rolled back):"
                )
                for line in explain_close(max(sizes), size):
                    print(f"    {line}")
        if not args.skip_turns:
            turn_ratio(args, actor)
    finally:
        if not args.keep:
            drop_database()


if __name__ == "__main__":
    main()
