"""Reads of the knowledge app.  Every query is scoped to one agent inside the SQL itself."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from django.db import connection
from django.db.models import Count, Max
from django.utils import timezone

from facade.tenancy.models import AgentProfile
from facade.tenancy.rules import Audience

from .models import KnowledgeMiss, Status
from .rules import topic_for_owner
from .schemas import SearchResult
from .search import SearchQuery, backend_for
from .text import query_terms

SNIPPET = 220
MAX_LIMIT = 50


def search_sql(*, agent_id: int, terms: list[str], audience: Audience, now: dt.datetime, limit: int) -> tuple[str, Any]:
    """The one query a search issues, written by the connection's backend (`knowledge/search/`;
    also measured bare by bench/knowledge.py)."""
    query = SearchQuery(agent_id=agent_id, terms=terms, audience=audience, now=now, limit=limit)
    return backend_for(connection).sql(query, connection)


def _snippet(body: str, terms: list[str]) -> str:
    lowered = body.lower()
    positions = [p for p in (lowered.find(term) for term in terms) if p >= 0]
    start = max(0, min(positions) - SNIPPET // 3) if positions else 0
    text = body[start : start + SNIPPET]
    text = re.sub(r"\s+", " ", text).strip()
    return ("…" if start else "") + text + ("…" if start + SNIPPET < len(body) else "")


def knowledge_search(
    *, agent: AgentProfile, query: str, audience: Audience | str, limit: int = 5
) -> list[SearchResult]:
    """Knowledge of this agent that matches the query, best first (how "best" is decided is the
    database's backend's business: `knowledge/search/`).

    Customers and peers get only approved versions that take effect and are valid now (an
    entry past `valid_until` is never served, whether or not a job has marked it expired);
    owners also get pending versions.  One read-only query, scoped to the agent in its SQL."""
    audience = Audience(audience)
    terms = query_terms(query)
    if not terms:
        return []
    limit = max(1, min(int(limit), MAX_LIMIT))
    now = timezone.now()
    sql, params = search_sql(agent_id=agent.pk, terms=terms, audience=audience, now=now, limit=limit)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [
        SearchResult(
            entry_id=entry_id,
            version=number,
            version_id=version_id,
            title=title,
            snippet=_snippet(body, terms),
            status=status,
            source={"type": source_type, "ref": source_ref, "version": source_version},
        )
        for version_id, entry_id, number, title, body, status, source_type, source_ref, source_version, *_rank in rows
    ]


def pending_versions(agent: AgentProfile) -> Any:
    from .models import EntryVersion

    return (
        EntryVersion.objects.filter(agent=agent, status=Status.PENDING).select_related("entry").order_by("created_at")
    )


UNANSWERED_DAYS = 30
UNANSWERED_SHOWN = 10


def unanswered_topics(
    *, agent: AgentProfile, days: int = UNANSWERED_DAYS, limit: int = UNANSWERED_SHOWN
) -> list[dict[str, Any]]:
    """Questions no approved knowledge answered lately, by topic key, most asked first: the key,
    how often and when last.  A key is all that was kept of the question, and a term in it that
    looks like personal data (a number, an address) is left out here too (`rules.topic_for_owner`)."""
    since = timezone.now() - dt.timedelta(days=days)
    rows = (
        KnowledgeMiss.objects.filter(agent=agent, created_at__gte=since)
        .values("topic_key")
        .annotate(count=Count("id"), last=Max("created_at"))
        .order_by("-count", "-last")[:200]
    )
    merged: dict[str, dict[str, Any]] = {}
    for row in rows:
        topic = topic_for_owner(str(row["topic_key"]))
        if not topic:
            continue
        seen = merged.setdefault(topic, {"topic": topic, "count": 0, "last_seen": row["last"]})
        seen["count"] += int(row["count"])
        seen["last_seen"] = max(seen["last_seen"], row["last"])
    ranked = sorted(merged.values(), key=lambda t: (-t["count"], -t["last_seen"].timestamp()))[:limit]
    return [{**t, "last_seen": t["last_seen"].isoformat()} for t in ranked]


def unanswered_topic_count(*, agent: AgentProfile) -> int:
    """How many distinct topics of customer questions nothing approved answered (a preview
    records no misses, so they are all customers')."""
    from .models import KnowledgeMiss

    return KnowledgeMiss.objects.filter(agent=agent).values("topic_key").distinct().count()
