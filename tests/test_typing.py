"""The apps are mypy-clean (the configuration is in pyproject.toml: Django and DRF plugins,
migrations left out)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_apps_type_check() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "facade", "knowledge", "ledger", "rsi", "approvals", "audit", "guard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
