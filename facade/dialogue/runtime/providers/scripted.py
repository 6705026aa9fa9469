"""A provider that plays a script: for tests (including adversarial ones) and benchmarks.

Each step is a `ModelReply`, a `ProviderError` to raise, or a callable that receives the
messages and tools of the call and returns either.  The provider records every call it got so
that tests can check what the model was shown."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Union

from facade.tenancy.rules import Audience

from .base import ModelReply, Provider, ProviderError, ToolSpec

Step = Union[
    ModelReply, ProviderError, Callable[[list[dict[str, Any]], list[ToolSpec]], Union[ModelReply, ProviderError]]
]


@dataclass
class Seen:
    messages: list[dict[str, Any]]
    tools: list[ToolSpec]
    max_tokens: int
    audience: Audience
    composition: str = "guarded"


@dataclass
class ScriptedProvider(Provider):
    steps: list[Step]
    repeat_last: bool = False
    calls: list[Seen] = field(default_factory=list)
    name: str = "scripted"
    rewrites: bool = True  # it stands in for a real model (False: for a deterministic one)

    @classmethod
    def of(cls, *steps: Step, repeat_last: bool = False) -> "ScriptedProvider":
        return cls(steps=list(steps), repeat_last=repeat_last)

    def complete(
        self,
        *,
        messages: list[dict[str, Any]],
        tools: list[ToolSpec],
        max_tokens: int,
        audience: Audience,
        composition: str = "guarded",
    ) -> ModelReply:
        # Whatever the composition, a step's text is returned as it is: a test writes the raw
        # answer (free text, a structured choice, anything) and sees what the server makes of it.
        self.calls.append(Seen([dict(m) for m in messages], list(tools), max_tokens, audience, composition))
        if not self.steps:
            raise ProviderError("script_exhausted")
        step = self.steps[0] if (self.repeat_last and len(self.steps) == 1) else self.steps.pop(0)
        if callable(step) and not isinstance(step, (ModelReply, ProviderError)):
            step = step(messages, tools)
        if isinstance(step, ProviderError):
            raise step
        return step
