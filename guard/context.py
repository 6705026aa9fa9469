"""What a reply is checked against: the context of the turn that wrote it.

A turn's reply is read with three things besides its own words (`outgoing.outgoing_check`):
the approved entries its search returned (the *citations*, each a title and the snippet the
model was shown), the customer's own messages in the conversation, and everything the model was
given (the agent's published texts, the conversation, the tools' results) for the grounding
check.  `turn_context` takes them from a run's messages and citations, exactly as the run loop
holds them; `stated_context` from texts said by hand (`manage.py guard_check --knowledge …
--customer … --given …`, the out-of-sample rounds).  Both give the same `CheckContext` for the
same conversation, so a reply checked by hand gets the verdict a turn gives it
(`tests/test_guard_context.py` holds them to the same answers).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["CheckContext", "knowledge_citation", "stated_context", "turn_context"]

# "Title: text" — an entry as the search shows it; a title is short and holds no colon.
_ENTRY: Final = re.compile(r"^(?P<title>[^:：\n]{1,60})[:：]\s*(?P<snippet>\S.*)$", re.S)


@dataclass(frozen=True)
class CheckContext:
    citations: tuple[Mapping[str, Any], ...] = ()
    customer: tuple[str, ...] = ()
    given: tuple[str, ...] = ()

    def as_kwargs(self) -> dict[str, Any]:
        return {"citations": list(self.citations), "customer": list(self.customer), "given": list(self.given)}


def knowledge_citation(text: str) -> dict[str, str]:
    """An approved entry the run cited, said as ``Title: text`` (or as its text alone: an entry
    with no title, which a reply can restate but not quote by name)."""
    text = text.strip()
    entry = _ENTRY.match(text)
    if entry is None:
        return {"title": "", "snippet": re.sub(r"\s+", " ", text)}
    return {"title": entry.group("title").strip(), "snippet": re.sub(r"\s+", " ", entry.group("snippet")).strip()}


def stated_context(
    *, knowledge: Sequence[str] = (), customer: Sequence[str] = (), given: Sequence[str] = ()
) -> CheckContext:
    """The context said by hand: `knowledge` the approved entries the run cited, in citation
    order ([1] the first), `customer` the customer's messages, `given` anything else the model was
    given (for the grounding check only)."""
    citations = tuple(knowledge_citation(text) for text in knowledge if text.strip())
    said = tuple(text for text in customer if text.strip())
    return CheckContext(citations=citations, customer=said, given=(*given, *knowledge, *said))


def turn_context(messages: Sequence[Mapping[str, Any]], citations: Sequence[Mapping[str, Any]]) -> CheckContext:
    """The context of a run: its messages to the model (system prompt, history, the customer's
    message, tool calls and results) and the citations its search returned."""
    given = tuple(m["content"] for m in messages if isinstance(m.get("content"), str))
    customer = tuple(m["content"] for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str))
    return CheckContext(citations=tuple(citations), customer=customer, given=given)
