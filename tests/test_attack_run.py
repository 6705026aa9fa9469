"""Defects an attacker-minded and careful-user run over issues 26 and 28 found, each proven here
before its fix (the run's report lists what held).

* An L3 card told the owner "Customers in a conversation when it is published see it end; their
  next message starts a new one" for every L3 change — untrue since issue 26 §2 for a price list,
  delivery options or an added skill (they end no conversation), and half true for a removal
  (the conversation continues in a new session that keeps its messages and requests).  An owner
  read it as "publishing prices cuts off my customers" on the very step that asks for the code.
"""

from __future__ import annotations

from typing import Any

import pytest

from approvals.cards import card_view
from approvals.contract import live_terms
from approvals.services import proposal_create
from facade.tenancy.schemas import Actor

pytestmark = pytest.mark.django_db

OLD_NOTE = "see it end"
NO_END = "no conversation ends"
CONTINUES = "continue in a new conversation"


def _proposal(world: Any, kind: str, payload: Any) -> Any:
    return proposal_create(
        agent=world.agent,
        kind=kind,
        payload=payload,
        summary="a change",
        origin="owner_direct",
        actor=Actor.human(world.owner.pk),
        owner=world.owner,
    )


@pytest.mark.parametrize(
    "kind, payload",
    [
        ("pricing", {"currency": "EUR", "items": [{"name": "Cupcake", "amount": "3.50"}]}),
        ("delivery", {"options": [{"channel": "pickup", "note": ""}]}),
    ],
)
def test_an_l3_card_of_prices_or_delivery_says_no_conversation_ends(world_a: Any, kind: str, payload: Any) -> None:
    notes = " ".join(card_view(_proposal(world_a, kind, payload)).uncertain)
    assert OLD_NOTE not in notes
    assert NO_END in notes


def test_an_l3_card_of_an_added_skill_says_no_conversation_ends(world_a: Any) -> None:
    skills = list(live_terms(world_a.agent).skill_ids)
    added = _proposal(world_a, "skill_ids", {"skill_ids": [*skills, "request_status"]})
    notes = " ".join(card_view(added).uncertain)
    assert OLD_NOTE not in notes and NO_END in notes


def test_an_l3_card_of_a_removed_skill_says_conversations_continue_with_their_messages(world_a: Any) -> None:
    skills = list(live_terms(world_a.agent).skill_ids)
    assert len(skills) >= 2
    removed = _proposal(world_a, "skill_ids", {"skill_ids": skills[:-1]})
    notes = " ".join(card_view(removed).uncertain)
    assert OLD_NOTE not in notes and NO_END not in notes
    assert CONTINUES in notes and "messages and requests" in notes


# --- A published price told as another item's, or in another currency -------------------------
# The outgoing check read the published list's amounts as figures the context gave
# (guard/context_figures.py): a sentence whose every amount stood somewhere in the cited list was
# taken out of what the checks read, whichever item it named.  So "The Birthday cake (8 people) is
# 2.20 EUR [1]" (the croissant's price) and "… 42.00 USD" reached a customer as the business's
# price, though the owner never published either.

LIST = {
    "currency": "EUR",
    "items": [
        {
            "name": "Birthday cake (8 people)",
            "names": {"en": "Birthday cake (8 people)", "zh-hans": "生日蛋糕（8人份）"},
            "amount": "42.00",
        },
        {"name": "Croissant", "names": {"en": "Croissant", "zh-hans": "牛角包"}, "amount": "2.20"},
    ],
}


def _verdict(text: str, language: str) -> Any:
    from approvals.published import found_in
    from guard.outgoing import outgoing_check

    question = "how much is a birthday cake?" if language == "en" else "生日蛋糕多少钱？"
    parts = found_in(question, content={"pricing": LIST, "delivery": []}, version=6, language=language)
    assert parts and parts[0].part == "pricing"
    return outgoing_check(text, given=[p.snippet for p in parts], citations=[p.citation() for p in parts])


@pytest.mark.parametrize(
    "text, language",
    [
        ("The Birthday cake (8 people) is 2.20 EUR [1].", "en"),
        ("[1] Price list (version 6): Birthday cake (8 people): 2.20 EUR", "en"),
        ("Our birthday cake is €2.20.", "en"),
        ("Birthday cakes are 2.20 EUR each [1].", "en"),
        ("A croissant is 42.00 EUR [1].", "en"),
        ("The Birthday cake (8 people) costs 42.00 USD [1].", "en"),
        ("The Birthday cake (8 people) is $42 [1].", "en"),
        ("生日蛋糕（8人份）：2.20 EUR [1]", "zh-hans"),
        ("[1] 价目表（第6版）：生日蛋糕（8人份）：2.20 EUR", "zh-hans"),
        ("生日蛋糕42美元[1]。", "zh-hans"),
    ],
)
def test_a_published_amount_told_as_another_items_or_in_another_currency_is_blocked(text: str, language: str) -> None:
    verdict = _verdict(text, language)
    assert verdict.blocked, text
    assert verdict.category == "price"


@pytest.mark.parametrize(
    "text, language",
    [
        ("[1] Price list (version 6): Birthday cake (8 people): 42.00 EUR; Croissant: 2.20 EUR", "en"),
        ("The Birthday cake (8 people) is 42.00 EUR [1].", "en"),
        ("Our birthday cake is €42.", "en"),
        ("The Birthday cake (8 people) is 42.00 EUR and a croissant is 2.20 EUR [1].", "en"),
        ("A croissant is 2.20 EUR, the birthday cake 42.00 EUR [1].", "en"),
        ("[1] 价目表（第6版）：生日蛋糕（8人份）：42.00 EUR；牛角包：2.20 EUR", "zh-hans"),
        ("生日蛋糕（8人份）是42.00 EUR [1]。", "zh-hans"),
    ],
)
def test_a_published_amount_told_as_its_own_items_is_delivered(text: str, language: str) -> None:
    assert not _verdict(text, language).blocked, text


# --- A customer's amount stated back as the business's price ----------------------------------
# The context checks took a sentence out of what the guard reads when its figures stood in the
# customer's messages and no clause agreed in so many words ("sure", 可以).  So a customer who
# wrote "is the cupcake still 7 euros?" after the list dropped it was told "The Cupcake is 7.00
# EUR." — the customer's figure, stated as the business's price.  Said back as theirs ("you
# mentioned 7 euros") it is still no commitment.


@pytest.mark.parametrize(
    "customer, said",
    [
        ("is the cupcake still 7 euros?", "The Cupcake is 7.00 EUR."),
        ("your website says the birthday cake is 30 euros, right?", "A birthday cake is 30 euros."),
        ("蛋糕还是70元吗？", "蛋糕是70元。"),
    ],
)
def test_a_customers_amount_stated_as_the_price_is_blocked(customer: str, said: str) -> None:
    from guard.outgoing import outgoing_check

    verdict = outgoing_check(said, given=[customer], citations=[], customer=[customer])
    assert verdict.blocked, said


@pytest.mark.parametrize(
    "customer, said",
    [
        ("is the cupcake still 7 euros?", "You mentioned 7 euros; the owner confirms prices personally."),
        ("my budget is 500 euros", "You said your budget is 500 euros — the owner will confirm what is possible."),
        ("last year I paid 65 euros", "So last year you paid 65 euros."),
    ],
)
def test_a_customers_amount_said_back_as_theirs_is_delivered(customer: str, said: str) -> None:
    from guard.outgoing import outgoing_check

    assert not outgoing_check(said, given=[customer], citations=[], customer=[customer]).blocked, said
