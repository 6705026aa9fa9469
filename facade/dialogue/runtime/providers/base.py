"""The contract a model provider implements.

A provider turns a conversation (OpenAI chat-completions shaped messages) and the tools the
runtime allows for this session into the model's next step: some text, some tool calls, or both.
It decides nothing about tenants, budgets or permissions: the run loop decides what the model
may see (the prompt, the tools) and checks everything it asks for.  The loop also tells it the
session's audience, which a provider may use for how it speaks (the offline model's owner face)
and must not read from the conversation instead: a customer can write anything there.  A plugin
implements `complete` and sets `name`:

    class MyProvider(Provider):
        name = "mine"

        def complete(self, *, messages, tools, max_tokens, audience):
            ...
            return ModelReply(text="…", tool_calls=[], prompt_tokens=12, completion_tokens=3)

`complete` raises `ProviderError` (with a short machine-readable `reason`) when the model cannot
answer — after the provider's own retries; the run then stops with stop reason
`provider_error` and the customer gets an honest short reply.

Strict composition (runtime/strict.py): when an agent's contract says `strict`, the loop calls
`complete(..., composition="strict")` and the final answer's text must be the structured choice
(a JSON list of `{"kind", "id", "slots"}`) the server composes the reply from; anything else is
refused.  The argument is passed only in strict mode, so a provider that does not know it still
serves guarded agents.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any

from facade.tenancy.rules import Audience


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it: a name, what it is for and a JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]

    def as_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@dataclass(frozen=True)
class ToolCall:
    """A call the model asks for.  `arguments` is the raw JSON text the model produced: it is
    validated by the tool registry, never trusted."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ModelReply:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Whether the text asks the principal for something (a clarifying question).  None: the
    # runtime guesses from a trailing question mark.
    needs_input: bool | None = None
    # Why the model stopped, as the server said: "stop", "length" (cut off), "tool_calls",
    # "content_filter", or "" when it did not say or said something else.
    finish_reason: str = ""


class ProviderError(Exception):
    """The model could not answer.  `reason` is short and machine-readable (e.g. `timeout`,
    `http_503`, `rate_limited`, `bad_response`); it never carries prompt text."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


class Provider(abc.ABC):
    """A model behind the agent."""

    name: str = "provider"
    # A remote model may take seconds to answer: the run loop gives its database connection
    # back (to the pool) before such a call instead of holding it idle.
    remote: bool = False
    # Whether a reply the outgoing check blocked is worth asking for again (one bounded rewrite,
    # told only the category that was blocked).  A real model may word it differently the second
    # time; a deterministic one would only repeat itself.
    rewrites: bool = True

    @abc.abstractmethod
    def complete(
        self,
        *,
        messages: list[dict[str, Any]],
        tools: list[ToolSpec],
        max_tokens: int,
        audience: Audience,
        composition: str = "guarded",
    ) -> ModelReply:
        """The model's next step for `messages` (dicts with `role` system/user/assistant/tool,
        `content`, and for assistant turns `tool_calls`, for tool turns `tool_call_id`), offered
        `tools`, in a session with `audience` (owner, customer or peer).  Must not return more
        than `max_tokens` completion tokens' worth of text.  `composition` "strict": answer with
        the structured choice (module docstring)."""
