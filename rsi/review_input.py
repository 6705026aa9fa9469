"""The daily review's input: one agent's local day in figures, built only with aggregate queries
(COUNT … GROUP BY, and a few session ids per figure) — no transcript is ever loaded, and no
message, request summary or rating comment is read.  Topics (made from customer words) pass the
scrub and the k-anonymity rule of rsi/review_rules.py before they enter it.

Dialogue rows are read through `apps.get_model`, as approvals/cards.py does: dialogue depends on
rsi, not the other way round.  Owner sessions and owners' previews are left out.

Each audience is counted apart (issue 33 §4): the figures without a prefix are the customers';
other agents' conversations (peers, over A2A or the peer API) are counted under `peers.` — their
sessions, runs, tool errors, requests, knowledge hits and misses, A2A tasks by state and delivered
violations — and never in the customers' figures.  Topics are the customers' only: a peer's
unanswered question is counted (`peers.knowledge.misses`), never named."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
import zoneinfo
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import Count, Max, Q, QuerySet, Sum
from pydantic import BaseModel, ConfigDict

from facade.tenancy.models import AgentProfile, Tenant
from knowledge.models import KnowledgeHit, KnowledgeMiss
from knowledge.text import EMPTY_TOPIC, topic_label

from . import schedule_rules
from .review_rules import ShownTopic, TopicCount, topic_aggregate_key, topics_for_review

PEERS = "peers."  # the prefix of the figures of other agents' conversations
PEER_BASE_KEYS = tuple(
    PEERS + key
    for key in (
        "sessions.total",
        "runs.total",
        "runs.completed",
        "requests.submit_calls",
        "requests.created",
        "knowledge.hits",
        "knowledge.misses",
        "guard.delivered_violations",
    )
)
SESSIONS_PER_FIGURE = 3  # how many session ids a figure points at
# The most-asked topics a review names (each asked by FACADE_UNANSWERED_MIN_ASKERS customers or
# more); the day's other topics are counted in `topics.other`.  It bounds what a review reads
# and the memory of building its input, whatever the day's traffic (bench/review.py).
TOPICS_READ = 50
# The figures every review has, zero or not, so a claim may cite a zero.
BASE_KEYS = (
    "sessions.total",
    "sessions.expired",
    "sessions.closed",
    "runs.total",
    "runs.completed",
    "runs.over_budget",
    "runs.failed",
    "runs.needs_input",
    "requests.submit_calls",
    "requests.created",
    "ratings.count",
    "ratings.stars_sum",
    "ratings.low",
    "trust.up",
    "trust.down",
    "knowledge.hits",
    "knowledge.misses",
    "topics.other",
    "topics.other_misses",
    "guard.delivered_violations",
    *PEER_BASE_KEYS,
)
VIOLATIONS_LISTED = 20  # the delivered violations a review input points at one by one (all are counted)


def time_zone_of(tenant: Tenant) -> str:
    return str(tenant.time_zone or settings.TIME_ZONE)


def day_bounds(tenant: Tenant, day: dt.date) -> tuple[dt.datetime, dt.datetime]:
    """The tenant's local day as [start, end) in UTC (a daylight-saving day has 23 or 25 hours:
    both ends are local midnights)."""
    return schedule_rules.day_bounds(day, time_zone_of(tenant))


def local_today(tenant: Tenant, now: dt.datetime | None = None) -> dt.date:
    now = now or dt.datetime.now(dt.UTC)
    return now.astimezone(zoneinfo.ZoneInfo(time_zone_of(tenant))).date()


class TopicFigure(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    key: str  # the aggregate key (a hash of the topic key)
    label: str  # scrubbed, and shown only because >= min_askers distinct customers asked it
    misses: int
    askers: int


class ViolationPointer(BaseModel):
    """A delivered reply the nightly re-check found failing (guard.DeliveredViolation): ids and the
    rule only, never the reply's or the customer's words."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    message_id: int
    run_id: str | None
    session_id: str
    category: str
    check: str
    rule: str | None


class ReviewInput(BaseModel):
    """What a reviewer reads: figures, ratios and pointers.  Every figure's key is an aggregate
    pointer (`{"type": "aggregate", "key": …}`) that resolves to the row stored with the report;
    `sessions` gives a few session ids per figure."""

    model_config = ConfigDict(extra="forbid")
    agent: str
    day: dt.date
    time_zone: str
    partial: bool
    start: dt.datetime
    end: dt.datetime
    figures: dict[str, int]
    ratios: dict[str, float]
    sessions: dict[str, list[str]]
    topics: list[TopicFigure]
    min_askers: int
    # The day's delivered violations (guard/recheck.py), the most recent first; counted in the
    # figures `guard.delivered_violations` and `violations.rule.<rule>` (or `.category.<category>`).
    violations: list[ViolationPointer] = []

    def digest(self) -> str:
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass
class Built:
    review_input: ReviewInput
    labels: dict[str, str]  # aggregate key → shown topic label
    shown: list[ShownTopic]


def _counted(
    qs: QuerySet[Any], columns: tuple[str, ...], families: tuple[tuple[str, str], ...], field: str = "session_id"
) -> dict[str, tuple[int, list[str]]]:
    """Figures over `qs`'s rows in one statement, whatever the day's size: each family is an SQL
    key over `columns` (a figure's name, e.g. `'runs.' || status`) and the condition of the rows
    it counts.  Returns per key how many rows, and the first few distinct session ids (`field`) in
    id order: the rows are read once, counted and ranked in the database, and only a few ids per
    key come back."""
    try:
        sql, params = qs.order_by().values_list(*columns, field).query.sql_with_params()
    except EmptyResultSet:  # a filter that can match nothing (e.g. `__in` an empty list)
        return {}
    branches = " UNION ALL ".join(f"SELECT {key} AS k, s FROM base WHERE {where}" for key, where in families)
    connection = connections[qs.db]
    if connection.vendor != "postgresql":
        return _counted_portable(connection, sql, params, columns, branches)
    statement = (
        f"WITH base ({', '.join((*columns, 's'))}) AS MATERIALIZED ({sql}) "
        f"SELECT k, sum(n)::bigint, array_agg(s ORDER BY s) FILTER (WHERE rank <= {SESSIONS_PER_FIGURE}) FROM ("
        "SELECT k, s, count(*) AS n, row_number() OVER (PARTITION BY k ORDER BY s) AS rank "
        f"FROM ({branches}) AS t WHERE s IS NOT NULL GROUP BY k, s) AS g GROUP BY k ORDER BY k"
    )
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return {k: (int(n), [str(v) for v in ids or ()]) for k, n, ids in cursor.fetchall()}


def _uuid_text(value: Any) -> str:
    """A session id as PostgreSQL gives it back (SQLite stores a UUID as 32 hex digits)."""
    text = str(value)
    if len(text) == 32:
        try:
            return str(uuid.UUID(hex=text))
        except ValueError:
            pass
    return text


def _counted_portable(
    connection: Any, sql: str, params: Any, columns: tuple[str, ...], branches: str
) -> dict[str, tuple[int, list[str]]]:
    """`_counted` for the embedded default (SQLite has no array_agg): the database counts per
    (key, session) and this keeps the first few sessions per key.  A day of the embedded
    default is small; PostgreSQL ranks in the database (above)."""
    statement = (
        f"WITH base ({', '.join((*columns, 's'))}) AS ({sql}) "
        f"SELECT k, s, count(*) FROM ({branches}) AS t WHERE s IS NOT NULL GROUP BY k, s ORDER BY k, s"
    )
    counted: dict[str, tuple[int, list[str]]] = {}
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        for key, session, n in cursor.fetchall():
            total, ids = counted.get(key, (0, []))
            if len(ids) < SESSIONS_PER_FIGURE:
                ids.append(_uuid_text(session))
            counted[key] = (total + int(n), ids)
    return counted


def _figures(figures: dict[str, int], pointers: dict[str, list[str]], rows: dict[str, tuple[int, list[str]]]) -> None:
    for key, (n, ids) in rows.items():
        figures[key], pointers[key] = n, ids


def _ratio(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def violation_key(rule: str, category: str, prefix: str = "") -> str:
    """The figure a delivered violation is counted under: its rule, or its category when the
    check that objected has no named rule (`prefix`: `peers.` for a reply to another agent)."""
    return prefix + (f"violations.rule.{rule}" if rule else f"violations.category.{category}")[:64]


def _violations(
    agent: AgentProfile,
    start: dt.datetime,
    end: dt.datetime,
    session_ids: QuerySet[Any],
    figures: dict[str, int],
    pointers: dict[str, list[str]],
    *,
    audience: str = "customer",
    prefix: str = "",
) -> list[ViolationPointer]:
    """The day's delivered violations of replies to `audience`: counted per rule in the
    database, and the most recent few as pointers (session pointers only to the day's own
    sessions, which the review resolves)."""
    violation_model = apps.get_model("guard", "DeliveredViolation")
    day_violations = violation_model.objects.filter(
        tenant_id=agent.tenant_id,
        agent=agent,
        delivered_at__gte=start,
        delivered_at__lt=end,
        message__session__audience=audience,
    )
    total_key = f"{prefix}guard.delivered_violations"
    for rule, category, n in (
        day_violations.values_list("rule", "category").annotate(n=Count("id")).order_by("rule", "category")
    ):
        key = violation_key(rule, category, prefix)
        figures[key] = figures.get(key, 0) + n
        figures[total_key] += n
    _figures(
        figures,
        pointers,
        {
            key: (figures[key], ids)
            for key, (_n, ids) in _counted(
                day_violations.filter(message__session_id__in=session_ids),
                ("rule", "category"),
                (
                    (f"'{total_key}'", "true"),
                    (
                        f"'{prefix}' || substr(CASE WHEN rule <> '' THEN 'violations.rule.' || rule "
                        "ELSE 'violations.category.' || category END, 1, 64)",
                        "true",
                    ),
                ),
                "message__session_id",
            ).items()
        },
    )
    listed = day_violations.order_by("-delivered_at", "-id").values_list(
        "message_id", "run_id", "message__session_id", "category", "failed_check", "rule"
    )[:VIOLATIONS_LISTED]
    return [
        ViolationPointer(
            message_id=message_id,
            run_id=str(run_id) if run_id else None,
            session_id=str(session_id),
            category=category,
            check=check,
            rule=rule or None,
        )
        for message_id, run_id, session_id, category, check, rule in listed
    ]


def _conversations(
    agent: AgentProfile,
    start: dt.datetime,
    end: dt.datetime,
    figures: dict[str, int],
    pointers: dict[str, list[str]],
    *,
    audience: str,
    prefix: str,
) -> QuerySet[Any]:
    """The figures of one audience's conversations of the day (sessions, runs, tool errors,
    requests), under `prefix`; returns the day's sessions' ids."""
    session_model = apps.get_model("dialogue", "DialogueSession")
    run_model = apps.get_model("dialogue", "Run")
    span_model = apps.get_model("dialogue", "Span")
    request_model = apps.get_model("dialogue", "CustomerRequest")
    sessions = session_model.objects.filter(
        agent=agent, audience=audience, preview=False, created_at__gte=start, created_at__lt=end
    )
    session_families = (
        (f"'{prefix}sessions.total'", "true"),
        (f"'{prefix}sessions.' || status", "status IN ('expired', 'closed')"),
    )
    _figures(figures, pointers, _counted(sessions, ("status",), session_families, "id"))
    session_ids = sessions.values("id")

    runs = run_model.objects.filter(tenant_id=agent.tenant_id, session_id__in=session_ids)
    run_families = (
        (f"'{prefix}runs.total'", "true"),
        (f"'{prefix}runs.' || status", "true"),
        (f"'{prefix}runs.needs_input'", "needs_input"),
        (f"'{prefix}stop.' || stop_reason", "status <> 'completed' AND stop_reason <> ''"),
        (f"'{prefix}guard.' || guard_category", "guard_category <> ''"),
    )
    _figures(
        figures, pointers, _counted(runs, ("status", "stop_reason", "guard_category", "needs_input"), run_families)
    )

    tool_spans = span_model.objects.filter(tenant_id=agent.tenant_id, kind="tool", run__in=runs.values("id"))
    span_families = (
        (f"'{prefix}errors.' || outcome", "outcome <> 'ok'"),
        (f"'{prefix}requests.submit_calls'", "name = 'submit_request'"),
    )
    _figures(figures, pointers, _counted(tool_spans, ("name", "outcome"), span_families, "run__session_id"))
    requests = request_model.objects.filter(agent=agent, kind="request", session_id__in=session_ids)
    _figures(figures, pointers, _counted(requests, (), ((f"'{prefix}requests.created'", "true"),)))

    hits = KnowledgeHit.objects.filter(
        agent=agent, created_at__gte=start, created_at__lt=end, session_id__in=session_ids
    )
    _figures(figures, pointers, _counted(hits, (), ((f"'{prefix}knowledge.hits'", "true"),)))
    misses = KnowledgeMiss.objects.filter(
        agent=agent, created_at__gte=start, created_at__lt=end, session_id__in=session_ids
    )
    _figures(figures, pointers, _counted(misses, (), ((f"'{prefix}knowledge.misses'", "true"),)))
    return session_ids


def _peer_tasks(session_ids: QuerySet[Any], figures: dict[str, int], pointers: dict[str, list[str]]) -> None:
    """The A2A tasks of the day's peer conversations by the state they are in
    (`peers.tasks.completed`, `peers.tasks.failed`, …)."""
    task_model = apps.get_model("peers", "PeerTask")
    tasks = task_model.objects.filter(session_id__in=session_ids)
    families = (("'peers.tasks.' || lower(replace(state, 'TASK_STATE_', ''))", "true"),)
    _figures(figures, pointers, _counted(tasks, ("state",), families))


def review_input_build(*, agent: AgentProfile, day: dt.date, partial: bool) -> Built:
    """About twenty statements whatever the day's size (each counts in the database and returns a
    few rows), so the time grows with the day's rows and the memory does not (bench/review.py)."""
    tenant = agent.tenant
    start, end = day_bounds(tenant, day)
    session_model = apps.get_model("dialogue", "DialogueSession")
    rating_model = apps.get_model("dialogue", "Rating")
    trust_model = apps.get_model("dialogue", "TrustChange")

    figures: dict[str, int] = dict.fromkeys(BASE_KEYS, 0)
    pointers: dict[str, list[str]] = {}

    session_ids = _conversations(agent, start, end, figures, pointers, audience="customer", prefix="")
    sessions = session_model.objects.filter(pk__in=session_ids)
    peer_ids = _conversations(agent, start, end, figures, pointers, audience="peer", prefix=PEERS)
    _peer_tasks(peer_ids, figures, pointers)
    misses = KnowledgeMiss.objects.filter(
        agent=agent, created_at__gte=start, created_at__lt=end, session_id__in=session_ids
    )

    ratings = rating_model.objects.filter(session_id__in=session_ids)
    figures["ratings.stars_sum"] = ratings.aggregate(stars_sum=Sum("stars"))["stars_sum"] or 0
    rating_families = (("'ratings.count'", "true"), ("'ratings.low'", "stars <= 2"))
    _figures(figures, pointers, _counted(ratings, ("stars",), rating_families))

    trust = trust_model.objects.filter(
        tenant_id=agent.tenant_id,
        created_at__gte=start,
        created_at__lt=end,
        customer_id__in=sessions.exclude(customer_id=None).values("customer_id"),
    )
    moved = trust.aggregate(up=Count("id", filter=Q(delta__gt=0)), down=Count("id", filter=Q(delta__lt=0)))
    figures["trust.up"], figures["trust.down"] = moved["up"], moved["down"]

    # Only the most-asked topics that k customers asked are read (TOPICS_READ); every other topic
    # is counted in the database.  Only the shown topics' keys are read again, for their pointers.
    # A topic is the open topic of knowledge.selectors.unanswered_topics: a miss an answer
    # published since has resolved is no gap any more (its draft was approved: no second one).
    k = int(settings.FACADE_UNANSWERED_MIN_ASKERS)
    named = misses.exclude(topic_key=EMPTY_TOPIC).filter(resolved_at__isnull=True)
    grouped = (
        named.values("topic_key")
        .annotate(n=Count("id"), askers=Count("asker", distinct=True), asked=Max("label"))
        .filter(askers__gte=k)
        .order_by("-askers", "-n", "topic_key")[:TOPICS_READ]
    )
    topic_counts = [
        TopicCount(g["topic_key"], g["asked"] or topic_label(g["topic_key"]), g["n"], g["askers"], ()) for g in grouped
    ]
    shown, _other, _other_misses = topics_for_review(topic_counts, min_askers=k)
    every = named.aggregate(topics=Count("topic_key", distinct=True), misses=Count("id"))
    by_hash = {topic_aggregate_key(t.key): t.key for t in topic_counts}
    shown_keys = named.filter(topic_key__in=[by_hash[t.aggregate_key] for t in shown])
    topic_pointers = _counted(shown_keys, ("topic_key",), (("topic_key", "true"),))
    shown_with_sessions: list[ShownTopic] = []
    for topic in shown:
        ids = topic_pointers.get(by_hash[topic.aggregate_key], (0, []))[1]
        shown_with_sessions.append(ShownTopic(topic.aggregate_key, topic.label, topic.misses, topic.askers, tuple(ids)))
        figures[topic.aggregate_key] = topic.misses
        pointers[topic.aggregate_key] = ids
    figures["topics.other"] = every["topics"] - len(shown)
    figures["topics.other_misses"] = every["misses"] - sum(t.misses for t in shown)

    violations = _violations(agent, start, end, session_ids, figures, pointers)
    violations += _violations(agent, start, end, peer_ids, figures, pointers, audience="peer", prefix=PEERS)

    total_runs = figures["runs.total"]
    ratios = {
        "completed": _ratio(figures["runs.completed"], total_runs),
        "over_budget": _ratio(figures["runs.over_budget"], total_runs),
        "needs_input": _ratio(figures["runs.needs_input"], total_runs),
        "expired": _ratio(figures["sessions.expired"], figures["sessions.total"]),
        "request_conversion": _ratio(figures["requests.created"], figures["requests.submit_calls"]),
        "knowledge_hit": _ratio(figures["knowledge.hits"], figures["knowledge.hits"] + figures["knowledge.misses"]),
        "peers.completed": _ratio(figures["peers.runs.completed"], figures["peers.runs.total"]),
        "peers.knowledge_hit": _ratio(
            figures["peers.knowledge.hits"], figures["peers.knowledge.hits"] + figures["peers.knowledge.misses"]
        ),
    }
    review_input = ReviewInput(
        agent=agent.slug,
        day=day,
        time_zone=time_zone_of(tenant),
        partial=partial,
        start=start,
        end=end,
        figures=figures,
        ratios=ratios,
        sessions={key: ids for key, ids in pointers.items() if ids},
        topics=[TopicFigure(key=t.aggregate_key, label=t.label, misses=t.misses, askers=t.askers) for t in shown],
        min_askers=k,
        violations=violations,
    )
    return Built(review_input, {t.aggregate_key: t.label for t in shown}, shown_with_sessions)
