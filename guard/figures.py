"""The figure reader: the money, durations, dates, times and percentages a text states.

One reader for every check that asks "does this reply state a figure?" — the grounding check
(`grounding.py`) today, the guard's price rules later — so they cannot disagree about what a
figure is.  Pure: no Django, no database, no network.

`read(text)` returns the figures in the order they stand.  The reader normalises the text
itself (NFKC, so full-width digits and "￥" become ASCII digits and "¥"; then lower-cased), and
every `Figure.span` is a pair of offsets into that normalised text (`normalise(text)`), not into
the text as given.

A `Figure` is

* `kind` — ``money``, ``duration``, ``date``, ``time`` or ``percent``;
* `value` — the number the figure states: the amount (multipliers applied: "5k", "two grand",
  "1.5万" are 5000, 2000, 15000), the count of `unit`s of a duration, the day of the month of a
  date (a weekday: 1 for Monday to 7 for Sunday), the hour of a time on the 24-hour clock with
  minutes as a fraction ("5:30pm" is 17.5; a time without am/pm or 上午/下午 is taken as
  written), the percentage.  For a bound it is the bound ("up to €30" is 30); for a range the
  low end;
* `unit` — money: the ISO 4217 code when the form names one currency ("€", "quid", "日元",
  "chf", "US dollars"), else the family it names ("$" for "$", dollars and bucks; "¥" for "¥"; "rupee",
  "franc", "peso", "krone", "krona"), "" when it names none ("two grand", "a tenner", "pay 30");
  元/块/毛/人民币 are CNY.  Duration: ``minute``, ``hour``, ``day``, ``business_day``, ``week``,
  ``month`` ("a fortnight" is 14 ``day``).  Date: the month as two digits ("06") when the text
  gives it, "" when not ("18号"), ``weekday`` for a weekday ("周五", "next wednesday").  Time:
  ``clock``.  Percent: ``%``, or ``折`` for a Chinese discount: "八折" is value 80 — the price
  becomes 80% of what it was — and "八五折" 85;
* `bound` — ``exact``, ``at_most`` ("up to", "at most", "no more than", "won't pay more than",
  "under", "max", "within", 不会超过, 最多, 以内/之内/内), ``at_least`` ("at least", "from",
  "or more", 至少, 起, 以上) or ``range`` ("3-5 days", "3 to 5 days", "between €20 and €30",
  三到五天, 两三天);
* `low` / `high` — the ends: both the value when exact, None on the open side of a bound.

What is not a figure: a number with no unit ("I found 2 entries", "room 101", a list number),
a unit that is something else ("切12块" and "一块蛋糕" are pieces — 块 is money only where a
phrase ends or money follows; "2 grand pianos"; "a 5k run"), a year ("2026").  A bare number
counts as money after a paying word ("you'll pay 30", "the fee is 150", "只要两百"), and a bare
Chinese figure in hundreds, thousands or ten-thousands closing a clause ("换屏幕三百五。") counts
as yuan, as people say prices.  The ISO codes that are English words ("all", "top", "cup",
"pen") count only when written in capitals ("ALL 5000").  Years and other long durations are
not read.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Final

from .currencies import ISO_4217, SYMBOLS, WORD_CODES, WORDS_EN, WORDS_ZH

__all__ = [
    "BOUNDS",
    "KINDS",
    "NUMBER_CUE_EN",
    "NUMBER_CUE_ZH",
    "Figure",
    "chinese_number",
    "english_number",
    "money_spans",
    "normalise",
    "read",
]

KINDS: Final = ("money", "duration", "date", "time", "percent")
BOUNDS: Final = ("exact", "at_most", "at_least", "range")


@dataclass(frozen=True, slots=True)
class Figure:
    kind: str
    value: Decimal
    unit: str
    bound: str
    low: Decimal | None
    high: Decimal | None
    span: tuple[int, int]


def normalise(text: str) -> str:
    """The text the reader reads and its spans point into: NFKC, lower-cased."""
    return unicodedata.normalize("NFKC", text).lower()


# --- numbers ---------------------------------------------------------------------------------

_EN_VALUES: Final = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_EN_SCALES: Final = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_EN_WORD: Final = "|".join(sorted([*_EN_VALUES, *_EN_SCALES], key=len, reverse=True))
# "forty-five", "a hundred and twenty", "two thousand three hundred"; "and" only after a scale
# word, so "between two and three" stays two numbers.
EN_RUN: Final = (
    rf"\b(?:an?\s+(?=hundred|thousand|million))?(?:{_EN_WORD})"
    rf"(?:(?:-|\s+|(?:(?<=hundred)|(?<=thousand))\s+and\s+)(?:{_EN_WORD}))*\b"
)
ZH_DIGITS: Final = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_ZH_UNITS: Final = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000}
ZH_RUN: Final = "[零〇一二两三四五六七八九十百千万亿]+"
_ZH_DIGIT: Final = "[零〇一二两三四五六七八九]"


def _dec(value: Decimal | int | str) -> Decimal:
    number = Decimal(value)
    return number.quantize(Decimal(1)) if number == number.to_integral_value() else number.normalize()


def english_number(text: str) -> Decimal | None:
    """ "a hundred and twenty" → 120, "forty-five" → 45, "two thousand three hundred" → 2300."""
    total, current, seen = 0, 0, False
    for word in re.split(r"[-\s]+", text.strip()):
        if word in _EN_VALUES:
            current += _EN_VALUES[word]
            seen = True
        elif word == "hundred":
            current = (current or 1) * 100
            seen = True
        elif word in ("thousand", "million"):
            total += (current or 1) * _EN_SCALES[word]
            current, seen = 0, True
    return Decimal(total + current) if seen else None


def chinese_number(text: str) -> Decimal | None:
    """三百五 → 350 (a digit after the last unit is one unit lower, as people say prices), 一千二 →
    1200, 一万二 → 12000, 两万 → 20000, 十五 → 15; a run of digits without units (二零二六) reads
    digit by digit."""
    if not text or any(ch not in ZH_DIGITS and ch not in _ZH_UNITS for ch in text):
        return None
    if not any(ch in _ZH_UNITS for ch in text):
        return Decimal("".join(str(ZH_DIGITS[ch]) for ch in text))
    total, section, digit, last_unit = 0, 0, None, 1
    for ch in text:
        if ch in ZH_DIGITS:
            digit = ZH_DIGITS[ch]
        elif ch in ("万", "亿"):
            here = section + (digit or 0)
            total = (total + here) * _ZH_UNITS[ch] if ch == "亿" else total + here * _ZH_UNITS[ch]
            section, digit, last_unit = 0, None, _ZH_UNITS[ch]
        else:
            unit = _ZH_UNITS[ch]
            section += (1 if digit is None else digit) * unit
            digit, last_unit = None, unit
    if digit is not None:
        section += digit * (last_unit // 10 if last_unit >= 100 else 1)
    return Decimal(total + section)


# --- what stands around a number ---------------------------------------------------------------

_MONTHS: Final = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
    "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sept": 9, "sep": 9,
    "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
_MONTH: Final = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WEEKDAYS: Final = {"monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6, "sunday": 7}
_ZH_WEEKDAYS: Final = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "日": 7, "天": 7}
_DURATIONS_EN: Final = {
    "minute": "minute", "minutes": "minute", "min": "minute", "mins": "minute", "hour": "hour", "hours": "hour",
    "hr": "hour", "hrs": "hour", "h": "hour", "day": "day", "days": "day", "week": "week", "weeks": "week",
    "fortnight": "fortnight", "fortnights": "fortnight", "month": "month", "months": "month",
}  # fmt: skip
_DURATIONS_ZH: Final = {
    "工作日": "business_day", "小时": "hour", "钟头": "hour", "分钟": "minute", "天": "day", "日": "day",
    "周": "week", "星期": "week", "礼拜": "week", "月": "month",
}  # fmt: skip
_PUNCT: Final = r"[,.!?;:。！？；、…()\[\]\"'“”‘’「」/\-~]"

_SYMBOL: Final = "|".join(re.escape(s) for s in sorted(SYMBOLS, key=len, reverse=True))
_PREFIX_SYMBOL: Final = re.compile(rf"(?:(?<![a-z])(?:{_SYMBOL})|[$€£¥₩₹₽₺₫฿₱₪₴₦])\s?$")
_PREFIX_CODE: Final = re.compile(r"(?<![a-z])([a-z]{3})\s?$")
_PREFIX_LAST: Final = "$€£¥₩₹₽₺₫฿₱₪₴₦.币元金"  # what a currency written before an amount ends with
_PREFIX_ZH: Final = re.compile(r"(?:人民币|美元|美金|欧元|英镑|日元|港币|港元)\s?$")
_SUFFIX_SYMBOL: Final = re.compile(r"\s?([$€£¥₩₹₽₺₫฿₱₪₴₦])")
_SUFFIX_CODE: Final = re.compile(r"\s?([a-z]{3})\b")
_SUFFIX_WORD: Final = re.compile(r"\s?(" + "|".join(sorted(WORDS_EN, key=len, reverse=True)) + r")\b")
# Dollars named by their country ("thirty-five US dollars", "20 Singapore dollars").
_DOLLAR_COUNTRIES: Final = {
    "us": "USD", "u.s.": "USD", "american": "USD", "australian": "AUD", "aussie": "AUD", "canadian": "CAD",
    "singapore": "SGD", "singaporean": "SGD", "hong kong": "HKD", "hk": "HKD", "new zealand": "NZD", "nz": "NZD",
    "taiwan": "TWD", "taiwanese": "TWD",
}  # fmt: skip
_SUFFIX_COUNTRY_DOLLAR: Final = re.compile(
    r"\s?(" + "|".join(re.escape(name) for name in sorted(_DOLLAR_COUNTRIES, key=len, reverse=True)) + r")\s+dollars?\b"
)
_SUFFIX_ZH: Final = re.compile(r"\s?(" + "|".join(sorted(WORDS_ZH, key=len, reverse=True)) + ")")
_SUFFIX_CENTS: Final = re.compile(r"\s?(cents?|pence|p\b)")
_MULTIPLIER: Final = re.compile(
    r"(?P<k>k\b)|\s?(?P<grand>grand\b)|\s?(?P<m>million\b|mn\b|m\b)|\s?(?P<bn>billion\b|bn\b)"
)
# After "k" or "grand" with no currency: a figure only where the phrase ends ("two grand for
# it"), not before a noun ("2 grand pianos", "a 5k run").
_PHRASE_ENDS: Final = re.compile(
    rf"\s*(?:$|{_PUNCT}|(?:and|or|for|to|in|on|at|is|was|per|each|plus|a|an|the|of|if|but|so|then|max|tops"
    r"|total|upfront|cash|please|only|now|today|tomorrow|with|by|from|that|which|this|it|you|we|i)\b)"
)
# 块 is money where a phrase ends or money follows ("两百块。", "五块五", "两百块钱"), not before
# what it counts ("一块蛋糕") nor after cutting ("切12块").
_KUAI_ENDS: Final = re.compile(
    rf"块(?=$|\s|{_PUNCT}|钱|(?:{_ZH_DIGIT}|\d)(?![\d.]*\s?(?:平|米|厘米|公分|寸|克|斤|公斤|升))|左右|以内|之内|以下|以上|起|就|吧|啊|呀|呢|哦|哈|嘛|呗|啦|喔|噢|哟|了|而已|差不多"
    r"|一[个次位件节晚天份张斤套小]|每|的[价费]|多|直接|搞定|全包|包|拿走|带走|回收|给|卖|收|成交|都|也|还)"
)
_CUT_BEFORE: Final = re.compile(r"(?:切成?|分成|剪成|掰成|拆成)\s?$")
# What a numeral after 元 counts when it is no 角: "八十元一个" is 80 a piece, not 80.1.
_COUNTED: Final = re.compile(r"\s?[个次位件节晚天份张斤套只台把条双对本盒瓶支块间辆层处字人小分周月年公米克升平]")
_JIAO: Final = re.compile(rf"\s?(?:钱)?({_ZH_DIGIT}|\d)(?:毛|角)?")
_PAYING_EN: Final = re.compile(
    r"\b(?:pay|paying|charges?|charged|charging|costs?|costing|fee(?:\s+is|\s+of)?|price(?:\s+is|\s+of)?"
    r"|total(?:\s+is)?|comes\s+to|yours\s+for|set\s+you\s+back|for\s+just|for\s+only|at\s+just|at\s+only)"
    r"\s+(?:only\s+|just\s+|about\s+|around\s+|roughly\s+|a\s+flat\s+)?$"
)
_PAYING_ZH: Final = re.compile(
    r"(?:只要|只需|仅需|收费?|付|花|算|价格是?|报价是?|费用是?|一共|总共|总价是?|要价|立减|减|便宜|优惠|省)\s?$"
)
_MAN_JIAN: Final = re.compile(r"(?:元|块)?(?:减|送|打|立减)")  # 满200减30: both are money
_ZH_PRICE_ENDS: Final = re.compile(rf"(?=$|\s|{_PUNCT}|吧|啊|呀|呢|哦|就|左右)")

_PERCENT: Final = re.compile(r"\s?(?:%|percent\b|per\s?cent\b)")
_ZHE: Final = re.compile(r"\s?折(?!扣|叠|腾|磨|断|算)")
_AMPM: Final = re.compile(r"\s?(?:(?P<am>a\.m\.|a\.?m\b)|(?P<pm>p\.m\.|p\.?m\b))")
_OCLOCK: Final = re.compile(r"\s?(?:o'?clock\b|(?P<noon>noon\b))")
_ZH_CLOCK: Final = re.compile(
    rf"\s?点(?:(?P<half>半)|钟|(?P<min>{ZH_RUN}|\d{{1,2}})分|(?P<num>{ZH_RUN}|\d{{1,2}})(?!分))?"
)
_ZH_DAYPART: Final = re.compile(r"(上午|早上|早晨|清晨|中午|下午|傍晚|晚上|夜里|夜间|凌晨)\s?$")
_MONTH_AFTER: Final = re.compile(rf"(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\b\.?")
_ORDINAL: Final = re.compile(r"(?:st|nd|rd|th)\b")
_ZH_MONTH_DAY: Final = re.compile(rf"\s?月\s?({ZH_RUN}|\d{{1,2}})\s?(?:日|号)?")
# 号 and 日 as the day of a month: where a phrase ends or a time word follows ("18号前", "18号下午"),
# not "3号楼", "3号线" or "12号货架"; never after a street ("人民路88号").
_ZH_DAY: Final = re.compile(
    rf"\s?(?:号|日(?!内|之内|以内))(?=$|\s|{_PUNCT}|前|之前|以前|后|以后|之后|到|至|或|和|送|发|交|取|上午|下午|晚上|早上|中午"
    r"|当天|那天|左右|周|星期|礼拜|的|开始|截止|起|见|再|就|才|会|能|可以|有|是|我们|您|你|第)"
)
_STREET_BEFORE: Final = re.compile(r"[路街道巷弄里村区栋座第]\s?$")
_DURATION_EN: Final = re.compile(
    r"\s?-?\s?(?:(?P<biz>business|working)\s+|calendar\s+)?(?P<unit>"
    + "|".join(sorted(_DURATIONS_EN, key=len, reverse=True))
    + r")\b"
)
_DURATION_ZH: Final = re.compile(
    r"\s?个?\s?(工作日|小时|钟头|分钟|天|日(?=内|之内|以内)|周(?![一二三四五六日天末])"
    r"|星期(?![一二三四五六日天])|礼拜(?![一二三四五六日天])|月)"
)

_ZH_SCALE: Final = re.compile("[万千百亿]")
_ZH_DECIMAL: Final = re.compile(rf"点({_ZH_DIGIT}+)(?![零〇一二两三四五六七八九十]*分|钟)")
_MAO: Final = re.compile(r"\s?(?:毛|角)(?:钱)?")
_MASTER: Final = re.compile(
    r"(?P<clock>(?<![\d:.])(?:[01]?\d|2[0-3]):[0-5]\d(?![\d:]))"
    r"|(?P<slash>(?<![\d/.])\d{1,2}/\d{1,2}(?:/\d{2,4})?(?![\d/]))"
    rf"|(?P<zhpct>百分之(?:\d+(?:\.\d+)?|{ZH_RUN}))"
    r"|(?P<zhweek>(?:下下?个?|这个?|本|上个?)?(?:周|星期|礼拜)[一二三四五六日天1-7](?![一二三四五六七八九十\d]))"
    r"|(?P<enweek>\b(?:(?:next|this|on)\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b)"
    rf"|(?P<monthday>\b(?:{_MONTH})\.?\s+(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\b(?![:.]\d))"
    r"|(?P<special>\b(?:noon|midday|midnight|an?\s+fortnight|fortnight|an?\s+tenner|an?\s+fiver|half\s+a\s+grand"
    r"|half\s+an?\s+(?:hour|day)|a\s+couple\s+of)\b|半价|半(?=个?(?:小时|钟头|天|月)))"
    r"|(?P<a>\ban?(?=\s+(?:grand|minute|hour|day|business\s+day|working\s+day|week|month)\b))"
    r"|(?P<num>(?<!\d)(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)"
    rf"|(?P<zh>{ZH_RUN})"
    rf"|(?P<en>{EN_RUN})"
)

_CANDIDATE: Final = re.compile(r"[\d零〇一二两三四五六七八九十百千万亿周星礼半下这本上]|[a-z]+")
_STARTS: Final = frozenset(
    [*_EN_VALUES, *_EN_SCALES, *_MONTHS, *_WEEKDAYS, "next", "this", "on", "a", "an", "half"]
    + ["noon", "midday", "midnight", "fortnight"]
)
_RANGE_JOIN: Final = re.compile(r"\s*(?:-|–|—|~|to|and|or|到|至|或|~)\s*$")
_AT_MOST_BEFORE: Final = re.compile(
    r"(?:\b(?:up\s+to|at\s+most|at\s+the\s+most|no\s+more\s+than|not\s+more\s+than|no\s+longer\s+than"
    r"|not\s+longer\s+than|less\s+than|fewer\s+than|under|below|max(?:imum)?:?|within|no\s+later\s+than|by)"
    # A cap said with a negation: "you won't pay more than €200", "it will never go over $50".
    r"|(?:n't|\bnot|\bnever)\s+(?:[a-z']+\s+){0,2}(?:more\s+than|over|above|exceed)"
    r"|不会超过|不超过|不会多于|不多于|最多|至多|最长|最晚|顶多|少于|低于|不到|不高于)\s*$"
)
_AT_LEAST_BEFORE: Final = re.compile(
    r"(?:\b(?:at\s+least|more\s+than|over|above|from|(?:starting|starts?|begins?|beginning)\s+(?:at|from)|min(?:imum)?:?|upwards\s+of"
    r"|no\s+less\s+than|not\s+less\s+than)|至少|最少|起码|最低|超过|多于|高于|不低于|不少于)\s*$"
)
_AT_MOST_AFTER: Final = re.compile(
    r"\s*(?:or\s+less\b|or\s+under\b|or\s+fewer\b|max\b|maximum\b|tops\b|at\s+most\b|at\s+the\s+most\b"
    r"|以内|之内|内|以下|封顶|为限)"
)
_AT_LEAST_AFTER: Final = re.compile(r"\s*(?:or\s+more\b|or\s+over\b|at\s+least\b|minimum\b|\+|起步|起价|起|以上)")


@dataclass(slots=True)
class _Amount:
    value: Decimal
    start: int
    end: int
    form: str  # num, zh, en, a
    high: Decimal | None = None  # 两三天: 2-3


@dataclass(slots=True)
class _Item:
    figure: Figure | None  # None: a bare amount, kept for ranges ("3-5 days")
    amount: _Amount | None
    scale: Decimal


def _figure(kind: str, value: Decimal, unit: str, start: int, end: int, high: Decimal | None = None) -> Figure:
    value = _dec(value)
    if high is not None:
        return Figure(kind, value, unit, "range", value, _dec(high), (start, end))
    return Figure(kind, value, unit, "exact", value, value, (start, end))


def _zh_or_digits(text: str) -> Decimal | None:
    if text and text[0].isdigit():
        return Decimal(text)
    return chinese_number(text)


def _amount(t: str, match: re.Match[str]) -> _Amount | None:
    group = match.lastgroup
    start, end = match.span()
    text = match.group()
    if group == "num":
        value = Decimal(text.replace(",", ""))
        scale = _ZH_SCALE.match(t, end)  # 1.5万, 5千
        if scale:
            value, end = value * _ZH_UNITS[scale.group()], end + 1
        return _Amount(value, start, end, "num")
    if group == "zh":
        if len(text) == 2 and all(ch in ZH_DIGITS for ch in text) and 0 < ZH_DIGITS[text[0]] + 1 == ZH_DIGITS[text[1]]:
            return _Amount(Decimal(ZH_DIGITS[text[0]]), start, end, "zh", Decimal(ZH_DIGITS[text[1]]))  # 两三天
        number = chinese_number(text)
        if number is None:
            return None
        decimal = _ZH_DECIMAL.match(t, end)  # 三点五个小时
        if decimal and not _ZH_DAYPART.search(t[max(0, start - 4) : start]):
            digits = "".join(str(ZH_DIGITS[ch]) for ch in decimal.group(1))
            number, end = Decimal(f"{number}.{digits}"), decimal.end()
        return _Amount(number, start, end, "zh")
    if group == "en":
        words = english_number(text)
        return _Amount(words, start, end, "en") if words is not None else None
    return _Amount(Decimal(1), start, end, "a")


def _special(text: str, start: int, end: int) -> Figure:
    word = re.sub(r"\s+", " ", text)
    if word in ("noon", "midday"):
        return _figure("time", Decimal(12), "clock", start, end)
    if word == "midnight":
        return _figure("time", Decimal(0), "clock", start, end)
    if word.endswith("fortnight"):
        return _figure("duration", Decimal(14), "day", start, end)
    if word.endswith("tenner"):
        return _figure("money", Decimal(10), "", start, end)
    if word.endswith("fiver"):
        return _figure("money", Decimal(5), "", start, end)
    if word == "half a grand":
        return _figure("money", Decimal(500), "", start, end)
    if word == "半价":
        return _figure("percent", Decimal(50), "折", start, end)
    if word.startswith("half"):
        return _figure("duration", Decimal("0.5"), "hour" if word.endswith("hour") else "day", start, end)
    raise ValueError(word)  # pragma: no cover - the pattern names no other word


def _clock(text: str, start: int, end: int, t: str) -> tuple[Figure, int]:
    hour, minute = (int(part) for part in text.split(":"))
    ampm = _AMPM.match(t, end)
    if ampm and 1 <= hour <= 12:
        hour = (hour % 12) + (12 if ampm.group("pm") else 0)
        end = ampm.end()
    return _figure("time", Decimal(hour) + Decimal(minute) / 60, "clock", start, end), end


def _weekday(group: str, text: str, start: int, end: int) -> Figure:
    if group == "zhweek":
        day = text[-1]
        value = int(day) if day.isdigit() else _ZH_WEEKDAYS[day]
    else:
        value = _WEEKDAYS[re.sub(r"^(?:next|this|on)\s+", "", text).rstrip("s")]
    return _figure("date", Decimal(value), "weekday", start, end)


def _date_or_none(day: Decimal | None, month: int | None, start: int, end: int) -> Figure | None:
    if day is None or not (1 <= day <= 31) or day != day.to_integral_value():
        return None
    return _figure("date", day, f"{month:02d}" if month else "", start, end)


def _money_prefix(t: str, folded: str | None, start: int) -> str | None:
    """The currency written before the amount at `start`, if any."""
    window = t[max(0, start - 8) : start]
    last = window.rstrip()[-1:]
    if not last or not (last.isascii() and last.isalpha() or last in _PREFIX_LAST):
        return None
    symbol = _PREFIX_SYMBOL.search(window)
    if symbol:
        return SYMBOLS[symbol.group().strip()]
    zh = _PREFIX_ZH.search(window)
    if zh:
        return WORDS_ZH[zh.group().strip()]
    code = _PREFIX_CODE.search(window)
    if code:
        at = start - len(window) + code.start(1)
        return _code(code.group(1), folded, at)
    return None


def _code(word: str, folded: str | None, at: int) -> str | None:
    code = word.upper()
    if code not in ISO_4217:
        return None
    if code in WORD_CODES and (folded is None or folded[at : at + 3] != code):
        return None
    return code


def _money_suffix(t: str, folded: str | None, pos: int, start: int) -> tuple[str, int, Decimal] | None:
    """The currency written after the amount (ending at `pos`): (unit, end, factor)."""
    symbol = _SUFFIX_SYMBOL.match(t, pos)
    if symbol:
        return SYMBOLS[symbol.group(1)], symbol.end(), Decimal(1)
    country = _SUFFIX_COUNTRY_DOLLAR.match(t, pos)
    if country:
        return _DOLLAR_COUNTRIES[country.group(1)], country.end(), Decimal(1)
    word = _SUFFIX_WORD.match(t, pos)
    if word:
        return WORDS_EN[word.group(1)], word.end(), Decimal(1)
    code = _SUFFIX_CODE.match(t, pos)
    if code:
        unit = _code(code.group(1), folded, code.start(1))
        if unit:
            return unit, code.end(), Decimal(1)
    cents = _SUFFIX_CENTS.match(t, pos)
    if cents:
        return ("GBP" if cents.group(1) != "cents" and cents.group(1) != "cent" else "$"), cents.end(), Decimal("0.01")
    zh = _SUFFIX_ZH.match(t, pos)
    if zh is None and t[pos : pos + 1] in ("来", "多") and re.match("[\\u4e00-\\u9fff]", t[pos - 1 : pos] or "a"):
        zh = _SUFFIX_ZH.match(t, pos + 1)  # "三十来块", "两百多元": about, or a little over
    if zh:
        name = zh.group(1)
        if name == "块" and (not _KUAI_ENDS.match(t, zh.start(1)) or _CUT_BEFORE.search(t[max(0, start - 3) : start])):
            return None
        return WORDS_ZH[name], zh.end(), Decimal(1)
    mao = _MAO.match(t, pos)
    if mao:
        return "CNY", mao.end(), Decimal("0.1")
    return None


def _read_amount(t: str, folded: str | None, amount: _Amount) -> tuple[_Item, int]:
    """What the amount is, from what stands around it; and where reading goes on."""
    start, end, value = amount.start, amount.end, amount.value
    before = t[max(0, start - 30) : start]
    high = amount.high
    bare = _Item(None, amount, Decimal(1)), end

    # Percentages: 20%, 20 percent, 八折 / 八五折 / 7.5折.
    if amount.form != "a":
        percent = _PERCENT.match(t, end)
        if percent:
            return _Item(_figure("percent", value, "%", start, percent.end(), high), None, Decimal(1)), percent.end()
        zhe = _ZHE.match(t, end)
        if zhe and value < 100:
            text = t[start:end]
            share = value * 10 if (value < 10 and not (amount.form == "zh" and len(text) == 2)) else value
            return _Item(_figure("percent", share, "折", start, zhe.end()), None, Decimal(1)), zhe.end()

    # Times: 5pm, 5 o'clock, 12 noon, 下午三点, 三点半, 12点30分.
    if amount.form in ("num", "en") and value == value.to_integral_value() and 0 <= value <= 12:
        ampm = _AMPM.match(t, end)
        if ampm and value >= 1:
            hour = (int(value) % 12) + (12 if ampm.group("pm") else 0)
            return _Item(_figure("time", Decimal(hour), "clock", start, ampm.end()), None, Decimal(1)), ampm.end()
        oclock = _OCLOCK.match(t, end)
        if oclock:
            return _Item(_figure("time", value, "clock", start, oclock.end()), None, Decimal(1)), oclock.end()
    if amount.form in ("num", "zh") and value == value.to_integral_value() and 0 <= value <= 24:
        clock = _ZH_CLOCK.match(t, end)
        daypart = _ZH_DAYPART.search(before[-4:]) if clock else None
        if clock and (daypart or value != 1 or clock.group(0).strip() != "点"):
            clock_hour = Decimal(value)
            if daypart and daypart.group(1) in ("下午", "傍晚", "晚上", "夜里", "夜间") and clock_hour < 12:
                clock_hour += 12
            elif daypart and daypart.group(1) == "中午" and clock_hour < 11:
                clock_hour += 12
            minute = Decimal(0)
            if clock.group("half"):
                minute = Decimal(30)
            elif clock.group("min") or clock.group("num"):
                minute = _zh_or_digits(clock.group("min") or clock.group("num")) or Decimal(0)
            first = start - len(daypart.group()) if daypart else start
            at = _figure("time", clock_hour + minute / 60, "clock", first, clock.end())
            return _Item(at, None, Decimal(1)), clock.end()

    # Dates: 12 june, 6月18日, 18号.
    if amount.form == "num" and value == value.to_integral_value():
        month = _MONTH_AFTER.match(t, end)
        if month:
            date = _date_or_none(value, _MONTHS[month.group(1)], start, month.end())
            if date:
                return _Item(date, None, Decimal(1)), month.end()
    if amount.form in ("num", "zh") and 1 <= value <= 12:
        month_day = _ZH_MONTH_DAY.match(t, end)
        if month_day:
            date = _date_or_none(_zh_or_digits(month_day.group(1)), int(value), start, month_day.end())
            if date:
                return _Item(date, None, Decimal(1)), month_day.end()
    if amount.form in ("num", "zh"):
        day = _ZH_DAY.match(t, end)
        if day and not _STREET_BEFORE.search(before[-2:]):
            date = _date_or_none(value, None, start, day.end())
            if date:
                return _Item(date, None, Decimal(1)), day.end()

    # Durations: 48 hours, two weeks, 3-day, 三天, 两个工作日, 48小时.
    duration = _DURATION_EN.match(t, end) if amount.form != "zh" else None
    if duration and (duration.group("unit") != "h" or amount.form == "num"):
        unit = _DURATIONS_EN[duration.group("unit")]
        if duration.group("biz") and unit == "day":
            unit = "business_day"
        if unit == "fortnight":
            value, unit, high = value * 14, "day", high * 14 if high is not None else None
        return _Item(_figure("duration", value, unit, start, duration.end(), high), None, Decimal(1)), duration.end()
    duration = _DURATION_ZH.match(t, end) if amount.form != "en" else None
    if duration and not (duration.group(1) == "月" and "个" not in duration.group()):
        unit = _DURATIONS_ZH[duration.group(1)]
        return _Item(_figure("duration", value, unit, start, duration.end(), high), None, Decimal(1)), duration.end()

    # Money.
    prefix = _money_prefix(t, folded, start)
    scale, after = Decimal(1), end
    multiplier = _MULTIPLIER.match(t, end) if amount.form != "zh" else None
    if multiplier:
        word = multiplier.lastgroup
        scale = {"k": Decimal(1000), "grand": Decimal(1000), "m": Decimal(1_000_000), "bn": Decimal(10**9)}[str(word)]
        after = multiplier.end()
    suffix = _money_suffix(t, folded, after, start)
    if multiplier and suffix is None and prefix is None:
        word = multiplier.lastgroup
        # "an upright or a grand?" is a piano.
        a_piano = amount.form == "a" and (t.startswith("?", after) or re.search(r"\bor\s+$", before))
        if word in ("k", "grand") and _PHRASE_ENDS.match(t, after) and not a_piano:
            return _Item(_figure("money", value * scale, "", start, after), None, scale), after
        scale, after = Decimal(1), end
        suffix = _money_suffix(t, folded, end, start)
    if multiplier and prefix is not None and suffix is None and multiplier.lastgroup in ("m", "bn", "k", "grand"):
        return _Item(_figure("money", value * scale, prefix, _prefix_start(t, start), after), None, scale), after
    if suffix is not None:
        unit, stop, factor = suffix
        total = value * scale * factor
        if unit == "CNY" and factor == 1:
            jiao = _JIAO.match(t, stop) if t[stop - 1 : stop] in ("块", "元") else None
            if jiao and (
                jiao.group().endswith(("毛", "角"))
                or not (re.match(ZH_RUN, t[jiao.end() : jiao.end() + 1]) or _COUNTED.match(t, jiao.end()))
            ):
                total += Decimal(ZH_DIGITS.get(jiao.group(1), 0) if not jiao.group(1).isdigit() else jiao.group(1)) / 10
                stop = jiao.end()
        figure = _figure("money", total, prefix or unit, _prefix_start(t, start) if prefix else start, stop)
        return _Item(figure, None, scale), stop
    if prefix is not None:
        figure = _figure("money", value, prefix, _prefix_start(t, start), end, high)
        return _Item(figure, None, Decimal(1)), end
    if (
        amount.form != "a"
        and not t.startswith("点", end)
        and (
            _PAYING_EN.search(before)
            # A Chinese figure after a paying word must end the phrase: "只要两百。", not "价格是一样的",
            # "验收一定能过".
            or (_PAYING_ZH.search(before) and (amount.form != "zh" or _ZH_PRICE_ENDS.match(t, end) is not None))
            or (before.endswith("满") and _MAN_JIAN.match(t, end))
        )
    ):
        return _Item(_figure("money", value, "", start, end, high), None, Decimal(1)), end
    text = t[start:end]
    if (
        amount.form == "zh"
        and re.search("[百千万]", text)
        and _ZH_PRICE_ENDS.match(t, end)
        and not re.search(r"第\s?$", before)
        and (start == 0 or re.match(r"[\u4e00-\u9fff]", t[start - 1]))
    ):
        return _Item(_figure("money", value, "CNY", start, end), None, Decimal(1)), end
    return bare


def _prefix_start(t: str, start: int) -> int:
    window = t[max(0, start - 8) : start]
    for pattern in (_PREFIX_SYMBOL, _PREFIX_ZH, _PREFIX_CODE):
        found = pattern.search(window)
        if found:
            return start - len(window) + found.start()
    return start


# A single Latin letter right before a number names a size or a code ("A4", "m3", "B12").
_SIZE_CODE: Final = re.compile(r"(?:^|(?<=[^a-z]))[a-z]$")


def _items(t: str, folded: str | None) -> list[_Item]:
    items: list[_Item] = []
    pos = 0
    # `_MASTER` is tried only where a match can start: a digit, a numeral or a weekday's first
    # character, or a word of `_STARTS` (a plain search tries every alternative at every
    # character: several times slower).
    for candidate in _CANDIDATE.finditer(t):
        word = candidate.group()
        if candidate.start() < pos or (word.isascii() and word.isalpha() and word not in _STARTS):
            continue
        if _SIZE_CODE.search(t, max(0, candidate.start() - 2), candidate.start()) and word[:1].isdigit():
            continue  # "A4", "B12": a size or a code, not an amount
        match = _MASTER.match(t, candidate.start())
        if match is None:
            continue
        group, text, (start, end) = match.lastgroup, match.group(), match.span()
        pos = end
        if group == "clock":
            figure, pos = _clock(text, start, end, t)
            items.append(_Item(figure, None, Decimal(1)))
        elif group == "slash":
            first, second = (int(part) for part in text.split("/")[:2])
            if (first, second) in ((24, 7), (50, 50)):
                continue
            month, day = (first, second) if first <= 12 else (second, first)
            figure_or_none = _date_or_none(Decimal(day), month, start, end) if 1 <= month <= 12 else None
            if figure_or_none:
                items.append(_Item(figure_or_none, None, Decimal(1)))
        elif group == "zhpct":
            value = _zh_or_digits(text[3:])
            if value is not None:
                items.append(_Item(_figure("percent", value, "%", start, end), None, Decimal(1)))
        elif group in ("zhweek", "enweek"):
            items.append(_Item(_weekday(group, text, start, end), None, Decimal(1)))
        elif group == "monthday":
            month_word, day_text = text.replace(".", " ").split()[0], re.findall(r"\d+", text)[0]
            figure_or_none = _date_or_none(Decimal(day_text), _MONTHS[month_word], start, end)
            if figure_or_none:
                items.append(_Item(figure_or_none, None, Decimal(1)))
        elif group == "special" and not re.fullmatch(r"a\s+couple\s+of|半", text):
            items.append(_Item(_special(text, start, end), None, Decimal(1)))
        else:
            amount: _Amount | None
            if group == "special":  # "a couple of days", 半小时
                half = text == "半"
                amount = _Amount(Decimal("0.5") if half else Decimal(2), start, end, "zh" if half else "en")
            else:
                amount = _amount(t, match)
            if amount is None:
                continue
            item, pos = _read_amount(t, folded, amount)
            items.append(item)
    return items


def _joined(t: str, first: _Item, second: _Item) -> Figure | None:
    """`first` and `second` as one range ("3-5 days", "€20 to €30", "between 2 and 3 grand")."""
    later = second.figure
    if later is None or later.bound != "exact":
        return None
    if first.figure is not None:
        earlier = first.figure
        if (
            earlier.kind != later.kind
            or earlier.bound != "exact"
            or (earlier.unit and later.unit and earlier.unit != later.unit)
        ):
            return None
        low, start, gap_start = earlier.value, earlier.span[0], earlier.span[1]
    else:
        assert first.amount is not None
        low, start, gap_start = first.amount.value * second.scale, first.amount.start, first.amount.end
        if low > later.value and first.amount.value <= later.value:
            low = first.amount.value
    high = later.value
    if later.kind == "time" and high < low < 24 and high + 12 > low:
        high += 12  # 下午三点到五点, "from 3pm to 5": the later hour is in the same half of the day
    join = _RANGE_JOIN.match(t[gap_start : later.span[0]])
    if join is None or not join.group().strip() or low >= high:
        return None
    if join.group().strip() == "and":
        lead = re.search(r"\bbetween\s+$", t[max(0, start - 10) : start])
        if lead is None:
            return None
        start -= len(lead.group())
    else:
        lead = re.search(r"(?:\bfrom\s+|从\s?)$", t[max(0, start - 6) : start])
        if lead is not None:
            start -= len(lead.group())
    return Figure(later.kind, low, later.unit, "range", low, _dec(high), (start, later.span[1]))


def _bounded(t: str, figure: Figure) -> Figure:
    start, end = figure.span
    before = t[max(0, start - 24) : start]
    after_most, after_least = _AT_MOST_AFTER.match(t, end), _AT_LEAST_AFTER.match(t, end)
    if after_most:
        return replace(figure, bound="at_most", low=None, span=(start, after_most.end()))
    if after_least:
        return replace(figure, bound="at_least", high=None, span=(start, after_least.end()))
    most, least = _AT_MOST_BEFORE.search(before), _AT_LEAST_BEFORE.search(before)
    if most and (figure.kind != "date" or most.group().strip() != "by"):
        return replace(figure, bound="at_most", low=None, span=(start - len(most.group()), end))
    if least:
        return replace(figure, bound="at_least", high=None, span=(start - len(least.group()), end))
    return figure


def read(text: str) -> list[Figure]:
    """Every figure `text` states, in order; spans point into `normalise(text)`."""
    folded = unicodedata.normalize("NFKC", text)
    t = folded.lower()
    items = _items(t, folded if len(folded) == len(t) else None)
    figures: list[Figure] = []
    index = 0
    while index < len(items):
        item = items[index]
        if index + 1 < len(items):
            joined = _joined(t, item, items[index + 1])
            if joined is not None:
                figures.append(joined)
                index += 2
                continue
        if item.figure is not None:
            figure = item.figure
            figures.append(figure if figure.bound == "range" else _bounded(t, figure))
        index += 1
    return figures


# What every figure contains, for a caller that wants to skip texts with no figure cheaply (the
# guard's money rules, `guard/rules/price.py`): a digit or a number word, in English ...
NUMBER_CUE_EN: Final = (
    r"\d|\b(?:an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen"
    r"|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred"
    r"|thousand|million|tenner|fiver|grand)\b"
)
# ... and in Chinese.
NUMBER_CUE_ZH: Final = r"[\d零〇一二两三四五六七八九十百千万亿半]"


def money_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` states an amount of money (spans into `normalise(text)`)."""
    return [figure.span for figure in read(text) if figure.kind == "money"]
