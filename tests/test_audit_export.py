"""The auditor console's verification page and verifiable export (issue 14).

An export downloaded through the API is checked by `tools/verify_export.py`, run as a separate
`python -I` process with nothing but the standard library: an untouched export is accepted, and
each mutation of the ledger tests' catalogue (tests/test_ledger.py) — applied to the file, or to
the database before the export, whichever the mutation means — is rejected at the right seq."""

from __future__ import annotations

import ast
import base64
import datetime as dt
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.db import connection
from django.http import StreamingHttpResponse
from django.test import Client

from audit.services import access_record
from conftest import TenantWorld
from ledger.keys import ledger_keys
from ledger.models import LedgerEvent
from ledger.services import checkpoint_issue, load_checkpoints

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "verify_export.py"
HASH_PREFIX = b"facade-ledger-v1\x00"


def tool_module() -> Any:
    spec = importlib.util.spec_from_file_location("verify_export", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def public_key() -> str:
    return base64.b64encode(ledger_keys().public_raw).decode()


def grow(world: TenantWorld, n: int) -> None:
    """Lengthen the tenant's chain by `n` events (console views, recorded as audit.viewed)."""
    for i in range(n):
        access_record(tenant=world.tenant, reader=world.auditor, view="timeline", params={"page": i})


def export(api: Any, world: TenantWorld, **params: str) -> tuple[Any, list[dict[str, Any]]]:
    api.force_login(world.auditor)
    response = api.get("/api/audit/export", {"tenant": world.tenant.slug, **params})
    assert response.status_code == 200, response.content
    assert isinstance(response, StreamingHttpResponse)
    body = b"".join(response.streaming_content)
    return response, [json.loads(line) for line in body.decode("utf-8").splitlines()]


def run_tool(tmp_path: Path, lines: list[dict[str, Any]], key: str | None = None) -> tuple[int, str]:
    path = tmp_path / "export.jsonl"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-I", str(TOOL), "--public-key", key or public_key(), str(path)],
        capture_output=True,
        text=True,
        env={"PATH": os.environ.get("PATH", "")},
        timeout=60,
    )
    return done.returncode, done.stdout.strip()


def sql(statement: str, params: list[Any]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def as_attacker() -> None:
    sql("ALTER TABLE ledger_event DISABLE TRIGGER ledger_event_append_only", [])


def created_at(world: TenantWorld, seq: int) -> str:
    return json.loads(LedgerEvent.objects.get(chain_id=world.tenant.pk, seq=seq).canonical)["created_at"]


def rehash(events: list[dict[str, Any]], start: int) -> None:
    """Recompute hashes and links from index `start` on, as a forger who knows the hash rule."""
    prev = bytes.fromhex(events[start]["prev_hash"])
    for event in events[start:]:
        event["prev_hash"] = prev.hex()
        prev = hashlib.sha256(HASH_PREFIX + prev + event["canonical"].encode()).digest()
        event["hash"] = prev.hex()


# --- an untouched export ----------------------------------------------------------------------


def test_an_untouched_export_streams_and_verifies_offline(world_a: TenantWorld, api: Any, tmp_path: Path) -> None:
    grow(world_a, 12)
    response, lines = export(api, world_a)
    assert response["Content-Disposition"].startswith("attachment; filename=")
    assert response["Content-Type"].startswith("application/jsonl")
    header, events = lines[0], lines[1:]
    size = header["checkpoint"]["size"]
    assert header["kind"] == "facade-ledger-export" and header["version"] == 1
    assert (header["chain"], header["label"]) == (world_a.tenant.pk, "alpha")
    assert (header["first_seq"], header["last_seq"], header["chain_ok"]) == (1, size, True)
    assert [e["seq"] for e in events] == list(range(1, size + 1)) and all(e["in_range"] for e in events)
    assert "mac" not in events[0]
    stored = LedgerEvent.objects.get(chain_id=world_a.tenant.pk, seq=3)
    assert events[2]["canonical"] == stored.canonical and events[2]["hash"] == bytes(stored.hash).hex()
    assert load_checkpoints(world_a.tenant.pk)[-1].size == size  # signed for this export

    code, out = run_tool(tmp_path, lines)
    assert code == 0, out
    assert out.startswith(f"OK: {size} events (seq 1 to {size}) of chain {world_a.tenant.pk} (alpha)")

    # The export is recorded, after the events it handed out.
    recorded = LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).of_type("audit.exported").get()
    assert recorded.seq == size + 1 and recorded.entity_id == str(world_a.auditor.pk)
    assert recorded.payload == {"first_seq": 1, "last_seq": size, "events": size, "checkpoint_size": size}


def test_under_asgi_the_export_is_sent_chunk_by_chunk(world_a: TenantWorld, tmp_path: Path) -> None:
    """daphne serves the product: there Django would read a synchronous iterator whole before
    sending it, so the export hands it an asynchronous one."""
    from asgiref.sync import async_to_sync
    from django.test import AsyncClient

    grow(world_a, 5)
    client = AsyncClient()
    client.force_login(world_a.auditor)
    response = async_to_sync(client.get)("/api/audit/export", {"tenant": "alpha"})
    assert response.status_code == 200 and isinstance(response, StreamingHttpResponse) and response.is_async

    async def collect() -> list[bytes]:
        return [chunk async for chunk in response.streaming_content]

    chunks = async_to_sync(collect)()
    assert len(chunks) >= 2  # the header, then the events: not one body
    lines = [json.loads(line) for line in b"".join(chunks).decode("utf-8").splitlines()]
    assert run_tool(tmp_path, lines)[0] == 0


def test_a_time_range_maps_to_its_seqs_and_links_to_a_later_checkpoint(
    world_a: TenantWorld, api: Any, tmp_path: Path
) -> None:
    grow(world_a, 20)
    checkpoint = checkpoint_issue(chain_id=world_a.tenant.pk, label="alpha")
    grow(world_a, 3)  # after the checkpoint: not needed to cover the range
    start, end = created_at(world_a, 5), created_at(world_a, 12)
    _, lines = export(api, world_a, **{"from": start, "to": end})
    header, events = lines[0], lines[1:]
    assert (header["first_seq"], header["last_seq"], header["events"]) == (5, 11, 7)
    assert header["checkpoint"]["size"] == checkpoint.size and header["chain_ok"] is None  # a held one covers it
    assert [e["seq"] for e in events] == list(range(5, checkpoint.size + 1))
    assert [e["seq"] for e in events if e["in_range"]] == list(range(5, 12))
    assert len(load_checkpoints(world_a.tenant.pk)) == 1  # nothing new signed
    code, out = run_tool(tmp_path, lines)
    assert (code, out.split(" of chain")[0]) == (0, "OK: 7 events (seq 5 to 11)")

    # A date for `to` includes that whole day; a range after every event is empty.
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    _, lines = export(api, world_a, **{"from": today, "to": today})
    assert lines[0]["first_seq"] == 1
    _, lines = export(api, world_a, **{"from": "2999-01-01"})
    assert (lines[0]["first_seq"], lines[0]["last_seq"], lines[1:]) == (None, None, [])
    code, out = run_tool(tmp_path, lines)
    assert (code, out.split(" of chain")[0]) == (0, "OK: 0 events (the range is empty)")


@pytest.mark.parametrize(
    "params",
    [{"from": "yesterday"}, {"to": "2026-13-01"}, {"from": "2026-01-02", "to": "2026-01-01T00:00"}],
)
def test_bad_input_is_a_400_in_json(world_a: TenantWorld, api: Any, params: dict[str, str]) -> None:
    api.force_login(world_a.auditor)
    response = api.get("/api/audit/export", {"tenant": "alpha", **params})
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_range"
    assert not LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).of_type("audit.exported").exists()


def test_another_tenants_ledger_is_not_found(world_a: TenantWorld, world_b: TenantWorld, api: Any) -> None:
    api.force_login(world_b.auditor)
    assert api.get("/api/audit/export", {"tenant": "alpha"}).status_code == 404
    assert api.get("/audit/alpha/verification").status_code == 404
    assert api.get("/audit/alpha/export").status_code == 404
    assert api.post("/audit/alpha/verification/run").status_code == 404
    api.logout()
    assert api.get("/api/audit/export", {"tenant": "alpha"}).status_code in (401, 403)
    assert not LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).of_type("audit.verified").exists()


# --- mutations of the file ----------------------------------------------------------------------


def _altered_payload(events: list[dict[str, Any]]) -> int:
    doc = json.loads(events[3]["canonical"])
    doc["payload"]["forged"] = "yes"
    events[3]["canonical"] = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return 4


def _altered_hash(events: list[dict[str, Any]]) -> int:
    events[5]["hash"] = "01" * 32
    return 6


def _altered_link(events: list[dict[str, Any]]) -> int:
    events[5]["prev_hash"] = "01" * 32
    return 6


def _reordered(events: list[dict[str, Any]]) -> int:
    events[3], events[4] = events[4], events[3]
    return 4


def _dropped(events: list[dict[str, Any]]) -> int:
    del events[6]
    return 7


def _duplicated(events: list[dict[str, Any]]) -> int:
    events.insert(4, dict(events[4]))
    return 5


def _renumbered(events: list[dict[str, Any]]) -> int:
    events[2]["seq"] = 40
    return 3


FILE_MUTATIONS = {
    "altered payload": (_altered_payload, "hash_mismatch"),
    "altered hash": (_altered_hash, "hash_mismatch"),
    "altered link": (_altered_link, "broken_link"),
    "reordered": (_reordered, "missing_seq (found 5)"),
    "dropped": (_dropped, "missing_seq (found 8)"),
    "duplicated": (_duplicated, "duplicate_seq (found 5 again where 6 was due)"),
    "renumbered": (_renumbered, "missing_seq (found 40)"),
}


@pytest.mark.parametrize("mutation", FILE_MUTATIONS)
def test_a_mutated_file_is_rejected_at_its_seq(world_a: TenantWorld, api: Any, tmp_path: Path, mutation: str) -> None:
    grow(world_a, 10)
    _, lines = export(api, world_a)
    assert run_tool(tmp_path, lines)[0] == 0
    mutate, reason = FILE_MUTATIONS[mutation]
    events = lines[1:]
    seq = mutate(events)
    code, out = run_tool(tmp_path, [lines[0], *events])
    assert code == 1
    assert out.startswith(f"FAIL: seq {seq}: {reason}"), out


def test_a_truncated_tail_is_rejected_at_the_first_missing_seq(world_a: TenantWorld, api: Any, tmp_path: Path) -> None:
    grow(world_a, 10)
    start, end = created_at(world_a, 3), created_at(world_a, 6)
    checkpoint_issue(chain_id=world_a.tenant.pk, label="alpha")
    _, lines = export(api, world_a, **{"from": start, "to": end})
    size = lines[0]["checkpoint"]["size"]
    # Cut inside the tail (after the range): the range alone no longer reaches the signed head.
    assert run_tool(tmp_path, lines[:-3]) == (
        1,
        f"FAIL: seq {size - 2}: truncated (the export ends before the checkpoint's size)",
    )
    # Cut inside the range itself.
    code, out = run_tool(tmp_path, lines[:3])
    assert (code, out.split(" (")[0]) == (1, "FAIL: seq 5: missing_seq")


def test_a_forged_tail_with_recomputed_hashes_is_rejected(world_a: TenantWorld, api: Any, tmp_path: Path) -> None:
    grow(world_a, 10)
    _, lines = export(api, world_a)
    size = lines[0]["checkpoint"]["size"]
    events = [dict(e) for e in lines[1:]]
    # From seq 6 on, rewritten and hashed again: every link holds, the signed head does not.
    doc = json.loads(events[5]["canonical"])
    doc["actor_id"] = "user:forger"
    events[5]["canonical"] = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    rehash(events, 5)
    assert run_tool(tmp_path, [lines[0], *events]) == (
        1,
        f"FAIL: seq {size}: head_mismatch (not the head hash the checkpoint signed)",
    )
    # Events appended past the signed head, hashed right.
    extra = dict(events[-1], seq=size + 1, prev_hash=lines[-1]["hash"])
    extra["canonical"] = lines[-1]["canonical"].replace(f'"seq":{size},', f'"seq":{size + 1},')
    extra["hash"] = hashlib.sha256(
        HASH_PREFIX + bytes.fromhex(extra["prev_hash"]) + extra["canonical"].encode()
    ).hexdigest()
    code, out = run_tool(tmp_path, [*lines, extra])
    assert (code, out) == (1, f"FAIL: seq {size + 1}: beyond_checkpoint (an event past the checkpoint's size)")


def test_a_forged_checkpoint_or_another_key_is_rejected(world_a: TenantWorld, api: Any, tmp_path: Path) -> None:
    grow(world_a, 10)
    _, lines = export(api, world_a)
    header = lines[0]
    # Shorten the export and move the checkpoint back to match: the signed range still ends where it did.
    cut = 8
    forged = dict(header, last_seq=cut, checkpoint=dict(header["checkpoint"], size=cut, head_hash=lines[cut]["hash"]))
    assert run_tool(tmp_path, [forged, *lines[1 : cut + 1]]) == (
        1,
        f"FAIL: line 1: header_mismatch (last_seq says {cut}, the signed range {header['last_seq']})",
    )
    # A checkpoint changed where the range does not look: its own signature no longer holds.
    touched = dict(header, checkpoint=dict(header["checkpoint"], issued_at="2000-01-01T00:00:00.000000Z"))
    assert run_tool(tmp_path, [touched, *lines[1:]]) == (1, "FAIL: checkpoint: signature_invalid")
    # Re-signed by someone else's key, which the checkpoint and the range statement name as theirs.
    other = Ed25519PrivateKey.generate()
    raw = other.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    mine = dict(forged["checkpoint"], public_key=base64.b64encode(raw).decode(), key_id="forger")
    mine["signature"] = base64.b64encode(other.sign(tool_module().checkpoint_message(mine))).decode()
    statement = dict(header["range"], last_seq=cut, through=cut, head_hash=lines[cut]["hash"])
    statement.update(public_key=mine["public_key"], key_id="forger")
    statement["signature"] = base64.b64encode(other.sign(tool_module().range_message(statement))).decode()
    forged = dict(forged, checkpoint=mine, range=statement)
    code, out = run_tool(tmp_path, [forged, *lines[1 : cut + 1]])
    assert (code, out.split(" (")[0]) == (1, "FAIL: range: signed by another key")
    # A forged checkpoint under the real range statement is not the one the statement links to.
    code, out = run_tool(tmp_path, [dict(header, checkpoint=mine), *lines[1:]])
    assert (code, out) == (1, "FAIL: checkpoint: not the checkpoint the signed range is linked to")
    # ...and the forgery is accepted only by someone who trusts the forger's key.
    assert run_tool(tmp_path, [forged, *lines[1 : cut + 1]], key=mine["public_key"])[0] == 0
    assert run_tool(tmp_path, lines, key=mine["public_key"])[1].startswith("FAIL: range: signed by another key")


# --- mutations of the range: cut at either end, or relabelled (issue 28) -------------------------
# Each keeps every event's hash and link intact and moves the header to match: only the signed
# range statement tells the cut from the real thing.


def _head_cut(header: dict[str, Any], events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first five events cut, and the header's first_seq (and count) edited to match."""
    header.update(first_seq=6, events=header["events"] - 5)
    return events[5:]


def _tail_out_of_range(header: dict[str, Any], events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last five events of the range marked out of range, and the header's last_seq edited."""
    last = header["last_seq"]
    header.update(last_seq=last - 5, events=header["events"] - 5)
    for event in events:
        if event["seq"] > last - 5:
            event["in_range"] = False
    return events


def _relabelled(header: dict[str, Any], events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The label changed to another agent's (tenant's)."""
    header["label"] = "beta"
    return events


def _unsigned(header: dict[str, Any], events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The signed statement dropped, so that the header's own (cut) range would be believed."""
    del header["range"]
    header["first_seq"] = 6
    return events[5:]


def _statement_edited(header: dict[str, Any], events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first five cut, and the signed statement's own first_seq and link edited to match."""
    header["first_seq"] = 6
    header["range"] = dict(header["range"], first_seq=6, first_prev_hash=events[4]["hash"])
    return events[5:]


RANGE_MUTATIONS = {
    "head cut": (_head_cut, "line 1: header_mismatch (first_seq says 6, the signed range 1)"),
    "tail out of range": (_tail_out_of_range, "line 1: header_mismatch (last_seq says {cut}, the signed range {last})"),
    "relabelled": (_relabelled, "line 1: header_mismatch (label says 'beta', the signed range 'alpha')"),
    "statement dropped": (_unsigned, "line 1: range_unsigned"),
    "statement edited": (_statement_edited, "range: signature_invalid"),
}


@pytest.mark.parametrize("mutation", RANGE_MUTATIONS)
def test_a_range_cut_or_relabelled_is_rejected(world_a: TenantWorld, api: Any, tmp_path: Path, mutation: str) -> None:
    grow(world_a, 12)
    _, lines = export(api, world_a)
    assert run_tool(tmp_path, lines)[0] == 0
    mutate, expected = RANGE_MUTATIONS[mutation]
    header, events = dict(lines[0]), [dict(e) for e in lines[1:]]
    last = header["last_seq"]
    code, out = run_tool(tmp_path, [header, *mutate(header, events)])
    assert code == 1
    assert out.startswith("FAIL: " + expected.format(cut=last - 5, last=last)), out


def test_the_header_alone_cannot_move_the_range(world_a: TenantWorld, api: Any, tmp_path: Path) -> None:
    """With the header left as exported, the cuts fail at the first event that is not where the
    signed range says: the missing first seq, the flag on the last ones."""
    grow(world_a, 12)
    _, lines = export(api, world_a)
    last = lines[0]["last_seq"]
    code, out = run_tool(tmp_path, [lines[0], *lines[6:]])
    assert (code, out) == (1, "FAIL: seq 1: missing_seq (found 6)")
    flagged = [dict(e, in_range=e["seq"] <= last - 5) for e in lines[1:]]
    code, out = run_tool(tmp_path, [lines[0], *flagged])
    assert (code, out) == (1, f"FAIL: seq {last - 4}: in_range flag disagrees with the signed range")


def test_a_range_after_seq_1_proves_its_first_link_and_says_so(world_a: TenantWorld, api: Any, tmp_path: Path) -> None:
    grow(world_a, 12)
    start, end = created_at(world_a, 4), created_at(world_a, 9)
    checkpoint_issue(chain_id=world_a.tenant.pk, label="alpha")
    _, lines = export(api, world_a, **{"from": start, "to": end})
    header = lines[0]
    statement = header["range"]
    assert (statement["first_seq"], statement["last_seq"]) == (4, 8)
    stored = LedgerEvent.objects.get(chain_id=world_a.tenant.pk, seq=3)
    assert statement["first_prev_hash"] == bytes(stored.hash).hex()
    assert (statement["from"], statement["to"], statement["label"]) == (start, end, "alpha")
    code, out = run_tool(tmp_path, lines)
    assert code == 0, out
    assert out.startswith(
        f"OK: 5 events (seq 4 to 8) of chain {world_a.tenant.pk} (alpha), from {start} to {end}, "
        "its first linked to seq 3 as signed"
    ), out
    # A first event that does not carry the signed link fails there, even with its hashes redone.
    events = [dict(e) for e in lines[1:]]
    events[0]["prev_hash"] = "02" * 32
    rehash(events, 0)
    code, out = run_tool(tmp_path, [header, *events])
    assert (code, out.split(" (")[0]) == (1, "FAIL: seq 4: broken_link")


def test_an_empty_range_is_signed_too(world_a: TenantWorld, api: Any, tmp_path: Path) -> None:
    grow(world_a, 3)
    _, lines = export(api, world_a, **{"from": "2000-01-01", "to": "2000-01-02"})
    assert lines[0]["first_seq"] is None and len(lines) == 1
    code, out = run_tool(tmp_path, lines)
    assert code == 0 and out.startswith(f"OK: 0 events (the range is empty) of chain {world_a.tenant.pk} (alpha)")
    # A whole export replaced by an unsigned "empty" header is not OK.
    bare = {key: value for key, value in lines[0].items() if key != "range"}
    assert run_tool(tmp_path, [bare])[1].startswith("FAIL: checkpoint: none")
    assert run_tool(tmp_path, [dict(lines[0], label="beta")])[1].startswith("FAIL: line 1: header_mismatch (label")


# --- mutations of the database, before the export ---------------------------------------------


def _rewritten(world: TenantWorld, at: int, **changes: Any) -> str:
    doc = json.loads(LedgerEvent.objects.get(chain_id=world.tenant.pk, seq=at).canonical)
    doc.update(changes)
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize("sealed", [True, False])
def test_an_event_changed_in_the_database_is_rejected(
    world_a: TenantWorld, api: Any, tmp_path: Path, sealed: bool
) -> None:
    grow(world_a, 10)
    if sealed:
        checkpoint_issue(chain_id=world_a.tenant.pk, label="alpha")
    as_attacker()
    sql(
        "UPDATE ledger_event SET canonical = %s WHERE chain_id = %s AND seq = 4",
        [_rewritten(world_a, 4, actor_id="user:999"), world_a.tenant.pk],
    )
    _, lines = export(api, world_a)
    header = lines[0]
    if sealed:  # the held checkpoint covers the range; the export does not verify
        assert header["chain_ok"] is None and header["checkpoint"] is not None
    else:  # verified for the export: unsound, so nothing was signed
        assert header["chain_ok"] is False and header["checkpoint"] is None
        assert header["verification"]["first_bad_seq"] == 4
    code, out = run_tool(tmp_path, lines)
    assert (code, out.split(" (")[0]) == (1, "FAIL: seq 4: hash_mismatch")


def test_a_forged_tail_in_the_database_is_rejected_at_its_first_event(
    world_a: TenantWorld, api: Any, tmp_path: Path
) -> None:
    grow(world_a, 10)
    size = checkpoint_issue(chain_id=world_a.tenant.pk, label="alpha").size
    as_attacker()
    last = LedgerEvent.objects.get(chain_id=world_a.tenant.pk, seq=size)
    prev = bytes(last.hash)
    for seq in range(size + 1, size + 4):  # linked and hashed right; the keyed tag made up
        body = _rewritten(world_a, size, seq=seq, actor_id="user:forger")
        digest = hashlib.sha256(HASH_PREFIX + prev + body.encode()).digest()
        sql(
            "INSERT INTO ledger_event (chain_id, seq, canonical, prev_hash, hash, mac) VALUES (%s, %s, %s, %s, %s, %s)",
            [world_a.tenant.pk, seq, body, prev, digest, b"\x00" * 32],
        )
        prev = digest
    sql("UPDATE ledger_chain SET size = %s, head_hash = %s WHERE chain_id = %s", [size + 3, prev, world_a.tenant.pk])
    _, lines = export(api, world_a)
    assert lines[0]["checkpoint"] is None and lines[0]["chain_ok"] is False
    code, out = run_tool(tmp_path, lines)
    assert (code, out.split(" (")[0]) == (1, f"FAIL: seq {size + 1}: bad_tag")


def test_a_tail_cut_off_in_the_database_is_rejected(world_a: TenantWorld, api: Any, tmp_path: Path) -> None:
    grow(world_a, 10)
    size = checkpoint_issue(chain_id=world_a.tenant.pk, label="alpha").size
    as_attacker()
    sql("DELETE FROM ledger_event WHERE chain_id = %s AND seq > %s", [world_a.tenant.pk, size - 3])
    _, lines = export(api, world_a)
    assert lines[0]["last_seq"] == size - 3 and lines[0]["checkpoint"]["size"] == size
    code, out = run_tool(tmp_path, lines)
    assert (code, out.split(" (")[0]) == (1, f"FAIL: seq {size - 2}: truncated")


# --- the verifier itself ----------------------------------------------------------------------


def test_the_verifier_uses_the_standard_library_only() -> None:
    tree = ast.parse(TOOL.read_text(encoding="utf-8"))
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {
        node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported - {"__future__"} <= set(sys.stdlib_module_names), imported


def test_the_pure_python_ed25519_agrees_with_cryptography() -> None:
    verify = tool_module().ed25519_verify
    for i in range(12):
        key = Ed25519PrivateKey.generate()
        raw = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        message = os.urandom(i * 13)
        signature = key.sign(message)
        assert verify(raw, message, signature)
        flipped = bytearray(signature)
        flipped[(i * 5) % 64] ^= 1 << (i % 8)
        assert not verify(raw, message, bytes(flipped))
        assert not verify(raw, message + b"!", signature)
        other = Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        assert not verify(other, message, signature)
    # RFC 8032, section 7.1, test 2: a one-byte message.
    raw = bytes.fromhex("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c")
    signature = bytes.fromhex(
        "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
        "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
    )
    assert verify(raw, b"\x72", signature)
    # An S at or past the group order is refused (malleability), by both.
    s = int.from_bytes(signature[32:], "little") + tool_module().L
    assert not verify(raw, b"\x72", signature[:32] + s.to_bytes(32, "little"))


def test_the_checkpoint_message_is_what_the_ledger_signs(world_a: TenantWorld) -> None:
    import rfc8785

    checkpoint = checkpoint_issue(chain_id=world_a.tenant.pk, label="alpha").model_dump()
    fields = {k: v for k, v in checkpoint.items() if k != "signature"}
    expected = b"facade-ledger-checkpoint-v1\x00" + rfc8785.dumps(fields)
    assert tool_module().checkpoint_message(checkpoint) == expected
    tricky = dict(fields, label='t\u00e9st\n\x01"\\/\u2028\U0001f600')
    assert tool_module().checkpoint_message(tricky) == b"facade-ledger-checkpoint-v1\x00" + rfc8785.dumps(tricky)


# --- the pages --------------------------------------------------------------------------------


def verification_page(client: Any) -> str:
    response = client.get("/audit/alpha/verification")
    assert response.status_code == 200
    return response.content.decode()


def test_verify_now_records_its_result_and_signs_a_checkpoint(world_a: TenantWorld, client: Client) -> None:
    client.force_login(world_a.auditor)
    page = verification_page(client)
    assert "Nobody has verified this chain from the console yet." in page
    assert "No checkpoint has been signed for this chain yet." in page
    assert public_key() in page
    assert client.get("/audit/alpha/verification/run").status_code == 405  # POST only

    response = client.post("/audit/alpha/verification/run")
    assert response.status_code == 302 and response["Location"] == "/audit/alpha/verification#result"
    recorded = LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).of_type("audit.verified").get()
    assert recorded.payload["ok"] is True and recorded.entity_id == str(world_a.auditor.pk)
    checkpoint = load_checkpoints(world_a.tenant.pk)[-1]
    assert checkpoint.size == recorded.payload["checked"] == recorded.seq - 1
    page = verification_page(client)
    assert f"The chain held: {checkpoint.size} events checked." in page
    assert checkpoint.head_hash in page and "checks against this ledger's public key" in page
    # Each view is recorded as well.
    assert LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).of_type("audit.viewed").count() == 2


def test_a_tampered_event_shows_up_with_its_seq(world_a: TenantWorld, client: Client) -> None:
    grow(world_a, 6)
    as_attacker()
    sql(
        "UPDATE ledger_event SET canonical = %s WHERE chain_id = %s AND seq = 5",
        [_rewritten(world_a, 5, actor_id="user:999"), world_a.tenant.pk],
    )
    client.force_login(world_a.auditor)
    client.post("/audit/alpha/verification/run")
    page = verification_page(client)
    assert "first bad sequence number 5" in page and "hash_mismatch" in page
    assert load_checkpoints(world_a.tenant.pk) == []  # a tampered chain is never signed
    recorded = LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).of_type("audit.verified").get()
    assert recorded.payload == {"ok": False, "checked": 4, "first_bad_seq": 5, "reason": "hash_mismatch"}


def test_a_checkpoint_not_signed_by_this_ledger_is_flagged(world_a: TenantWorld, client: Client) -> None:
    from ledger.services import checkpoint_path

    genuine = checkpoint_issue(chain_id=world_a.tenant.pk, label="alpha")
    forged = genuine.model_copy(update={"size": genuine.size + 5})
    with checkpoint_path(world_a.tenant.pk).open("a", encoding="utf-8") as handle:
        handle.write(forged.model_dump_json() + "\n")
    client.force_login(world_a.auditor)
    assert "does NOT check against this ledger's public key" in verification_page(client)


def test_verify_now_needs_a_csrf_token(world_a: TenantWorld) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(world_a.auditor)
    assert client.post("/audit/alpha/verification/run").status_code == 403
    client.get("/audit/alpha/verification")
    token = client.cookies["csrftoken"].value
    assert client.post("/audit/alpha/verification/run", HTTP_X_CSRFTOKEN=token).status_code == 302


def test_the_export_page_offers_the_download_and_the_verifier(world_a: TenantWorld, client: Client) -> None:
    client.force_login(world_a.owner)
    response = client.get("/audit/alpha/export")
    assert response.status_code == 200
    page = response.content.decode()
    assert 'action="/api/audit/export"' in page and 'name="tenant" value="alpha"' in page
    assert f"python3 verify_export.py --public-key {public_key()}" in page
    assert 'href="/audit/alpha/export/verify_export.py"' in page
    assert LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).of_type("audit.viewed").count() == 1


def test_the_operator_prints_the_key_to_hand_to_auditors() -> None:
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("ledger_public_key", stdout=out)
    assert out.getvalue().splitlines() == [f"public key: {public_key()}", f"key id:     {ledger_keys().key_id}"]


@pytest.mark.parametrize(
    "canonical",
    ['{"a":"b"}', '{"text":"quote \\" backslash \\\\ tab \\t"}', '{"zh":"营业时间","emoji":"🙂"}', "\x01\x1f\u2028"],
)
def test_an_event_line_is_the_json_of_its_fields(canonical: str) -> None:
    from audit.export import _event_line, _line

    for in_range in (True, False):
        fields = {"seq": 7, "prev_hash": "00" * 32, "hash": "ab" * 32, "canonical": canonical, "in_range": in_range}
        made = _event_line(7, bytes(32), b"\xab" * 32, canonical, in_range).encode("utf-8")
        assert made == _line(fields)
        assert json.loads(made) == fields
