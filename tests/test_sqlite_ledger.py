"""The embedded default keeps the same guarantees on SQLite: triggers refuse UPDATE/DELETE,
and `ledger_verify` finds a changed byte."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from embedded import manage

pytestmark = pytest.mark.slow


def test_sqlite_ledger_is_append_only_and_verifiable(tmp_path: Path) -> None:
    manage(tmp_path, "migrate", "--noinput")
    manage(tmp_path, "seed_demo")
    report = json.loads(manage(tmp_path, "ledger_verify").stdout)
    assert report["ok"] is True and report["checked"] >= 5

    db = sqlite3.connect(tmp_path / "facade.sqlite3")
    for statement in ("UPDATE ledger_event SET mac = x'00' WHERE seq = 2", "DELETE FROM ledger_event WHERE seq = 2"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            db.execute(statement)
    db.execute("DROP TRIGGER ledger_event_no_update")
    canonical = db.execute("SELECT canonical FROM ledger_event WHERE seq = 2").fetchone()[0]
    db.execute("UPDATE ledger_event SET canonical = ? WHERE seq = 2", [canonical.replace('"platform"', '"human"')])
    db.commit()
    db.close()

    failed = manage(tmp_path, "ledger_verify", check=False)
    assert failed.returncode == 1
    result = json.loads(failed.stdout)
    assert (result["ok"], result["first_bad_seq"], result["reason"]) == (False, 2, "hash_mismatch")
