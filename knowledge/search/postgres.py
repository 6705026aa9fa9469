"""Knowledge search on PostgreSQL: a GIN index over a stored tsvector, ranked by cover density.

How it indexes: `knowledge/migrations/0003_search_vector.py` adds `search_vector`, a stored
generated column `to_tsvector('simple', search_text)` (the 'simple' configuration: no stemming
and no stop words of its own; `knowledge/text.py` already dropped English stop words and cut
Chinese into character bigrams), and the GIN index `knowledge_version_fts` over it, without
`fastupdate` (knowledge is read far more often than written, and a pending list would be
scanned by every search until a vacuum merged it).  The column follows every insert by itself;
nothing in Python keeps it up to date.

How it ranks: one statement collects candidates in at most two branches and ranks them with
`ts_rank_cd` against the any-term query (versions holding more of the terms, closer together,
rank higher; ties by id):

1. versions holding every term, at most `CANDIDATES`;
2. when there are several terms and some are not very common, versions holding any of the rarer
   terms and not all of them, at most `CANDIDATES` again.

Each branch filters by agent, audience and validity inside the same heap visit that reads and
ranks the row, so a search costs about the same however many entries the agent or the other
tenants have.  "Very common" comes from PostgreSQL's own statistics of `search_vector`
(`pg_stats.most_common_elems`, refreshed by ANALYZE/autovacuum): terms in more than
`COMMON_SHARE` of all versions, and in more than `COMMON_MIN_ROWS` of them, do not collect
candidates on their own.  Those statistics are read at most once a minute per process and kept
in one slot (`reset` empties it).

What it cannot do: no stemming and no synonyms (words match as written, lowercased; Chinese by
bigrams).  The candidate cap means a query of only very common words ranks the first
`CANDIDATES` matches in table order, and can miss a better-ranked version outside them; the
connection's `gin_fuzzy_search_limit` (FACADE_GIN_SEARCH_LIMIT) is a further soft cap on what
one index scan collects.  Until the table has been analysed no term counts as common.
"""

from __future__ import annotations

import time
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper

from .base import COLUMNS, SearchBackend, SearchQuery, visible

# How many matches are ranked at most.  Versions holding every term come first; the rest are
# filled with versions holding any of the rarer terms.  Bounding the set keeps a query on
# common words from ranking (and fetching) thousands of rows, so the cost of a search does not
# grow with the number of entries that happen to match.
CANDIDATES = 64

# Terms in more than this share of all versions are too common to collect candidates by on
# their own (their posting lists grow with the table); they still count for ranking.
COMMON_SHARE = 0.01
# … and only when that share is many rows: in a small knowledge base every term is "common" by
# share, yet collecting candidates by any of them costs nothing.
COMMON_MIN_ROWS = 1000
# Seconds the common terms are kept before the statistics are read again.
COMMON_TTL = 60.0

# `agent_id + 0` on purpose: with a plain `agent_id =` the planner ANDs the GIN bitmap with a
# bitmap of *every* version of the agent from the foreign-key index, which costs as much as the
# agent has versions; filtering the GIN matches by agent inside the same heap scan keeps the
# cost flat as the tables grow.
_FILTER = """
    v.agent_id + 0 = %(agent)s AND {visible}
    AND (v.valid_from IS NULL OR v.valid_from <= %(now)s)
    AND (v.valid_until IS NULL OR v.valid_until > %(now)s)
"""
_RANK = "ts_rank_cd(v.search_vector, to_tsquery('simple'::regconfig, %(any)s))"

# Each branch reads, filters and ranks its rows in one heap visit (no second lookup by id); the
# second branch skips what the first one already holds, so the two never overlap.
_ALL = f"""
(SELECT {COLUMNS}, {_RANK} AS rank FROM knowledge_entryversion v
 WHERE v.search_vector @@ to_tsquery('simple'::regconfig, %(all)s) AND {_FILTER}
 LIMIT %(cap)s)
"""
_RARE = f"""
(SELECT {COLUMNS}, {_RANK} AS rank FROM knowledge_entryversion v
 WHERE v.search_vector @@ to_tsquery('simple'::regconfig, %(rare)s)
   AND NOT v.search_vector @@ to_tsquery('simple'::regconfig, %(all)s) AND {_FILTER}
 LIMIT %(cap)s)
"""
_SQL = {
    either: "SELECT * FROM (" + branches + ") c ORDER BY c.rank DESC, c.id LIMIT %(limit)s"
    for either, branches in ((True, _ALL + " UNION ALL " + _RARE), (False, _ALL))
}

_STATS = (
    "SELECT s.most_common_elems::text::text[], s.most_common_elem_freqs, c.reltuples FROM pg_stats s "
    "JOIN pg_class c ON c.relname = s.tablename AND c.relkind = 'r' "
    "WHERE s.tablename = 'knowledge_entryversion' AND s.attname = 'search_vector'"
)
_COLUMN = (
    "SELECT a.attgenerated FROM pg_attribute a "
    "WHERE a.attrelid = to_regclass('knowledge_entryversion') AND a.attname = 'search_vector' AND NOT a.attisdropped"
)
_INDEX = (
    "SELECT i.indexdef FROM pg_indexes i "
    "WHERE i.schemaname = current_schema() AND i.tablename = 'knowledge_entryversion' "
    "AND i.indexname = 'knowledge_version_fts'"
)


class PostgresSearch(SearchBackend):
    vendor = "postgresql"
    check_id = "knowledge.E002"
    repair_hint = (
        "Knowledge search needs the generated column knowledge_entryversion.search_vector and its GIN "
        "index knowledge_version_fts; recreate them with the statements of "
        "knowledge/migrations/0003_search_vector.py (PG_FORWARD)."
    )

    def __init__(self) -> None:
        # One slot: (database alias, monotonic time read, common terms).  A process searches one
        # database; a second alias simply takes the slot over.
        self._common: tuple[str, float, frozenset[str]] | None = None

    def reset(self) -> None:
        self._common = None

    def common_terms(self, connection: BaseDatabaseWrapper) -> frozenset[str]:
        """Very frequent terms, from PostgreSQL's own statistics of the tsvector column
        (refreshed by ANALYZE/autovacuum; read at most once every `COMMON_TTL` seconds)."""
        now = time.monotonic()
        held = self._common
        if held is not None and held[0] == connection.alias and now - held[1] <= COMMON_TTL:
            return held[2]
        with connection.cursor() as cursor:
            cursor.execute(_STATS)
            row = cursor.fetchone()
        terms: frozenset[str] = frozenset()
        if row and row[0]:
            rows = max(float(row[2] or 0), 0.0)
            terms = frozenset(
                term
                # The frequencies run three longer than the elements (minimum, maximum, nulls).
                for term, freq in zip(row[0], row[1], strict=False)
                if freq is not None and freq > COMMON_SHARE and freq * rows > COMMON_MIN_ROWS
            )
        self._common = (connection.alias, now, terms)
        return terms

    def sql(self, query: SearchQuery, connection: BaseDatabaseWrapper) -> tuple[str, Any]:
        terms = query.terms
        common = self.common_terms(connection)
        rare = [term for term in terms if term not in common]
        # Only the rarer terms collect any-term candidates; when every term is common (or there
        # is just one term) the all-terms branch is the whole query.
        either = len(terms) > 1 and bool(rare)
        params = {
            "all": " & ".join(terms),
            "any": " | ".join(terms),
            "agent": query.agent_id,
            "now": query.now,
            "cap": CANDIDATES,
            "limit": query.limit,
        }
        if either:
            params["rare"] = " | ".join(rare)
        return _SQL[either].format(visible=visible(query.audience)), params

    def missing(self, connection: BaseDatabaseWrapper) -> list[str]:
        absent = []
        with connection.cursor() as cursor:
            cursor.execute(_COLUMN)
            column = cursor.fetchone()
            cursor.execute(_INDEX)
            index = cursor.fetchone()
        # A plain (not generated) column of that name would never be filled in.
        if column is None or column[0] != "s":
            absent.append("column knowledge_entryversion.search_vector (stored, generated)")
        if index is None or "search_vector" not in index[0]:
            absent.append("GIN index knowledge_version_fts on search_vector")
        return absent
