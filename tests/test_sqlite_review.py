"""The embedded default's nightly review (SQLite): the review input counts its figures with a
statement of its own there (SQLite has no array_agg), so `rsi_simulate` — what README's *Watch
the loop* tells a person to run — reports the day's gap with evidence that resolves, as on
PostgreSQL."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from embedded import manage

pytestmark = pytest.mark.slow


def test_the_simulated_days_are_reviewed_on_sqlite(tmp_path: Path) -> None:
    manage(tmp_path, "migrate", "--noinput")
    manage(tmp_path, "seed_demo")
    out = manage(tmp_path, "rsi_simulate", "--agent", "demo-shop", "--days", "1").stdout
    reviews = re.findall(r"review \S+ — gaps: (\d+), .* proposals: (\d+), .* claims dropped: (\d+)", out)
    # The gap the simulated customers keep asking about, proposed as a draft, every pointer real.
    assert reviews == [("1", "1", "0")], out
