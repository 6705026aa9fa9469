"""Small helpers that read typed values from the environment, failing loudly on nonsense."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{name}={raw!r} is not a boolean (use true/false)")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ValueError(f"{name}={raw!r} is not an integer") from exc


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def secret_from_file(path: Path, nbytes: int = 48) -> str:
    """Read a generated secret, creating it (mode 0600) on first use.

    Used only when the environment does not provide the secret, so that the embedded
    default works with nothing configured while no secret is ever committed.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    value = secrets.token_urlsafe(nbytes)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, value.encode())
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return value
