"""Pytest plugin (registered from the root conftest): every type of the ledger's event catalogue
is emitted somewhere in the suite.

It records the type of every event appended in this process during the run and, when the whole
suite ran to its end, fails the session if a catalogue type was never appended — a type added
without a test that writes it.  A run of selected files, of tests picked with -k or -m, or one
stopped early (-x) proves nothing either way and is left alone.

The record is taken where every append builds its document (`ledger.services.event_document`),
so the production code carries no hook for it.  Events appended in a subprocess (the browser
tests' daphne, the embedded-default tests) are not seen: their types need an in-process test
as well.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest

PLUGIN_NAME = "event-coverage"


def never_emitted(catalogued: Iterable[str], seen: Iterable[str]) -> list[str]:
    """The catalogue's types that were never appended, sorted."""
    return sorted(set(catalogued) - set(seen))


def whole_suite(
    *, from_testpaths: bool, keyword: str, markexpr: str, deselected: int, collected: int, ran: int
) -> bool:
    """Whether this run was the whole suite, run to its end: only then does a type nobody
    emitted mean a missing test."""
    return from_testpaths and not keyword and not markexpr and deselected == 0 and collected > 0 and ran == collected


class EventCoverage:
    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.deselected = 0
        self.collected = 0
        self.ran = 0
        self.missing: list[str] = []
        self._restore: Callable[[], None] | None = None

    def record(self) -> None:
        """Wrap the document builder of ledger_append so that each appended type is noted."""
        if self._restore is not None:
            return
        from ledger import services

        original = services.event_document
        seen = self.seen

        def recording(**fields: Any) -> dict[str, Any]:
            seen.add(fields["event_type"])
            return original(**fields)

        services.event_document = recording  # type: ignore[assignment]

        def restore() -> None:
            services.event_document = original

        self._restore = restore

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected += len(items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = len(session.items)
        self.record()  # Django is set up by now: the test modules imported the apps.

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        self.ran += 1

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self._restore is not None:
            self._restore()
        config = session.config
        if not whole_suite(
            from_testpaths=config.args_source == pytest.Config.ArgsSource.TESTPATHS,
            keyword=config.option.keyword,
            markexpr=config.option.markexpr,
            deselected=self.deselected,
            collected=self.collected,
            ran=self.ran,
        ):
            return
        from ledger.catalogue import catalogue

        self.missing = never_emitted(catalogue.names(), self.seen)
        if self.missing and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.missing:
            terminalreporter.section("ledger event catalogue", red=True)
            terminalreporter.write_line(
                "no test appended these catalogue types (add a test that writes each): " + ", ".join(self.missing),
                red=True,
            )


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin(PLUGIN_NAME):
        config.pluginmanager.register(EventCoverage(), PLUGIN_NAME)
