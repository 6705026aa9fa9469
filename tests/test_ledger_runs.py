"""Verification runs over many chains (`manage.py ledger_verify`, the nightly task, the API):
a chain that is not sound is reported on its own — a forged tail included — and never stops
the others from being verified and checkpointed."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from ledger import audit
from ledger.canonical import chain_hash
from ledger.services import LedgerError, checkpoint_path, load_checkpoints
from ledger.tasks import ledger_verify_all

pytestmark = pytest.mark.django_db


def forge_event(chain_id: int) -> int:
    """Append one event the way someone with the database but without the key would: link and
    SHA-256 right, the keyed tag made up.  Returns its seq."""
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE ledger_event DISABLE TRIGGER ledger_event_append_only")
        cursor.execute(
            "SELECT seq, canonical, hash FROM ledger_event WHERE chain_id = %s ORDER BY seq DESC LIMIT 1", [chain_id]
        )
        seq, canonical, head = cursor.fetchone()
        doc = json.loads(canonical)
        doc.update(seq=seq + 1, actor_id="user:forger")
        body = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        digest = chain_hash(bytes(head), body.encode())
        cursor.execute(
            "INSERT INTO ledger_event (chain_id, seq, canonical, prev_hash, hash, mac) VALUES (%s, %s, %s, %s, %s, %s)",
            [chain_id, seq + 1, body, bytes(head), digest, b"\x00" * 32],
        )
        cursor.execute(
            "UPDATE ledger_chain SET size = %s, head_hash = %s WHERE chain_id = %s", [seq + 1, digest, chain_id]
        )
    return int(seq + 1)


def verify_all() -> tuple[int | None, list[dict[str, Any]]]:
    out = io.StringIO()
    code: int | None = 0
    try:
        call_command("ledger_verify", stdout=out)
    except SystemExit as exc:
        code = exc.code  # type: ignore[assignment]
    return code, [json.loads(line) for line in out.getvalue().splitlines()]


def test_a_forged_tail_is_reported_and_the_other_chains_are_checkpointed(world_a: Any, world_b: Any) -> None:
    forged = forge_event(world_b.tenant.pk)
    code, lines = verify_all()
    assert code == 1
    by_tenant = {line["tenant"]: line for line in lines}
    assert set(by_tenant) == {"alpha", "bravo"}  # one JSON line per chain
    assert by_tenant["alpha"]["ok"] and by_tenant["alpha"]["checkpoint"] is not None
    bad = by_tenant["bravo"]
    assert (bad["ok"], bad["first_bad_seq"], bad["reason"], bad["checkpoint"]) == (False, forged, "bad_tag", None)
    assert len(load_checkpoints(world_a.tenant.pk)) == 1 and load_checkpoints(world_b.tenant.pk) == []


def test_a_refused_checkpoint_is_a_failed_line_not_a_crash(
    world_a: Any, world_b: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever makes signing refuse (here: told to), the run reports it for that chain and goes on."""
    issue = audit.checkpoint_issue

    def refuse_bravo(*, chain_id: int, **kwargs: Any) -> Any:
        if chain_id == world_b.tenant.pk:
            raise LedgerError("refusing to sign a checkpoint: event 3 does not carry this ledger's tag")
        return issue(chain_id=chain_id, **kwargs)

    monkeypatch.setattr(audit, "checkpoint_issue", refuse_bravo)
    code, lines = verify_all()
    assert code == 1
    by_tenant = {line["tenant"]: line for line in lines}
    assert by_tenant["alpha"]["ok"] and by_tenant["alpha"]["checkpoint"] is not None
    assert (by_tenant["bravo"]["ok"], by_tenant["bravo"]["reason"]) == (False, "checkpoint_refused")
    assert "event 3" in by_tenant["bravo"]["detail"]
    assert ledger_verify_all() == {"alpha": True, "bravo": False}


def test_the_nightly_task_checkpoints_the_sound_chains_past_a_forged_one(world_a: Any, world_b: Any) -> None:
    forge_event(world_a.tenant.pk)
    assert ledger_verify_all() == {"alpha": False, "bravo": True}
    assert load_checkpoints(world_a.tenant.pk) == [] and len(load_checkpoints(world_b.tenant.pk)) == 1


def test_the_verify_api_reports_a_forged_tail(world_a: Any, api: Any) -> None:
    api.force_authenticate(world_a.owner)
    assert api.get("/api/ledger/verify", {"tenant": "alpha"}).json()["ok"] is True
    forged = forge_event(world_a.tenant.pk)
    body = api.get("/api/ledger/verify", {"tenant": "alpha"}).json()
    assert (body["ok"], body["first_bad_seq"], body["reason"]) == (False, forged, "bad_tag")
    refused = api.post("/api/ledger/checkpoints?tenant=alpha")
    assert (refused.status_code, refused.json()["error"]) == (409, "chain_not_sound")


def test_an_unreadable_local_checkpoint_file_fails_verification_not_the_server(world_a: Any, api: Any) -> None:
    path = checkpoint_path(world_a.tenant.pk)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("not a checkpoint\n", encoding="utf-8")
    api.force_authenticate(world_a.owner)
    body = api.get("/api/ledger/verify", {"tenant": "alpha"}).json()
    assert (body["ok"], body["reason"]) == (False, "checkpoint_file_invalid")
    code, lines = verify_all()
    assert code == 1
    assert [(line["tenant"], line["ok"], line["reason"]) for line in lines] == [
        ("alpha", False, "checkpoint_file_invalid")
    ]


def test_a_checkpoint_file_given_on_the_command_line_must_hold_checkpoints(world_a: Any, tmp_path: Any) -> None:
    held = tmp_path / "held.jsonl"
    held.write_text('{"chain": 1}\n', encoding="utf-8")
    with pytest.raises(CommandError, match="no checkpoint"):
        call_command("ledger_verify", "--checkpoint", str(held), stdout=io.StringIO())
