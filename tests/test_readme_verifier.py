"""The README's offline verification command (section *Auditor console*) checks a real export
from the console's API, with nothing but the standard library — and catches a changed byte.
(tests/test_audit_export.py holds the verifier to the whole catalogue of tampering.)"""

from __future__ import annotations

import base64
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ledger.keys import ledger_keys

ROOT = Path(__file__).resolve().parents[1]


def readme_command() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- verify-export:start -->\s*```sh\n(.*?)```\s*<!-- verify-export:end -->", text, re.S)
    assert block is not None, "the README lost its verification command"
    return shlex.split(block.group(1).strip())


@pytest.mark.django_db
def test_the_readme_command_checks_an_export(world_a: Any, api: Any, tmp_path: Path) -> None:
    command = readme_command()
    assert command[:2] == ["python3", "tools/verify_export.py"] and command[2] == "--public-key"
    api.force_login(world_a.auditor)
    response = api.get("/api/audit/export?tenant=alpha")
    lines = b"".join(response.streaming_content).decode("utf-8").splitlines()
    size = json.loads(lines[0])["checkpoint"]["size"]
    assert size == len(lines) - 1 > 5

    def run(text: str) -> str:
        (tmp_path / "export.jsonl").write_text(text, encoding="utf-8")
        args = [sys.executable, "-I", *command[1:]]
        args[4], args[5] = base64.b64encode(ledger_keys().public_raw).decode(), str(tmp_path / "export.jsonl")
        done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, env={})
        return (done.stdout + done.stderr).strip()

    assert run("\n".join(lines) + "\n").startswith(f"OK: {size} events (seq 1 to {size})")
    event = json.loads(lines[4])
    event["canonical"] = event["canonical"].replace('"seq":4', '"seq":4 ')
    changed = [*lines[:4], json.dumps(event), *lines[5:]]
    assert run("\n".join(changed) + "\n").startswith("FAIL: seq 4: hash_mismatch")
