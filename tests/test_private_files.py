"""Issue 28 §5: what the embedded default writes under var/ is the user's own.  The demo outbox
holds one-time codes: its folder is 0700 and each message file 0600, whatever the umask; var/
itself is 0700; and `make run` (the real Makefile, its programs stubbed) writes its files 0600."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core import mail

ROOT = Path(__file__).resolve().parents[1]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The usual umask (022), under which a plain open() makes a world-readable file."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def test_outbox_message_files_are_0600_in_a_0700_folder(tmp_path: Path, open_umask: None) -> None:
    folder = tmp_path / "outbox"
    connection = mail.get_connection("facade.outbox_mail.PrivateFileBackend", file_path=str(folder))
    mail.EmailMessage("Your code", "Code: 123456", "f@localhost", ["owner@example.com"], connection=connection).send()
    files = list(folder.glob("*.log"))
    assert len(files) == 1 and b"123456" in files[0].read_bytes()
    assert _mode(folder) == 0o700
    assert _mode(files[0]) == 0o600


def test_embedded_default_var_and_outbox_are_private(tmp_path: Path) -> None:
    """A fresh process on the embedded default (no EMAIL_HOST), umask 022: var/ is 0700, the
    secret key 0600, and an e-mail lands in var/outbox/ (0700) as a 0600 file."""
    var = tmp_path / "var"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EMAIL_", "FACADE_", "DJANGO_"))}
    env |= {"FACADE_VAR_DIR": str(var), "DJANGO_SETTINGS_MODULE": "facade.settings", "SECRET_KEY": ""}
    script = (
        "import os; os.umask(0o022)\n"
        "import django; django.setup()\n"
        "from django.conf import settings; from django.core.mail import send_mail\n"
        "send_mail('Your code', 'Code: 654321', None, ['owner@example.com'])\n"
        "print(settings.EMAIL_BACKEND)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    files = list((var / "outbox").glob("*.log"))
    assert len(files) == 1
    assert _mode(var) == 0o700
    assert _mode(var / "outbox") == 0o700
    assert _mode(files[0]) == 0o600
    assert _mode(var / "secret_key") == 0o600


def test_var_made_world_readable_is_closed_again(tmp_path: Path) -> None:
    var = tmp_path / "var"
    var.mkdir(mode=0o755)
    var.chmod(0o755)
    env = dict(os.environ) | {"FACADE_VAR_DIR": str(var), "DJANGO_SETTINGS_MODULE": "facade.settings"}
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert _mode(var) == 0o700


def test_make_run_writes_var_files_0600(tmp_path: Path) -> None:
    """The real Makefile's `run`, with its programs stubbed (a python that writes a file into
    FACADE_VAR_DIR as migrate and the servers do, a honcho that returns): every file it leaves
    under var/ is 0600 and var/ 0700, under a caller's umask of 022."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name in ("python", "honcho"):
        stub = venv / "bin" / name
        stub.write_text(f'#!/bin/sh\necho "$*" > "$FACADE_VAR_DIR/{name}-$$"\n')
        stub.chmod(0o755)
    checksum = subprocess.run(
        "cat pyproject.toml constraints.txt | cksum | cut -d' ' -f1",
        shell=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (venv / f".installed-{checksum}").touch()  # `install` is up to date: nothing is installed
    var = tmp_path / "var"
    var.mkdir(mode=0o755)  # there from an earlier run, as the umask made it
    var.chmod(0o755)
    done = subprocess.run(
        f"umask 022; make --no-print-directory run VENV={venv} VAR={var} PORT=8999",
        shell=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    written = sorted(p.name for p in var.iterdir())
    assert "public_url" in written and any(n.startswith("python-") for n in written)
    assert any(n.startswith("honcho-") for n in written)
    assert _mode(var) == 0o700
    assert {p.name: oct(_mode(p)) for p in var.iterdir()} == {p.name: oct(0o600) for p in var.iterdir()}
