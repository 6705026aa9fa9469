"""Test settings: the suite runs against PostgreSQL and Redis, never silently against SQLite.

This module sits outside the `facade.settings` package on purpose: importing anything inside
the package would run the package's settings before the defaults below are in place."""

import os
from urllib.parse import urlsplit, urlunsplit

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/facade")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/15")


def _per_worker() -> None:
    """Under pytest-xdist each worker gets a Redis database and a var/ of its own (pytest-django
    gives it its own test database): the rate windows, the Celery broker, the channel layer and
    the ledger's checkpoints of one worker's tests are not the other's.  Through the environment,
    so that the servers and workers a test starts have the same."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw") or os.environ.get("FACADE_TEST_WORKER") == worker:
        return  # not under xdist, or a process the worker started: its environment says already
    os.environ["FACADE_TEST_WORKER"] = worker
    index = int(worker[2:])
    url = urlsplit(os.environ["REDIS_URL"])
    db = url.path.strip("/") or "0"
    if db.isdigit():
        os.environ["REDIS_URL"] = urlunsplit(url._replace(path=f"/{(int(db) - index) % 16}"))
    if "FACADE_VAR_DIR" not in os.environ:
        from pathlib import Path

        os.environ["FACADE_VAR_DIR"] = str(Path(__file__).resolve().parents[1] / "var" / f"test-{worker}")


_per_worker()

# The suite opens sessions and searches from one address all the time; the tests of those limits
# set their own.  (Through the environment, so that a server the suite starts has them too.)
os.environ.setdefault("FACADE_RATE_SESSION", "100000/60")
os.environ.setdefault("FACADE_RATE_SESSION_IP", "100000/60")
os.environ.setdefault("FACADE_RATE_SEARCH", "100000/60")
os.environ.setdefault("FACADE_RATE_SEARCH_IP", "100000/60")

from facade.settings import *  # noqa: E402,F401,F403
from facade.settings.base import VAR_DIR  # noqa: E402

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
FACADE_LEDGER_CHECKPOINT_DIR = VAR_DIR / "test-ledger-checkpoints"
