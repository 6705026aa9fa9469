"""A fresh PostgreSQL database for a benchmark, on the server DATABASE_URL names."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlparse, urlunparse

ROOT = Path(__file__).resolve().parents[1]


def prepare_database(*, script: str, env_name: str, default_name: str) -> None:
    """Drop and create the benchmark's own database (named by `env_name`, else `default_name`)
    and point DATABASE_URL and Django's settings at it."""
    import psycopg

    base = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/facade")
    parsed = urlparse(base)
    if parsed.scheme not in ("postgres", "postgresql"):
        raise SystemExit(f"{script} measures PostgreSQL; DATABASE_URL must be postgres://")
    name = os.environ.get(env_name, default_name)
    with psycopg.connect(urlunparse(parsed._replace(path="/postgres")), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = urlunparse(parsed._replace(path=f"/{name}"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "facade.settings")
    os.environ.setdefault("FACADE_VAR_DIR", str(ROOT / "var" / "bench"))


def drop_database() -> None:
    """Drop the benchmark's database (the one `prepare_database` pointed DATABASE_URL at), after
    closing this process's connections to it."""
    import psycopg
    from django.db import connections

    connections.close_all()
    parsed = urlparse(os.environ["DATABASE_URL"])
    name = parsed.path.lstrip("/")
    with psycopg.connect(urlunparse(parsed._replace(path="/postgres")), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
