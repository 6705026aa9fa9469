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
