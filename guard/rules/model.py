"""The two kinds of data the guard is made of: rules (what commits) and scopes (what lifts a match)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Language = Literal["en", "zh"]


@dataclass(frozen=True)
class Rule:
    """One named way of committing the business, in one language.

    `pattern` is a regular expression over normalised text (NFKC, lower-cased, curly quotes made
    straight); `en` rules run on clauses with a Latin letter or a currency symbol, `zh` rules on
    clauses with any non-ASCII character.  `must_block` are sentences the guard blocks because of
    this rule, `must_pass` near misses it lets through; tests/test_guard_rules.py checks both.

    `kind` marks the rules the engine reads differently: a deadline is a `time` rule and a `verb`
    rule within a few words of each other; a `match` price rule (matching a price the customer
    saw) is not lifted by the customer's figure or a past price; a `figure` rule's matches are the
    amounts of money the figure reader (guard/figures.py) finds — its `pattern` is only the cue
    every such amount contains (a digit or a number word), which the prefilter and the engine use
    to skip a clause cheaply; a `general` rule (the general form of a conclusion, or of a deadline's
    verb) is tried only when no specific rule of its kind was found in the clause."""

    id: str
    category: str
    language: Language
    pattern: str
    must_block: tuple[str, ...]
    must_pass: tuple[str, ...]
    kind: Literal["", "time", "verb", "match", "figure", "general"] = ""


@dataclass(frozen=True)
class Scope:
    """A pattern that changes how a match is read.  `kind` says how the engine applies it
    (negation, hedge, customer_side, ...); the scopes of one kind are tried in order as one
    alternation, per script for `en`/`zh` and over the whole text for `any`."""

    id: str
    kind: str
    language: Literal["en", "zh", "any"]
    pattern: str
