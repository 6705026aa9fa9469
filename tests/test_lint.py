"""The lint gate: the tree passes `ruff check` and `ruff format --check` (the configuration and
the reasons for the rule set are in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


# `python -m ruff` runs the venv's ruff, the version pinned in the `test` extras, not whatever
# is on PATH.  No cache: the test must not leave a .ruff_cache behind in the tree.
@pytest.mark.parametrize(
    "command", [["check", "--output-format", "concise"], ["format", "--check"]], ids=["check", "format"]
)
def test_ruff(command: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", *command, "--no-cache", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[:8000] + done.stderr[-2000:]
