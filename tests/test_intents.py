"""Table tests for what a customer's message asks of the request flow (facade/dialogue/intents.py;
no database): every rule's own examples, and the sentences of issue 26 §3 in both languages."""

from __future__ import annotations

import pytest

from facade.dialogue.intents import RULES, Intent, asks, decision_asked, fired, passes_on, request_number, status_asked

MATCHING = [(rule.id, text) for rule in RULES for text in rule.must_match]
NOT_MATCHING = [(rule.id, text) for rule in RULES for text in rule.must_not_match]
BY_ID = {rule.id: rule for rule in RULES}


def test_every_rule_has_examples_both_ways_and_a_unique_id() -> None:
    assert len(BY_ID) == len(RULES)
    for rule in RULES:
        assert rule.must_match and rule.must_not_match, rule.id
        assert rule.id.split(".")[0] == rule.intent.value, rule.id
    # Both languages for every intent.
    for intent in Intent:
        languages = {rule.language for rule in RULES if rule.intent == intent}
        assert languages & {"en", "any"} and languages & {"zh", "any"}, intent


@pytest.mark.parametrize("rule_id, text", MATCHING)
def test_each_rule_matches_its_examples(rule_id: str, text: str) -> None:
    assert BY_ID[rule_id].search(text)


@pytest.mark.parametrize("rule_id, text", NOT_MATCHING)
def test_each_rule_leaves_its_near_misses(rule_id: str, text: str) -> None:
    assert not BY_ID[rule_id].search(text)


@pytest.mark.parametrize(
    "text, expected",
    [
        # the demo's Chinese loop: 可以 is "OK", but this asks something
        ("可以礼品包装吗？", True),
        ("能不能送到家", True),
        ("可不可以写字", True),
        ("是不是要提前订", True),
        ("Is my order confirmed?", True),
        ("Can you gift wrap it?", True),
        ("Do you deliver?", True),
        ("Are cakes gluten-free?", True),
        ("Gift wrapping?", True),
        ("礼品包装？", True),
        # answers and wishes are not questions
        ("可以", False),
        ("好的", False),
        ("给我打八折", False),
        ("我想订一个生日蛋糕", False),
        ("I'd like to order a birthday cake", False),
        ("next Friday", False),
        ("ana@example.com", False),
        ("", False),
    ],
)
def test_a_question_is_a_question_in_both_languages(text: str, expected: bool) -> None:
    assert asks(text) is expected


@pytest.mark.parametrize(
    "text, rule",
    [
        ("Give me 20% off", "decision.en.discount"),
        ("give me a discount please", "decision.en.discount"),
        ("Can I have it for free?", "decision.en.special_price"),
        ("Promise me it will be ready on Friday", "decision.en.promise"),
        ("给我打八折", "decision.zh.discount"),
        ("能不能便宜一点？", "decision.zh.discount"),
        ("给我算个友情价", "decision.zh.special_price"),
        ("你跟我保证周五能做好", "decision.zh.promise"),
        # asking what is published is a question for the knowledge, not a decision
        ("Do you have a student discount?", None),
        ("What are your prices?", None),
        ("How much is a birthday cake?", None),
        ("蛋糕多少钱？", None),
        ("你们有学生折扣吗？", None),
        ("可以礼品包装吗？", None),
        ("我想订一个生日蛋糕", None),
    ],
)
def test_a_decision_only_the_business_can_make(text: str, rule: str | None) -> None:
    found = decision_asked(text)
    assert (found.id if found else None) == rule


@pytest.mark.parametrize(
    "text, expected",
    [
        ("pass it on", True),
        ("Please pass this to the owner", True),
        ("转给店主", True),
        ("交给老板决定吧", True),
        ("yes", False),
        ("可以", False),
        ("Who is the owner?", False),
    ],
)
def test_passing_it_on_is_a_way_out_the_customer_can_type(text: str, expected: bool) -> None:
    assert passes_on(text) is expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Is my order confirmed?", True),
        ("我的订单确认了吗？", True),
        ("What's the status of my request?", True),
        ("店主看到了吗？", True),
        ("I'd like to order a birthday cake", False),
        ("我想订一个生日蛋糕", False),
        ("Can I order online?", False),
    ],
)
def test_a_question_about_a_registered_request(text: str, expected: bool) -> None:
    assert status_asked(text) is expected


@pytest.mark.parametrize(
    "text, number", [("Is request #3 confirmed?", 3), ("订单 12 怎么样了", 12), ("Is my order confirmed?", None)]
)
def test_the_request_a_message_names(text: str, number: int | None) -> None:
    assert request_number(text) == number


def test_fired_names_the_rule() -> None:
    rule = fired("我的订单确认了吗？", Intent.STATUS)
    assert rule is not None and rule.id == "status.zh"
