"""Knowledge search backends, one per database vendor (see `base.SearchBackend`).

`knowledge.selectors.knowledge_search` is the way in; this package only says how each database
finds and ranks versions: `postgres.PostgresSearch` (GIN over a stored tsvector) and
`sqlite.SqliteSearch` (FTS5, the embedded default).
"""

from __future__ import annotations

from types import MappingProxyType

from django.core.exceptions import ImproperlyConfigured
from django.db.backends.base.base import BaseDatabaseWrapper

from .base import SearchBackend, SearchQuery
from .postgres import PostgresSearch
from .sqlite import SqliteSearch

# One instance per vendor for the whole process (a backend keeps at most a bounded memo).
BACKENDS: MappingProxyType[str, SearchBackend] = MappingProxyType(
    {backend.vendor: backend for backend in (PostgresSearch(), SqliteSearch())}
)


def backend_for(connection: BaseDatabaseWrapper) -> SearchBackend:
    """The backend for the connection's database vendor; any other vendor is refused."""
    try:
        return BACKENDS[connection.vendor]
    except KeyError:
        raise ImproperlyConfigured(f"no knowledge search backend for database vendor {connection.vendor!r}") from None


def search_backends_reset() -> None:
    """Empty what every backend keeps in memory (tests; after restoring a database)."""
    for backend in BACKENDS.values():
        backend.reset()


__all__ = ["BACKENDS", "SearchBackend", "SearchQuery", "backend_for", "search_backends_reset"]
