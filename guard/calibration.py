"""The model's threshold, chosen on rounds it was not fitted on (issue 27 §4).

Each folded round in turn is held out: the model is fitted on the corpus and every other round,
and the held-out round's replies go through the whole outgoing check with it — the named rules,
the grounding check and the quoting rule first (`outgoing.rules_verdict`, with the reply's
context), then the model on what they leave.  The probabilities it gives are kept, so every
threshold is measured on the same readings: the whole check's recall and false blocks, and the
model's own precision and recall per category (the category it names against the one the round
gives).  `manage.py guard_model --calibrate` prints it; the README's table is its output.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .classifier import CORPUS, MIN_WORDS, Models, train, words_in
from .outgoing import rules_verdict
from .rounds import RoundRow, round_read

__all__ = ["Reading", "calibrate", "readings", "summary"]


@dataclass(frozen=True)
class Reading:
    round: str
    category: str | None  # None: a harmless reply
    language: str
    rules: bool  # blocked before the model
    probability: float  # the held-out model's, on what the rules left (0 for a reply too short to read)
    named: str  # the category the model names


def _corpus_without(held_out: str) -> tuple[list[tuple[str, str]], list[str]]:
    commitments: dict[str, str] = {}
    harmless: dict[str, None] = {}
    rounds = sorted(CORPUS.glob("rounds/*/*.tsv"), key=lambda path: (int(path.parent.name), path.name))
    for path in [CORPUS / "commitments.tsv", CORPUS / "harmless.tsv", *rounds]:
        if path.parent.name == held_out or path.name == "by_design.tsv":
            continue
        _header, *lines = path.read_text(encoding="utf-8").splitlines()
        for row in (line.split("\t") for line in lines if line.strip()):
            if path.name == "commitments.tsv":
                commitments.setdefault(row[-1], row[0])
            else:
                harmless.setdefault(row[-1])
    return [(c, t) for t, c in commitments.items()], [t for t in harmless if t not in commitments]


def _read(name: str, row: RoundRow, models: Models) -> Reading:
    verdict, checked = rules_verdict(row.text, **row.context().as_kwargs())
    short = words_in(checked) < MIN_WORDS
    probability = 0.0 if short else models.block.probability(checked)
    named = "" if short else models.category.best(checked)
    return Reading(name, row.category, row.language, verdict is not None, probability, named)


def readings(rounds: Sequence[Path] | None = None) -> list[Reading]:
    """Every reply of every folded round, read by a model fitted without its round."""
    directories = rounds or sorted((p for p in (CORPUS / "rounds").iterdir() if p.is_dir()), key=lambda p: int(p.name))
    out: list[Reading] = []
    for directory in directories:
        models = train(*_corpus_without(directory.name))
        commitments, harmless = round_read(directory)
        out += [_read(directory.name, row, models) for row in commitments + harmless]
    return out


def summary(found: Sequence[Reading], threshold: float) -> dict[str, Any]:
    """The whole check's recall and false blocks at `threshold`, and the model's own precision and
    recall per category (on every reply, whatever the rules said)."""
    commitments = [r for r in found if r.category is not None]
    harmless = [r for r in found if r.category is None]
    blocks = [r for r in found if r.probability >= threshold]
    per_category: dict[str, dict[str, float]] = {}
    for category in sorted({r.category for r in commitments if r.category}):
        wanted = [r for r in commitments if r.category == category]
        named = [r for r in blocks if r.named == category]
        per_category[category] = {
            "recall": round(sum(r.probability >= threshold for r in wanted) / len(wanted), 3),
            "precision": round(sum(r.category == category for r in named) / len(named), 3) if named else 1.0,
        }
    caught = sum(r.rules or r.probability >= threshold for r in commitments)
    false = sum(r.rules or r.probability >= threshold for r in harmless)
    model_false = Counter(r.round for r in harmless if not r.rules and r.probability >= threshold)
    return {
        "threshold": threshold,
        "recall": round(caught / len(commitments), 3),
        "false_blocks": round(false / len(harmless), 3),
        "model_precision": round(sum(r.category is not None for r in blocks) / len(blocks), 3) if blocks else 1.0,
        "model_by_category": per_category,
        "model_false_blocks_by_round": dict(sorted(model_false.items())),
    }


def calibrate(found: Sequence[Reading], thresholds: Sequence[float]) -> list[dict[str, Any]]:
    return [summary(found, t) for t in thresholds]
