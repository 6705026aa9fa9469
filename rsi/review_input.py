"""The daily review's input: one agent's local day in figures, built only with aggregate queries
(COUNT … GROUP BY, and a few session ids per figure) — no transcript is ever loaded, and no
message, request summary or rating comment is read.  Topics (made from customer words) pass the
scrub and the k-anonymity rule of rsi/review_rules.py before they enter it.

Dialogue rows are read through `apps.get_model`, as approvals/cards.py does: dialogue depends on
rsi, not the other way round.  Owner sessions and owners' previews are left out."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import zoneinfo
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.conf import settings
from django.db.models import Count, Q, QuerySet, Sum
from pydantic import BaseModel, ConfigDict

from facade.tenancy.models import AgentProfile, Tenant
from knowledge.models import KnowledgeHit, KnowledgeMiss
from knowledge.text import EMPTY_TOPIC, topic_label

from . import schedule_rules
from .review_rules import ShownTopic, TopicCount, topic_aggregate_key, topics_for_review

SESSIONS_PER_FIGURE = 3  # how many session ids a figure points at
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
)


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

    def digest(self) -> str:
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass
class Built:
    review_input: ReviewInput
    labels: dict[str, str]  # aggregate key → shown topic label
    shown: list[ShownTopic]


def _ids(qs: QuerySet[Any], field: str = "session_id") -> list[str]:
    return [str(v) for v in qs.order_by(field).values_list(field, flat=True).distinct()[:SESSIONS_PER_FIGURE]]


def _ratio(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def review_input_build(*, agent: AgentProfile, day: dt.date, partial: bool) -> Built:
    tenant = agent.tenant
    start, end = day_bounds(tenant, day)
    session_model = apps.get_model("dialogue", "DialogueSession")
    run_model = apps.get_model("dialogue", "Run")
    span_model = apps.get_model("dialogue", "Span")
    request_model = apps.get_model("dialogue", "CustomerRequest")
    rating_model = apps.get_model("dialogue", "Rating")
    trust_model = apps.get_model("dialogue", "TrustChange")

    figures: dict[str, int] = dict.fromkeys(BASE_KEYS, 0)
    pointers: dict[str, list[str]] = {}

    sessions = session_model.objects.filter(
        agent=agent, audience__in=("customer", "peer"), preview=False, created_at__gte=start, created_at__lt=end
    )
    counts = sessions.aggregate(
        total=Count("id"),
        expired=Count("id", filter=Q(status="expired")),
        closed=Count("id", filter=Q(status="closed")),
    )
    for name in ("total", "expired", "closed"):
        figures[f"sessions.{name}"] = counts[name]
    pointers["sessions.total"] = _ids(sessions, "id")
    pointers["sessions.expired"] = _ids(sessions.filter(status="expired"), "id")
    pointers["sessions.closed"] = _ids(sessions.filter(status="closed"), "id")
    session_ids = sessions.values("id")

    runs = run_model.objects.filter(tenant_id=agent.tenant_id, session_id__in=session_ids)
    figures["runs.total"] = runs.count()
    pointers["runs.total"] = _ids(runs)
    for row in runs.values("status").annotate(n=Count("id")).order_by("status"):
        key = f"runs.{row['status']}"
        figures[key] = row["n"]
        pointers[key] = _ids(runs.filter(status=row["status"]))
    figures["runs.needs_input"] = runs.filter(needs_input=True).count()
    pointers["runs.needs_input"] = _ids(runs.filter(needs_input=True))
    stopped = runs.exclude(status="completed").exclude(stop_reason="")
    for row in stopped.values("stop_reason").annotate(n=Count("id")).order_by("stop_reason"):
        key = f"stop.{row['stop_reason']}"
        figures[key] = row["n"]
        pointers[key] = _ids(stopped.filter(stop_reason=row["stop_reason"]))
    guarded = runs.exclude(guard_category="")
    for row in guarded.values("guard_category").annotate(n=Count("id")).order_by("guard_category"):
        key = f"guard.{row['guard_category']}"
        figures[key] = row["n"]
        pointers[key] = _ids(guarded.filter(guard_category=row["guard_category"]))

    tool_spans = span_model.objects.filter(tenant_id=agent.tenant_id, kind="tool", run__in=runs.values("id"))
    errors = tool_spans.exclude(outcome="ok")
    for row in errors.values("outcome").annotate(n=Count("id")).order_by("outcome"):
        key = f"errors.{row['outcome']}"
        figures[key] = row["n"]
        pointers[key] = _ids(errors.filter(outcome=row["outcome"]), "run__session_id")
    submits = tool_spans.filter(name="submit_request")
    figures["requests.submit_calls"] = submits.count()
    pointers["requests.submit_calls"] = _ids(submits, "run__session_id")
    requests = request_model.objects.filter(agent=agent, kind="request", session_id__in=session_ids)
    figures["requests.created"] = requests.count()
    pointers["requests.created"] = _ids(requests)

    ratings = rating_model.objects.filter(session_id__in=session_ids)
    rated = ratings.aggregate(n=Count("id"), stars_sum=Sum("stars"), low=Count("id", filter=Q(stars__lte=2)))
    figures["ratings.count"], figures["ratings.stars_sum"] = rated["n"], rated["stars_sum"] or 0
    figures["ratings.low"] = rated["low"]
    pointers["ratings.count"] = _ids(ratings)
    pointers["ratings.low"] = _ids(ratings.filter(stars__lte=2))

    trust = trust_model.objects.filter(
        tenant_id=agent.tenant_id,
        created_at__gte=start,
        created_at__lt=end,
        customer_id__in=sessions.exclude(customer_id=None).values("customer_id"),
    )
    moved = trust.aggregate(up=Count("id", filter=Q(delta__gt=0)), down=Count("id", filter=Q(delta__lt=0)))
    figures["trust.up"], figures["trust.down"] = moved["up"], moved["down"]

    hits = KnowledgeHit.objects.filter(
        agent=agent, created_at__gte=start, created_at__lt=end, session_id__in=session_ids
    )
    figures["knowledge.hits"] = hits.count()
    pointers["knowledge.hits"] = _ids(hits)
    misses = KnowledgeMiss.objects.filter(
        agent=agent, created_at__gte=start, created_at__lt=end, session_id__in=session_ids
    )
    figures["knowledge.misses"] = misses.count()
    pointers["knowledge.misses"] = _ids(misses)

    grouped = (
        misses.exclude(topic_key=EMPTY_TOPIC)
        .values("topic_key")
        .annotate(n=Count("id"), askers=Count("asker", distinct=True))
        .order_by("-n", "topic_key")
    )
    k = int(settings.FACADE_UNANSWERED_MIN_ASKERS)
    topic_counts = [TopicCount(g["topic_key"], topic_label(g["topic_key"]), g["n"], g["askers"], ()) for g in grouped]
    # Only the shown topics' keys are read again, for their session pointers.
    shown, other, other_misses = topics_for_review(topic_counts, min_askers=k)
    by_hash = {topic_aggregate_key(t.key): t.key for t in topic_counts}
    shown_with_sessions: list[ShownTopic] = []
    for topic in shown:
        ids = tuple(_ids(misses.filter(topic_key=by_hash[topic.aggregate_key])))
        shown_with_sessions.append(ShownTopic(topic.aggregate_key, topic.label, topic.misses, topic.askers, ids))
        figures[topic.aggregate_key] = topic.misses
        pointers[topic.aggregate_key] = list(ids)
    figures["topics.other"], figures["topics.other_misses"] = other, other_misses

    total_runs = figures["runs.total"]
    ratios = {
        "completed": _ratio(figures["runs.completed"], total_runs),
        "over_budget": _ratio(figures["runs.over_budget"], total_runs),
        "needs_input": _ratio(figures["runs.needs_input"], total_runs),
        "expired": _ratio(figures["sessions.expired"], figures["sessions.total"]),
        "request_conversion": _ratio(figures["requests.created"], figures["requests.submit_calls"]),
        "knowledge_hit": _ratio(figures["knowledge.hits"], figures["knowledge.hits"] + figures["knowledge.misses"]),
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
    )
    return Built(review_input, {t.aggregate_key: t.label for t in shown}, shown_with_sessions)
