"""The whole outgoing check: what every customer or peer reply goes through before it is sent.

Four checks in order, the first that objects decides: the commitment guard's named rules
(`engine.py`: the reply's wording promises a price, a deadline, an outcome or a conclusion), the
grounding check (`grounding.py`: a money or time figure the model was not given), the guard's
model of commitments (`classifier.py`: wording no rule has seen), and - when the reply quoted an
approved entry (`quoting.py`) or restated one of its prices (`restating.py`) - whether the rest
applies it to the customer.  Attributed quotes of the entries the run cited, and restatements of
their prices, are left out of the first two: quoting is not committing.

`outgoing_check` is the one entry point: the run loop, `manage.py guard_check`, the replay
preview and the nightly re-check all call it, so they can never disagree about a reply.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .classifier import THRESHOLD, corpus_digest, model_verdict
from .engine import guard_check
from .grounding import unsourced_figures
from .quoting import APPLIED_QUOTE, applies_to_customer, unquoted
from .restating import unrestated
from .rules import RULES, SCOPES, Rule, Scope

__all__ = [
    "GROUNDING",
    "GUARD",
    "RULESET_HASH",
    "UNSOURCED_FIGURE",
    "OutgoingVerdict",
    "outgoing_check",
    "ruleset_hash",
]

GUARD: Final = "guard"
GROUNDING: Final = "grounding"
UNSOURCED_FIGURE: Final = "unsourced_figure"  # the category of a reply stopped by the grounding check


# The code whose source decides verdicts beside the rules: the guard's engine, the grounding check,
# the quoting and restating rules and the figure reader (when it is there).
_SOURCES: Final = (
    "engine.py",
    "grounding.py",
    "quoting.py",
    "restating.py",
    "figures.py",
    "currencies.py",
    "classifier.py",
)


def ruleset_hash(rules: Sequence[Rule] = RULES, scopes: Sequence[Scope] = SCOPES) -> str:
    """SHA-256 of what decides a verdict: the guard's rules and scopes as data (ids, categories,
    kinds, patterns) and the source of the other checks.  Stored with every delivered reply, so
    the nightly re-check can skip the replies the current checks have already read; adding or
    changing a rule changes it."""
    digest = hashlib.sha256()
    for rule in rules:
        digest.update(json.dumps(["rule", rule.id, rule.category, rule.language, rule.kind, rule.pattern]).encode())
    for scope in scopes:
        digest.update(json.dumps(["scope", scope.id, scope.kind, scope.language, scope.pattern]).encode())
    for name in _SOURCES:
        path = Path(__file__).with_name(name)
        if path.exists():
            digest.update(name.encode() + b"\0" + path.read_bytes())
    # The model is what its corpus and its threshold make it.
    digest.update(json.dumps(["model", corpus_digest(), THRESHOLD]).encode())
    return digest.hexdigest()


RULESET_HASH: Final = ruleset_hash()


@dataclass(frozen=True)
class OutgoingVerdict:
    """`check` is the check that objected ("guard" or "grounding"), None when the reply passes;
    `rule` names the rule that fired when the check has named rules."""

    blocked: bool
    category: str | None
    check: str | None
    rule: str | None

    def as_json(self) -> dict[str, Any]:
        return {"blocked": self.blocked, "category": self.category, "check": self.check, "rule": self.rule}


PASSED: Final = OutgoingVerdict(blocked=False, category=None, check=None, rule=None)


def outgoing_check(
    text: str, *, given: Sequence[str] = (), citations: Sequence[Mapping[str, Any]] = ()
) -> OutgoingVerdict:
    """The verdict on one outgoing reply.  `given` is everything the model was given (the
    agent's published texts, the conversation, tool results); `citations` are the approved
    entries the run's search returned, whose attributed quotes are not read as commitments."""
    checked = unrestated(unquoted(text, list(citations)), list(citations))
    verdict = guard_check(checked)
    if verdict.blocked:
        category = verdict.category.value if verdict.category else "unknown"
        return OutgoingVerdict(blocked=True, category=category, check=GUARD, rule=verdict.rule)
    if unsourced_figures(checked, list(given)):
        return OutgoingVerdict(blocked=True, category=UNSOURCED_FIGURE, check=GROUNDING, rule=None)
    if checked != text and applies_to_customer(checked):
        # "…from €35 [1]. That's what you'll pay.": the quote applied to the customer.
        return OutgoingVerdict(blocked=True, category=APPLIED_QUOTE, check=GUARD, rule="quote.applied")
    model = model_verdict(checked)
    if model.category is not None:
        # Words no rule has seen: the model of the corpus reads them as a commitment.
        return OutgoingVerdict(blocked=True, category=model.category, check=GUARD, rule=f"{model.category}.model")
    return PASSED
