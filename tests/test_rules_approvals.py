"""The level of a change and who decides it: pure functions, table-tested (issue 12)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from approvals.rules import Level, Requires, level_for, who_decides
from approvals.schemas import payload_parse

LEVELS = [
    ("knowledge_draft", 1),
    ("lesson", 1),
    ("wording", 2),
    ("clarification_order", 2),
    ("composition_mode", 2),
    ("boundary_wording", 2),
    ("skill_ids", 3),
    ("delivery", 3),
    ("pricing", 3),
    ("state_contract", 3),
]


@pytest.mark.parametrize(("kind", "level"), LEVELS)
def test_the_level_is_what_the_payload_touches(kind: str, level: int) -> None:
    assert level_for(kind, None) == level


MODEL = ["review_report", "owner_dialogue", "observe_digest", "customer_candidate"]
WHO = [
    # a proposal the model made always waits for the owner, whatever it is
    *[(origin, kind, False, "owner_approval") for origin in MODEL for kind, _ in LEVELS],
    # the owner's own L2 change applies directly…
    ("owner_direct", "wording", False, "owner_direct"),
    ("owner_direct", "clarification_order", False, "owner_direct"),
    # …except one that touches external commitments
    ("owner_direct", "boundary_wording", False, "owner_approval"),
    ("owner_direct", "wording", True, "owner_approval"),
    # L3 always goes through the token flow; L1 waits here (the knowledge rule applies on decision)
    ("owner_direct", "pricing", False, "owner_approval"),
    ("owner_direct", "skill_ids", False, "owner_approval"),
    ("owner_direct", "delivery", False, "owner_approval"),
    ("owner_direct", "state_contract", False, "owner_approval"),
    ("owner_direct", "knowledge_draft", False, "owner_approval"),
    ("owner_direct", "lesson", False, "owner_approval"),
]


@pytest.mark.parametrize(("origin", "kind", "commitments", "requires"), WHO)
def test_who_decides(origin: str, kind: str, commitments: bool, requires: str) -> None:
    assert who_decides(origin, kind, level_for(kind), commitments) == Requires(requires)


def test_an_unknown_kind_or_origin_is_refused() -> None:
    with pytest.raises(ValueError):
        level_for("mission", None)
    with pytest.raises(ValueError):
        who_decides("the_model_itself", "wording", Level.L2, False)


GOOD = [
    ("boundary_wording", {"language": "en", "text": "I cannot promise prices."}),
    ("boundary_wording", {"language": "zh-hans", "text": "我不能承诺价格。"}),
    ("pricing", {"currency": "EUR", "items": [{"name": "Repair", "amount": "35.00"}]}),
    ("pricing", {"currency": "CNY", "items": [{"name": "Free check", "amount": "0"}]}),
    ("knowledge_draft", {"title": "Hours", "text": "9 to 18"}),
    ("knowledge_draft", {"entry_id": 4, "title": "Hours", "text": "9 to 18"}),
    ("lesson", {"kind": "taboo", "title": "No slang", "text": "Never use slang."}),
    ("wording", {"language": "en", "situation": "greeting", "text": "Hello!"}),
    ("clarification_order", {"fields": ["need", "contact", "when"]}),
    ("skill_ids", {"skill_ids": ["quote", "booking"]}),
    ("delivery", {"options": [{"channel": "pickup"}, {"channel": "post", "note": "3 days"}]}),
    (
        "state_contract",
        {
            "initial": "new",
            "states": {"new": {"next_actor": "owner", "to": ["done"]}, "done": {"next_actor": "nobody"}},
        },
    ),
    ("composition_mode", {"mode": "strict"}),
    ("composition_mode", {"mode": "guarded"}),
    ("rollback", {"change_id": "chg_abc-DEF_123"}),
]


@pytest.mark.parametrize(("kind", "payload"), GOOD)
def test_payloads_of_each_kind_parse(kind: str, payload: dict[str, object]) -> None:
    assert payload_parse(kind, payload).model_dump(exclude_defaults=True) == payload


BAD = [
    ("boundary_wording", {"language": "de", "text": "x"}),
    ("boundary_wording", {"language": "en", "text": ""}),
    ("boundary_wording", {"language": "en", "text": "x", "requires": "auto"}),  # unknown keys refused
    ("pricing", {"currency": "EURO", "items": [{"name": "a", "amount": "1.00"}]}),
    ("pricing", {"currency": "XXY", "items": [{"name": "a", "amount": "1.00"}]}),
    ("pricing", {"currency": "EUR", "items": [{"name": "a", "amount": "-1.00"}]}),
    ("pricing", {"currency": "EUR", "items": [{"name": "a", "amount": "35,00"}]}),
    ("pricing", {"currency": "EUR", "items": [{"name": "a", "amount": "NaN"}]}),
    ("pricing", {"currency": "EUR", "items": [{"name": "a", "amount": 35.0}]}),  # a float, not a string
    ("pricing", {"currency": "EUR", "items": []}),
    ("pricing", {"currency": "EUR", "items": [{"name": "a", "amount": "1", "tax": "x"}]}),
    ("clarification_order", {"fields": ["need", "need"]}),
    ("lesson", {"kind": "rule", "title": "t", "text": "x"}),
    ("delivery", {"options": [{"channel": "teleport"}]}),
    ("wording", {"language": "en", "situation": "greeting", "text": "hi", "level": 1}),
    ("state_contract", {"initial": "new", "states": {"new": {"next_actor": "robot", "to": []}}}),
    ("state_contract", {"initial": "new", "states": {}}),
    ("rollback", {"change_id": "not a change"}),
    ("composition_mode", {"mode": "lenient"}),
    ("composition_mode", {"mode": "strict", "requires": "auto"}),
]


@pytest.mark.parametrize(("kind", "payload"), BAD)
def test_bad_payloads_are_refused(kind: str, payload: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        payload_parse(kind, payload)


@pytest.mark.parametrize(("undoes", "level"), LEVELS)
def test_a_rollback_has_the_level_of_what_it_undoes(undoes: str, level: int) -> None:
    assert level_for("rollback", {"change_id": "chg_x"}, undoes=undoes) == level


def test_a_rollback_without_what_it_undoes_has_no_level() -> None:
    with pytest.raises(ValueError):
        level_for("rollback", {"change_id": "chg_x"})
    with pytest.raises(ValueError):
        level_for("rollback", {"change_id": "chg_x"}, undoes="rollback")
