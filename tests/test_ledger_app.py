"""The ledger app stands alone: it imports nothing from the rest of the project and learns which
chains exist, what they are called and who may read one only from the directory named by
FACADE_LEDGER_CHAINS (ledger/chains.py).  Shown with Facade's own directory (one chain per
tenant) and with a stand-in that knows nothing of tenants."""

from __future__ import annotations

import ast
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from rest_framework import exceptions
from test_ledger import TEST_TYPES, append

from facade.tenancy.ledger_chains import TenantChains
from facade.tenancy.models import Role
from facade.tenancy.schemas import Actor
from facade.tenancy.services import membership_grant
from ledger.catalogue import catalogue
from ledger.chains import ChainDirectory, NamedChain, chain_directory
from ledger.services import checkpoint_path, load_checkpoints
from ledger.tasks import ledger_verify_all

LEDGER = Path(__file__).resolve().parents[1] / "ledger"
PROJECT_PACKAGES = {"facade", "knowledge", "rsi", "approvals", "audit", "guard"}
STUB_CHAIN = NamedChain(id=4242, label="stub-chain")


@pytest.fixture(autouse=True)
def _test_event_types() -> Any:
    """The ledger accepts only catalogued types: these tests append the ledger tests' own."""
    with catalogue.extended(*TEST_TYPES):
        yield


# --- the boundary --------------------------------------------------------------------------


def _imported_modules(path: Path) -> list[str]:
    """Absolute names of everything a module imports, relative imports resolved."""
    package = ".".join(path.relative_to(LEDGER.parent).with_suffix("").parts[:-1])
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                names.append(".".join([*base, node.module] if node.module else base))
            else:
                names.append(node.module or "")
    return names


def test_the_ledger_imports_nothing_from_the_rest_of_the_project() -> None:
    modules = [path for path in LEDGER.rglob("*.py") if "migrations" not in path.parts]
    assert len(modules) >= 10 and LEDGER / "api.py" in modules and LEDGER / "tasks.py" in modules
    crossing = {
        f"{path.relative_to(LEDGER.parent)}: {name}"
        for path in modules
        for name in _imported_modules(path)
        if name.split(".")[0] in PROJECT_PACKAGES
    }
    assert not crossing, sorted(crossing)


def test_relative_imports_are_resolved_inside_the_ledger() -> None:
    command = LEDGER / "management" / "commands" / "ledger_verify.py"
    assert "ledger.audit" in _imported_modules(command)
    assert all(name.split(".")[0] != "facade" for name in _imported_modules(command))


# --- the directory -------------------------------------------------------------------------


def test_facade_configures_its_tenants_as_the_chains() -> None:
    assert isinstance(chain_directory(), TenantChains)


@pytest.mark.parametrize("path", ["", "ledger.chains.NamedChain"])
def test_a_missing_or_wrong_directory_fails_loudly(settings: Any, path: str) -> None:
    settings.FACADE_LEDGER_CHAINS = path
    with pytest.raises(ImproperlyConfigured, match="FACADE_LEDGER_CHAINS"):
        chain_directory()


@pytest.mark.django_db
def test_tenant_chains_are_the_tenants_by_slug(world_a: Any, world_b: Any) -> None:
    chains = TenantChains()
    assert list(chains.chains()) == [
        NamedChain(world_a.tenant.pk, "alpha"),
        NamedChain(world_b.tenant.pk, "bravo"),
    ]
    assert chains.chain("bravo") == NamedChain(world_b.tenant.pk, "bravo")
    assert chains.chain("no-such-tenant") is None
    assert chains.readable(user=world_a.auditor, label=None) == NamedChain(world_a.tenant.pk, "alpha")


@pytest.mark.django_db
def test_a_reader_of_several_ledgers_must_name_one(world_a: Any, world_b: Any, make_api: Any) -> None:
    membership_grant(tenant=world_b.tenant, user=world_a.auditor, role=Role.AUDITOR, actor=Actor.platform("t"))
    client = make_api()
    client.force_login(world_a.auditor)

    unnamed = client.get("/api/ledger/verify")
    assert unnamed.status_code == 400
    assert unnamed.json() == {
        "error": "tenant_required",
        "detail": "you read several tenants' ledgers: add ?tenant=<slug>",
    }
    assert client.get("/api/ledger/verify?tenant=bravo").json()["ok"] is True


# --- a directory that is not Facade's ------------------------------------------------------


class StubChains(ChainDirectory):
    """One chain, readable by any signed-in user who names it (or names nothing)."""

    def chains(self) -> list[NamedChain]:
        return [STUB_CHAIN]

    def chain(self, label: str) -> NamedChain | None:
        return STUB_CHAIN if label == STUB_CHAIN.label else None

    def readable(self, *, user: Any, label: str | None) -> NamedChain:
        if label in (None, STUB_CHAIN.label):
            return STUB_CHAIN
        raise exceptions.NotFound()


@pytest.fixture
def stub(settings: Any, db: Any) -> None:
    settings.FACADE_LEDGER_CHAINS = "test_ledger_app.StubChains"
    append(3, chain=STUB_CHAIN.id)  # the ledger tests' own events


def tamper_with_seq_2() -> None:
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE ledger_event DISABLE TRIGGER ledger_event_append_only")
        cursor.execute(
            "UPDATE ledger_event SET canonical = replace(canonical, '\"i\":1', '\"i\":7') "
            "WHERE chain_id = %s AND seq = 2",
            [STUB_CHAIN.id],
        )


def test_the_command_verifies_the_directorys_chains(stub: None) -> None:
    out = io.StringIO()
    call_command("ledger_verify", stdout=out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    report = json.loads(lines[0])
    assert (report["tenant"], report["ok"], report["checked"]) == ("stub-chain", True, 3)
    assert (report["checkpoint"]["chain"], report["checkpoint"]["label"]) == (STUB_CHAIN.id, "stub-chain")
    assert [c.size for c in load_checkpoints(STUB_CHAIN.id)] == [3]

    named = io.StringIO()
    call_command("ledger_verify", "--tenant", "stub-chain", stdout=named)
    assert json.loads(named.getvalue())["checkpoint"]["size"] == 3
    with pytest.raises(CommandError, match="no tenant 'alpha'"):
        call_command("ledger_verify", "--tenant", "alpha", stdout=io.StringIO())


def test_the_nightly_task_verifies_the_directorys_chains(stub: None) -> None:
    assert ledger_verify_all() == {"stub-chain": True}
    assert checkpoint_path(STUB_CHAIN.id).exists()
    tamper_with_seq_2()
    assert ledger_verify_all() == {"stub-chain": False}
    assert [c.size for c in load_checkpoints(STUB_CHAIN.id)] == [3]  # nothing signed over the damage


def test_the_api_reads_the_chain_the_directory_names(stub: None, make_api: Any) -> None:
    client = make_api()
    client.force_login(get_user_model().objects.create_user(username="reader", password="pw"))

    assert client.get("/api/ledger/verify").json()["checked"] == 3
    assert len(client.get("/api/ledger/events?tenant=stub-chain").json()["events"]) == 3
    refused = client.get("/api/ledger/verify?tenant=alpha")
    assert refused.status_code == 404 and refused.json()["error"] == "not_found"

    bad = client.get("/api/ledger/events?after=x")
    assert bad.status_code == 400
    assert bad.json() == {"error": "invalid_input", "detail": "after and limit must be integers"}

    tamper_with_seq_2()
    unsound = client.post("/api/ledger/checkpoints", {}, format="json")
    assert unsound.status_code == 409
    assert unsound.json() == {
        "error": "chain_not_sound",
        "detail": "the chain fails verification at seq 2 (hash_mismatch); nothing was signed",
    }
    assert not checkpoint_path(STUB_CHAIN.id).exists()
