"""The owner's taboos on outgoing replies (issue 13, "Learn"): a reply that says what an approved
taboo lesson forbids ("we never say cheap") is not delivered.

Pure matching, no ORM: the phrases come from `knowledge.selectors.taboos_in_effect`, read once
per turn.  The loop (runtime/loop.py) checks every outgoing customer or peer reply here, next to
the commitment guard, and replaces a reply that is caught with the same safe wording.

How a phrase matches a reply, both normalised alike — NFKC, as the commitment guard does (full-
width letters and digits become ASCII: ｃｈｅａｐ is cheap), then case-folded, curly quotes
straightened and runs of blanks made one space:
- a phrase with a Chinese or Japanese character matches anywhere (Chinese has no spaces between
  words: 便宜 is found in 这个很便宜的);
- any other phrase matches whole words only, so that "cheap" does not fire on "cheaper",
  "cheapest" or "cheapskate": the owner forbade the word they said, and a taboo on "cheaper" is
  a lesson of its own.  Spaces inside a phrase match any blanks ("low  cost" is "low cost").
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from typing import Protocol, TypeVar

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
_BLANKS = re.compile(r"\s+")
# A word goes on while letters (any Latin-script one: café), digits or an apostrophe inside it
# follow; CJK characters are word characters to `\b`, so the edges are spelled out.
_WORD_CHAR = r"0-9a-z\u00c0-\u024f\u1e00-\u1eff"


class Forbidden(Protocol):
    """A taboo as the loop hands it over (`knowledge.selectors.Taboo`)."""

    @property
    def entry_id(self) -> int: ...

    @property
    def phrase(self) -> str: ...


def normalise(text: str) -> str:
    folded = text if text.isascii() else unicodedata.normalize("NFKC", text)
    return _BLANKS.sub(" ", folded.casefold().translate(_QUOTES))


@functools.lru_cache(maxsize=1024)
def _pattern(phrase: str) -> re.Pattern[str] | None:
    """The compiled form of one phrase (phrases repeat from turn to turn; compiling is the cost)."""
    words = normalise(phrase).strip(" \"'")
    if not words:
        return None
    body = r"\s+".join(re.escape(word) for word in words.split(" "))
    if _CJK.search(words):
        return re.compile(body)
    return re.compile(rf"(?<![{_WORD_CHAR}]){body}(?![{_WORD_CHAR}])")


def matches(text: str, phrase: str) -> bool:
    """Whether `text` says `phrase` (the rules above)."""
    pattern = _pattern(phrase)
    return pattern is not None and pattern.search(normalise(text)) is not None


T = TypeVar("T", bound=Forbidden)


def taboo_hit(text: str, taboos: Iterable[T]) -> T | None:
    """The first taboo the reply breaks, or None."""
    normalised = None
    for taboo in taboos:
        pattern = _pattern(taboo.phrase)
        if pattern is None:
            continue
        if normalised is None:
            normalised = normalise(text)
        if pattern.search(normalised):
            return taboo
    return None
