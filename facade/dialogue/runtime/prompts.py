"""One prompt builder per audience.  The customer and peer prompts hold only what the agent has
published (mission, boundary wording, clarification order); the owner prompt holds owner-face
instructions and counts — never customer text.  Each run records a hash of the context used."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from approvals.contract import ContractTerms, live_terms
from facade.tenancy.models import AgentProfile
from facade.tenancy.rules import Audience
from knowledge.selectors import Taboo, taboos_in_effect

from .ways_out import flow_instructions

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_NOT_LANGUAGE = re.compile(r"\S+@\S+|https?://\S+")


def language_of(text: str) -> str:
    """The language to answer in: Simplified Chinese when the message holds Chinese characters."""
    return "zh-hans" if _CJK.search(text) else "en"


def conversation_language(texts: list[str]) -> str:
    """The language of a conversation from its principal's messages, newest first: the newest
    one that shows a language decides (a bare phone number or e-mail address shows none)."""
    for text in texts:
        if _CJK.search(text):
            return "zh-hans"
        if _LATIN_WORD.search(_NOT_LANGUAGE.sub(" ", text)):
            return "en"
    return "en"


@dataclass(frozen=True)
class Prompt:
    system: str
    context_hash: str
    # The approved taboos the prompt lists, which the loop also enforces on the reply (taboo.py).
    taboos: tuple[Taboo, ...] = ()


def _hash(context: Mapping[str, object]) -> str:
    return hashlib.sha256(json.dumps(context, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


OCCASIONS = {
    "greeting": "When the customer greets you",
    "unknown": "When nothing in the knowledge answers",
    "handoff": "When you hand the conversation to a person",
    "request_registered": "When a request is registered",
}


def _own_sentences(said: Mapping[str, str]) -> list[str]:
    """The owner's own wording for some moments (the contract's L2 `wording`), said as given."""
    return [f"{OCCASIONS[k]}, say: {said[k]}" for k in OCCASIONS if said.get(k)]


def _published_lines(terms: ContractTerms) -> list[str]:
    """What the model is told of the price list and delivery options the contract publishes: the
    search returns them, numbered like any result (approvals/published.py)."""
    parts = [
        name
        for name, there in (
            ("price list", bool((terms.pricing or {}).get("items"))),
            ("delivery options", bool(terms.delivery)),
        )
        if there
    ]
    if not parts or terms.version is None:
        return []
    return [
        f"The business has published its {' and '.join(parts)} (contract version {terms.version}): search_knowledge "
        "returns them as results when asked about prices or delivery. Quote or restate a listed price or option as "
        "it stands, with its cite number; a price the list does not name is the owner's to confirm, and never add "
        "prices up or apply them to the customer's own order.",
    ]


def customer_prompt(
    agent: AgentProfile,
    language: str,
    tool_names: list[str],
    audience: Audience = Audience.CUSTOMER,
    terms: ContractTerms | None = None,
    taboos: tuple[Taboo, ...] | None = None,
) -> Prompt:
    """`terms`: the live contract's, when the caller has read them already; `taboos`: the
    agent's approved taboos, likewise."""
    terms = terms or live_terms(agent)
    taboos = taboos_in_effect(agent) if taboos is None else taboos
    phrases = [taboo.phrase for taboo in taboos]
    boundary = terms.boundary(language)
    order = terms.clarification_order
    # The live contract version's hash stands for everything the contract says (mission,
    # wording, order, flow, skills, delivery, pricing); a publish changes it.
    context = {
        "audience": audience.value,
        "contract": terms.content_hash,
        "boundary": boundary,
        "tools": tool_names,
        "taboos": phrases,
    }
    who = "another business's agent (a peer)" if audience == Audience.PEER else "a customer"
    lines = [
        f"You are the assistant of {agent.name}, talking with {who}.",
        f"Mission: {terms.mission}" if terms.mission else "",
        "Answer only from what search_knowledge returns, and name the entries you used.",
        "Never promise a price or amount, a deadline or delivery time, or an outcome. When asked for one, say:",
        f"  {boundary}",
        "and offer to register a request for the owner.",
        "You may quote a price, a time or a condition exactly as a search result states it, on a line of its own:",
        "  [cite] Title: the result's own words, whole sentences or list items",
        "(cite is the number the result carries). Never apply it to the customer's own case.",
        *(_published_lines(terms) if "search_knowledge" in tool_names else []),
        *(
            [
                "Before submit_request, ask for these, one at a time and in this order: " + ", ".join(order) + ".",
                "submit_request first answers with a summary: end your reply with it word for word, and call "
                "submit_request again with the same fields only after the customer answers yes.",
            ]
            if "submit_request" in tool_names  # the contract's skills grant request intake
            else ["You cannot register requests here: say so, and point to the business's own contact."]
        ),
        "If nothing in the knowledge answers, say you don't know yet and offer a person's follow-up.",
        *flow_instructions(tool_names),
        *_own_sentences(terms.wording.get(language) or {}),
        # The owner's approved taboos; a reply that still says one is replaced (taboo.py).
        "The owner never says these words; never use them, not even in a quote or a denial: "
        + ", ".join(f"“{phrase}”" for phrase in phrases)
        + "."
        if phrases
        else "",
        f"Reply in {'Simplified Chinese' if language == 'zh-hans' else 'English'}.",
    ]
    return Prompt("\n".join(line for line in lines if line), _hash(context), taboos)


def owner_prompt(agent: AgentProfile, language: str, tool_names: list[str], pending: int) -> Prompt:
    """The owner face: it teaches and reviews.  It receives counts and pointers, never what a
    customer wrote."""
    terms = live_terms(agent)
    context = {"audience": "owner", "contract": terms.content_hash, "tools": tool_names}
    lines = [
        f"You are the assistant of {agent.name}, talking with its owner, who teaches and improves you.",
        f"Mission: {terms.mission}" if terms.mission else "",
        f"Knowledge waiting for the owner's review: {pending}.",
        "Use ingest_material for material the owner gives you, remember_lesson for preferences, wording and taboos,",
        "read_owner_inbox for what waits, read_customer_requests for open requests, read_unanswered_questions for",
        "questions the knowledge could not answer, search_knowledge to look things up (pending material included).",
        "When the owner states a fact, show a draft (a title in “” and the text) and ask whether to add it; only after",
        "the owner's yes call add_confirmed_knowledge with that same title and text.",
        "Answer in plain words: no ids, version numbers or statuses.",
        "You cannot approve anything yourself: approvals are the owner's, with a one-time token.",
        f"Reply in {'Simplified Chinese' if language == 'zh-hans' else 'English'}.",
    ]
    return Prompt("\n".join(line for line in lines if line), _hash(context))
