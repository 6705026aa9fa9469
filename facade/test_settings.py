"""Test settings: the suite runs against PostgreSQL and Redis, never silently against SQLite.

This module sits outside the `facade.settings` package on purpose: importing anything inside
the package would run the package's settings before the defaults below are in place."""

import os

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/facade")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/15")
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
