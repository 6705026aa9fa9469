"""Quoting is not committing: a reply may show what an approved entry says, attributed to it.

A price, a time or a condition that stands in an approved entry the run's search returned is
what the business has published; showing it as the entry says it, attributed to that entry, is
not a promise to this customer.  Applying it to the customer's own case ("your cake will cost
€35 and be ready on Friday") is, and so is any figure no entry gave.  So the server takes the
attributed quotes out of a customer or peer reply, and the commitment guard and the grounding
check read everything else exactly as before (`loop.py`).  Nothing here trusts the model: a
quote is recognised only when all of this holds.

* It is attributed: ``[n] Title: passage`` (a line of its own, the offline model's form), or
  ``Title says: passage [n]`` as a sentence of its own (``Our Title says``, ``According to our
  Title page``, ``根据「Title」：…``, ``我们的Title上写着：…``) — where ``n`` is the citation number the
  search gave the entry and ``Title`` that entry's title.  Nothing else may stand in the lead:
  "Your Title says: …" and "Title says your cake costs: …" are not attributions.
* The passage is the entry's own words: one or more whole sentences or list items of the
  snippet the search returned, word for word (case, spacing, punctuation and quote marks aside),
  so a figure the entry did not give, or a sentence cut to drop its condition ("delivered the
  next day" out of "Orders placed before noon are delivered the next day"), is not a quote.
* After ``[n]`` the sentence ends: "… €35 [1] is what you'll pay" is not a quote.

When a reply quoted something, what is left of it must not apply the quote to the customer
either ("That's what you'll pay."): `applies_to_customer` is that check, a small rule with its
own examples.  Only approved entries valid now reach a customer's or a peer's search, so only
they can be quoted; and an entry's own words are quoted as they stand, a promise among them
included — what an owner approved is theirs to say (README, *Limits*).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, Final

from .figures import read
from .restating import clauses, defers, greeting_removed, promise_refusals_removed
from .saying_back import record

__all__ = ["APPLIED_QUOTE", "applies_to_customer", "unquoted"]

APPLIED_QUOTE: Final = "applied_quote"  # the category of a reply that applied a quote to the customer

_TOKEN: Final = re.compile(r"\d+(?:[.,]\d+)*|[a-z]+(?:'[a-z]+)?|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[$€£¥%]")
# Where a sentence or a list item of a snippet ends ("." not between digits: "€3.50").
_UNIT_END: Final = re.compile(r"[!?。！？;；•\n…]+|\.(?!\d)")
_SENTENCE_START: Final = re.compile(r"(?:^|(?<=[.!?。！？]))\s*")
_QUOTE_MARKS: Final = "\"'“”‘’「」『』《》〈〉()（）"
_LEAD_EN: Final = (
    r"(?:(?:according to|as per|per|in)\s+)?(?:(?:our|the)\s+)?{title}"
    r"(?:\s+(?:entry|page|list|section|document|notice))?(?:\s+(?:says|said|states|reads|lists|shows))?"
)
_LEAD_ZH: Final = (
    r"(?:根据|按照|据)?(?:我们的?|本店的?)?{title}(?:上|中|里|里面)?(?:写着|写道|写的是|说|显示|列出|规定)?"
)
_LINE_FORM: Final = re.compile(r"^\s*(?:[-*•]\s*)?\[(\d{1,2})\]\s*(.+?)\s*$")
# A quote's citation mark ends its sentence: "… [1]." or "… [1]" at the end of the line.
_MARKER: Final = re.compile(r"\s*\[(\d{1,2})\]\s*(?:[.。!！?？]\s*|$)")


def _normal(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return re.sub(r"\s+", " ", text.translate({ord(c): " " for c in _QUOTE_MARKS})).strip()


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(_normal(text))


def _units(snippet: str) -> list[list[str]]:
    return [tokens for part in _UNIT_END.split(_normal(snippet)) if (tokens := _tokens(part))]


def _stands_in(passage: str, snippet: str) -> bool:
    """Whether `passage` is whole consecutive sentences or list items of `snippet`, word for word."""
    wanted = _tokens(passage)
    if not wanted:
        return False
    units = _units(snippet)
    for first in range(len(units)):
        run: list[str] = []
        for unit in units[first:]:
            run = run + unit
            if len(run) >= len(wanted):
                if run == wanted:
                    return True
                break
    return False


def _attributes(lead: str, title: str) -> bool:
    title = _normal(title)
    if not title:
        return False
    lead = _normal(lead)
    if re.fullmatch(_LEAD_EN.format(title=re.escape(title)), lead):
        return True
    # Chinese runs together: 「」 and spaces around the title do not count.
    bare = re.escape(title.replace(" ", ""))
    return re.fullmatch(_LEAD_ZH.format(title=bare), lead.replace(" ", "")) is not None


def _quote(lead_and_passage: str, cited: Mapping[str, Any] | None) -> bool:
    """Whether "lead: passage" attributes a passage of `cited`'s snippet to it."""
    if cited is None:
        return False
    for colon in re.finditer(r"[:：]", lead_and_passage):
        lead, passage = lead_and_passage[: colon.start()], lead_and_passage[colon.end() :]
        if _attributes(lead, str(cited.get("title") or "")) and _stands_in(passage, str(cited.get("snippet") or "")):
            return True
    return False


def _cited(number: str, citations: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    n = int(number)
    return citations[n - 1] if 1 <= n <= len(citations) else None


def _without_quotes(line: str, citations: Sequence[Mapping[str, Any]]) -> tuple[str, bool]:
    """The line with its attributed quotes taken out, and whether there were any."""
    whole = _LINE_FORM.match(line)
    if whole and _quote(whole.group(2), _cited(whole.group(1), citations)):
        return "", True
    found = False
    while True:
        for marker in _MARKER.finditer(line):
            cited = _cited(marker.group(1), citations)
            starts = [m.end() for m in _SENTENCE_START.finditer(line, 0, marker.start())]
            start = next((s for s in starts if _quote(line[s : marker.start()], cited)), None)
            if start is not None:
                line, found = (line[:start] + " " + line[marker.end() :]).strip(), True
                break
        else:
            return line, found


def unquoted(text: str, citations: Sequence[Mapping[str, Any]]) -> str:
    """`text` without its attributed quotes of `citations` (the run's approved search results, in
    citation order, each with its ``title`` and ``snippet``): what the server's checks read."""
    return "\n".join(_without_quotes(line, citations)[0] for line in text.split("\n"))


# Words that address the customer's own case, and words of price, time or outcome.  A sentence
# left after a quote that holds one of each applies the quote to the customer: "That's what
# you'll pay.", "So yours will be ready then.", "您的蛋糕就是这个价。"  The agent's own fixed
# sentences hold no such pair ("the owner confirms those personally", "让店主和您确认").
_YOU: Final = re.compile(r"\b(?:you|your|yours|you'll|you're|you'd)\b|您|你")
_APPLYING: Final = re.compile(
    r"\b(?:pay|paying|cost|costs|price|charge[sd]?|owe|total|ready|deliver(?:ed|y)?|arrive[sd]?|ship(?:ped)?"
    r"|guarantee[sd]?|promise[sd]?|free|then|that much|this much|that price|today|tonight|tomorrow)\b"
    r"|付|花|收到|价|钱|费|做好|好了|送到|送达|到货|拿到|保证|承诺|免费|这么多|今天|今晚|明天|后天"
)


# "Feel free to pop in": an invitation, not a price.
_FEEL_FREE: Final = re.compile(r"\bfeel free\b|\bfree to (?:ask|call|pop|drop|come|write|message|contact|reach)\b")


def applies_to_customer(text: str) -> bool:
    """Whether a clause of `text` (a reply with its quotes taken out) speaks of the customer's own
    price, time or outcome: words of both kinds, or the customer and a figure ("For you:
    tomorrow."), unless the clause leaves it to someone else ("the tuner will confirm the cost for
    your piano after seeing it")."""
    for line in re.split(r"[.!?。！？\n]+", text):
        sentence = _FEEL_FREE.sub(" ", greeting_removed(_normal(line)))
        if not _YOU.search(sentence):
            continue
        # What the sentence says itself: each clause that leaves nothing to someone else, without a
        # promise it refuses ("nobody can promise a result"), speaking to the customer.
        for start, end in clauses(sentence):
            own = promise_refusals_removed(sentence[start:end])
            if defers(sentence[start:end]) or not _YOU.search(own) or record(own):
                continue  # left to someone else, not the customer's, or what already happened
            if _APPLYING.search(own) or read(own):
                return True
    return False
