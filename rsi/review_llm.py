"""The LLM reviewer: the runtime's model provider reads the day's `ReviewInput` — figures, ratios,
pointers and the topics the scrub and the k-anonymity rule let through, never a customer's words
(red line 5) — and answers claims in the gate's shape.  Whatever it writes passes the same gate
as the offline reviewer's claims (rsi/review_rules.py); what it cannot parse is counted.

It runs only when a remote model is configured (`FACADE_LLM_PROVIDER=openai`): the embedded
offline provider is the chat's rule engine, not a reviewer."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.conf import settings

from facade.tenancy.models import AgentProfile

from .review_input import ReviewInput

MAX_TOKENS = 1500
MAX_CLAIMS = 30

SYSTEM = """You review one day of a business's customer-service agent from figures only.
You receive a JSON object (ReviewInput): `figures` (aggregate key -> count), `ratios`, `sessions`
(aggregate key -> a few session ids) and `topics` (unanswered topics with their aggregate key).
Figures without a prefix are the customers'; figures under `peers.` count other agents' conversations
(peers over A2A or an API) apart: never add them to the customers' or call those agents customers.
Answer with one JSON object and nothing else: {"claims": [claim, ...]} where a claim is
{"kind": "win"|"miss"|"gap", "text": "<one sentence>",
 "evidence": [{"type": "aggregate", "key": "<a key of figures>"} or {"type": "session", "id": "<a session id given>"}],
 "figure": {"key": "<a key of figures>", "value": <that figure>},
 "proposal": {"kind": "knowledge_draft", "payload": {"title": "...", "text": "..."}, "summary": "...",
              "sessions_affected": <int>}}   (proposal optional).
Every claim needs evidence from the input; a claim whose evidence or figure is not in the input is dropped.
You cannot decide who approves anything: the owner decides every proposal."""


class Reviewer(Protocol):
    """The contract of a reviewer (style habit 9): a `name`, a `model` (empty for rules) and
    `review(review_input)` returning raw claims (the gate judges them) and how many items of its
    output could not be read."""

    name: str
    model: str

    def review(self, review_input: ReviewInput) -> tuple[list[Any], int]: ...


@dataclass
class LLMReviewer:
    agent: AgentProfile
    name: str = "llm"
    model: str = ""
    error: str = field(default="")

    def review(self, review_input: ReviewInput) -> tuple[list[Any], int]:
        # The runtime's provider (facade/dialogue/runtime/providers) depends on tenancy only.
        from facade.dialogue.runtime.providers import ProviderError, provider_for
        from facade.tenancy.rules import Audience

        provider = provider_for(self.agent)
        self.model = str(getattr(provider, "model", provider.name))
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": json.dumps(review_input.model_dump(mode="json"), ensure_ascii=False)},
        ]
        try:
            reply = provider.complete(messages=messages, tools=[], max_tokens=MAX_TOKENS, audience=Audience.OWNER)
        except ProviderError as exc:
            self.error = exc.reason
            return [], 1
        return parse_claims(reply.text)


def parse_claims(text: str) -> tuple[list[Any], int]:
    """The claims of a model's answer (a JSON object, possibly fenced) and 1 when it could not be
    read at all."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`")
        body = body.split("\n", 1)[1] if "\n" in body else ""
    start, end = body.find("{"), body.rfind("}")
    try:
        data = json.loads(body[start : end + 1]) if start >= 0 and end > start else None
    except ValueError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("claims"), list):
        return [], 1
    return list(data["claims"][:MAX_CLAIMS]), 0


def llm_reviewer(agent: AgentProfile) -> LLMReviewer | None:
    """The LLM reviewer when a remote model is configured, else None."""
    if settings.FACADE_LLM_PROVIDER != "openai":
        return None
    return LLMReviewer(agent=agent)
