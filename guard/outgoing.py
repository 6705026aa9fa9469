"""The whole outgoing check: what every customer or peer reply goes through before it is sent.

Four checks in order, the first that objects decides: the commitment guard's named rules
(`engine.py`: the reply's wording promises a price, a deadline, an outcome or a conclusion), the
grounding check (`grounding.py`: a money or time figure the model was not given), the guard's
model of commitments (`classifier.py`: wording no rule has seen), and - when the reply quoted an
approved entry (`quoting.py`) or restated one of its prices (`restating.py`) - whether the rest
applies it to the customer.  Attributed quotes of the entries the run cited, and restatements of
their prices, are left out of the first two: quoting is not committing.  A published price list
cited is held to its items besides (`published_items.py`): a listed amount told as another item's,
or in another currency, is not the business's price.

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
from .context_figures import agrees_to_customer, context_figures_masked, context_restated_removed
from .engine import guard_check
from .grounding import unsourced_figures
from .published_items import misattributed_price
from .quoting import APPLIED_QUOTE, applies_to_customer, unquoted
from .restating import unrestated
from .rules import RULES, SCOPES, Rule, Scope
from .saying_back import said_back_removed

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
# The rule of a reply that agreed to the customer's own figure.
CUSTOMER_FIGURE_AGREED: Final = "price.customer_figure_agreed"
# The rule of a reply that told a listed item's price other than the published one.
PUBLISHED_PRICE_MISATTRIBUTED: Final = "price.published_misattributed"


# The code whose source decides verdicts beside the rules: the guard's engine, the grounding check,
# the quoting and restating rules and the figure reader (when it is there).
_SOURCES: Final = (
    "engine.py",
    "grounding.py",
    "quoting.py",
    "restating.py",
    "saying_back.py",
    "context_figures.py",
    "context.py",
    "figures.py",
    "currencies.py",
    "classifier.py",
    "published_items.py",
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
    text: str,
    *,
    given: Sequence[str] = (),
    citations: Sequence[Mapping[str, Any]] = (),
    customer: Sequence[str] = (),
) -> OutgoingVerdict:
    """The verdict on one outgoing reply.  `given` is everything the model was given (the
    agent's published texts, the conversation, tool results); `citations` are the approved
    entries the run's search returned, whose attributed quotes and restated prices are not read
    as commitments; `customer` the customer's (or peer's) own messages of the conversation, whose
    figures said back and words quoted in a question are not either (`saying_back.py`).  The
    customer's messages and the cited entries count as given whether or not `given` holds them."""
    verdict, checked = rules_verdict(text, given=given, citations=citations, customer=customer)
    if verdict is not None:
        return verdict
    model = model_verdict(checked)
    if model.category is not None:
        # Words no rule has seen: the model of the corpus reads them as a commitment.
        return OutgoingVerdict(blocked=True, category=model.category, check=GUARD, rule=f"{model.category}.model")
    return PASSED


def rules_verdict(
    text: str,
    *,
    given: Sequence[str] = (),
    citations: Sequence[Mapping[str, Any]] = (),
    customer: Sequence[str] = (),
) -> tuple[OutgoingVerdict | None, str]:
    """Every check but the model, in order: the verdict when one objects (else None), and the
    text the model reads — the reply without what the context says (quotes, restatements, the
    customer's words said back).  `outgoing_check` and the model's calibration share it."""
    # Whole sentences first (the customer's words said back, the context said again), then what the
    # restating rule takes out of the sentences left, clause by clause.
    checked = said_back_removed(unquoted(text, list(citations)), list(customer))
    checked = context_restated_removed(checked, list(citations), list(customer))
    checked = unrestated(checked, list(citations))
    given = [*given, *customer, *(f"{c.get('title') or ''}\n{c.get('snippet') or ''}" for c in citations)]
    verdict = guard_check(checked)
    if verdict.blocked:
        category = verdict.category.value if verdict.category else "unknown"
        return OutgoingVerdict(blocked=True, category=category, check=GUARD, rule=verdict.rule), checked
    if misattributed_price(text, list(citations)) is not None:
        # "The Birthday cake is 2.20 EUR [1]": a listed amount, but another item's (published_items.py).
        return OutgoingVerdict(blocked=True, category="price", check=GUARD, rule=PUBLISHED_PRICE_MISATTRIBUTED), checked
    if agrees_to_customer(text, list(citations), list(customer)):
        # "You said €500 tomorrow — yes.": the customer's figure, agreed to.
        return OutgoingVerdict(blocked=True, category="price", check=GUARD, rule=CUSTOMER_FIGURE_AGREED), checked
    if unsourced_figures(checked, list(given)):
        return OutgoingVerdict(blocked=True, category=UNSOURCED_FIGURE, check=GROUNDING, rule=None), checked
    if checked != text and applies_to_customer(checked):
        # "…from €35 [1]. That's what you'll pay.": the quote applied to the customer.
        return OutgoingVerdict(blocked=True, category=APPLIED_QUOTE, check=GUARD, rule="quote.applied"), checked
    # The model never reads a figure the context gave as a commitment: it reads the words.
    return None, context_figures_masked(checked, list(citations), list(customer))
