"""A published price stays its own item's, in the list's currency.

The contract's price list reaches a reply as a cited result (`approvals/published.py`): its
`units` are its lines, "Birthday cake (8 people): 42.00 EUR", each an item and its amount.  The
checks that leave a quote or a restatement of the context out of what they read
(`quoting.py`, `restating.py`, `context_figures.py`) ask whether every amount of a sentence stands
in the context — not whose amount it is.  So "The Birthday cake (8 people) is 2.20 EUR [1]" (the
croissant's price) or "… 42.00 USD" would reach a customer as the business's price, one the owner
never published.  This check reads the reply against the cited price lists:

* the reply is cut into parts at the end of a sentence or a list line and at a comma;
* a part that names listed items (an item's name in either language, whole or without what its
  brackets add: "birthday cake" for "Birthday cake (8 people)", a plural's "s" aside) and states an
  amount of money must state, for each amount, the amount of an item it names — of *the* item when
  it names one — in the list's currency (a bare "$" or "¥" stands for any dollar or yen);
* a part that names no listed item is left to the other checks.

Pure: text and citations in, the offending part out (None when there is none).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, Final

from .figures import Figure, read

__all__ = ["misattributed_price"]

PUBLISHED_PRICING: Final = "pricing"
# A part ends at a sentence's or a list line's end, and at a comma ("." and "," not between digits).
_PART_END: Final = re.compile(r"[!?。！？;；\n•]+|\.(?!\d)|[,，、](?!\d)")
_BRACKETED: Final = re.compile(r"\s*[（(][^）)]*[）)]")
_NAME_END: Final = re.compile(r"\s*[:：]\s*")
_CJK: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# A symbol that names a family of currencies.
_FAMILIES: Final = {"$": ("USD", "SGD", "AUD", "CAD", "HKD", "NZD", "TWD"), "¥": ("CNY", "JPY")}


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _money(text: str) -> list[Figure]:
    return [figure for figure in read(text) if figure.kind == "money"]


def _pattern(name: str) -> re.Pattern[str] | None:
    name = " ".join(name.split())
    if len(name) < 2:
        return None
    if _CJK.search(name):
        return re.compile(re.escape(name))
    return re.compile(r"(?<![\w])" + re.escape(name) + r"(?:e?s)?(?![\w])")


class _Item:
    def __init__(self, line: str, amount: Decimal, currency: str) -> None:
        name = _NAME_END.split(_normal(line))[0].strip()
        names = {name, _BRACKETED.sub("", name).strip()}
        self.patterns = [p for p in (_pattern(n) for n in names if n) if p is not None]
        self.amount = amount
        self.currency = currency

    def named_in(self, part: str) -> bool:
        return any(pattern.search(part) for pattern in self.patterns)


def _items(citations: Sequence[Mapping[str, Any]]) -> list[_Item]:
    items = []
    for citation in citations:
        if citation.get("published") != PUBLISHED_PRICING:
            continue
        for line in citation.get("units") or []:
            line = str(line)
            head, _, tail = line.rpartition(":") if ":" in line else line.rpartition("：")
            amounts = _money(_normal(tail))
            if head and len(amounts) == 1:
                items.append(_Item(line, amounts[0].value, amounts[0].unit))
    return items


def _same_currency(said: str, listed: str) -> bool:
    said = {"RMB": "CNY"}.get(said, said)
    return said == listed or listed in _FAMILIES.get(said, ())


def misattributed_price(text: str, citations: Sequence[Mapping[str, Any]]) -> str | None:
    """The first part of `text` that tells a listed item's price other than the published one
    (another item's amount, or the amount in another currency), else None."""
    items = _items(citations)
    if not items:
        return None
    for part in _PART_END.split(_normal(text)):
        named = [item for item in items if item.named_in(part)]
        if not named:
            continue
        for figure in _money(part):
            if not any(figure.value == item.amount and _same_currency(figure.unit, item.currency) for item in named):
                return part.strip()
    return None
