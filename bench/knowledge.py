"""Knowledge search benchmark on PostgreSQL (`make bench`).

10,000 and then 100,000 approved entries (half English, half Chinese) for one agent, plus the
same number again for another tenant's agent.  At each size: p50/p95 of `knowledge_search` and,
in the same run, of the bare SQL query it issues (same text, same parameters, straight through
the cursor).  Prints the p95 ratio (target ≤ 1.3) and how p95 grows from 10k to 100k
(target ≤ 2, i.e. an index and not a scan).

Uses its own database (default facade_bench_knowledge on DATABASE_URL's server), created afresh.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fresh_db import prepare_database  # noqa: E402

SYLLABLES = (
    "ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo fu ga ge gi go gu ka ke ki ko ku la le li lo lu "
    "ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo vu "
    "za ze zi zo zu"
).split()
HANZI = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经"
    "十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严"
)


def _prepare_database() -> None:
    prepare_database(
        script="bench/knowledge.py", env_name="FACADE_BENCH_KNOWLEDGE_DB", default_name="facade_bench_knowledge"
    )


class Corpus:
    """Deterministic synthetic text: a large English-like vocabulary and common Chinese characters."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        words = {"".join(self.rng.choice(SYLLABLES) for _ in range(self.rng.randint(2, 4))) for _ in range(12000)}
        self.words = sorted(words)
        self.weights = [1 / (rank + 10) for rank in range(len(self.words))]  # Zipf-like

    def english(self, n: int) -> str:
        return " ".join(self.rng.choices(self.words, self.weights, k=n))

    def chinese(self, n: int) -> str:
        return "".join(self.rng.choice(HANZI) for _ in range(n))

    def entry(self, i: int) -> tuple[str, str]:
        if i % 2:
            return self.chinese(6), self.chinese(60) + "。"
        return self.english(4).title(), self.english(35) + "."


def populate(agent, corpus: Corpus, start: int, stop: int) -> None:  # type: ignore[no-untyped-def]
    """Approved entries straight into the tables (the services would append a ledger event per
    entry, which is not what this benchmark measures)."""
    from django.db import connection, transaction

    from knowledge.models import EntryVersion, KnowledgeEntry, Status
    from knowledge.text import search_text, subject_key

    batch = 5000
    for low in range(start, stop, batch):
        rows = [corpus.entry(i) for i in range(low, min(stop, low + batch))]
        with transaction.atomic():
            entries = KnowledgeEntry.objects.bulk_create(
                [
                    KnowledgeEntry(
                        tenant_id=agent.tenant_id, agent=agent, kind="fact", subject=subject_key(t), latest_number=1
                    )
                    for t, _ in rows
                ]
            )
            versions = EntryVersion.objects.bulk_create(
                [
                    EntryVersion(
                        entry=e,
                        agent=agent,
                        number=1,
                        title=t,
                        body=b,
                        source_type="upload",
                        source_ref=f"bench#{i}",
                        source_version="0" * 64,
                        confidence=1,
                        status=Status.APPROVED,
                        actor_type="platform",
                        actor_id="bench",
                        search_text=search_text(t, b),
                        served=True,
                    )
                    for i, (e, (t, b)) in enumerate(zip(entries, rows, strict=True), start=low)
                ]
            )
            with connection.cursor() as cursor:
                cursor.executemany(
                    "UPDATE knowledge_knowledgeentry SET current_version_id = %s WHERE id = %s",
                    [(v.pk, e.pk) for v, e in zip(versions, entries, strict=True)],
                )


def queries(corpus: Corpus, count: int) -> list[str]:
    """Questions drawn from the same distribution as the documents: two English words, or three
    or four Chinese characters."""
    out = []
    for i in range(count):
        out.append(corpus.english(2) if i % 2 == 0 else corpus.chinese(corpus.rng.randint(3, 4)))
    return out


def measure(agent, qs: list[str], rounds: int) -> tuple[list[float], list[float], int]:  # type: ignore[no-untyped-def]
    from django.db import connection
    from django.utils import timezone

    from facade.tenancy.rules import Audience
    from knowledge.selectors import knowledge_search, search_sql
    from knowledge.text import query_terms

    full: list[float] = []
    bare: list[float] = []
    found = 0

    def search(q: str) -> None:
        nonlocal found
        started = time.perf_counter()
        results = knowledge_search(agent=agent, query=q, audience=Audience.CUSTOMER, limit=5)
        full.append(time.perf_counter() - started)
        found += bool(results)

    def issue(q: str) -> None:
        sql, params = search_sql(
            agent_id=agent.pk, terms=query_terms(q), audience=Audience.CUSTOMER, now=timezone.now(), limit=5
        )
        started = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            cursor.fetchall()
        bare.append(time.perf_counter() - started)

    # Each query runs both ways back to back; which one goes first alternates, so neither side
    # is the one that always finds the pages the other has just read.
    for r in range(rounds):
        for i, q in enumerate(qs):
            first, second = (search, issue) if (i + r) % 2 == 0 else (issue, search)
            first(q)
            second(q)
    return full, bare, found


def pct(values: list[float], p: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    _prepare_database()
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from facade.tenancy.schemas import Actor
    from facade.tenancy.services import agent_create, tenant_create

    call_command("migrate", verbosity=0)
    actor = Actor.platform("bench")
    ours = agent_create(
        tenant=tenant_create(slug="bench", name="Bench", actor=actor), slug="bench-agent", name="Bench", actor=actor
    )
    theirs = agent_create(
        tenant=tenant_create(slug="other", name="Other", actor=actor), slug="other-agent", name="Other", actor=actor
    )
    corpus = Corpus(seed=7)
    other_corpus = Corpus(seed=7)  # the same text again, in the other tenant
    qs = queries(Corpus(seed=11), args.queries)

    p95: dict[int, float] = {}
    print(f"knowledge search benchmark on PostgreSQL, {args.queries} queries x {args.rounds} rounds per size")
    done = 0
    for size in (args.small, args.large):
        started = time.perf_counter()
        populate(ours, corpus, done, size)
        populate(theirs, other_corpus, done, size)
        done = size
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        fill = time.perf_counter() - started
        measure(ours, qs[:20], 1)  # warm the caches
        full, bare, found = measure(ours, qs, args.rounds)
        p95[size] = pct(full, 95)
        print(
            f"  {size:>7} entries per agent (+{size} in another tenant; filled in {fill:.0f} s), "
            f"{found}/{len(full)} searches found something"
        )
        print(f"    knowledge_search  p50 {pct(full, 50):7.2f} ms   p95 {pct(full, 95):7.2f} ms")
        print(f"    bare SQL          p50 {pct(bare, 50):7.2f} ms   p95 {pct(bare, 95):7.2f} ms")
        print(f"    ratio p95 search/bare   {pct(full, 95) / pct(bare, 95):5.2f}   (target <= 1.30)")
    print(f"  p95 growth {args.small} -> {args.large}: {p95[args.large] / p95[args.small]:5.2f}x   (target <= 2.00)")


if __name__ == "__main__":
    main()
