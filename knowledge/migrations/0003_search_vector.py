"""PostgreSQL search: a stored tsvector (no re-parsing to rank) and a GIN index over it without
`fastupdate`: knowledge is read far more often than written, and a pending list would be
scanned linearly by every search until a vacuum merged it."""

from django.db import migrations

PG_FORWARD = [
    "DROP INDEX IF EXISTS knowledge_version_fts",
    "ALTER TABLE knowledge_entryversion ADD COLUMN search_vector tsvector "
    "GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, search_text)) STORED",
    "CREATE INDEX knowledge_version_fts ON knowledge_entryversion USING gin (search_vector) WITH (fastupdate = off)",
]
PG_BACKWARD = [
    "DROP INDEX IF EXISTS knowledge_version_fts",
    "ALTER TABLE knowledge_entryversion DROP COLUMN IF EXISTS search_vector",
    "CREATE INDEX knowledge_version_fts ON knowledge_entryversion USING gin (to_tsvector('simple'::regconfig, search_text))",
]


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            for statement in PG_FORWARD:
                cursor.execute(statement)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            for statement in PG_BACKWARD:
                cursor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0002_search_index")]
    operations = [migrations.RunPython(forward, backward)]
