"""The daily review's input on PostgreSQL (`make bench`; issue 13).

One agent has a local day of `--small` (default 10,000) customer sessions and another of
`--large` (default 100,000), about ten messages each (five questions, five replies, a run per
question), with everything `rsi/review_input.py` reads for a day: sessions open, closed and
expired; owner sessions and owners' previews (left out by the input); runs completed, over
budget, failed, cancelled, waiting for input, blocked by the guard; model and tool spans
(knowledge searches, `submit_request` calls, tools that failed); requests and handoffs;
ratings; trust changes; knowledge hits; knowledge misses on a Zipf-like pool of topics (a topic
per 50 sessions), some asked by three customers or more.  The day before and the day after each
measured day get `--neighbours` sessions of the same kind (default 10,000), and another tenant
(another time zone) gets the same days with the same volumes, so every filter of the input
(tenant, agent, audience, preview, the day's bounds) has rows to leave out.  Rows are written
by `INSERT … SELECT` over `generate_series` in the server; the seeding time is printed apart.

For each measured day: the wall time of `review_input_build` (median and best of `--repeats`,
after one warm-up), the peak of Python's memory during one build (tracemalloc) and the number
of SQL statements it sends, against a baseline measured in the same run and interleaved with
it: a plain `COUNT(*)` of that day's sessions of the agent (the database's own cost of reading
the day).  Prints the growth ratios small → large of both, and EXPLAIN (ANALYZE, BUFFERS) of the
slowest statement of the large day's build.

It uses its own database (default facade_bench_review on DATABASE_URL's server), created afresh
and dropped at the end (`--keep` keeps it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any
from urllib.parse import urlparse, urlunparse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fresh_db import drop_database, prepare_database  # noqa: E402

SMALL_DAY = dt.date(2026, 11, 10)
LARGE_DAY = dt.date(2026, 11, 20)
MESSAGES_PER_SESSION = 10  # five questions, five replies; a run per question
TOPIC_WORDS = (
    "delivery parking opening hours price framing glass frame canvas poster size custom gift wrapping invoice "
    "refund return exchange warranty shipping abroad express pickup weekend holiday appointment payment card "
    "cash transfer discount student bulk order restoration antique mirror mount colour oak walnut metal"
).split()
TOPIC_HANZI = "几点开门营业时间价格多少钱配送包装发票退货换货保修周末节假日预约付款折扣学生批量订单修复镜子颜色"

SESSIONS = """
CREATE TEMP TABLE seed_s ON COMMIT DROP AS
SELECT i,
       gen_random_uuid() AS id,
       CASE WHEN i %% 100 < 3 THEN NULL ELSE gen_random_uuid() END AS customer_id,
       CASE WHEN i %% 100 < 2 THEN 'owner' ELSE 'customer' END AS audience,
       (i %% 100 = 2) AS preview,
       CASE WHEN i %% 10 < 2 THEN 'expired' WHEN i %% 10 < 6 THEN 'closed' ELSE 'open' END AS status,
       %(start)s::timestamptz + make_interval(secs => %(span)s * (i - 0.5) / %(n)s) AS at
FROM generate_series(1, %(n)s) AS i;

INSERT INTO tenancy_customer (id, tenant_id, trust, created_at)
SELECT customer_id, %(tenant)s, 50, at FROM seed_s WHERE customer_id IS NOT NULL;

INSERT INTO dialogue_dialoguesession (id, tenant_id, agent_id, audience, principal_type, user_id, customer_id,
                                      peer_id, status, preview, simulated, contract_version, closed_reason,
                                      created_at, last_activity_at)
SELECT id, %(tenant)s, %(agent)s, audience, CASE WHEN customer_id IS NULL THEN 'user' ELSE 'customer' END,
       CASE WHEN customer_id IS NULL THEN %(user)s END, customer_id, NULL, status, preview, false, 1, '', at,
       at + interval '10 minutes'
FROM seed_s;

INSERT INTO dialogue_message (id, session_id, role, text, client_message_id, citations, reply_to_id, stop_reason,
                              request_id, metadata, created_at)
SELECT %(base)s + (s.i - 1) * 10 + k, s.id, CASE WHEN k %% 2 = 0 THEN 'principal' ELSE 'agent' END,
       CASE WHEN k %% 2 = 0 THEN 'question ' || k || ' in session ' || s.i || ' about framing prices and delivery'
            ELSE 'an answer of about the same length, citing the approved entry on framing prices' END,
       '', '[]'::jsonb, CASE WHEN k %% 2 = 1 THEN %(base)s + (s.i - 1) * 10 + k - 1 END, '', NULL, '{}'::jsonb,
       s.at + make_interval(mins => k)
FROM seed_s s, generate_series(0, 9) AS k;

CREATE TEMP TABLE seed_r ON COMMIT DROP AS
SELECT gen_random_uuid() AS id, s.id AS session_id, s.i, j, %(base)s + (s.i - 1) * 10 + 2 * j AS message_id,
       s.at + make_interval(mins => 2 * j) AS at, (s.i * 7 + j * 31) %% 100 AS r, s.customer_id,
       s.audience = 'customer' AND NOT s.preview AS counted
FROM seed_s s, generate_series(0, 4) AS j;

INSERT INTO dialogue_run (id, tenant_id, session_id, message_id, status, stop_reason, needs_input, step_index,
                          llm_call_count, tool_call_count, prompt_tokens, completion_tokens, provider, context_hash,
                          guard_category, started_at, finished_at)
SELECT id, %(tenant)s, session_id, message_id,
       CASE WHEN r < 78 THEN 'completed' WHEN r < 84 THEN 'over_budget' WHEN r < 88 THEN 'failed'
            WHEN r < 92 THEN 'waiting_input' WHEN r < 94 THEN 'cancelled' ELSE 'waiting_input' END,
       CASE WHEN r BETWEEN 78 AND 80 THEN 'max_steps' WHEN r BETWEEN 81 AND 83 THEN 'model_calls'
            WHEN r BETWEEN 84 AND 85 THEN 'provider_error' WHEN r BETWEEN 86 AND 87 THEN 'invalid_tool_arguments'
            WHEN r BETWEEN 92 AND 93 THEN 'cancelled' ELSE '' END,
       (r BETWEEN 88 AND 91) OR r >= 94, 1, 1, CASE WHEN r %% 3 = 0 THEN 1 ELSE 0 END, 800, 120, 'offline', '',
       CASE WHEN r >= 94 THEN (ARRAY['price', 'deadline', 'promise', 'unsourced_figure'])[1 + r %% 4] ELSE '' END,
       at, at + interval '2 seconds'
FROM seed_r;

INSERT INTO dialogue_span (tenant_id, run_id, kind, name, outcome, started_at, duration_ms, prompt_tokens,
                           completion_tokens)
SELECT %(tenant)s, id, 'model', 'offline', 'ok', at, 12.5, 800, 120 FROM seed_r
UNION ALL
SELECT %(tenant)s, id, 'tool',
       CASE WHEN r IN (5, 15, 25, 35) THEN 'submit_request' WHEN r = 47 THEN 'web_fetch' ELSE 'knowledge_search' END,
       CASE WHEN r = 25 THEN 'invalid_arguments' WHEN r = 47 THEN 'error' WHEN r = 57 THEN 'timeout' ELSE 'ok' END,
       at, 3.5, 0, 0
FROM seed_r WHERE r %% 3 = 0 OR r IN (5, 25, 35, 47);

INSERT INTO dialogue_customerrequest (tenant_id, agent_id, session_id, run_id, kind, state, summary, details, flow,
                                      created_at, updated_at)
SELECT %(tenant)s, %(agent)s, session_id, id, CASE WHEN r = 35 THEN 'handoff' ELSE 'request' END, 'submitted',
       'a request in the customer''s words', '{}'::jsonb, '{"states": {}}'::jsonb, at, at
FROM seed_r WHERE r IN (5, 15, 35);

INSERT INTO dialogue_rating (session_id, tenant_id, stars, comment, created_at)
SELECT id, %(tenant)s, 1 + (i * 13) %% 5, CASE WHEN i %% 4 = 0 THEN 'a comment in the customer''s words' ELSE '' END,
       at + interval '12 minutes'
FROM seed_s WHERE audience = 'customer' AND NOT preview AND i %% 10 IN (0, 3, 6);

INSERT INTO dialogue_trustchange (tenant_id, customer_id, delta, reason, score, created_at)
SELECT %(tenant)s, customer_id, CASE WHEN i %% 2 = 0 THEN 5 ELSE -10 END,
       CASE WHEN i %% 2 = 0 THEN 'rating' ELSE 'abuse' END, 50, at + interval '5 minutes'
FROM seed_s WHERE audience = 'customer' AND NOT preview AND i %% 7 = 0;

INSERT INTO knowledge_knowledgehit (agent_id, session_id, version_id, created_at)
SELECT %(agent)s, session_id, (%(versions)s::bigint[])[1 + (i + j) %% cardinality(%(versions)s::bigint[])], at
FROM seed_r WHERE counted AND r %% 3 = 0 AND r < 78;

INSERT INTO knowledge_knowledgemiss (agent_id, session_id, asker, topic_key, label, created_at)
SELECT %(agent)s, session_id, customer_id::text, topic, topic, at
FROM (
    SELECT session_id, customer_id, at,
           CASE WHEN r = 11 THEN '(empty)'
                ELSE (%(topics)s::text[])[1 + floor(power(random(), 2.5) * cardinality(%(topics)s::text[]))::int]
           END AS topic
    FROM seed_r WHERE counted AND r %% 10 = 1
) AS asked;
"""

# The baseline: the database's own cost of reading the day (the same rows the input starts from).
BASELINE = """
SELECT count(*) FROM dialogue_dialoguesession
WHERE agent_id = %(agent)s AND created_at >= %(start)s AND created_at < %(end)s
"""


def _prepare(reuse: bool) -> None:
    if reuse:  # the database a run with --keep left, seeded already (migrated again below)
        parsed = urlparse(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/facade"))
        name = os.environ.get("FACADE_BENCH_REVIEW_DB", "facade_bench_review")
        os.environ["DATABASE_URL"] = urlunparse(parsed._replace(path=f"/{name}"))
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "facade.settings")
        os.environ.setdefault("FACADE_VAR_DIR", str(ROOT / "var" / "bench"))
    else:
        prepare_database(
            script="bench/review.py", env_name="FACADE_BENCH_REVIEW_DB", default_name="facade_bench_review"
        )
    os.environ["REDIS_URL"] = os.environ.get("FACADE_BENCH_REVIEW_REDIS", "redis://127.0.0.1:6379/11")


def _sql(sql: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall()) if cursor.description else []


def topic_pool(count: int) -> list[str]:
    """`count` distinct topic keys, made by `topic_key` from short questions as customers ask
    them (two or three words, or three or four Chinese characters)."""
    import random

    from knowledge.text import topic_key

    rng = random.Random(count)
    keys: set[str] = set()
    while len(keys) < count:
        if rng.random() < 0.7:
            key = topic_key(" ".join(rng.sample(TOPIC_WORDS, rng.randint(2, 3))))
        else:
            key = topic_key("".join(rng.sample(TOPIC_HANZI, rng.randint(3, 4))))
        keys.add(key[:200])
    return sorted(keys)


def knowledge_versions(agent: Any, count: int = 20) -> list[int]:
    """Approved entries for the agent's knowledge hits to point at."""
    from knowledge.models import EntryVersion, KnowledgeEntry, Status
    from knowledge.text import search_text, subject_key

    versions = []
    for i in range(count):
        title, body = f"Framing price {i}", f"Framing of size {i} costs {30 + i} euros."
        entry = KnowledgeEntry.objects.create(
            tenant_id=agent.tenant_id, agent=agent, kind="fact", subject=subject_key(title), latest_number=1
        )
        version = EntryVersion.objects.create(
            entry=entry,
            agent=agent,
            number=1,
            title=title,
            body=body,
            source_type="upload",
            source_ref=f"bench#{i}",
            source_version="0" * 64,
            confidence=1,
            status=Status.APPROVED,
            actor_type="platform",
            actor_id="bench",
            search_text=search_text(title, body),
            served=True,
        )
        KnowledgeEntry.objects.filter(pk=entry.pk).update(current_version=version)
        versions.append(version.pk)
    return versions


class World:
    """An agent of its own tenant, its owner and its approved entries."""

    def __init__(self, slug: str, time_zone: str, actor: Any) -> None:
        from django.contrib.auth import get_user_model

        from facade.tenancy.models import Tenant
        from facade.tenancy.services import agent_create, tenant_create

        tenant = tenant_create(slug=slug, name=slug.title(), actor=actor)
        Tenant.objects.filter(pk=tenant.pk).update(time_zone=time_zone)
        tenant.refresh_from_db()
        self.agent = agent_create(tenant=tenant, slug=f"{slug}-agent", name=slug.title(), actor=actor)
        self.agent.tenant = tenant
        self.user = get_user_model().objects.create_user(username=f"{slug}-owner", password=None)
        self.versions = knowledge_versions(self.agent)


def seed_day(world: World, day: dt.date, sessions: int, base: int) -> None:
    """`sessions` sessions of the world's agent spread over its local `day`, with their rows (the
    messages numbered from `base`).  The rows are consistent by construction, so the foreign-key
    triggers are off while they are written (`session_replication_role`), which makes the seeding
    several times faster."""
    from django.db import transaction

    from rsi.review_input import day_bounds

    start, end = day_bounds(world.agent.tenant, day)
    params = {
        "tenant": world.agent.tenant_id,
        "agent": world.agent.pk,
        "user": world.user.pk,
        "start": start,
        "span": (end - start).total_seconds(),
        "n": sessions,
        "base": base,
        "versions": world.versions,
        "topics": topic_pool(max(20, sessions // 50)),
    }
    with transaction.atomic():
        _sql("SET LOCAL session_replication_role = replica")
        _sql(SESSIONS, params)


def seed(worlds: list[World], small: int, large: int, neighbours: int) -> dict[str, float]:
    spent: dict[str, float] = {}
    base = 1
    for world in worlds:
        for day, size in ((SMALL_DAY, small), (LARGE_DAY, large)):
            for when, count in (
                (day - dt.timedelta(days=1), neighbours),
                (day, size),
                (day + dt.timedelta(1), neighbours),
            ):
                started = time.perf_counter()
                seed_day(world, when, count, base)
                base += count * MESSAGES_PER_SESSION
                label = f"{world.agent.slug} {when}"
                spent[label] = time.perf_counter() - started
                print(f"    {label}: {count:>7} sessions in {spent[label]:6.1f} s", flush=True)
    _sql("SELECT setval(pg_get_serial_sequence('dialogue_message', 'id'), %(top)s)", {"top": base})
    started = time.perf_counter()
    _sql("VACUUM (ANALYZE)")
    spent["vacuum analyze"] = time.perf_counter() - started
    return spent


def table_sizes() -> list[tuple[str, int]]:
    tables = (
        "dialogue_dialoguesession",
        "dialogue_message",
        "dialogue_run",
        "dialogue_span",
        "dialogue_customerrequest",
        "dialogue_rating",
        "dialogue_trustchange",
        "knowledge_knowledgehit",
        "knowledge_knowledgemiss",
    )
    return [(t, _sql(f"SELECT count(*) FROM {t}")[0][0]) for t in tables]  # noqa: S608 (fixed names)


class Measured:
    def __init__(self) -> None:
        self.build: list[float] = []
        self.baseline: list[float] = []
        self.peak = 0
        self.queries: list[dict[str, str]] = []
        self.sessions = 0
        self.topics = 0


def measure(agent: Any, day: dt.date, repeats: int) -> Measured:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from rsi.review_input import day_bounds, review_input_build

    start, end = day_bounds(agent.tenant, day)
    out = Measured()

    def build() -> None:
        started = time.perf_counter()
        built = review_input_build(agent=agent, day=day, partial=False)
        out.build.append(time.perf_counter() - started)
        out.sessions = built.review_input.figures["sessions.total"]
        out.topics = len(built.review_input.topics)

    def baseline() -> None:
        started = time.perf_counter()
        _sql(BASELINE, {"agent": agent.pk, "start": start, "end": end})
        out.baseline.append(time.perf_counter() - started)

    build()  # warm the caches (and Django's)
    baseline()
    out.build.clear()
    out.baseline.clear()
    for r in range(repeats):
        first, second = (build, baseline) if r % 2 == 0 else (baseline, build)
        first()
        second()
    timed = out.build[:]
    with CaptureQueriesContext(connection) as captured:
        build()
    out.queries = list(captured.captured_queries)
    tracemalloc.start()
    try:
        build()
        out.peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    out.build = timed
    return out


def explain(sql: str) -> list[str]:
    return [row[0] for row in _sql(f"EXPLAIN (ANALYZE, BUFFERS) {sql}")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", type=int, default=10_000, help="sessions of the small day")
    parser.add_argument("--large", type=int, default=100_000, help="sessions of the large day")
    parser.add_argument("--neighbours", type=int, default=10_000, help="sessions of the day before and after each")
    parser.add_argument("--repeats", type=int, default=7, help="timed builds per day")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark's database")
    parser.add_argument(
        "--reuse", action="store_true", help="measure again on the database a run with --keep left (same sizes)"
    )
    args = parser.parse_args()

    _prepare(args.reuse)
    import django

    django.setup()
    from django.core.management import call_command

    from facade.tenancy.schemas import Actor

    call_command("migrate", verbosity=0)
    actor = Actor.platform("bench")
    try:
        print(
            f"review input benchmark on PostgreSQL: one agent's day of {args.small} and of {args.large} sessions "
            f"(~{MESSAGES_PER_SESSION} messages each), the days around them {args.neighbours} each, "
            "another tenant the same"
        )
        if args.reuse:
            from facade.tenancy.models import AgentProfile

            print("  reusing the seeded database")
            _sql("ANALYZE")
            agent = AgentProfile.objects.select_related("tenant").get(slug="bench-agent")
        else:
            ours = World("bench", "Europe/Berlin", actor)
            theirs = World("other", "Asia/Shanghai", actor)
            print("  seeding (INSERT ... SELECT in the server):")
            started = time.perf_counter()
            spent = seed([ours, theirs], args.small, args.large, args.neighbours)
            total = time.perf_counter() - started
            print(f"    VACUUM (ANALYZE): {spent['vacuum analyze']:.1f} s; seeding in all {total:.0f} s")
            agent = ours.agent
        print("    rows: " + ", ".join(f"{t.split('_', 1)[1]} {n:,}" for t, n in table_sizes()))

        results = {
            size: measure(agent, day, args.repeats) for size, day in ((args.small, SMALL_DAY), (args.large, LARGE_DAY))
        }
        print(f"  review_input_build, {args.repeats} timed builds per day after a warm-up (baseline interleaved):")
        print(
            f"  {'sessions':>9}{'build median':>14}{'best':>9}{'peak memory':>13}{'SQL':>5}"
            f"{'baseline median':>17}{'build/baseline':>16}"
        )
        for m in results.values():
            print(
                f"  {m.sessions:>9}{1000 * statistics.median(m.build):11.1f} ms{1000 * min(m.build):6.1f} ms"
                f"{m.peak / 1024:9.0f} KiB{len(m.queries):>5}{1000 * statistics.median(m.baseline):14.2f} ms"
                f"{statistics.median(m.build) / statistics.median(m.baseline):15.0f}x"
            )
        small, large = results[args.small], results[args.large]
        print(
            f"  growth {args.small} -> {args.large} ({large.sessions / small.sessions:.0f}x the sessions): "
            f"build time {statistics.median(large.build) / statistics.median(small.build):5.2f}x, "
            f"baseline {statistics.median(large.baseline) / statistics.median(small.baseline):5.2f}x, "
            f"peak memory {large.peak / small.peak:5.2f}x; topics shown {small.topics} and {large.topics}"
        )
        slowest = sorted(large.queries, key=lambda q: float(q["time"]), reverse=True)
        print(f"  the slowest statements of the {args.large} day's build (of {len(large.queries)}):")
        for q in slowest[:5]:
            print(f"    {1000 * float(q['time']):8.1f} ms  {q['sql'][:150]}")
        print("  EXPLAIN (ANALYZE, BUFFERS) of the slowest:")
        for line in explain(slowest[0]["sql"]):
            print(f"    {line}")
    finally:
        if not args.keep and not args.reuse:
            drop_database()


if __name__ == "__main__":
    main()
