"""The README's standard-library verifier checks a real export — and catches a changed byte."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def readme_script() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- verify-export:start -->\s*```python\n(.*?)```\s*<!-- verify-export:end -->", text, re.S)
    assert block is not None, "the README lost its verifier"
    return block.group(1)


@pytest.mark.django_db
def test_readme_verifier_checks_an_export(world_a: Any, api: Any, tmp_path: Path) -> None:
    script = tmp_path / "verify.py"
    script.write_text(readme_script())
    api.force_login(world_a.auditor)
    export = api.get("/api/ledger/events?tenant=alpha").json()
    checkpoint = api.post("/api/ledger/checkpoints?tenant=alpha").json()
    assert len(export["events"]) == checkpoint["size"] > 5

    def verify(events: list[dict[str, Any]], with_checkpoint: bool = True) -> str:
        (tmp_path / "export.json").write_text(json.dumps({"events": events}))
        (tmp_path / "checkpoint.json").write_text(json.dumps(checkpoint))
        args = [sys.executable, str(script), str(tmp_path / "export.json")]
        if with_checkpoint:
            args.append(str(tmp_path / "checkpoint.json"))
        return subprocess.run(args, capture_output=True, text=True, check=True).stdout.strip()

    assert verify(export["events"]) == f"OK: {checkpoint['size']} events"

    tampered = json.loads(json.dumps(export["events"]))
    body = base64.b64decode(tampered[3]["canonical"]).replace(b'"platform"', b'"human"   ')
    tampered[3]["canonical"] = base64.b64encode(body).decode()
    assert verify(tampered) == "bad hash at seq 4"
    assert verify(export["events"][:-1]) == f"does not match the checkpoint at size {checkpoint['size']}"
    assert verify(export["events"][:-1], with_checkpoint=False) == f"OK: {checkpoint['size'] - 1} events"
