"""System check: the knowledge search index is there once the knowledge migrations have run.

A missing index does not fail loudly by itself: on SQLite a schema change that rebuilds
knowledge_entryversion drops the trigger feeding the FTS table, and every version written
afterwards is silently absent from search; on PostgreSQL a search without `search_vector`
fails on every question.  So this check is an Error, and `manage.py check`, `runserver` and
`migrate` refuse to go on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.checks import CheckMessage, Error, Tags, register
from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError, connections
from django.db.migrations.loader import MigrationLoader

from .search import backend_for


@register(Tags.database)
def search_index_check(
    app_configs: Sequence[Any] | None = None, databases: Sequence[str] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """An Error per database whose search index is incomplete.

    Django passes `databases` only to `migrate` and `check --database`; without it the default
    database is looked at anyway (a few catalogue reads at start-up), because that is the one a
    `runserver` or a plain `check` is about to serve.  A database that cannot be reached is left
    to the commands that need it.  So is one with knowledge migrations still to run: `migrate`
    runs this check before migrating, and a pending migration may be the one that builds (or
    repairs) the index."""
    errors: list[CheckMessage] = []
    for alias in databases if databases is not None else ["default"]:
        connection = connections[alias]
        try:
            backend = backend_for(connection)
        except ImproperlyConfigured as exc:
            errors.append(Error(str(exc), hint="Use PostgreSQL or SQLite.", id="knowledge.E003"))
            continue
        try:
            loader = MigrationLoader(connection, ignore_no_migrations=True)
            if not {key for key in loader.graph.nodes if key[0] == "knowledge"} <= set(loader.applied_migrations):
                continue
            absent = backend.missing(connection)
        except DatabaseError:
            continue
        if absent:
            errors.append(
                Error(
                    f"The knowledge search index of database {alias!r} is incomplete: {', '.join(absent)} missing.",
                    hint=backend.repair_hint,
                    id=backend.check_id,
                )
            )
    return errors
