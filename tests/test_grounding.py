"""The grounding check (guard/grounding.py): figures with a money or time unit
in a reply must appear among the numbers the model was given.  Pure functions, no database."""

from __future__ import annotations

from decimal import Decimal

import pytest

from guard.grounding import numbers_in, unsourced_figures


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1,200.50 and 3", {Decimal("1200.5"), Decimal(3)}),
        ("forty-five minutes", {Decimal(45)}),
        ("a hundred and twenty", {Decimal(120), Decimal(100), Decimal(20)}),
        ("三百五", {Decimal(350)}),
        ("一千二", {Decimal(1200)}),
        ("两万", {Decimal(20000)}),
        ("十五", {Decimal(15)}),
        ("一万二", {Decimal(12000)}),
        ("二零二六", {Decimal(2026)}),
    ],
)
def test_numbers_are_read_in_digits_english_words_and_chinese_numerals(text: str, expected: set[Decimal]) -> None:
    assert expected <= numbers_in(text)


@pytest.mark.parametrize(
    "reply, given, unsourced",
    [
        ("It costs €40.", [], {40}),
        ("It costs €40.", ["Prices start at 40 euros."], set()),
        ("Delivery takes 3 days.", [], {3}),
        ("Delivery takes 3 days.", ["Delivery takes three days."], set()),
        ("We're open from 9am to 6pm.", ["open from nine in the morning to six in the evening"], set()),
        ("Ready at 12:30.", [], {12}),
        ("Ready at 12:30.", ["half past twelve"], set()),
        ("换屏幕三百五块。", [], {350}),
        ("换屏幕350元。", ["屏幕价格三百五"], set()),
        ("三天内送达。", [], {3}),
        ("三天内送达。", ["配送一般需要3天"], set()),
        ("a hundred and twenty dollars", [], {120}),
        ("a hundred and twenty dollars", ["120"], set()),
        ("You'll only pay 30 for the check-up.", [], {30}),
        ("The fee is 150, final.", ["Fees: 150 for a filing."], set()),
        ("这次只要两百。", [], {200}),
        ("这次只要两百。", ["清洗费用200元"], set()),
        # Not figures: counts without a unit, list numbers, 0 and 1.
        ("I found 2 entries about parking.", [], set()),
        ("1. Bring the bike 2. We look at it", [], set()),
        ("It takes 1 day.", [], set()),
    ],
)
def test_only_money_and_time_figures_the_model_was_not_given_count(
    reply: str, given: list[str], unsourced: set[int]
) -> None:
    assert unsourced_figures(reply, given) == {Decimal(n) for n in unsourced}


@pytest.mark.parametrize(
    "reply, given, unsourced",
    [
        # The guard and the grounding check read the same figures (guard/figures.py).
        ("That is JPY 5000.", [], {5000}),
        ("That is JPY 5000.", ["The deluxe set is 5000 yen."], set()),
        ("That is JPY 5000.", ["The deluxe set is 500 yen."], {5000}),
        # "two grand" is 2000, not 2.
        ("It's two grand.", [], {2000}),
        ("It's two grand.", ["We have 2 models."], {2000}),
        ("It's two grand.", ["Rebuilds run at 2,000."], set()),
        ("It's two grand.", ["Rebuilds are around two grand."], set()),
        # A range checks both ends, a bound its bound; a weekday states no number.
        ("It takes 3-5 days.", ["Shipping takes 3 days."], {5}),
        ("No more than €30.", [], {30}),
        ("Pickup on Friday.", [], set()),
        ("Pickup on 6/18.", [], {18}),
        ("Pickup on 6/18.", ["Open again on June 18."], set()),
        ("20% off today.", [], {20}),
        ("打八折。", ["会员8折"], set()),
        # The same figure in another unit is the same figure.
        ("Ready in 48 hours.", ["Repairs take 2 days."], set()),
        ("Back in a fortnight.", ["We are closed for two weeks."], set()),
        ("Open until 6pm.", ["We close at 18:00."], set()),
        # Not figures, or too common to tell anything: 100% is "all".
        ("Room 101 is on the left.", [], set()),
        ("We use 100% cotton.", [], set()),
        ("我们的衬衫是百分之百纯棉的。", [], set()),
        ("把蛋糕切成8块。", [], set()),
    ],
)
def test_grounding_reads_the_figures_the_figure_reader_reads(reply: str, given: list[str], unsourced: set[int]) -> None:
    assert unsourced_figures(reply, given) == {Decimal(n) for n in unsourced}


def test_the_given_side_counts_the_values_of_figures_too() -> None:
    assert {Decimal(2), Decimal(2000)} <= numbers_in("two grand")
    assert Decimal(14) in numbers_in("a fortnight")
    assert Decimal(5000) in numbers_in("5k")
