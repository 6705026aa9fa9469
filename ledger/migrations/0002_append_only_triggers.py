"""Append-only by the database: UPDATE and DELETE on ledger_event are refused by a trigger."""

from django.db import migrations

PG_FORWARD = """
CREATE OR REPLACE FUNCTION ledger_event_refuse_change() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'ledger_event is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$ LANGUAGE plpgsql;
CREATE TRIGGER ledger_event_append_only
    BEFORE UPDATE OR DELETE ON ledger_event
    FOR EACH ROW EXECUTE FUNCTION ledger_event_refuse_change();
"""
PG_BACKWARD = """
DROP TRIGGER IF EXISTS ledger_event_append_only ON ledger_event;
DROP FUNCTION IF EXISTS ledger_event_refuse_change();
"""
SQLITE_FORWARD = [
    "CREATE TRIGGER ledger_event_no_update BEFORE UPDATE ON ledger_event "
    "BEGIN SELECT RAISE(ABORT, 'ledger_event is append-only: UPDATE refused'); END;",
    "CREATE TRIGGER ledger_event_no_delete BEFORE DELETE ON ledger_event "
    "BEGIN SELECT RAISE(ABORT, 'ledger_event is append-only: DELETE refused'); END;",
]
SQLITE_BACKWARD = ["DROP TRIGGER IF EXISTS ledger_event_no_update;", "DROP TRIGGER IF EXISTS ledger_event_no_delete;"]


def forward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(PG_FORWARD)
    elif vendor == "sqlite":
        for statement in SQLITE_FORWARD:
            schema_editor.execute(statement)
    else:
        raise RuntimeError(f"no append-only trigger for database vendor {vendor!r}")


def backward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(PG_BACKWARD)
    elif vendor == "sqlite":
        for statement in SQLITE_BACKWARD:
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("ledger", "0001_initial")]
    operations = [migrations.RunPython(forward, backward)]
