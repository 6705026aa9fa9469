"""Root fixtures.  The suite needs PostgreSQL and Redis; when either is unreachable it stops
with a loud error instead of skipping anything."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

# Playwright's `expect` waits 5 s by default, apart from a browser context's own timeout: on a
# busy CI machine an approval that publishes a contract version took longer (the failed run
# showed the card unchanged and no error), so every browser test's expectations wait 10 s, as
# its actions do (tests/browser_support.py TIMEOUT_MS).
expect.set_options(timeout=10_000)

# Shared fixture modules: the real-browser fixtures (tests/browser_support.py), the local
# OpenAI-compatible server (tests/llm_server.py), a real SMTP server (tests/smtp_support.py) and
# the check that the whole suite emits every type of the ledger's event catalogue
# (tests/event_coverage.py).  Registered here rather than
# imported into each test module, where a fixture imported by name and then taken as a parameter
# would read as a redefinition (pyflakes F811).
pytest_plugins = ["browser_support", "llm_server", "event_coverage", "smtp_support"]


def _reachable(url: str, default_port: int) -> str | None:
    parsed = urlparse(url)
    host, port = parsed.hostname or "127.0.0.1", parsed.port or default_port
    try:
        with socket.create_connection((host, port), timeout=3):
            return None
    except OSError as exc:
        return f"{parsed.scheme}://{host}:{port} ({exc})"


def pytest_configure(config: pytest.Config) -> None:
    import facade.test_settings  # noqa: F401  (sets the DATABASE_URL / REDIS_URL defaults)

    database_url = os.environ["DATABASE_URL"]
    if not database_url.startswith(("postgres://", "postgresql://")):
        raise pytest.UsageError(f"the suite runs against PostgreSQL; DATABASE_URL is {database_url!r}")
    down = [
        problem
        for problem in (_reachable(database_url, 5432), _reachable(os.environ["REDIS_URL"], 6379))
        if problem is not None
    ]
    if down:
        hint = " (CI=true: services are required)" if os.environ.get("CI") == "true" else ""
        raise pytest.UsageError("required services are unreachable" + hint + ": " + "; ".join(down))


@pytest.fixture(scope="session", autouse=True)
def _really_postgres() -> None:
    """The environment may say PostgreSQL while settings say otherwise; trust the settings."""
    from django.conf import settings

    engine = settings.DATABASES["default"]["ENGINE"]
    if engine != "django.db.backends.postgresql":
        pytest.exit(f"the suite must run on PostgreSQL, but the settings use {engine}", returncode=3)
    if settings.CHANNEL_LAYERS["default"]["BACKEND"] != "channels_redis.core.RedisChannelLayer":
        pytest.exit("the suite must use the Redis channel layer", returncode=3)


@pytest.fixture(autouse=True)
def _checkpoint_dir(settings: Any, tmp_path: Any) -> None:
    """Each test keeps its ledger checkpoints in its own directory."""
    settings.FACADE_LEDGER_CHECKPOINT_DIR = tmp_path / "checkpoints"


@pytest.fixture(autouse=True)
def _no_spent_windows() -> None:
    """No test inherits the rate windows another one spent (the gate remembers them)."""
    from facade.ratelimit import forget_spent

    forget_spent()


@dataclass
class TenantWorld:
    tenant: Any
    agent: Any
    owner: Any
    auditor: Any
    member: Any


def rate_limits_lifted(value: str = "1000000/60") -> dict[str, str]:
    """Every rate limit's setting (FACADE_RATE_*) at `value`, for a test whose traffic is no
    person's (a walk of every route, a fuzzer): a limit added later is lifted with the rest."""
    from django.conf import settings

    return {name: value for name in dir(settings) if name.startswith("FACADE_RATE_")}


def build_tenant(slug: str) -> TenantWorld:
    from facade.tenancy.models import Role
    from facade.tenancy.schemas import Actor
    from facade.tenancy.services import agent_create, agent_owner_add, membership_grant, tenant_create, user_ensure

    actor = Actor.platform("tests")
    tenant = tenant_create(slug=slug, name=slug.title(), actor=actor)
    users = {}
    for role in (Role.OWNER, Role.AUDITOR, Role.MEMBER):
        user, _ = user_ensure(email=f"{role.value}@{slug}.test", password="pw-" + slug)
        membership_grant(tenant=tenant, user=user, role=role, actor=actor)
        users[role] = user
    agent = agent_create(tenant=tenant, slug=f"{slug}-agent", name=f"{slug.title()} Agent", actor=actor)
    agent_owner_add(agent=agent, user=users[Role.OWNER], actor=actor)
    return TenantWorld(tenant, agent, users[Role.OWNER], users[Role.AUDITOR], users[Role.MEMBER])


@pytest.fixture
def world_a(db: Any) -> TenantWorld:
    return build_tenant("alpha")


@pytest.fixture
def world_b(db: Any) -> TenantWorld:
    return build_tenant("bravo")


@pytest.fixture
def api() -> Any:
    from rest_framework.test import APIClient

    return APIClient()


@pytest.fixture
def make_api() -> Any:
    from rest_framework.test import APIClient

    return APIClient
