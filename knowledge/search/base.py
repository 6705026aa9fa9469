"""What a knowledge-search backend must provide.

A backend finds the versions of one agent's knowledge that match a list of search terms, on one
database vendor.  `knowledge.selectors.knowledge_search` picks the backend of the connection's
vendor (`knowledge.search.backend_for`), issues the one statement the backend writes, and turns
its rows into results; the terms, the snippets and the result type are the same for every
backend.  Both backends index `EntryVersion.search_text` (words, and CJK character bigrams, from
`knowledge/text.py`), never the raw title or body.

Writing a backend means subclassing `SearchBackend` and implementing its three abstract members
(`vendor`, `sql`, `missing`); `reset` has a default for backends that keep nothing in memory.
The index itself is created by a migration (`knowledge/migrations/`), and `missing` is what the
system check in `knowledge/checks.py` asks to tell an intact index from a broken one.
"""

from __future__ import annotations

import abc
import datetime as dt
from dataclasses import dataclass
from typing import Any, ClassVar

from django.db.backends.base.base import BaseDatabaseWrapper

from facade.tenancy.rules import Audience

# The columns every backend's statement returns first, in this order (a backend may add more
# after them, e.g. its rank); `knowledge_search` unpacks them by position.
COLUMNS = (
    "v.id, v.entry_id, v.number, v.title, v.body, v.status, v.source_type, v.source_ref, v.source_version, "
    "v.translations"
)

# Customers and peers see the version that takes effect; owners also see what waits for them.
SERVED = "(v.served AND v.status = 'approved')"
SERVED_OR_PENDING = "(" + SERVED + " OR v.status = 'pending')"


def visible(audience: Audience) -> str:
    """The SQL condition on `v` (knowledge_entryversion) for what this audience may see."""
    return SERVED_OR_PENDING if audience == Audience.OWNER else SERVED


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """One search, already cut into terms: what a backend turns into SQL.

    `terms` are distinct and non-empty (`knowledge.text.query_terms`); `limit` is already
    clamped; `now` decides the validity window (`valid_from <= now < valid_until`)."""

    agent_id: int
    terms: list[str]
    audience: Audience
    now: dt.datetime
    limit: int


class SearchBackend(abc.ABC):
    """Full-text search over knowledge versions on one database vendor.

    A backend must implement:

    - `vendor`: the Django connection vendor it serves (`connection.vendor`).
    - `sql(query, connection)`: the one statement a search issues and its parameters.  Its rows
      start with `COLUMNS`, best match first, at most `query.limit` of them, only versions of
      `query.agent_id` that `visible(query.audience)` allows and that are valid at `query.now`
      (a version past `valid_until` is never returned, whether or not it has been marked
      expired).  Building the statement may read the database (e.g. statistics), but the
      statement itself must be read-only.
    - `missing(connection)`: the names of the database objects the backend needs that are not
      there (empty when the index is intact).  It is only asked once the knowledge app's
      migrations have all run.

    and may override:

    - `reset()`: forget whatever the backend keeps in memory between searches.  Anything it
      keeps must be bounded and emptied by `reset`.
    """

    vendor: ClassVar[str]
    # The system check's error id and a hint on how to repair the index.
    check_id: ClassVar[str]
    repair_hint: ClassVar[str]

    @abc.abstractmethod
    def sql(self, query: SearchQuery, connection: BaseDatabaseWrapper) -> tuple[str, Any]:
        """The statement for `query` and its parameters, for `connection.cursor().execute`."""

    @abc.abstractmethod
    def missing(self, connection: BaseDatabaseWrapper) -> list[str]:
        """What of the search index is not in the database `connection` points at."""

    def reset(self) -> None:  # noqa: B027  (optional on purpose: most backends keep nothing)
        """Forget what is kept in memory (nothing, unless a backend says otherwise)."""
