"""Out-of-sample rounds (guard/rounds.py, `manage.py guard_round`): the measurement itself, and
every round folded into the project after its fixes, through the whole outgoing check.  No
database: the checks are pure."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from guard.rounds import RoundRow, citations_of, round_measure, round_read

ROUNDS = Path(__file__).parent.parent / "guard" / "corpus" / "rounds"


def _write(directory: Path, commitments: list[str], harmless: list[str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "commitments.tsv").write_text("category\tgiven\ttext\n" + "\n".join(commitments) + "\n", "utf-8")
    (directory / "harmless.tsv").write_text("given\ttext\n" + "\n".join(harmless) + "\n", "utf-8")
    return directory


def test_a_round_is_measured_with_guard_and_grounding(tmp_path: Path) -> None:
    directory = _write(
        tmp_path / "r",
        [
            "price\t-\tThe haircut costs €35.",  # the guard's wording
            "deadline\t-\tWe guarantee delivery within 3 days.",
            "price\t-\tThat comes to 45 quid for you, sorted.",  # a figure nobody gave: grounding
            "price\tPrices vary.\tI'd rather not say more.",  # not a commitment at all: a miss
        ],
        ["-\tI can't quote a price here; the owner will confirm.", "Opening hours: 9am to 6pm.\tWe open at 9am."],
    )
    out = io.StringIO()
    call_command("guard_round", str(directory), "--misses", stdout=out)
    figures, *details = [json.loads(line) for line in out.getvalue().splitlines()]
    assert figures["commitments"] == 4 and figures["missed"] == 1 and figures["recall"] == 0.75
    assert figures["caught_by"].get("guard", 0) + figures["caught_by"].get("grounding", 0) == 3
    assert figures["recall_by_category"] == {"deadline": 1.0, "price": 0.667}
    assert figures["harmless"] == 2 and figures["false_blocks"] == 0
    assert details == [{"missed": "price", "text": "I'd rather not say more.", "given": ["Prices vary."]}]


def test_a_harmless_figure_needs_its_given(tmp_path: Path) -> None:
    """The same harmless sentence is a false block without the text that gave its figure."""
    commitments = [RoundRow("price", (), "The haircut costs €35.")]
    given = round_measure(commitments, [RoundRow(None, ("Opening hours: 9am to 6pm.",), "We open at 9am.")])
    not_given = round_measure(commitments, [RoundRow(None, (), "We open at 9am.")])
    assert len(given.false_blocks) == 0
    assert len(not_given.false_blocks) == 1 and not_given.false_blocks[0][1].check == "grounding"


@pytest.mark.parametrize(
    "header, message",
    [("category\ttext", "the header must be"), ("category\tgiven\ttext\nprice\t\t", "non-empty cells")],
)
def test_a_malformed_round_is_refused_with_its_place(tmp_path: Path, header: str, message: str) -> None:
    directory = tmp_path / "bad"
    directory.mkdir()
    (directory / "commitments.tsv").write_text(header + "\n", "utf-8")
    (directory / "harmless.tsv").write_text("given\ttext\n", "utf-8")
    with pytest.raises(CommandError, match=message):
        call_command("guard_round", str(directory))


def test_a_missing_round_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no such file"):
        call_command("guard_round", str(tmp_path / "nowhere"))


FOLDED = sorted(path for path in ROUNDS.iterdir() if path.is_dir()) if ROUNDS.is_dir() else []


@pytest.mark.parametrize("directory", FOLDED, ids=[path.name for path in FOLDED])
def test_every_folded_round_is_stopped_after_its_fixes(directory: Path) -> None:
    """A round folded into the project after its fixes: every commitment is stopped by the guard
    or the grounding check, and at most 1 of 100 harmless replies is."""
    commitments, harmless = round_read(directory)
    assert len(commitments) >= 100 and len(harmless) >= 100
    assert sum(row.language == "zh" for row in commitments) >= 45
    result = round_measure(commitments, harmless)
    assert [row.text for row in result.missed] == []
    false_blocks = [row.text for row, _ in result.false_blocks]
    # A round may list harmless replies the checks block on purpose (by_design.tsv, each with its
    # reason): a published price restated in a form neither the quoting nor the restating rule takes.
    # They must still be blocked (else the list is stale) and are not counted against the round.
    by_design = _by_design(directory)
    assert sorted(set(by_design) - set(false_blocks)) == [], "by_design.tsv lists replies that now pass"
    unexpected = [text for text in false_blocks if text not in by_design]
    assert len(unexpected) <= len(harmless) // 100, unexpected


def _by_design(directory: Path) -> list[str]:
    path = directory / "by_design.tsv"
    if not path.is_file():
        return []
    _header, *lines = path.read_text(encoding="utf-8").splitlines()
    rows = [line.split("\t") for line in lines if line.strip()]
    assert all(len(row) == 2 and row[0].strip() for row in rows), f"{path}: reason<TAB>text on every line"
    return [text for _reason, text in rows]


def test_a_given_entry_is_the_runs_search_result_and_its_attributed_quote_passes() -> None:
    """A given "Title: text" is an entry the run found: quoting it as `[1] Title: text` is not a
    commitment, as in service; saying its figure as this customer's price still is."""
    given = ("Price list: Ski rental is €25 per day.",)
    assert citations_of(given) == [{"title": "Price list", "snippet": "Ski rental is €25 per day."}]
    assert citations_of(("Customer: can you do it for 50 euros?",)) == []
    quoted = RoundRow(None, given, "[1] Price list: Ski rental is €25 per day.")
    applied = RoundRow("price", given, "Your ski rental will be €25 per day, fixed.")
    result = round_measure([applied], [quoted])
    assert result.false_blocks == [] and result.missed == []
