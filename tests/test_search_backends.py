"""Knowledge search backends, each on its own database: the same scenario (tests/search_scenario.py)
on PostgreSQL in-process and on the embedded default (SQLite FTS5) through `manage.py`, and the
system check that refuses to start when a backend's index is incomplete."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connection
from embedded import manage, shell_result
from search_scenario import AUDIENCES, answers

from knowledge.checks import search_index_check
from knowledge.search import BACKENDS, backend_for
from knowledge.search.postgres import PostgresSearch
from knowledge.search.sqlite import SqliteSearch

SCENARIO = r"""
import json, sys
sys.path.insert(0, "tests")
from search_scenario import answers
from facade.tenancy.schemas import Actor
from facade.tenancy.services import agent_create, tenant_create
actor = Actor.platform("tests")
agents = [
    agent_create(tenant=tenant_create(slug=slug, name=slug, actor=actor), slug=slug + "-agent", name=slug, actor=actor)
    for slug in ("alpha", "bravo")
]
print("RESULT" + json.dumps(answers(*agents)))
"""


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A freshly migrated embedded default; tests work on copies of it."""
    var = tmp_path_factory.mktemp("embedded")
    manage(var, "migrate", "--noinput")
    return var


@pytest.fixture(scope="module")
def sqlite_answers(embedded: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    var = tmp_path_factory.mktemp("embedded-search")
    shutil.copytree(embedded, var, dirs_exist_ok=True)
    return json.loads(shell_result(var, SCENARIO))


@pytest.fixture(params=["postgresql", pytest.param("sqlite", marks=pytest.mark.slow)])
def found(request: pytest.FixtureRequest) -> dict[str, Any]:
    """What the scenario found on one backend's database."""
    if request.param == "sqlite":
        out: dict[str, Any] = request.getfixturevalue("sqlite_answers")
    else:
        out = answers(request.getfixturevalue("world_a").agent, request.getfixturevalue("world_b").agent)
    assert out["vendor"] == request.param
    return out


def titles(results: list[list[Any]]) -> list[str]:
    return [title for title, _version, _status, _entry in results]


def test_english(found: dict[str, Any]) -> None:
    for audience in AUDIENCES:
        assert titles(found["agent"][f"gift wrapping/{audience}"]) == ["Gift wrapping"]


def test_chinese_by_character_bigrams(found: dict[str, Any]) -> None:
    for audience in AUDIENCES:
        assert titles(found["agent"][f"怎么退货/{audience}"]) == ["退货政策"]


def test_status_filters_per_audience(found: dict[str, Any]) -> None:
    a = found["agent"]
    assert found["statuses"]["vat"] == "pending"
    assert a["vat/customer"] == a["vat/peer"] == []
    assert [(t, s) for t, _v, s, _e in a["vat/owner"]] == [("VAT", "pending")]
    for audience in AUDIENCES:
        assert a[f"tax refunds/{audience}"] == []  # rejected
        assert a[f"ferry/{audience}"] == []  # quarantined
        # Only the version that takes effect, never the one it replaced.
        assert [(t, v, s) for t, v, s, _e in a[f"delivery days/{audience}"]] == [("Delivery days", 2, "approved")]


def test_validity_window(found: dict[str, Any]) -> None:
    # Past `valid_until` the version is not served even though nothing marked it expired yet.
    assert found["statuses"]["summer"] == "approved"
    for audience in AUDIENCES:
        assert found["agent"][f"summer sale/{audience}"] == []
        assert found["agent"][f"winter sale/{audience}"] == []  # not valid yet


def test_limit(found: dict[str, Any]) -> None:
    two, ten = found["candles"]["2"], found["candles"]["10"]
    assert len(two) == 2 and len(ten) == 4
    assert len({entry for *_rest, entry in ten}) == 4 and {e for *_r, e in two} <= {e for *_r, e in ten}


def test_tenant_isolation(found: dict[str, Any]) -> None:
    a, b = found["agent"], found["other"]
    for audience in AUDIENCES:
        assert a[f"bravo parking/{audience}"] == []
        assert titles(b[f"bravo parking/{audience}"]) == ["Bravo parking"]
        assert b[f"vat/{audience}"] == []  # the other tenant's pending material stays its own
    ids_a = {entry for results in a.values() for *_rest, entry in results}
    ids_b = {entry for results in b.values() for *_rest, entry in results}
    assert ids_a and ids_b and not ids_a & ids_b


# --- choosing a backend ---------------------------------------------------------------------


def test_the_backend_is_chosen_by_the_connections_vendor() -> None:
    assert isinstance(backend_for(connection), PostgresSearch)
    assert isinstance(BACKENDS["sqlite"], SqliteSearch)

    class Elsewhere:
        vendor = "oracle"

    with pytest.raises(ImproperlyConfigured, match="oracle"):
        backend_for(Elsewhere())  # type: ignore[arg-type]


# --- the system check -----------------------------------------------------------------------


def ddl(statement: str) -> None:
    """Schema changes inside the test's transaction: PostgreSQL rolls them back with it."""
    with connection.cursor() as cursor:
        cursor.execute(statement)


@pytest.mark.django_db
def test_the_check_passes_on_an_intact_index() -> None:
    assert search_index_check(databases=["default"]) == []
    assert search_index_check() == []  # no databases named: the default one is looked at
    call_command("check", verbosity=0)


@pytest.mark.django_db
def test_the_check_fails_without_the_search_column() -> None:
    ddl("ALTER TABLE knowledge_entryversion DROP COLUMN search_vector")  # takes its index with it
    [error] = search_index_check(databases=["default"])
    assert error.id == "knowledge.E002" and error.is_serious()
    assert "search_vector" in error.msg and "knowledge_version_fts" in error.msg
    with pytest.raises(SystemCheckError, match="knowledge.E002"):
        call_command("check", verbosity=0)


@pytest.mark.django_db
def test_the_check_fails_without_the_gin_index() -> None:
    ddl("DROP INDEX knowledge_version_fts")
    [error] = search_index_check()
    assert error.id == "knowledge.E002" and "column" not in error.msg and "knowledge_version_fts" in error.msg


@pytest.mark.django_db
def test_the_check_leaves_a_database_with_knowledge_migrations_to_run_to_migrate() -> None:
    """`migrate` runs the checks before migrating: a pending migration may be what builds (or
    repairs) the index, so it must not be refused."""
    ddl("ALTER TABLE knowledge_entryversion DROP COLUMN search_vector")
    ddl("DELETE FROM django_migrations WHERE app = 'knowledge' AND name = '0003_search_vector'")
    assert search_index_check(databases=["default"]) == []


@pytest.mark.django_db
def test_the_check_refuses_a_database_without_a_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "vendor", "oracle")
    [error] = search_index_check(databases=["default"])
    assert error.id == "knowledge.E003"


CHECK_AFTER_DROPS = r"""
import json
from django.db import connection
from knowledge.checks import search_index_check
def ids():
    return [(e.id, e.msg) for e in search_index_check(databases=["default"])]
out = {"intact": ids()}
with connection.cursor() as cursor:
    cursor.execute("DROP TRIGGER knowledge_fts_insert")
out["no_trigger"] = ids()
with connection.cursor() as cursor:
    cursor.execute("DROP TABLE knowledge_fts")
out["no_table"] = ids()
print("RESULT" + json.dumps(out))
"""


@pytest.mark.slow
def test_the_embedded_default_refuses_to_run_without_its_fts_trigger(embedded: Path, tmp_path: Path) -> None:
    shutil.copytree(embedded, tmp_path, dirs_exist_ok=True)
    out = json.loads(shell_result(tmp_path, CHECK_AFTER_DROPS))
    assert out["intact"] == []
    [(code, message)] = out["no_trigger"]
    assert code == "knowledge.E001" and "trigger knowledge_fts_insert" in message and "table" not in message
    [(code, message)] = out["no_table"]
    assert code == "knowledge.E001" and "table knowledge_fts" in message
    for command in ("check", "migrate"):
        done = manage(tmp_path, command, check=False)
        assert done.returncode != 0 and "knowledge.E001" in done.stderr, (command, done.stderr)
