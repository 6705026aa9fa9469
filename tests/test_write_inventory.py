"""README's table of every row the apps write and its ledger event (or why there is none) is
held to the code: every model of the apps has its line, every line names a model, every event
it names is in the catalogue, and every service it names exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from django.apps import apps

from ledger.catalogue import catalogue

README = Path(__file__).resolve().parents[1] / "README.md"
APPS = ("tenancy", "dialogue", "knowledge", "ledger", "rsi", "approvals", "audit", "guard", "peers")
SERVICE_MODULES = (
    "facade.tenancy.services",
    "facade.dialogue.services",
    "knowledge.services",
    "knowledge.jobs",
    "ledger.services",
    "approvals.authority",
    "approvals.services",
    "facade.dialogue.runtime.builtin_tools",
    "approvals.contract",
    "rsi.schedule",
    "rsi.review",
    "rsi.observe",
    "rsi.governance",
    "approvals.replay",
    "rsi.review_trigger",
    "guard.recheck",
    "guard.breaker",
    "facade.dialogue.runtime.stranded",
    "facade.peers.services",
    "facade.peers.stranded",
    "facade.peers.listing",
)


def rows() -> list[tuple[str, str, str]]:
    text = README.read_text(encoding="utf-8")
    table = text.split("<!-- writes:start -->", 1)[1].split("<!-- writes:end -->", 1)[0]
    found = []
    for line in table.strip().splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        assert len(cells) == 3, line
        found.append((cells[0], cells[1], cells[2]))
    return found


def test_every_model_of_the_apps_has_exactly_one_line() -> None:
    named = [name for row, _, _ in rows() for name in re.findall(r"`(\w+\.\w+)`", row)]
    models = {f"{m._meta.app_label}.{m.__name__}" for m in apps.get_models() if m._meta.app_label in APPS}
    assert sorted(named) == sorted(set(named)), "a model is listed twice"
    assert set(named) == models


def test_every_event_named_is_in_the_catalogue() -> None:
    known = set(catalogue.names())
    for _, _, events in rows():
        for name in re.findall(r"`([a-z_]+\.[a-z_*]+)`", events):
            if name.endswith("*"):
                assert any(k.startswith(name[:-1]) for k in known), name
            else:
                assert name in known, name


def test_every_service_named_exists() -> None:
    modules = [importlib.import_module(name) for name in SERVICE_MODULES]
    for _, writers, _ in rows():
        for name in re.findall(r"`([a-z_]+)`", writers):
            assert any(hasattr(module, name) for module in modules), name


def test_a_row_without_an_event_says_why() -> None:
    for row, _, events in rows():
        if events.startswith("none"):
            assert events.startswith("none: ") and len(events) > 30, row
