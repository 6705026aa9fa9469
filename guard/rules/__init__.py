"""The guard's rules and scopes, as data.  `RULES` is every rule in the order the engine tries them
(within a category and a language, the first rule that matches at a position wins, as in one
alternation); `SCOPES` every scope pattern."""

from __future__ import annotations

from typing import Final

from . import conclusion, deadline, outcome, price, scopes
from .model import Language, Rule, Scope

__all__ = ["RULES", "SCOPES", "Language", "Rule", "Scope"]

RULES: Final[tuple[Rule, ...]] = price.RULES + deadline.RULES + conclusion.RULES + outcome.RULES
SCOPES: Final[tuple[Scope, ...]] = scopes.SCOPES
