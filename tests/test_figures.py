"""The figure reader (guard/figures.py): what a text states as money, a duration, a date, a
time or a percentage, with its bound.  Pure functions, no database."""

from __future__ import annotations

from decimal import Decimal

import pytest

from guard.currencies import ISO_4217, WORD_CODES
from guard.figures import Figure, normalise, read

D = Decimal


def one(text: str) -> tuple[str, Decimal, str]:
    """The single figure `text` states: (kind, value, unit)."""
    figures = read(text)
    assert len(figures) == 1, (text, figures)
    return figures[0].kind, figures[0].value, figures[0].unit


def test_every_iso_4217_code_reads_as_money_before_and_after_the_amount() -> None:
    assert len(ISO_4217) >= 175 and {"USD", "EUR", "JPY", "CNY", "CHF", "XOF", "VES", "ZWG"} <= ISO_4217
    for code in sorted(ISO_4217):
        assert one(f"{code} 5000") == ("money", D(5000), code)
        assert one(f"5000 {code}") == ("money", D(5000), code)
        assert one(f"It is {code} 5000.") == ("money", D(5000), code)
        if code not in WORD_CODES:
            assert one(f"{code.lower()} 5000") == ("money", D(5000), code)


@pytest.mark.parametrize(
    "text, value, unit",
    [
        # ISO codes, before and after, in any case.
        ("That is JPY 5000.", 5000, "JPY"),
        ("5000 jpy", 5000, "JPY"),
        ("chf 40", 40, "CHF"),
        ("RMB 880", 880, "CNY"),
        ("1200 RMB", 1200, "CNY"),
        # Symbols, before and after; the prefixed dollars.
        ("$40", 40, "$"),
        ("€3.50", Decimal("3.5"), "EUR"),
        ("£12", 12, "GBP"),
        ("¥5000", 5000, "¥"),
        ("￥５０００", 5000, "¥"),
        ("₩50000", 50000, "KRW"),
        ("₹499", 499, "INR"),
        ("₽300", 300, "RUB"),
        ("₺90", 90, "TRY"),
        ("₫20000", 20000, "VND"),
        ("฿350", 350, "THB"),
        ("₱250", 250, "PHP"),
        ("₪60", 60, "ILS"),
        ("₴100", 100, "UAH"),
        ("₦2000", 2000, "NGN"),
        ("5000€", 5000, "EUR"),
        ("us$ 40", 40, "USD"),
        ("HK$40", 40, "HKD"),
        ("A$40", 40, "AUD"),
        ("C$40", 40, "CAD"),
        ("S$40", 40, "SGD"),
        ("NT$400", 400, "TWD"),
        ("R$40", 40, "BRL"),
        ("NZ$40", 40, "NZD"),
        ("$1,200.50", Decimal("1200.5"), "$"),
        # English words.
        ("forty bucks", 40, "$"),
        ("30 dollars", 30, "$"),
        ("a hundred and twenty dollars", 120, "$"),
        ("twenty euros", 20, "EUR"),
        ("fifty quid", 50, "GBP"),
        ("it's 40 pounds", 40, "GBP"),
        ("5000 yen", 5000, "JPY"),
        ("300 yuan", 300, "CNY"),
        ("500 rupees", 500, "rupee"),
        ("80 francs", 80, "franc"),
        ("50 cents", Decimal("0.5"), "$"),
        # Multipliers, and amounts in slang.
        ("two grand", 2000, ""),
        ("2 grand for the repair", 2000, ""),
        ("it's 5k.", 5000, ""),
        ("$5k", 5000, "$"),
        ("€2 million", 2_000_000, "EUR"),
        ("a tenner", 10, ""),
        ("a fiver", 5, ""),
        ("half a grand", 500, ""),
        # A paying word before a bare amount.
        ("You'll only pay 30 for the check-up.", 30, ""),
        ("the price is 40", 40, ""),
        # Chinese.
        ("两百块", 200, "CNY"),
        ("两百块钱", 200, "CNY"),
        ("三千五块", 3500, "CNY"),
        ("一万二元", 12000, "CNY"),
        ("五块五", Decimal("5.5"), "CNY"),
        ("三块二毛", Decimal("3.2"), "CNY"),
        ("五毛", Decimal("0.5"), "CNY"),
        ("一百二十元", 120, "CNY"),
        ("99元", 99, "CNY"),
        ("99 元", 99, "CNY"),
        ("1.5万元", 15000, "CNY"),
        ("屋顶补漏2百块搞定。", 200, "CNY"),
        ("一节课120块哈。", 120, "CNY"),
        ("我们 2300 块直接回收", 2300, "CNY"),
        ("5千块", 5000, "CNY"),
        ("15欧元", 15, "EUR"),
        ("20美元", 20, "USD"),
        ("10英镑", 10, "GBP"),
        ("三万日元", 30000, "JPY"),
        ("100港币", 100, "HKD"),
        ("人民币500", 500, "CNY"),
        ("500人民币", 500, "CNY"),
        ("这次只要两百。", 200, ""),
        ("报价是三千五", 3500, ""),
        ("换屏幕三百五。", 350, "CNY"),
    ],
)
def test_money(text: str, value: Decimal | int, unit: str) -> None:
    assert one(text) == ("money", D(value), unit)


@pytest.mark.parametrize(
    "text, kind, value, unit",
    [
        # Durations.
        ("48 hours", "duration", 48, "hour"),
        ("within 48h", "duration", 48, "hour"),
        ("forty-five minutes", "duration", 45, "minute"),
        ("10 mins", "duration", 10, "minute"),
        ("3 days", "duration", 3, "day"),
        ("a 3-day delivery", "duration", 3, "day"),
        ("5 business days", "duration", 5, "business_day"),
        ("5 working days", "duration", 5, "business_day"),
        ("two weeks", "duration", 2, "week"),
        ("a fortnight", "duration", 14, "day"),
        ("6 months", "duration", 6, "month"),
        ("an hour", "duration", 1, "hour"),
        ("half an hour", "duration", Decimal("0.5"), "hour"),
        ("三天", "duration", 3, "day"),
        ("两个工作日", "duration", 2, "business_day"),
        ("48小时", "duration", 48, "hour"),
        ("半小时", "duration", Decimal("0.5"), "hour"),
        ("三十分钟", "duration", 30, "minute"),
        ("两周", "duration", 2, "week"),
        ("两个星期", "duration", 2, "week"),
        ("三个月", "duration", 3, "month"),
        ("18 个月", "duration", 18, "month"),
        ("三点五个小时", "duration", Decimal("3.5"), "hour"),
        # Times.
        ("5pm", "time", 17, "clock"),
        ("5 p.m.", "time", 17, "clock"),
        ("9am", "time", 9, "clock"),
        ("12am", "time", 0, "clock"),
        ("six o'clock", "time", 6, "clock"),
        ("17:30", "time", Decimal("17.5"), "clock"),
        ("3:30pm", "time", Decimal("15.5"), "clock"),
        ("noon", "time", 12, "clock"),
        ("midnight", "time", 0, "clock"),
        ("下午三点", "time", 15, "clock"),
        ("晚上十点", "time", 22, "clock"),
        ("早上八点半", "time", Decimal("8.5"), "clock"),
        ("三点半", "time", Decimal("3.5"), "clock"),
        ("12点30分", "time", Decimal("12.5"), "clock"),
        ("下午 3 点", "time", 15, "clock"),
        ("十一点", "time", 11, "clock"),
        # Dates.
        ("monday", "date", 1, "weekday"),
        ("by next Wednesday", "date", 3, "weekday"),
        ("12 june", "date", 12, "06"),
        ("12th of June", "date", 12, "06"),
        ("june 12th", "date", 12, "06"),
        ("Dec 3", "date", 3, "12"),
        ("6/18", "date", 18, "06"),
        ("18/6", "date", 18, "06"),
        ("6月18日", "date", 18, "06"),
        ("6月18号", "date", 18, "06"),
        ("十二月三日", "date", 3, "12"),
        ("18号", "date", 18, ""),
        ("18号前送到", "date", 18, ""),
        ("本月20号前做好", "date", 20, ""),
        ("10 月 3 号", "date", 3, "10"),
        ("周五", "date", 5, "weekday"),
        ("星期五", "date", 5, "weekday"),
        ("礼拜天", "date", 7, "weekday"),
        ("下周三", "date", 3, "weekday"),
        # Percentages; 八折 is the price at 80%.
        ("20%", "percent", 20, "%"),
        ("20 percent", "percent", 20, "%"),
        ("20 per cent", "percent", 20, "%"),
        ("２０％", "percent", 20, "%"),
        ("百分之二十", "percent", 20, "%"),
        ("八折", "percent", 80, "折"),
        ("打8折", "percent", 80, "折"),
        ("八五折", "percent", 85, "折"),
        ("7.5折", "percent", 75, "折"),
        ("半价", "percent", 50, "折"),
    ],
)
def test_durations_times_dates_and_percentages(text: str, kind: str, value: Decimal | int, unit: str) -> None:
    assert one(text) == (kind, D(value), unit)


@pytest.mark.parametrize(
    "text, kind, bound, low, high",
    [
        ("3-5 days", "duration", "range", 3, 5),
        ("3 to 5 days", "duration", "range", 3, 5),
        ("two or three days", "duration", "range", 2, 3),
        ("We ship in 3 to 5 business days", "duration", "range", 3, 5),
        ("between €20 and €30", "money", "range", 20, 30),
        ("€20-€30", "money", "range", 20, 30),
        ("20-30 euros", "money", "range", 20, 30),
        ("between 2 and 3 grand", "money", "range", 2000, 3000),
        ("from 9am to 6pm", "time", "range", 9, 18),
        ("三到五天", "duration", "range", 3, 5),
        ("3到5天", "duration", "range", 3, 5),
        ("两三天", "duration", "range", 2, 3),
        ("下午三点到五点", "time", "range", 15, 17),
        ("up to €30", "money", "at_most", None, 30),
        ("at most 3 days", "duration", "at_most", None, 3),
        ("no more than 5 days", "duration", "at_most", None, 5),
        ("not more than $40", "money", "at_most", None, 40),
        ("under 10 minutes", "duration", "at_most", None, 10),
        ("max 3 days", "duration", "at_most", None, 3),
        ("3 days max", "duration", "at_most", None, 3),
        ("within 2 weeks", "duration", "at_most", None, 2),
        ("3 days or less", "duration", "at_most", None, 3),
        ("at least 2 hours", "duration", "at_least", 2, None),
        ("from €30", "money", "at_least", 30, None),
        ("€30 or more", "money", "at_least", 30, None),
        ("不会超过三天", "duration", "at_most", None, 3),
        ("不超过两百块", "money", "at_most", None, 200),
        ("最多两百块", "money", "at_most", None, 200),
        ("三天以内", "duration", "at_most", None, 3),
        ("三天之内", "duration", "at_most", None, 3),
        ("三天内送达", "duration", "at_most", None, 3),
        ("至少两天", "duration", "at_least", 2, None),
        ("从30元起", "money", "at_least", 30, None),
        ("两百元以上", "money", "at_least", 200, None),
    ],
)
def test_ranges_and_bounds(text: str, kind: str, bound: str, low: int | None, high: int | None) -> None:
    (figure,) = read(text)
    assert (figure.kind, figure.bound) == (kind, bound)
    assert figure.low == (None if low is None else D(low))
    assert figure.high == (None if high is None else D(high))
    assert figure.value == D(low if bound in ("range", "at_least") else high)  # type: ignore[arg-type]


def test_an_exact_figure_has_both_ends_and_its_span_points_into_the_normalised_text() -> None:
    text = "Ｔｈａｔ ｉｓ JPY 5000, ready by 5PM."
    money, time = read(text)
    assert money == Figure("money", D(5000), "JPY", "exact", D(5000), D(5000), money.span)
    assert normalise(text)[slice(*money.span)] == "jpy 5000"
    assert normalise(text)[slice(*time.span)] == "by 5pm" and time.bound == "at_most"


def test_several_figures_in_order() -> None:
    figures = read("It costs €40 and takes 3 days; pickup on 6月18日 at 下午三点, 20% off.")
    assert [(f.kind, f.value) for f in figures] == [
        ("money", D(40)),
        ("duration", D(3)),
        ("date", D(18)),
        ("time", D(15)),
        ("percent", D(20)),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "I found 2 entries about parking.",
        "1. Bring the bike 2. We look at it",
        "room 101",
        "切12块",
        "把蛋糕切成8块",
        "一块蛋糕",
        "2 grand pianos",
        "a grand piano",
        "a 5k run",
        "2 million people",
        "all 5000 of them",  # "ALL" is the lek only in capitals
        "in the top 3.",
        "1 cup of flour",
        "2026",
        "二零二六年",
        "第三百五",
        "version 2.5",
        "call 555-1234",
        "we're open 24/7",
        "便宜一点",
        "快一点",
        "3号楼",
        "3号线",
        "B 区 12 号货架",
        "人民路88号",
        "Is the piano an upright or a grand?",
        "6月",
        "I have 3 kids and 2 dogs",
        "我们无法保证。",
        "明天发货",
    ],
)
def test_near_misses_are_not_figures(text: str) -> None:
    assert read(text) == []
