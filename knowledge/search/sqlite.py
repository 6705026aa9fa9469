"""Knowledge search on SQLite (the embedded default): an FTS5 table, ranked by BM25.

How it indexes: `knowledge/migrations/0002_search_index.py` creates `knowledge_fts`, an FTS5
table with external content (`content='knowledge_entryversion'`, so the text is not stored
twice) over `search_text`, and the trigger `knowledge_fts_insert` that adds every new version
to it.  Versions never change their text once written (only their status and validity move),
so inserts are the only thing the index has to follow.  FTS5's default tokenizer keeps a CJK
bigram of `knowledge/text.py` as one token, so Chinese matches by bigram as on PostgreSQL.

How it ranks: every version holding any of the terms (each term quoted, joined by OR) is
joined back to its row, filtered by agent, audience and validity, and ordered by FTS5's
`bm25()` (ties by id).  BM25 weighs how rare a term is and how often it occurs; unlike
PostgreSQL's cover density it does not reward terms standing close together, so the two
backends may order the same matches differently.

What it cannot do: there is no candidate cap and the agent filter is not part of the index, so
a search reads every version, of any tenant, that holds any of the terms, and ranks all of the
agent's — cheap for the one-machine installs the embedded default is for, not for a large
shared database (use PostgreSQL there).  No stemming and no synonyms.  SQLite rebuilds a table for many schema
changes and drops its triggers on the way: a later migration that alters
knowledge_entryversion must create `knowledge_fts_insert` again, or new versions are silently
left out of search; the system check `knowledge.E001` refuses to start without it.
"""

from __future__ import annotations

from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper

from .base import COLUMNS, SearchBackend, SearchQuery, visible

_SQL = f"""
SELECT {COLUMNS}
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

# What the migration creates: (sqlite_master type, name, table it belongs to).
_OBJECTS = (
    ("table", "knowledge_fts", "knowledge_fts"),
    ("trigger", "knowledge_fts_insert", "knowledge_entryversion"),
)


class SqliteSearch(SearchBackend):
    vendor = "sqlite"
    check_id = "knowledge.E001"
    repair_hint = (
        "Knowledge search needs the FTS5 table knowledge_fts and the trigger knowledge_fts_insert on "
        "knowledge_entryversion; a migration that rebuilt knowledge_entryversion must create the trigger "
        "again (see knowledge/migrations/0002_search_index.py), then "
        "INSERT INTO knowledge_fts(knowledge_fts) VALUES('rebuild') indexes the versions written without it."
    )

    def sql(self, query: SearchQuery, connection: BaseDatabaseWrapper) -> tuple[str, Any]:
        match = " OR ".join(f'"{term}"' for term in query.terms)
        now = query.now
        return _SQL.format(visible=visible(query.audience)), [match, query.agent_id, now, now, query.limit]

    def missing(self, connection: BaseDatabaseWrapper) -> list[str]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT type, name, tbl_name FROM sqlite_master WHERE type IN ('table', 'trigger')")
            present = {tuple(row) for row in cursor.fetchall()}
        return [f"{kind} {name}" for kind, name, table in _OBJECTS if (kind, name, table) not in present]
