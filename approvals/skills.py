"""The platform's skill catalogue: the only skill ids an agent contract may name.

A skill is a capability the platform runs for an agent's customer face.  The catalogue is static
and lives in code so that adding a skill is a reviewed change of the platform, never something an
agent's contract (or a model) can invent; the contract compiler refuses any id not listed here."""

from __future__ import annotations

SKILLS: dict[str, str] = {
    "knowledge_answers": "Answer from the agent's approved knowledge, citing the entries used.",
    "request_intake": "Clarify what the customer needs and register a request for the owner.",
    "handoff": "Hand the conversation to a person at the business.",
    "request_status": "Tell a customer where their request stands and who acts next.",
}

# The customer-face tools each skill grants (facade/dialogue/runtime/builtin_tools.py): the
# tools a customer or peer run is offered are those of the live contract's skills, and a call of
# any other is refused at execution (`not_in_contract`).
SKILL_TOOLS: dict[str, frozenset[str]] = {
    "knowledge_answers": frozenset({"search_knowledge"}),
    "request_intake": frozenset({"submit_request", "amend_request", "withdraw_request"}),
    "handoff": frozenset({"request_handoff"}),
    "request_status": frozenset({"read_request_status"}),
}


def skill_tools(skill_ids: list[str]) -> frozenset[str]:
    """The tools a contract's skills grant (an id not in the catalogue grants nothing)."""
    return frozenset().union(*(SKILL_TOOLS.get(skill, frozenset()) for skill in skill_ids))


# How the business hands over what a customer asked for: the delivery options a contract may
# promise (each with the owner's note, e.g. "3 working days").
DELIVERY_CHANNELS: frozenset[str] = frozenset({"pickup", "post", "courier", "email", "onsite"})
