"""The contract compiler's pure checks (approvals/contract_rules.py), table-driven, no database:
every kind of invalid contract is refused with its own reason."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from approvals.contract_rules import content_hash, contract_problems, default_content
from facade.tenancy.models import default_request_flow


def valid() -> dict[str, Any]:
    return {
        "mission": "Custom cakes for Berlin.",
        "boundary_wording": {"en": "The owner confirms prices.", "zh-hans": "价格由店主确认。"},
        "clarification_order": ["need", "when", "contact"],
        "request_flow": default_request_flow(),
        **default_content(),
    }


def changed(**parts: Any) -> dict[str, Any]:
    content = valid()
    content.update(copy.deepcopy(parts))
    return content


def flow(initial: str, **states: tuple[str, list[str]]) -> dict[str, Any]:
    return {"initial": initial, "states": {k: {"next_actor": a, "to": to} for k, (a, to) in states.items()}}


def test_the_default_contract_and_a_priced_one_compile() -> None:
    assert contract_problems(valid()) == []
    priced = {
        "currency": "EUR",
        "items": [{"name": "Birthday cake", "amount": "35.00"}, {"name": "Tasting", "amount": "0"}],
    }
    assert contract_problems(changed(pricing=priced)) == []


INVALID = [
    ("no initial state", {"request_flow": flow("gone", a=("owner", []))}, "request_flow: exactly one initial state"),
    (
        "unreachable state",
        {"request_flow": flow("a", a=("owner", ["b"]), b=("nobody", []), island=("owner", ["b"]))},
        "request_flow: state island cannot be reached",
    ),
    (
        "no terminal state",
        {"request_flow": flow("a", a=("owner", ["b"]), b=("owner", ["a"]))},
        "request_flow: needs at least one terminal state",
    ),
    (
        "transition to an unknown state",
        {"request_flow": flow("a", a=("owner", ["nowhere"]), b=("nobody", []))},
        "request_flow: transition a -> nowhere goes to an unknown state",
    ),
    (
        "unknown next actor",
        {"request_flow": flow("a", a=("robot", []))},
        "request_flow: state a has an unknown next_actor",
    ),
    ("no states", {"request_flow": {"initial": "a", "states": {}}}, "request_flow: needs an initial state"),
    ("unknown skill", {"skill_ids": ["knowledge_answers", "auto_refund"]}, "skill_ids: unknown skill auto_refund"),
    ("unknown currency", {"pricing": {"currency": "EURO", "items": []}}, "pricing: 'EURO' is not an ISO 4217"),
    (
        "negative amount",
        {"pricing": {"currency": "EUR", "items": [{"name": "Cake", "amount": "-1.00"}]}},
        "pricing: the amount of 'Cake' is negative",
    ),
    (
        "amount as a number",
        {"pricing": {"currency": "EUR", "items": [{"name": "Cake", "amount": 35}]}},
        "pricing: the amount of 'Cake' must be a decimal string",
    ),
    (
        "amount not a number",
        {"pricing": {"currency": "EUR", "items": [{"name": "Cake", "amount": "NaN"}]}},
        "pricing: the amount of 'Cake' must be a decimal string",
    ),
    (
        "item without a name",
        {"pricing": {"currency": "EUR", "items": [{"amount": "1"}]}},
        "pricing: every item needs a name",
    ),
    (
        "unknown delivery channel",
        {"delivery": [{"channel": "post"}, {"channel": "fax"}]},
        "delivery: unknown channel fax",
    ),
    ("delivery as names", {"delivery": ["post"]}, "delivery: an option is"),
    (
        "repeated channel",
        {"delivery": [{"channel": "post"}, {"channel": "post"}]},
        "delivery: a channel is named twice",
    ),
    ("delivery not a list", {"delivery": "post"}, "delivery: must be a list of options"),
    ("wording of an unknown moment", {"wording": {"en": {"farewell": "Bye"}}}, "wording: unknown situation farewell"),
    ("wording in an unknown language", {"wording": {"fr": {"greeting": "Bonjour"}}}, "wording: unknown language fr"),
    ("empty wording", {"wording": {"en": {"greeting": " "}}}, "wording: the en sentences must be non-empty text"),
    ("wording as text", {"wording": {"en": "Hello"}}, "wording: must map languages to {situation: text}"),
    ("unknown language", {"boundary_wording": {"fr": "Le patron confirme."}}, "boundary_wording: unknown language fr"),
    ("empty wording", {"boundary_wording": {"en": " "}}, "boundary_wording: must map languages"),
    ("repeated field", {"clarification_order": ["need", "need"]}, "clarification_order: must be a non-empty list"),
    ("mission not text", {"mission": ["x"]}, "mission: must be text"),
]


@pytest.mark.parametrize("content, reason", [(c, r) for _, c, r in INVALID], ids=[n for n, _, _ in INVALID])
def test_each_invalid_contract_is_refused_with_its_reason(content: dict[str, Any], reason: str) -> None:
    problems = contract_problems(changed(**content))
    assert problems and any(p.startswith(reason) for p in problems), problems


def test_unknown_and_missing_fields_are_reasons() -> None:
    content = valid()
    del content["pricing"]
    assert contract_problems({**content, "requires": "auto"}) == ["requires: unknown field", "pricing: missing"]


def test_the_hash_is_of_the_canonical_content() -> None:
    a, b = valid(), valid()
    b = dict(reversed(list(b.items())))  # key order does not matter
    assert content_hash(a) == content_hash(b) and len(content_hash(a)) == 64
    assert content_hash(changed(mission="Other")) != content_hash(a)
