"""The tool registry: what the agent can do, for whom, and the checks around every call.

Each tool declares the audiences it serves, a pydantic schema of its arguments and a risk class.
The list sent to the model is filtered by the session's stored audience, and `execute` checks
everything again — audience, the session's tenant and agent, a removed owner, the arguments —
because what the model asks for is never trusted: a refused call is answered to the model as
refused and recorded in the ledger.  Every tool runs inside `knowledge.services.model_writing`:
knowledge a tool writes waits for the owner's decision on its proposal, and nothing a tool does
can approve, restore or decide (issue 28 §1).

A tool is a `Tool` whose `run(ctx, args)` returns a `ToolResult`; tools of later steps register
themselves with `registry.register(...)`.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from django.db import transaction
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from facade.tenancy.models import AgentProfile
from facade.tenancy.rules import Audience
from knowledge.services import model_writing

from .. import events, rules
from ..models import DialogueSession, Run
from ..rules import RefusalReason
from .providers.base import ToolCall, ToolSpec


class Risk(StrEnum):
    READ = "read"  # reads what the audience may see
    WRITE = "write"  # creates something for the principal (a request, a hand-off)
    RSI = "rsi"  # changes what the agent knows or says: owner face only


class Outcome(StrEnum):
    OK = "ok"
    REFUSED = "refused"
    INVALID = "invalid_arguments"
    FAILED = "failed"
    NEEDS_CONFIRMATION = "needs_confirmation"  # nothing done yet: the principal must confirm first


@dataclass
class ToolContext:
    """What a tool may act on: the run's session (audience and principal fixed at opening)."""

    session: DialogueSession
    run: Run
    agent: AgentProfile
    still_owner: Callable[[], bool] = lambda: False
    language: str = "en"
    citations: list[dict[str, Any]] = field(default_factory=list)
    # Proposal cards the owner face shows with the reply (approvals.selectors.proposal_card).
    cards: list[dict[str, Any]] = field(default_factory=list)
    request: dict[str, Any] | None = None
    progress: Callable[[str], None] = lambda state: None
    # The tools this run offers the model (for customers and peers: the live contract's skills);
    # None offers every tool of the audience.
    offered: frozenset[str] | None = None

    @property
    def audience(self) -> Audience:
        return Audience(self.session.audience)


@dataclass(frozen=True)
class ToolResult:
    outcome: Outcome
    content: dict[str, Any]

    def for_model(self) -> str:
        return json.dumps({"outcome": self.outcome.value, **self.content}, ensure_ascii=False)


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    audiences: frozenset[Audience]
    args: type[Args]
    risk: Risk
    run: Callable[[ToolContext, Any], ToolResult]
    progress: str = ""  # the state a person watching the chat sees while it runs

    def spec(self) -> ToolSpec:
        return _spec(self.name, self.description, self.args)


# Comfortably more than the tools ever registered, so in service nothing is evicted; the bound
# only keeps tools built on the fly (tests) from growing the cache without end.
SPEC_CACHE_SIZE = 128


@functools.lru_cache(maxsize=SPEC_CACHE_SIZE)
def _spec(name: str, description: str, args: type[Args]) -> ToolSpec:
    """Building a JSON schema costs pydantic about half a millisecond; a tool's never changes."""
    schema = args.model_json_schema()
    schema.pop("title", None)
    return ToolSpec(name=name, description=description, parameters=schema)


def tool_specs_reset() -> None:
    """Forget the built tool specs (they are built again on first use)."""
    _spec.cache_clear()


def may_execute(
    *,
    tool: Tool | None,
    audience: Audience,
    session_agent_id: int,
    agent_id: int,
    session_tenant_id: int,
    agent_tenant_id: int,
    owner_still: bool,
) -> RefusalReason | None:
    """The execution-time check (the decision itself is `rules.may_execute`); None means allowed."""
    return rules.may_execute(
        tool_audiences=None if tool is None else tool.audiences,
        audience=audience,
        session_agent_id=session_agent_id,
        agent_id=agent_id,
        session_tenant_id=session_tenant_id,
        agent_tenant_id=agent_tenant_id,
        owner_still=owner_still,
    )


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def register(self, tool: Tool) -> Tool:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is registered twice")
        self._tools[tool.name] = tool
        return tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def for_audience(self, audience: Audience) -> list[Tool]:
        return [tool for tool in self._tools.values() if audience in tool.audiences]

    def execute(self, ctx: ToolContext, call: ToolCall) -> ToolResult:
        tool = self.get(call.name)
        refusal = may_execute(
            tool=tool,
            audience=ctx.audience,
            session_agent_id=ctx.session.agent_id,
            agent_id=ctx.agent.pk,
            session_tenant_id=ctx.session.tenant_id,
            agent_tenant_id=ctx.agent.tenant_id,
            owner_still=ctx.audience == Audience.OWNER and ctx.still_owner(),
        )
        if refusal is None and ctx.offered is not None and call.name not in ctx.offered:
            refusal = RefusalReason.NOT_IN_CONTRACT
        if refusal is not None or tool is None:
            reason = refusal or RefusalReason.UNKNOWN_TOOL
            with transaction.atomic():
                events.tool_refused(
                    session=ctx.session,
                    run=ctx.run,
                    agent=ctx.agent,
                    tool=recorded_name(call.name),
                    audience=ctx.audience,
                    reason=reason,
                )
            return ToolResult(
                Outcome.REFUSED, {"error": reason.value, "detail": f"the tool {call.name[:64]!r} is not available here"}
            )
        try:
            raw = json.loads(call.arguments or "{}")
            if not isinstance(raw, dict):
                raise ValueError("arguments must be a JSON object")
            args = tool.args.model_validate(raw)
        except (ValueError, ValidationError) as exc:
            return ToolResult(Outcome.INVALID, {"error": "invalid_arguments", "detail": _brief(exc)})
        if tool.progress:
            ctx.progress(tool.progress)
        # Whatever the tool does, a model asked for it: knowledge it writes waits for the owner,
        # and nothing in it may approve, restore or decide (issue 28 §1; knowledge.services).
        with model_writing():
            if tool.risk == Risk.READ:
                return tool.run(ctx, args)
            with transaction.atomic():  # a write tool's changes and their events land together
                return tool.run(ctx, args)


_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def recorded_name(name: str) -> str:
    """A tool name as spans and ledger events may keep it.  The model writes the name, and a
    model can be made to write anything (customer text included): only name-shaped strings are
    kept."""
    return name if _TOOL_NAME.fullmatch(name) else "(not a tool name)"


def _brief(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()[:5])
    return str(exc)[:200]


registry = ToolRegistry()

CUSTOMER_FACING = frozenset({Audience.CUSTOMER, Audience.PEER})
OWNER_ONLY = frozenset({Audience.OWNER})


class SearchArgs(Args):
    query: str = Field(min_length=1, max_length=500)


class RequestArgs(Args):
    summary: str = Field(min_length=1, max_length=300, description="what the customer wants done, in a line")
    details: dict[str, str] = Field(default_factory=dict, description="the clarified fields, e.g. need, when, contact")


class WithdrawArgs(Args):
    request_id: int | None = Field(default=None, ge=1, description="the request's number; none: the latest")


class AmendArgs(Args):
    request_id: int | None = Field(default=None, ge=1, description="the request's number; none: the latest")
    summary: str | None = Field(default=None, max_length=300)
    details: dict[str, str] = Field(default_factory=dict, description="the fields to change, e.g. contact, when")


class HandoffArgs(Args):
    reason: str = Field(default="", max_length=300)
    details: dict[str, str] = Field(
        default_factory=dict, max_length=10, description="what the customer gave so far, e.g. need, when, contact"
    )


class StatusArgs(Args):
    request_id: int | None = Field(default=None, ge=1, description="the request's number; none: the latest ones")


class IngestArgs(Args):
    title: str = Field(min_length=1, max_length=200)
    text: str = Field(min_length=1, max_length=50_000)


class LessonArgs(Args):
    kind: str = Field(pattern="^(preference|wording|taboo)$")
    title: str = Field(min_length=1, max_length=200)
    text: str = Field(min_length=1, max_length=5000)
    phrase: str = Field(
        default="",
        max_length=150,
        description="a taboo's exact words the agent must never say (e.g. cheap); once approved, replies saying "
        "them are stopped",
    )


class InboxArgs(Args):
    pass


class ListArgs(Args):
    pass


class ProposeArgs(Args):
    """A change proposal.  `level`, `requires` and `confirm` are accepted only to be ignored: the
    platform assigns them, and a claim is recorded as an override."""

    kind: str = Field(
        pattern="^(knowledge_draft|lesson|wording|clarification_order|boundary_wording|skill_ids|delivery|pricing"
        "|state_contract)$"
    )
    payload: dict[str, Any]
    summary: str = Field(min_length=1, max_length=300, description="one line the owner reads on the card")
    evidence: list[dict[str, Any]] = Field(default_factory=list, max_length=20)
    level: Any = Field(default=None, description="ignored: the platform assigns the level")
    requires: Any = Field(default=None, description="ignored: the platform decides who decides")
    confirm: Any = Field(default=None, description="ignored: only the owner confirms")


class DecideArgs(Args):
    """Accepted only to answer that the owner decides: nothing here is ever used to decide."""

    proposal_id: str | int
    decision: str = Field(default="", max_length=20)
    token: Any = None
    code: Any = None
    confirm: Any = None
    expected_version: Any = None


class DraftArgs(Args):
    title: str = Field(min_length=1, max_length=200, description="the entry's title, as shown to the owner")
    text: str = Field(min_length=1, max_length=5000, description="the entry's text, as shown to the owner")
