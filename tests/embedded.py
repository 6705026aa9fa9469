"""Running `manage.py` on the embedded default (SQLite, no Redis) in a fresh var directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def manage(var: Path, *args: str, check: bool = True, **env: str) -> subprocess.CompletedProcess[str]:
    """`manage.py ARGS` with the test run's database, Redis and settings taken away, so the
    embedded default's own configuration applies."""
    clean = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    clean.update(FACADE_VAR_DIR=str(var), **env)
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def shell_result(var: Path, script: str, **env: str) -> str:
    """Run a script in `manage.py shell` and return what it printed after `RESULT`."""
    out = manage(var, "shell", "-c", script, **env).stdout
    return next(line for line in out.splitlines() if line.startswith("RESULT")).removeprefix("RESULT")
