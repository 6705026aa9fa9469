"""Restating a published price is not committing either, when it stays the business's price.

A customer who asks what a hot desk costs should hear the price list's answer, and a model says it
in its own words at least as often as in the quoting form (``quoting.py``): "Our hot desk is
S$25/day", "Standard tuning is listed from €110", "屏幕维修我们的公示价格是¥399起".  Blocking those
told customers nothing and counted as false blocks in every out-of-sample round (README,
*Out-of-sample rounds*).  What the red line forbids is a price promised to *this* customer: one
no entry gave, one taken off its item, one with its "from" dropped, or one applied to the
customer's case ("for your upright it will be exactly €110").  So a clause restates, and is left
out of the commitment guard and the grounding check as a quote is, only when all of this holds:

* it states a figure, and every figure in it stands in one list item or
  sentence (a *unit*) of one approved entry the run's search returned, with the same number, unit
  and bound ("from €35" is not "€35");
* it names that unit's item and nothing else: each of its words (a short list of listing words
  aside: "our", "price", "listed", "published", 价格, 公示, …) stands in the entry's title or in that
  unit, and at least one does — so "Wedding cakes from €35" is not the birthday cake's price, and
  "[1] Delivery: …" is not the price list's;
* a citation mark in it, if any, is that entry's number;
* no clause of its sentence addresses the customer ("you", "your", 您, 你) or holds a word that
  makes a price firm or special ("exactly", "guaranteed", "total", "discount", "will", 保证, 一共,
  优惠, …) — a greeting aside, and a clause that leaves the decision to someone else without
  promising it ("the tuner will confirm the cost for your piano after seeing it").

A clause with a time, a duration or a date and no price is restated only when it says its whole
unit ("refunds are processed within 3–5 working days"): cut from its sentence, a published time
may have lost what it depended on ("delivered the next day" without "orders placed before noon").
An item named in one clause and priced in the next ("一对一钢琴课每节45分钟，标价200元") is read as
the whole sentence.  A hedge in a clause taken out ("作品烧制一般需要2-3周") is left in its place,
since it reaches the clauses after it.  Whatever the reply
says besides the restated clauses is read by every check as before, and
`quoting.applies_to_customer` reads what is left for the price applied to the customer ("That's
what you'll pay.").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, Final

from .engine import hedged
from .figures import Figure, read

__all__ = ["clauses", "defers", "greeting_removed", "promise_refusals_removed", "unrestated"]

# Where a clause ends inside a sentence, and where a sentence or a list item ends.
_SENTENCE_END: Final = re.compile(r"[!?。！？;；•\n]+\s*|\.(?!\d)\s*")
_CLAUSE_BREAK: Final = re.compile(
    r"[,，、～~—–](?!\d)\s*|\s+(?:but|while|whereas|though|although)\s+|(?:而且|并且|但是|不过|另外)"
)
_UNIT_END: Final = re.compile(r"[!?。！？;；•\n…]+|\.(?!\d)")
_MARK: Final = re.compile(r"\[(\d{1,2})\]")
_GREETING: Final = re.compile(
    r"^\s*(?:hi|hello|hey|dear)\b[^,，.!！]*[,，.!！]?|^\s*(?:您好|你好|亲爱的)[^,，。!！]{0,6}[,，。!！]?", re.I
)
_EN_WORD: Final = re.compile(r"[a-z][a-z0-9'-]*|\d+[a-z]+")
_CJK: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# The words a price is listed with, not the item it is the price of.
_LISTING_EN: Final = frozenset(
    "according a an the our we us its it this that is are be was were has have for of at on in to as and or with "
    "per each "
    "price prices priced pricing rate rates fee fees cost costs charge charges tariff list listed lists published "
    "website site brochure flyer leaflet catalogue catalog menu board comes come goes go runs run sits sit tag "
    "base basic set says say shown states state currently "
    "person people head hour hours day days night nights week weeks month months year years session sessions "
    "visit visits time times "
    "standard current currently normal normally usual usually regular starts start starting from begins begin "
    "beginning which stated shows says reads page entry section menu sheet set there here currently also "
    "just about only then so hi hello".split()
)
_LISTING_ZH: Final = re.compile(
    r"价目表|价格表|收费标准|报价说明|标价|公示|公布|价格|价钱|收费|费用|定价|目前|现在|我们的?|本店的?|店里的?|"
    r"写的是|写的|标的是|定的是|上面|网站|官网|小程序|宣传单|菜单|单子|目录|一般|基础|这类|这种|这项|这个|该|的|是|为|起|元|块|每|一|次|个|按|收|要|在|上|写着|显示|列|标|注明|根据|按照|哦|呢|啊|呀|哈|吧|了|这|那|~|～"
)
_YOU: Final = re.compile(r"\b(?:you|your|yours|you'll|you're|you'd|yourself)\b|您|你")
# A word that makes a price firm, special or this customer's.
_FIRM: Final = re.compile(
    r"\b(?:exact(?:ly)?|guarantee\w*|promis\w*|lock\w*|hold|held|fixed|total|totals|altogether|in all|comes? to"
    r"|match\w*|deal|discount\w*|off|waive\w*|free|special|reserved|agreed|confirmed|final|definitely|sure"
    r"|nothing more|no more|at most|max(?:imum)?|cap(?:ped)?|will|won't|'ll|can|today|tonight|tomorrow|now)\b"
    r"|保证|承诺|一共|总共|合计|总价|就行|给您|给你|算您|算你|便宜|优惠|打折|折扣|特价|锁定|只收|只要|最多|封顶|"
    r"不超过|确定|肯定|一定|全包|包含|免费|免|今天|明天|这次"
)
# A clause that leaves the price or the decision to someone else: it may address the customer.
DEFERS: Final = re.compile(
    r"\b(?:confirm\w*|quote[sd]?|quotation|depend\w*|decide[sd]?|assess\w*|estimate\w*|subject to|var(?:y|ies)"
    r"|discuss\w*|go (?:through|over)|talk\w* (?:you )?(?:through|about)|let you know|tell you|get back"
    r"|need(?:s|ed)? to (?:see|look|check|inspect|visit)|would need|after (?:seeing|looking|checking|an? \w+)"
    r"|once (?:they|we|he|she)|before anyone)\b"
    r"|\b(?:explain\w*|advise\w*|walk you through|whether|might|may|could|possibly)\b"
    r"|能不能|能否|是否|会不会|可不可以|有没有"
    r"|可能|也许|或许|要不要|需不需要|用不用|怎么|多少|另计|另外收"
    r"|确认|为准|取决|要看|得看|看情况|视|报价|评估|核定|说明|沟通|决定|检测|勘测|勘察|之后才|以后才|根据.{0,12}确定"
    r"|(?:才能|再|后)确定|(?:也)?(?:会)?(?:有所)?不(?:同|一样)|转给|转交"
    r"|(?:告诉|通知|联系|告知)(?:您|你)|(?:跟|和|与)(?:您|你)(?:确认|沟通|商量|联系)"
)
# A deferral that still promises: "the owner will confirm it's guaranteed".
_STILL_FIRM: Final = re.compile(r"\b(?:guarantee\w*|promis\w*|exactly|definitely)\b|保证|承诺|一定|肯定")
# "Nobody can promise a result", "我们没法保证": a promise refused is none.
_REFUSED_PROMISE: Final = re.compile(
    r"\b(?:nobody|no one|none of us)\b[^,.;]*"
    r"|\b(?:rather than|instead of|without) (?:promising|guaranteeing|committing to|confirming)\b[^,.;]*"
    r"|\b(?:don't|do not|doesn't|does not) have (?:a |an |any )?[a-z -]{0,30} to (?:give|tell|offer|quote) you\b"
    r"|\b(?:can[' ]?t|cannot|can not|won[' ]?t|couldn[' ]?t|unable to|not able to|not in a position to)"
    r" (?:\w+ ){0,2}(?:promise|guarantee|say|confirm|tell|commit|predict|quote|know)\w*[^,.;]*"
    r"|(?:没法|不能|无法|不敢|没办法|不可能|不好)(?:给(?:您|你))?(?:保证|承诺|打包票|答应|确定|确认|说|预测|判断)[^,，。；]*"
)


def promise_refusals_removed(text: str) -> str:
    return _REFUSED_PROMISE.sub(" ", text)


def defers(clause: str) -> bool:
    """Whether a clause leaves the price or the decision to someone else without promising it."""
    clause = _REFUSED_PROMISE.sub(" ", clause)
    return DEFERS.search(clause) is not None and _STILL_FIRM.search(clause) is None


def greeting_removed(sentence: str) -> str:
    return _GREETING.sub(" ", sentence)


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _words(text: str) -> tuple[set[str], set[str]]:
    """The clause's item words: English words (a plural's "s" aside; a hyphenated word is read as
    its parts) and Chinese characters, without the listing words or the figures themselves."""
    latin = {_stem(part) for word in _EN_WORD.findall(text) for part in word.split("-") if part}
    latin -= {_stem(word) for word in _LISTING_EN}
    chinese = set(_CJK.findall(_LISTING_ZH.sub(" ", text)))
    return latin, chinese


def _stem(word: str) -> str:
    word = word.strip("'-")
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _key(figure: Figure) -> tuple[str, Decimal, str, str, Decimal | None, Decimal | None]:
    unit = {"¥": "CNY", "RMB": "CNY", "$": "USD"}.get(figure.unit, figure.unit)
    return figure.kind, figure.value, unit, figure.bound, figure.low, figure.high


def _units(entry: Mapping[str, Any]) -> list[str]:
    snippet = _normal(str(entry.get("snippet") or ""))
    return [part for part in _UNIT_END.split(snippet) if part and not part.isspace()]


def _figure_text(clause: str, figures: Sequence[Figure]) -> str:
    """The clause with its figures blanked out, so their digits and currency words are not item
    words."""
    for figure in sorted(figures, key=lambda f: f.span[0], reverse=True):
        clause = clause[: figure.span[0]] + " " + clause[figure.span[1] :]
    return clause


def _restated(clause: str, citations: Sequence[Mapping[str, Any]]) -> list[Figure]:
    """The figures of `clause` when it restates one item of `citations`, else none."""
    # 0 and 1 tell nothing ("a day pass" is no duration), as for the grounding check.
    figures = [figure for figure in read(clause) if figure.kind == "money" or figure.value not in (0, 1)]
    if not figures:
        return []
    # A time or a condition without a price is restated only with the whole of its unit: cut from
    # it, it may have lost what it depended on.
    whole = not any(figure.kind == "money" for figure in figures)
    marks = {int(mark) for mark in _MARK.findall(clause)}
    latin, chinese = _words(_MARK.sub(" ", _figure_text(clause, figures)))
    if not latin and not chinese:
        return []
    wanted = {_key(figure) for figure in figures}
    for number, entry in enumerate(citations, start=1):
        if marks and marks != {number}:
            continue
        title = _normal(str(entry.get("title") or ""))
        for unit in _units(entry):
            if not wanted <= {_key(figure) for figure in read(unit)}:
                continue
            item_latin, item_chinese = _words(f"{title} {unit}")
            item_latin |= {_stem(word) for word in _EN_WORD.findall(f"{title} {unit}")}
            item_latin |= {_stem(part) for word in _EN_WORD.findall(f"{title} {unit}") for part in word.split("-")}
            item_chinese |= set(_CJK.findall(f"{title} {unit}"))
            if latin <= item_latin and chinese <= item_chinese:
                if not whole:
                    return figures
                unit_latin, unit_chinese = _words(_figure_text(unit, read(unit)))
                if unit_latin <= latin and unit_chinese <= chinese:
                    return figures
    return []


def clauses(sentence: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for gap in _CLAUSE_BREAK.finditer(sentence):
        spans.append((start, gap.start()))
        start = gap.end()
    spans.append((start, len(sentence)))
    return [(a, b) for a, b in spans if sentence[a:b].strip()]


def _applies(sentence: str) -> bool:
    """Whether a clause of the sentence speaks to the customer or makes a price firm, other than
    to greet them or to leave the decision to someone else."""
    sentence = greeting_removed(sentence)
    for start, end in clauses(sentence):
        clause = sentence[start:end]
        if defers(clause):
            continue
        if _YOU.search(clause) or _FIRM.search(_REFUSED_PROMISE.sub(" ", clause)):
            return True
    return False


def _sentences(text: str) -> list[str]:
    """The sentences of `text`, each with the punctuation and space after it: together, the text."""
    found, start = [], 0
    for end in _SENTENCE_END.finditer(text):
        found.append(text[start : end.end()])
        start = end.end()
    return [*found, text[start:]] if start < len(text) else found


def unrestated(text: str, citations: Sequence[Mapping[str, Any]]) -> str:
    """`text` without the clauses that restate a price of `citations` (the run's approved search
    results, in citation order) as the module docstring describes: what the checks read."""
    if not citations:
        return text
    kept: list[str] = []
    for sentence in _sentences(text):
        lowered = _normal(sentence)
        if len(lowered) != len(sentence) or _applies(lowered):
            kept.append(sentence)
            continue
        cut: list[tuple[int, int]] = []
        unread = False  # a clause with a figure that restates nothing
        for start, end in clauses(lowered):
            if _restated(lowered[start:end], citations):
                cut.append((start, end))
            else:
                unread = unread or bool(read(lowered[start:end]))
        if unread:
            # The item may be named in one clause and its price in the next ("一对一钢琴课每节45分钟，
            # 标价200元"): the sentence as a whole, after its greeting, may restate it.
            greeting = _GREETING.match(lowered)
            begin = greeting.end() if greeting else 0
            end = len(lowered.rstrip(" .!?。！？;；•\n"))
            if begin < end and _restated(lowered[begin:end], citations):
                cut = [(begin, end)]
        for start, end in sorted(cut, reverse=True):
            # What is taken out is the clause; a hedge in it ("作品烧制一般需要2-3周") still reaches the
            # clauses after it, so a word of hedging stands in its place.
            stand_in = (
                (" 一般 " if _CJK.search(lowered[start:end]) else " usually ") if hedged(lowered[start:end]) else " "
            )
            sentence = sentence[:start] + stand_in + sentence[end:]
        kept.append(sentence)
    return "".join(kept)
