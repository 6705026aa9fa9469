"""What a process keeps in memory between requests is bounded and can be emptied: the ledger's
head hints and keys, the tool specs, the search backends' memo — and no app grows a module-level
cache without a bound."""

from __future__ import annotations

import ast
import base64
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from pydantic import Field
from test_ledger import TEST_TYPES

from facade.dialogue.runtime import tools
from knowledge.search import BACKENDS, search_backends_reset
from knowledge.search.postgres import PostgresSearch
from ledger import keys, services
from ledger.catalogue import catalogue
from ledger.selectors import ledger_verify
from ledger.services import ledger_append

ROOT = Path(__file__).resolve().parents[1]
APPS = ("facade", "knowledge", "ledger", "rsi", "approvals", "audit", "guard")


@pytest.fixture(autouse=True)
def _test_event_types() -> Any:
    """The ledger accepts only catalogued types: these tests append the ledger tests' own."""
    with catalogue.extended(*TEST_TYPES):
        yield


def append(chain: int) -> None:
    with transaction.atomic():
        ledger_append(
            chain_id=chain,
            event_type="test.event",
            entity_type="thing",
            entity_id=1,
            actor_type="platform",
            actor_id="tests",
        )


@pytest.mark.django_db
def test_head_hints_keep_the_most_recent_chains_and_appends_survive_eviction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(services, "HEAD_HINTS_MAX", 3)
    services.head_hints_reset()
    chains = [9100 + i for i in range(6)]
    for chain in chains:
        append(chain)
        assert len(services._HEAD_HINTS) <= 3
    hints = services._HEAD_HINTS
    assert len(hints) == 3
    missing = (0, b"")
    assert [hints.get(("default", c), missing) != missing for c in chains] == [False] * 3 + [True] * 3
    # Appending to a chain whose hint was dropped reads its head under lock and carries on.
    append(chains[0])
    assert hints.get(("default", chains[0]), missing)[0] == 2
    assert hints.get(("default", chains[3]), missing) == missing  # now the least recently used one
    assert all(ledger_verify(chain_id=c).ok for c in chains)
    services.head_hints_reset()
    assert len(services._HEAD_HINTS) == 0
    append(chains[1])  # without any hint
    assert ledger_verify(chain_id=chains[1]).ok


def test_ledger_keys_are_bounded_and_reset(settings: Any) -> None:
    keys.ledger_keys_reset()
    assert keys._keys_for.cache_info().currsize == 0
    for i in range(keys.KEYS_CACHE_SIZE + 3):
        settings.FACADE_LEDGER_SIGNING_KEY = base64.urlsafe_b64encode(bytes([i]) * 32).decode()
        keys.ledger_keys()
    info = keys._keys_for.cache_info()
    assert info.maxsize == keys.KEYS_CACHE_SIZE and info.currsize == keys.KEYS_CACHE_SIZE
    same = keys.ledger_keys().key_id
    keys.ledger_keys_reset()
    assert keys._keys_for.cache_info().currsize == 0
    assert keys.ledger_keys().key_id == same  # read again from the same setting


def test_tool_specs_are_bounded_and_reset() -> None:
    tools.tool_specs_reset()
    assert tools._spec.cache_info().currsize == 0
    for i in range(tools.SPEC_CACHE_SIZE + 5):
        args = type(f"Args{i}", (tools.Args,), {"__annotations__": {"query": str}, "query": Field(max_length=10)})
        tools._spec(f"tool_{i}", "a tool made for this test", args)
    info = tools._spec.cache_info()
    assert info.maxsize == tools.SPEC_CACHE_SIZE and info.currsize == tools.SPEC_CACHE_SIZE
    tools.tool_specs_reset()
    assert tools._spec.cache_info().currsize == 0
    assert tools._spec("tool_0", "built again on demand", args).name == "tool_0"
    assert tools._spec.cache_info().currsize == 1


@pytest.mark.django_db
def test_the_common_terms_memo_is_one_slot_and_reset_empties_it() -> None:
    backend = BACKENDS["postgresql"]
    assert isinstance(backend, PostgresSearch)
    search_backends_reset()
    assert backend._common is None
    with CaptureQueriesContext(connection) as first:
        backend.common_terms(connection)
        backend.common_terms(connection)
    assert len(first.captured_queries) == 1  # the second call is answered from the slot
    held = backend._common
    assert held is not None and held[0] == "default"
    search_backends_reset()
    assert backend._common is None
    with CaptureQueriesContext(connection) as again:
        backend.common_terms(connection)
    assert len(again.captured_queries) == 1


# --- the audit: module-level state in the apps ------------------------------------------------

_MUTATORS = {"update", "setdefault", "append", "add", "extend", "insert", "__setitem__"}


def _unbounded_caches(tree: ast.Module) -> list[str]:
    """Module-level dicts, lists and sets that the module writes to (or hands out) after import,
    and `functools.cache` / `lru_cache(maxsize=None)` anywhere."""
    containers = set()
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        value = getattr(node, "value", None)
        literal = isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp | ast.SetComp)
        built = isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", "")) in (
            "dict",
            "list",
            "set",
            "defaultdict",
            "OrderedDict",
            "Counter",
            "deque",
        )
        if literal or built:
            containers |= {t.id for t in targets if isinstance(t, ast.Name)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Subscript) and getattr(target.value, "id", None) in containers:
                    found.append(f"{target.value.id} (line {node.lineno})")  # type: ignore[attr-defined]
        elif isinstance(node, ast.Return) and getattr(node.value, "id", None) in containers:
            # Handed out to be written through another name (`cache = _head_cache()`).
            found.append(f"{node.value.id} returned (line {node.lineno})")  # type: ignore[union-attr]
        elif isinstance(node, ast.Call):
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in _MUTATORS
                and getattr(func.value, "id", None) in containers
            ):
                found.append(f"{func.value.id} (line {node.lineno})")  # type: ignore[attr-defined]
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            unbounded = any(
                k.arg == "maxsize" and isinstance(k.value, ast.Constant) and k.value.value is None
                for k in node.keywords
            )
            if name == "lru_cache" and unbounded:
                found.append(f"lru_cache(maxsize=None) (line {node.lineno})")
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                if getattr(decorator, "attr", getattr(decorator, "id", None)) == "cache":
                    found.append(f"functools.cache on {node.name} (line {node.lineno})")
    return found


def test_the_audit_sees_an_unbounded_cache() -> None:
    source = (
        "import functools\n_seen = {}\ndef f(k):\n    _seen[k] = 1\n"
        "@functools.lru_cache(maxsize=None)\ndef g():\n    pass\n"
    )
    assert len(_unbounded_caches(ast.parse(source))) == 2
    assert _unbounded_caches(ast.parse("import functools\n@functools.cache\ndef h():\n    pass\n"))
    assert _unbounded_caches(ast.parse("_hints = {}\ndef hints():\n    return _hints\n"))
    assert _unbounded_caches(ast.parse("LABELS = {'a': 1}\ndef f():\n    return LABELS['a']\n")) == []


def test_no_app_keeps_an_unbounded_module_level_cache() -> None:
    found = {
        str(path.relative_to(ROOT)): caches
        for app in APPS
        for path in sorted((ROOT / app).rglob("*.py"))
        if "migrations" not in path.parts and (caches := _unbounded_caches(ast.parse(path.read_text())))
    }
    assert found == {}, "give each a bound and a reset function"
