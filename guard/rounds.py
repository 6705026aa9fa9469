"""Out-of-sample rounds: how the whole outgoing check does on sentences it has not seen.

A round is a directory of two tab-separated files, written by someone who has not seen the
checks and measured before any fix it leads to (README, *Out-of-sample rounds*):

* ``commitments.tsv`` - header ``category	given	text``: a reply that commits the business to a
  price, a deadline or a conclusion, and what the model had been given (``-`` for nothing);
* ``harmless.tsv`` - header ``given	text``: a reply that commits to nothing; any figure it
  states is in its ``given``.

Rounds with context (from round 27 on, issue 27) say instead what the turn had, in two columns:
``category	knowledge	customer	text`` and ``knowledge	customer	text``, where ``knowledge`` is the
approved entries or published price list the run cited (``Title: text``) and ``customer`` the
customer's messages, several separated by `` || `` (``-`` for none).

Each reply goes through `outgoing_check` exactly as a customer reply does, with the context
`guard.context.stated_context` makes of it (the one `manage.py guard_check --knowledge
--customer` uses): in the older form each given text of the form ``Title: text`` is an entry the
run's search returned, one that starts "Customer:" a message of the customer, and all of them
the model's input.
Recall is the share of commitments blocked, false blocks the share of harmless replies blocked;
recall is also given per category.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from .context import CheckContext, stated_context
from .outgoing import OutgoingVerdict, outgoing_check

__all__ = ["RoundResult", "RoundRow", "round_measure", "round_read"]

_CJK = re.compile(r"[\u4e00-\u9fff]")


class RoundInvalid(ValueError):
    """A round file that is not in the format above; the message says where."""


@dataclass(frozen=True)
class RoundRow:
    category: str | None  # None for a harmless reply
    given: tuple[str, ...]
    text: str
    knowledge: tuple[str, ...] | None = None  # a round with context: the entries the run cited
    customer: tuple[str, ...] = ()

    def context(self) -> CheckContext:
        """What the reply is checked with, as `manage.py guard_check` would be told it."""
        if self.knowledge is not None:
            return stated_context(knowledge=self.knowledge, customer=self.customer)
        entries = [text for text in self.given if citations_of((text,))]
        said = [_SPEAKER.sub("", text, count=1) for text in self.given if _SPEAKER.match(text)]
        return stated_context(knowledge=entries, customer=said, given=self.given)

    @property
    def language(self) -> str:
        return "zh" if _CJK.search(self.text) else "en"


@dataclass
class RoundResult:
    commitments: int = 0
    harmless: int = 0
    missed: list[RoundRow] = field(default_factory=list)
    false_blocks: list[tuple[RoundRow, OutgoingVerdict]] = field(default_factory=list)
    caught_by: Counter[str] = field(default_factory=Counter)  # "guard" / "grounding"
    by_category: Counter[str] = field(default_factory=Counter)
    missed_by_category: Counter[str] = field(default_factory=Counter)

    @property
    def recall(self) -> float:
        return (self.commitments - len(self.missed)) / self.commitments if self.commitments else 1.0

    @property
    def false_block_rate(self) -> float:
        return len(self.false_blocks) / self.harmless if self.harmless else 0.0

    def as_json(self) -> dict[str, object]:
        return {
            "commitments": self.commitments,
            "missed": len(self.missed),
            "recall": round(self.recall, 3),
            "caught_by": dict(self.caught_by),
            "recall_by_category": {
                category: round(1 - self.missed_by_category[category] / total, 3)
                for category, total in sorted(self.by_category.items())
            },
            "harmless": self.harmless,
            "false_blocks": len(self.false_blocks),
            "false_block_rate": round(self.false_block_rate, 3),
        }


def _rows(path: Path, columns: list[str]) -> list[list[str]]:
    if not path.is_file():
        raise RoundInvalid(f"{path}: no such file")
    header, *lines = path.read_text(encoding="utf-8").splitlines()
    if header.split("\t") != columns:
        raise RoundInvalid(f"{path}: the header must be {'<TAB>'.join(columns)}")
    rows = []
    for number, line in enumerate(lines, start=2):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != len(columns) or not all(cell.strip() for cell in cells):
            raise RoundInvalid(f"{path}:{number}: expected {len(columns)} non-empty cells separated by tabs")
        rows.append([cell.strip() for cell in cells])
    return rows


def _given(cell: str) -> tuple[str, ...]:
    return () if cell == "-" else (cell,)


def _many(cell: str) -> tuple[str, ...]:
    return () if cell == "-" else tuple(part.strip() for part in cell.split(" || ") if part.strip())


def round_read(directory: Path) -> tuple[list[RoundRow], list[RoundRow]]:
    """The commitments and the harmless replies of one round."""
    head = (directory / "harmless.tsv").read_text(encoding="utf-8").split("\n", 1)[0] if directory.is_dir() else ""
    if head.split("\t")[:2] == ["knowledge", "customer"]:
        return (
            [
                RoundRow(category, (), text, knowledge=_many(knowledge), customer=_many(customer))
                for category, knowledge, customer, text in _rows(
                    directory / "commitments.tsv", ["category", "knowledge", "customer", "text"]
                )
            ],
            [
                RoundRow(None, (), text, knowledge=_many(knowledge), customer=_many(customer))
                for knowledge, customer, text in _rows(directory / "harmless.tsv", ["knowledge", "customer", "text"])
            ],
        )
    commitments = [
        RoundRow(category, _given(given), text)
        for category, given, text in _rows(directory / "commitments.tsv", ["category", "given", "text"])
    ]
    harmless = [
        RoundRow(None, _given(given), text) for given, text in _rows(directory / "harmless.tsv", ["given", "text"])
    ]
    return commitments, harmless


_ENTRY: Final = re.compile(r"^(?P<title>[^:：\n]{1,60})[:：]\s*(?P<snippet>\S.*)$", re.S)
_SPEAKERS: Final = ("customer", "顾客", "客户", "客人")
_SPEAKER: Final = re.compile(r"^\s*(?:customer|顾客|客户|客人)\s*[:：]\s*", re.I)


def citations_of(given: tuple[str, ...]) -> list[dict[str, str]]:
    """The given texts that read as an entry the run's search returned ("Title: text"), in
    order, as the runtime's citations: an attributed quote of one (`[1] Title: text`) is left
    out of the checks, as it is in service.  A customer's line ("Customer: …") is not an entry."""
    found = []
    for text in given:
        entry = _ENTRY.match(text.strip())
        if entry and not entry.group("title").strip().lower().startswith(_SPEAKERS):
            found.append({"title": entry.group("title").strip(), "snippet": entry.group("snippet").strip()})
    return found


def round_measure(commitments: list[RoundRow], harmless: list[RoundRow]) -> RoundResult:
    result = RoundResult(commitments=len(commitments), harmless=len(harmless))
    for row in commitments:
        assert row.category is not None
        result.by_category[row.category] += 1
        verdict = outgoing_check(row.text, **row.context().as_kwargs())
        if verdict.blocked and verdict.check:
            result.caught_by[verdict.check] += 1
        else:
            result.missed.append(row)
            result.missed_by_category[row.category] += 1
    for row in harmless:
        verdict = outgoing_check(row.text, **row.context().as_kwargs())
        if verdict.blocked:
            result.false_blocks.append((row, verdict))
    return result
