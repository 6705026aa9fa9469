"""The ledger's event catalogue: one list of event types, a typed constructor per type in each
app's events.py, nothing outside the list can be appended, and the README's table is the list.

That every catalogued type is emitted somewhere in the suite is checked by the plugin in
tests/event_coverage.py at the end of a whole run; the tests here that write a type exist
because nothing else in the suite writes it in this process.
"""

from __future__ import annotations

import ast
import inspect
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import transaction
from event_coverage import PLUGIN_NAME, never_emitted, whole_suite
from pydantic import ValidationError

from ledger.catalogue import EventPayload, EventType, as_records, catalogue, register, type_text
from ledger.models import LedgerEvent
from ledger.services import LedgerError, ledger_append

ROOT = Path(__file__).resolve().parents[1]
APPS = ("facade", "knowledge", "ledger", "rsi", "approvals", "audit", "guard")
# The apps that write events today, each through its own events module.
WRITERS = {
    "tenancy": "facade.tenancy.events",
    "dialogue": "facade.dialogue.events",
    "knowledge": "knowledge.events",
    "guard": "guard.events",
    "peers": "facade.peers.events",
}


def app_types() -> list[EventType]:
    return [t for t in catalogue if t.app in WRITERS]


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


# --- nothing outside the catalogue is appended ----------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("event_type", ["made.up", "kind.submitted", "session", "", "SESSION.OPENED"])
def test_ledger_append_refuses_a_type_outside_the_catalogue(event_type: str) -> None:
    with pytest.raises(LedgerError, match="not in the event catalogue"), transaction.atomic():
        ledger_append(
            chain_id=77, event_type=event_type, entity_type="session", entity_id=1, actor_type="platform", actor_id="t"
        )
    assert not LedgerEvent.objects.filter(chain_id=77).exists()


@pytest.mark.django_db
def test_ledger_append_refuses_an_entity_the_type_is_not_about() -> None:
    with pytest.raises(LedgerError, match="about a session"), transaction.atomic():
        ledger_append(
            chain_id=77,
            event_type="session.opened",
            entity_type="request",
            entity_id=1,
            actor_type="platform",
            actor_id="t",
            payload={"agent": "a", "audience": "customer", "principal_type": "customer"},
        )
    assert not LedgerEvent.objects.filter(chain_id=77).exists()


def _calls_and_imports(path: Path) -> list[int]:
    """Lines of `path` that call or import ledger_append."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name == "ledger_append":
                lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and any(alias.name == "ledger_append" for alias in node.names):
            lines.append(node.lineno)
    return lines


def test_only_the_events_modules_and_the_ledger_call_ledger_append() -> None:
    found: dict[str, list[int]] = {}
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            relative = path.relative_to(ROOT)
            # An app may split its events into several `*_events.py` modules (approvals does).
            events_module = path.stem == "events" or path.stem.endswith("_events")
            if relative.parts[0] == "ledger" or events_module or "migrations" in relative.parts:
                continue
            if lines := _calls_and_imports(path):
                found[str(relative)] = lines
    assert found == {}, "append through the app's events.py constructors instead"
    # The walk does find calls where they are: it is not passing for want of looking.
    assert _calls_and_imports(ROOT / "facade" / "dialogue" / "events.py")


def test_every_app_event_type_has_a_keyword_only_constructor_in_its_apps_events_module() -> None:
    types = app_types()
    assert {t.app for t in types} == set(WRITERS)
    for event_type in types:
        module = sys.modules[WRITERS[event_type.app]]
        assert event_type.payload.__module__ == module.__name__, event_type.name
        constructor = getattr(module, event_type.name.replace(".", "_"), None)
        assert callable(constructor), f"{module.__name__} has no constructor for {event_type.name}"
        parameters = inspect.signature(constructor).parameters.values()
        assert parameters and all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters), event_type.name
        assert inspect.signature(constructor).return_annotation == "AppendedEvent", event_type.name


@pytest.mark.parametrize("event_type", app_types(), ids=lambda t: t.name)
def test_every_payload_refuses_unknown_keys_and_values_of_another_type(event_type: EventType) -> None:
    with pytest.raises(ValidationError) as refused:
        event_type.payload.model_validate({"surprise": 1})
    assert "surprise" in {error["loc"][0] for error in refused.value.errors() if error["type"] == "extra_forbidden"}
    for key, kind in event_type.fields():
        if kind == "int":
            with pytest.raises(ValidationError) as wrong:
                event_type.payload.model_validate({key: "5"})
            assert any(e["loc"] == (key,) and e["type"] == "int_type" for e in wrong.value.errors())


# --- registering ----------------------------------------------------------------------------


class Sample(EventPayload):
    count: int
    note: str | None


class Lax(EventPayload):
    model_config = {**EventPayload.model_config, "extra": "allow"}


@pytest.mark.parametrize(
    "name, entity, payload, description, problem",
    [
        ("sample", "thing", Sample, "One line.", "dotted"),
        ("Sample.Made", "thing", Sample, "One line.", "dotted"),
        ("sample." + "x" * 64, "thing", Sample, "One line.", "dotted"),
        ("sample.made", "Thing", Sample, "One line.", "entity type"),
        ("sample.made", "thing", dict, "One line.", "EventPayload"),
        ("sample.made", "thing", Lax, "One line.", "refuse unknown keys"),
        ("sample.made", "thing", Sample, "Two\nlines.", "one line"),
        ("sample.made", "thing", Sample, "a | b", "one line"),
        ("session.opened", "session", Sample, "Taken by the dialogue app.", "already registered"),
    ],
)
def test_register_refuses_what_the_catalogue_cannot_describe(
    name: str, entity: str, payload: Any, description: str, problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        register(name, app="tests", entity_type=entity, payload=payload, description=description)
    opened = catalogue.get("session.opened")
    assert opened is not None and opened.app == "dialogue"
    assert "sample.made" not in catalogue


@pytest.mark.django_db
def test_extended_types_exist_for_the_block_only() -> None:
    sample = EventType("sample.made", "tests", "thing", Sample, "A sample.")
    size = len(catalogue)
    with catalogue.extended(sample):
        assert "sample.made" in catalogue and len(catalogue) == size + 1
        with transaction.atomic():
            ledger_append(
                chain_id=78,
                event_type="sample.made",
                entity_type="thing",
                entity_id=1,
                actor_type="platform",
                actor_id="t",
            )
        with pytest.raises(ValueError, match="already registered"), catalogue.extended(sample):
            pass
    assert "sample.made" not in catalogue and len(catalogue) == size
    with pytest.raises(LedgerError), transaction.atomic():
        ledger_append(
            chain_id=78, event_type="sample.made", entity_type="thing", entity_id=2, actor_type="platform", actor_id="t"
        )


def test_fields_are_named_as_written_with_short_types() -> None:
    assert EventType("sample.made", "tests", "thing", Sample, "A sample.").fields() == [
        ("count", "int"),
        ("note", "str | None"),
    ]
    transitioned = catalogue.get("request.transitioned")
    assert transitioned is not None and transitioned.fields() == [("from", "str"), ("to", "str")]
    assert type_text(list[str]) == "list[str]" and type_text(dict[str, int]) == "dict[str, int]"


# --- the generated docs ---------------------------------------------------------------------


def test_the_readmes_table_is_the_commands_output() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- ledger-events:start -->\n(.*?)<!-- ledger-events:end -->", text, re.S)
    assert block is not None, "the README lost its table of ledger events"
    generated = run("ledger_events", "--markdown")
    assert block.group(1) == generated, "regenerate it: python manage.py ledger_events --markdown"
    rows = [line for line in generated.splitlines() if line.startswith("| `")]
    assert len(rows) == len(catalogue) and "| `request.transitioned` | dialogue | request | `from` str, `to` str |" in (
        generated
    )


def test_the_command_lists_the_catalogue_as_json_and_as_plain_lines() -> None:
    records = json.loads(run("ledger_events", "--json"))
    assert records == as_records(catalogue)
    assert [r["type"] for r in records] == [t.name for t in catalogue]
    assert sorted(r["type"] for r in records) == catalogue.names()
    opened = next(r for r in records if r["type"] == "session.opened")
    assert opened["payload"] == {"agent": "str", "audience": "str", "principal_type": "str", "preview": "bool"}
    assert (opened["app"], opened["entity_type"]) == ("dialogue", "session")
    lines = run("ledger_events").splitlines()
    assert [line.split("\t")[0] for line in lines] == [t.name for t in catalogue]
    assert "message.posted\tdialogue\tsession\tmessage_id:int chars:int\t" in "\n".join(lines)


# --- the coverage plugin --------------------------------------------------------------------


def test_never_emitted_lists_the_catalogue_types_nobody_wrote() -> None:
    assert never_emitted(["b.x", "a.y", "c.z"], {"a.y", "other.type"}) == ["b.x", "c.z"]
    assert never_emitted(["a.y"], ["a.y"]) == []


@pytest.mark.parametrize(
    "run_, whole",
    [
        ({}, True),
        ({"from_testpaths": False}, False),  # files or directories named on the command line
        ({"keyword": "ledger"}, False),  # -k
        ({"markexpr": "not browser"}, False),  # -m
        ({"deselected": 3}, False),  # --deselect, --lf
        ({"ran": 9}, False),  # stopped early (-x, Ctrl-C)
        ({"collected": 0, "ran": 0}, False),
    ],
)
def test_only_a_whole_run_to_its_end_judges_the_catalogue(run_: dict[str, Any], whole: bool) -> None:
    facts: dict[str, Any] = {
        "from_testpaths": True,
        "keyword": "",
        "markexpr": "",
        "deselected": 0,
        "collected": 10,
        "ran": 10,
    }
    assert whole_suite(**{**facts, **run_}) is whole


@pytest.mark.django_db
def test_the_plugin_sees_what_is_appended(request: pytest.FixtureRequest) -> None:
    from facade.tenancy.schemas import Actor
    from facade.tenancy.services import tenant_create

    plugin = request.config.pluginmanager.get_plugin(PLUGIN_NAME)
    assert plugin is not None
    plugin.seen.discard("tenant.created")
    tenant_create(slug="seen", name="Seen", actor=Actor.platform("tests"))
    assert "tenant.created" in plugin.seen
