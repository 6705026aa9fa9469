"""Restating a published price is not committing (guard/restating.py): a customer who asks what
something costs hears the approved entry's price in the model's own words, and a price taken off
its item, stripped of its "from", made firm, or applied to the customer is still blocked — through
the whole outgoing check, with no database."""

from __future__ import annotations

import pytest

from guard.outgoing import outgoing_check
from guard.quoting import applies_to_customer
from guard.restating import unrestated

LIST = "• Birthday cakes: from €35 • Wedding cakes: from €180 • Cupcakes: €3 each"
CITED = [
    {"title": "Shop price list", "snippet": LIST},
    {
        "title": "Delivery",
        "snippet": "We deliver within the city for €5. Orders placed before noon are delivered the next day.",
    },
    {"title": "价目表", "snippet": "洗护每次80元起。寄养每晚100元。"},
    {"title": "Hot desk", "snippet": "S$25/day, weekdays 9:00-18:00."},
]


@pytest.mark.parametrize(
    "text",
    [
        "Our birthday cakes are listed from €35.",
        "Birthday cakes start from €35, wedding cakes from €180.",
        "Hi! Cupcakes are €3 each.",
        "Hello, our hot desk is S$25/day, and we also have monthly plans.",
        "Our hot desk is S$25/day on weekdays 9:00-18:00.",
        "We deliver within the city for €5.",
        "[1] Shop price list: Birthday cakes from €35. The owner will confirm the price for your cake once they know "
        "the size.",
        "您好，洗护每次80元起，具体要看狗狗的体型，店员会跟您确认。",
        "我们的寄养是每晚100元。",
        "[3] 价目表: 洗护每次80元起。您上传照片后，店员会给您报价。",
        "Birthday cakes are from €35, depending on the size, and nobody can promise a price before the owner has seen "
        "the order.",
    ],
)
def test_a_published_price_in_the_models_own_words_is_sent(text: str) -> None:
    assert outgoing_check(text, citations=CITED).blocked is False, unrestated(text, CITED)


@pytest.mark.parametrize(
    "text, category",
    [
        # Applied to this customer, or made firm.
        ("Your birthday cake will be €35.", "price"),
        ("For your party the birthday cake is exactly €35.", "price"),
        ("Birthday cakes from €35, yours by Friday.", "price"),
        ("Birthday cakes are €35 in total.", "price"),
        ("I can do birthday cakes for €35.", "price"),
        ("Our birthday cakes are €35 for you.", "price"),
        ("Birthday cakes are from €35. That's what you'll pay.", "applied_quote"),
        ("Birthday cakes are from €35. The owner will confirm it, guaranteed, for your order.", "outcome"),
        ("We deliver within the city for €5. For you: tomorrow.", "applied_quote"),
        ("您的洗护80元起。", "price"),
        ("洗护每次80元起，保证不加价。", "price"),
        ("洗护每次80元起。您付这么多就行。", "applied_quote"),
        # Taken off its item, stripped of its "from", or a figure no entry gave.
        ("Wedding cakes from €35.", "price"),
        ("Birthday cakes are €35.", "price"),
        ("Birthday cakes are from €30.", "price"),
        ("It's from €35.", "price"),
        ("[2] Shop price list: Birthday cakes: from €35", "price"),
        ("[1] Delivery: Birthday cakes: from €35", "price"),
        ("寄养每晚80元。", "price"),
        # The restated price alone is taken out; what else the sentence says is read.
        ("Birthday cakes are from €35, ready on Friday.", "deadline"),
    ],
)
def test_a_price_taken_off_its_entry_or_applied_to_the_customer_is_blocked(text: str, category: str) -> None:
    verdict = outgoing_check(text, citations=CITED)
    assert verdict.blocked is True and verdict.category == category, (verdict, unrestated(text, CITED))


def test_without_citations_nothing_is_restated() -> None:
    """Only an approved entry the run's search returned can be restated: the agent's published
    texts in the prompt are not enough, as for quotes."""
    text = "Our birthday cakes are listed from €35."
    assert unrestated(text, []) == text
    assert outgoing_check(text, given=[LIST]).blocked is True


def test_only_the_restating_clause_is_taken_out() -> None:
    assert unrestated("Hi, our hot desk is S$25/day, and we also have monthly plans.", CITED) == (
        "Hi,  , and we also have monthly plans."
    )


def test_a_hedge_in_a_restated_clause_still_reaches_the_clauses_after_it() -> None:
    """ "作品烧制一般需要2-3周，…到时候工作室会通知您来取": without the hedge, the last clause alone
    reads as a promised pick-up."""
    cited = [{"title": "作品说明", "snippet": "作品烧制一般需要2-3周。"}]
    text = "我们的作品烧制一般需要2-3周，窑的排期不同时间也会有出入，到时候工作室会通知您来取。"
    assert "一般" in unrestated(text, cited)
    assert outgoing_check(text, citations=cited).blocked is False


def test_an_item_named_in_one_clause_and_priced_in_the_next_is_read_as_one() -> None:
    cited = [{"title": "价目表", "snippet": "钢琴一对一课程每节45分钟200元。"}]
    assert outgoing_check("我们的一对一钢琴课每节45分钟，标价200元。", citations=cited).blocked is False
    assert outgoing_check("我们的一对一钢琴课每节45分钟，给您算150元。", citations=cited).blocked is True


def test_a_request_summary_after_a_quote_does_not_apply_it() -> None:
    """The summary's lines are read one by one: "- When: Friday" is the customer's wish, and the
    line that says "your request" names no price or time."""
    cited = [{"title": "Gluten-free", "snippet": "We bake gluten-free bread every Tuesday and Friday."}]
    text = (
        "Here is what I found:\n[1] Gluten-free: We bake gluten-free bread every Tuesday and Friday.\n\n"
        "Please check your request before I register it:\n- What you need: a cake\n- When: Friday\n"
        "Shall I register it for the owner? (yes / no)"
    )
    assert outgoing_check(text, citations=cited).blocked is False


@pytest.mark.parametrize(
    "rest, applies",
    [
        ("For you: tomorrow.", True),
        ("The tuner will confirm the actual cost for your piano after seeing it.", False),
        ("Your instructor can talk through how many lessons suit you, though nobody can promise a result.", False),
        ("要看您自己的练习情况，我们没法保证。", False),
        ("The owner will confirm your price is guaranteed.", True),
        ("您好，约60分钟。", False),  # a greeting does not address the customer's case
        ("约60分钟给您做好。", True),
    ],
)
def test_what_is_left_may_defer_to_someone_else(rest: str, applies: bool) -> None:
    assert applies_to_customer(rest) is applies
