"""Figures a customer or peer reply may state: only those the model was given.

The commitment guard recognises promises by their wording, and wording it has not seen gets
past it (README, *Limits*).  This check does not read wording at all.  A price or a deadline
needs a figure with a unit — "€40", "3 days", "5pm", "两百块", "三天" — and a model that states one
its input did not contain (the agent's published texts, the conversation, the results of the
run's tools such as approved knowledge) is making it up.  Such a reply is not sent, whatever its
words: `unsourced_figures` returns the figures that would have been.

Only figures next to a money or time unit, or after a paying word ("pay 30", "the fee is 150",
"只要两百"), count, so "I found 2 entries" or a list number is not a figure; and a figure counts
as given when the same number appears anywhere in the input, in digits or in words ("nine in the
morning" gives 9, "两百" gives 200).  0 and 1 are never checked: too common to tell anything.  A
figure the customer named is given too (a reply may say back "within 10 days"), so agreeing to
the customer's own figure is left to the guard.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Final

__all__ = ["numbers_in", "unsourced_figures"]

_EN_VALUES: Final = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_EN_WORD: Final = "|".join(sorted(_EN_VALUES, key=len, reverse=True))
# "forty-five", "a hundred and twenty", "two thousand three hundred": runs of number words.
_EN_NUMBER: Final = re.compile(
    rf"\b(?:(?:{_EN_WORD}|a|hundred|thousand)(?:[- ]|\s+and\s+)?)*(?:{_EN_WORD}|hundred|thousand)\b"
)
_ZH_DIGITS: Final = {
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
_ZH_UNITS: Final = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_ZH_NUMBER: Final = re.compile(r"[零〇一二两三四五六七八九十百千万]+")
_DIGITS: Final = re.compile(r"\d[\d,]*(?:\.\d+)?")

_MONEY_BEFORE: Final = r"(?:[$€£¥]|usd|eur|gbp|rmb|cny|hkd|人民币)\s?"
_UNIT_AFTER: Final = (
    r"\s?-?\s?(?:k\b|grand\b|dollars?\b|bucks\b|euros?\b|pounds?\b|quid\b|yuan\b|usd\b|eur\b|gbp\b|rmb\b|cny\b|hkd\b|yen\b"
    r"|元|块|欧元|美元|英镑|日元|港币|港元|"
    r"(?:business |working |calendar )?(?:minutes?|mins?|hours?|hrs?|h\b|days?|weeks?|months?)\b|am\b|pm\b|o'clock\b"
    r"|个?(?:工作日|小时|钟头|分钟|天|日|号|周|星期|礼拜|月)|点|分钟)"
)
_FIGURE: Final = re.compile(
    rf"{_MONEY_BEFORE}(?P<before>\d[\d,]*(?:\.\d+)?|[零〇一二两三四五六七八九十百千万]+)"
    rf"|(?P<after>\d[\d,]*(?:\.\d+)?|[零〇一二两三四五六七八九十百千万]+|{_EN_NUMBER.pattern}){_UNIT_AFTER}"
    r"|(?P<clock>\d{1,2}):\d\d"
    # A paying word before a bare figure: "you'll pay 30", "charged 25", "the fee is 150", "只要两百".
    r"|\b(?:pay|paying|charge[sd]?|costs?|fee(?: is| of)?|price(?: is| of)?|total(?: is)?|comes to|yours for"
    r"|set you back|for just|for only|at just|at only)\s+(?:only |just |about |around |roughly |a flat )?"
    rf"(?P<paid>\d[\d,]*(?:\.\d+)?|{_EN_NUMBER.pattern})"
    r"|(?:只要|只需|仅需|收|付|花|算|价格是?|报价是?|费用是?|一共|总共)\s?(?P<zhpaid>\d[\d,]*(?:\.\d+)?|[零〇一二两三四五六七八九十百千万]+)"
)


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace(",", "")).normalize()
    except InvalidOperation:
        return None


def _english(text: str) -> Decimal | None:
    total, current, seen = 0, 0, False
    for word in re.split(r"[- ]+|\s+and\s+", text.strip()):
        if word in _EN_VALUES:
            current += _EN_VALUES[word]
            seen = True
        elif word == "a":
            current = current or 1
        elif word == "hundred":
            current = (current or 1) * 100
            seen = True
        elif word == "thousand":
            total += (current or 1) * 1000
            current, seen = 0, True
    return Decimal(total + current) if seen else None


def _chinese(text: str) -> Decimal | None:
    """三百五 → 350 (a digit after the last unit is one unit lower, as people say prices), 一千二 →
    1200, 两万 → 20000, 十五 → 15; a run of digits without units (二零二六) reads digit by digit."""
    if not any(ch in _ZH_UNITS for ch in text):
        digits = [_ZH_DIGITS[ch] for ch in text if ch in _ZH_DIGITS]
        return Decimal("".join(str(d) for d in digits)) if digits else None
    total, section, digit, last_unit = 0, 0, None, 1
    for ch in text:
        if ch in _ZH_DIGITS:
            digit = _ZH_DIGITS[ch]
        elif ch == "万":
            total += (section + (digit or 0)) * 10000
            section, digit, last_unit = 0, None, 10000
        else:
            unit = _ZH_UNITS[ch]
            section += (1 if digit is None else digit) * unit
            digit, last_unit = None, unit
    if digit is not None:
        section += digit * (last_unit // 10 if last_unit >= 100 else 1)
    return Decimal(total + section)


def _value(text: str) -> Decimal | None:
    text = text.strip().lower()
    if not text:
        return None
    if text[0].isdigit():
        return _decimal(text)
    if _ZH_NUMBER.fullmatch(text):
        return _chinese(text)
    return _english(text)


def numbers_in(text: str) -> set[Decimal]:
    """Every number the text states, in digits, English words or Chinese numerals.  A run of
    English number words counts as a whole and word by word ("nine forty-five" gives 9, 45 and
    the run's value): for the given side a number too many is harmless."""
    lowered = text.lower()
    found: set[Decimal] = set()
    for pattern in (_DIGITS, _EN_NUMBER, _ZH_NUMBER):
        for match in pattern.finditer(lowered):
            value = _value(match.group())
            if value is not None:
                found.add(value)
            if pattern is _EN_NUMBER:
                for word in match.group().split():
                    part = _english(word)
                    if part is not None:
                        found.add(part)
    return found


def _figures(text: str) -> set[Decimal]:
    found: set[Decimal] = set()
    for match in _FIGURE.finditer(text.lower()):
        if match.group("clock") is not None:
            parts = [match.group("clock")]  # the hour: "12:30" and "half past twelve" agree on it
        else:
            parts = [match.group("before") or match.group("after") or match.group("paid") or match.group("zhpaid")]
        for part in parts:
            value = _value(part)
            if value is not None and value > 1:
                found.add(value)
    return found


def unsourced_figures(reply: str, given: list[str]) -> set[Decimal]:
    """The money and time figures of `reply` that no text of `given` contains."""
    figures = _figures(reply)
    if not figures:
        return set()
    sourced: set[Decimal] = set()
    for text in given:
        sourced |= numbers_in(text)
    return figures - sourced
