"""Full-text search over version terms: a GIN index on PostgreSQL, an FTS5 table on SQLite.

On SQLite the FTS table is fed by a trigger on knowledge_entryversion.  SQLite migrations that
alter that table rebuild it and drop its triggers: any later migration that does so must
create the trigger again (the system check knowledge.E001 and tests/test_search_backends.py
fail otherwise)."""

from django.db import migrations

PG_FORWARD = (
    "CREATE INDEX knowledge_version_fts ON knowledge_entryversion "
    "USING gin (to_tsvector('simple'::regconfig, search_text))"
)
PG_BACKWARD = "DROP INDEX IF EXISTS knowledge_version_fts"
SQLITE_FORWARD = [
    "CREATE VIRTUAL TABLE knowledge_fts USING fts5(search_text, content='knowledge_entryversion', content_rowid='id')",
    "CREATE TRIGGER knowledge_fts_insert AFTER INSERT ON knowledge_entryversion BEGIN "
    "INSERT INTO knowledge_fts(rowid, search_text) VALUES (new.id, new.search_text); END",
]
SQLITE_BACKWARD = ["DROP TRIGGER IF EXISTS knowledge_fts_insert", "DROP TABLE IF EXISTS knowledge_fts"]


def forward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    statements = [PG_FORWARD] if vendor == "postgresql" else SQLITE_FORWARD if vendor == "sqlite" else None
    if statements is None:
        raise RuntimeError(f"no knowledge search index for database vendor {vendor!r}")
    with schema_editor.connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def backward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    statements = [PG_BACKWARD] if vendor == "postgresql" else SQLITE_BACKWARD
    with schema_editor.connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0001_initial")]
    operations = [migrations.RunPython(forward, backward)]
