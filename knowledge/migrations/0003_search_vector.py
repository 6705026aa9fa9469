"""PostgreSQL search: a stored tsvector and one GIN index over (agent, terms), so the agent
filter runs inside the index scan (btree_gin) instead of after it."""

from django.db import migrations

PG_FORWARD = [
    "CREATE EXTENSION IF NOT EXISTS btree_gin",
    "DROP INDEX IF EXISTS knowledge_version_fts",
    "ALTER TABLE knowledge_entryversion ADD COLUMN search_vector tsvector "
    "GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, search_text)) STORED",
    "CREATE INDEX knowledge_version_fts ON knowledge_entryversion USING gin (agent_id, search_vector)",
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
