"""Reads of the knowledge app.  Every query is scoped to one agent inside the SQL itself."""

from __future__ import annotations

import datetime as dt
import re
import time
from typing import Any

from django.db import connection
from django.utils import timezone

from facade.tenancy.models import AgentProfile
from facade.tenancy.rules import Audience

from .models import Status
from .schemas import SearchResult
from .text import query_terms

SNIPPET = 220
MAX_LIMIT = 50

_COLUMNS = "v.id, v.entry_id, v.number, v.title, v.body, v.status, v.source_type, v.source_ref, v.source_version"

# Customers and peers see the version that takes effect; owners also see what waits for them.
_SERVED = "(v.served AND v.status = 'approved')"
_SERVED_OR_PENDING = "(" + _SERVED + " OR v.status = 'pending')"

# How many matches are ranked at most.  Versions holding every term come first; the rest are
# filled with versions holding any of the rarer terms.  Bounding the set keeps a query on
# common words from ranking (and fetching) thousands of rows, so the cost of a search does not
# grow with the number of entries that happen to match.
CANDIDATES = 64

# `agent_id + 0` on purpose: with a plain `agent_id =` the planner ANDs the GIN bitmap with a
# bitmap of *every* version of the agent from the foreign-key index, which costs as much as the
# agent has versions; filtering the GIN matches by agent inside the same heap scan keeps the
# cost flat as the tables grow.
_PG_FILTER = """
    v.agent_id + 0 = %(agent)s AND {visible}
    AND (v.valid_from IS NULL OR v.valid_from <= %(now)s)
    AND (v.valid_until IS NULL OR v.valid_until > %(now)s)
"""
_PG_RANK = "ts_rank_cd(v.search_vector, to_tsquery('simple'::regconfig, %(any)s))"

# Each branch reads, filters and ranks its rows in one heap visit (no second lookup by id); the
# second branch skips what the first one already holds, so the two never overlap.
_PG_ALL = f"""
(SELECT {_COLUMNS}, {_PG_RANK} AS rank FROM knowledge_entryversion v
 WHERE v.search_vector @@ to_tsquery('simple'::regconfig, %(all)s) AND {_PG_FILTER}
 LIMIT %(cap)s)
"""
_PG_RARE = f"""
(SELECT {_COLUMNS}, {_PG_RANK} AS rank FROM knowledge_entryversion v
 WHERE v.search_vector @@ to_tsquery('simple'::regconfig, %(rare)s)
   AND NOT v.search_vector @@ to_tsquery('simple'::regconfig, %(all)s) AND {_PG_FILTER}
 LIMIT %(cap)s)
"""
_PG_SQL = {
    either: "SELECT * FROM (" + branches + ") c ORDER BY c.rank DESC, c.id LIMIT %(limit)s"
    for either, branches in ((True, _PG_ALL + " UNION ALL " + _PG_RARE), (False, _PG_ALL))
}

# Terms in more than this share of all versions are too common to collect candidates by on
# their own (their posting lists grow with the table); they still count for ranking.
COMMON_SHARE = 0.01
# … and only when that share is many rows: in a small knowledge base every term is "common" by
# share, yet collecting candidates by any of them costs nothing.
COMMON_MIN_ROWS = 1000
_common: dict[str, Any] = {"at": 0.0, "terms": frozenset()}


def common_terms() -> frozenset[str]:
    """Very frequent terms, from PostgreSQL's own statistics of the tsvector column (refreshed
    by ANALYZE/autovacuum; read at most once a minute per process)."""
    now = time.monotonic()
    if now - _common["at"] > 60:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT s.most_common_elems::text::text[], s.most_common_elem_freqs, c.reltuples FROM pg_stats s "
                "JOIN pg_class c ON c.relname = s.tablename AND c.relkind = 'r' "
                "WHERE s.tablename = 'knowledge_entryversion' AND s.attname = 'search_vector'"
            )
            row = cursor.fetchone()
        terms: frozenset[str] = frozenset()
        if row and row[0]:
            rows = max(float(row[2] or 0), 0.0)
            # most_common_elem_freqs is longer than most_common_elems: PostgreSQL appends the
            # lowest and highest frequency (and, for arrays, that of nulls).  Pairing stops at
            # the last element on purpose.
            terms = frozenset(
                term
                for term, freq in zip(row[0], row[1], strict=False)
                if freq is not None and freq > COMMON_SHARE and freq * rows > COMMON_MIN_ROWS
            )
        _common.update(at=now, terms=terms)
    return _common["terms"]


_SQLITE_SQL = f"""
SELECT {_COLUMNS}
FROM knowledge_fts f
JOIN knowledge_entryversion v ON v.id = f.rowid
WHERE knowledge_fts MATCH %s
  AND v.agent_id = %s
  AND {{visible}}
  AND (v.valid_from IS NULL OR v.valid_from <= %s)
  AND (v.valid_until IS NULL OR v.valid_until > %s)
ORDER BY bm25(knowledge_fts), v.id
LIMIT %s
"""


def search_sql(*, agent_id: int, terms: list[str], audience: Audience, now: dt.datetime, limit: int) -> tuple[str, Any]:
    """The one query a search issues (also measured bare by bench/knowledge.py)."""
    visible = _SERVED_OR_PENDING if audience == Audience.OWNER else _SERVED
    if connection.vendor == "postgresql":
        common = common_terms()
        rare = [term for term in terms if term not in common]
        # Only the rarer terms collect any-term candidates; when every term is common (or there
        # is just one term) the all-terms branch is the whole query.
        either = len(terms) > 1 and bool(rare)
        params = {
            "all": " & ".join(terms),
            "any": " | ".join(terms),
            "agent": agent_id,
            "now": now,
            "cap": CANDIDATES,
            "limit": limit,
        }
        if either:
            params["rare"] = " | ".join(rare)
        return _PG_SQL[either].format(visible=visible), params
    match = " OR ".join(f'"{term}"' for term in terms)
    return _SQLITE_SQL.format(visible=visible), [match, agent_id, now, now, limit]


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
    """Knowledge of this agent that matches the query, best first (versions holding more of the
    terms, closer together, rank higher).

    Customers and peers get only approved versions that take effect and are valid now (an
    entry past `valid_until` is never served, whether or not a job has marked it expired);
    owners also get pending versions.  One query, filtered by agent inside the index scan."""
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
