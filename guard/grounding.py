"""Figures a customer or peer reply may state: only those the model was given.

The commitment guard recognises promises by their wording, and wording it has not seen gets
past it (README, *Limits*).  This check does not read wording at all.  A price or a deadline
needs a figure with a unit — "€40", "JPY 5000", "two grand", "3 days", "5pm", "6/18", "20%",
"两百块", "三天" — and a model that states one its input did not contain (the agent's published
texts, the conversation, the results of the run's tools such as approved knowledge) is making it
up.  Such a reply is not sent, whatever its words: `unsourced_figures` returns the figures that
would have been.

The reply's figures are what the figure reader (`figures.py`) finds: money, durations, times,
dates with a day number (a weekday alone states no number) and percentages, each end of a range
or the bound of "up to" / "不会超过"; so "I found 2 entries", "room 101" or a list number is not
a figure.  A figure counts as given when its number appears anywhere in the input, in digits or
in words ("nine in the morning" gives 9, "两百" gives 200, "two grand" gives 2000 and 2), or a
number it is the same as: a time's hour on either clock ("6pm" is sourced by "six"), a duration
in the next unit ("48 hours" by "2 days", "a fortnight" by "two weeks"), a Chinese discount as
its digit ("八折" by "8折" or "80%").  0 and 1 are never checked, nor 100%: too common to tell
anything.  A
figure the customer named is given too (a reply may say back "within 10 days"), so agreeing to
the customer's own figure is left to the guard.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from typing import Final

from .figures import EN_RUN, ZH_RUN, Figure, chinese_number, english_number, read

__all__ = ["numbers_in", "unsourced_figures"]

_DIGITS: Final = re.compile(r"\d[\d,]*(?:\.\d+)?")
_EN_NUMBER: Final = re.compile(EN_RUN)
_ZH_NUMBER: Final = re.compile(ZH_RUN)
# A duration is stated as well in the next unit up or down: (multiply, divide) to those units.
_CONVERSIONS: Final = {
    "minute": ((1, 60),),
    "hour": ((60, 1), (1, 24)),
    "day": ((24, 1), (1, 7)),
    "business_day": ((24, 1), (1, 5)),
    "week": ((7, 1), (5, 1)),
}
_CHECKED_KINDS: Final = frozenset({"money", "duration", "time", "date", "percent"})


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace(",", "")).normalize()
    except InvalidOperation:
        return None


def _plain(number: Decimal) -> Decimal:
    """5000, not 5E+3: the same number, written as people would."""
    return number.quantize(Decimal(1)) if _whole(number) else number.normalize()


def _whole(number: Decimal) -> bool:
    return number == number.to_integral_value()


def _same(figure: Figure, number: Decimal) -> set[Decimal]:
    """The numbers that state `number` of `figure` as well as it does."""
    same = {number}
    if figure.kind == "time":
        hour = Decimal(int(number))
        # An hour up to 12 is said on either clock ("晚六点" for 18:00; 12 for midnight's 24).
        same = {hour, hour - 12} if hour > 12 else {hour, Decimal(12)} if hour == 0 else {hour, hour + 12}
    elif figure.kind == "duration":
        for multiply, divide in _CONVERSIONS.get(figure.unit, ()):
            if _whole(number * multiply / divide):
                same.add(number * multiply / divide)
    elif figure.kind == "percent" and figure.unit == "折":
        same.add(number / 10)
    return {_plain(n) for n in same}


def _stated(figure: Figure) -> Iterator[Decimal]:
    """The numbers of a figure the grounding check asks about: the value, or both ends."""
    if figure.kind not in _CHECKED_KINDS or (figure.kind == "date" and figure.unit == "weekday"):
        return
    if figure.kind == "percent" and figure.value == 100:  # "100% cotton", 百分之百: "all", not a rate
        return
    ends = {end for end in (figure.low, figure.high) if end is not None} or {figure.value}
    for end in ends:
        yield Decimal(int(end)) if figure.kind == "time" else end


def numbers_in(text: str) -> set[Decimal]:
    """Every number the text states, in digits, English words or Chinese numerals, and the
    value of every figure the figure reader finds in it ("two grand" gives 2 and 2000, "a
    fortnight" 14).  A run of English number words counts as a whole and word by word ("nine
    forty-five" gives 9, 45 and the run's value): for the given side a number too many is
    harmless."""
    lowered = unicodedata.normalize("NFKC", text).lower()
    found: set[Decimal] = set()
    for match in _DIGITS.finditer(lowered):
        number = _decimal(match.group())
        if number is not None:
            found.add(number)
    for match in _EN_NUMBER.finditer(lowered):
        for part in (match.group(), *match.group().split()):
            value = english_number(part)
            if value is not None:
                found.add(value)
    for match in _ZH_NUMBER.finditer(lowered):
        value = chinese_number(match.group())
        if value is not None:
            found.add(value)
    for figure in read(text):
        found |= {end for end in (figure.value, figure.low, figure.high) if end is not None}
    return {_plain(number) for number in found}


def unsourced_figures(reply: str, given: list[str]) -> set[Decimal]:
    """The money, duration, time, date and percentage figures of `reply` (as `figures.read`
    finds them) that no text of `given` contains."""
    stated = [(number, figure) for figure in read(reply) for number in _stated(figure) if number > 1]
    if not stated:
        return set()
    sourced: set[Decimal] = set()
    for text in given:
        sourced |= numbers_in(text)
    return {_plain(number) for number, figure in stated if not (_same(figure, number) & sourced)}
