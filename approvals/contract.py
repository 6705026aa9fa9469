"""The contract compiler: the only way an agent's contract changes (issue 12, L3).

`contract_compile` validates a change against the schema and semantics of a contract
(`contract_rules.contract_problems`), builds version+1 from the live version plus the change and
publishes it in one transaction: the new row, the live flag moved and the ledger events.  Any
failure publishes nothing and the previous version stays live.  Requests in flight keep the state
machine they started with (`CustomerRequest.flow` is a copy).

What a publish does to open conversations (issue 26 §2): a change that takes away nothing a
conversation relies on (`contract_rules.removals`: wording, boundary wording, clarification
order, prices, delivery, an added skill) ends none — each conversation's next turn speaks by the
new version.  One that removes a skill or part of the request flow ends the customer sessions of
older versions (reason `contract_republished`: at their next message, and in batches after the
commit); the customer's page goes on in a new session that continues the old one
(`facade.dialogue.services.session_continue`), with its messages and requests.

The runtime reads the live version through `live_terms` (prompts, the offline model, request
registration), and the context hash a run records is the live version's hash.

Dependency note: closing sessions writes the dialogue app's table through `apps.get_model`
rather than an import, because dialogue depends on approvals and not the other way round."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.apps import apps
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from facade.errors import ApplicationError
from facade.tenancy.models import DEFAULT_WORDING, AgentProfile
from facade.tenancy.schemas import Actor

from . import contract_events as events
from .contract_models import AgentContract
from .contract_rules import FIELDS, GUARDED, content_hash, contract_problems, default_content, removals

CLOSE_REASON = "contract_republished"


class ContractInvalid(ApplicationError):
    """`contract_invalid`: the change does not compile; `reasons` lists every problem found."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("contract_invalid", "; ".join(reasons))
        self.reasons = reasons


@dataclass(frozen=True)
class ContractTerms:
    """What the runtime reads of an agent's live contract."""

    version: int | None
    content_hash: str
    mission: str
    boundary_wording: dict[str, str]
    wording: dict[str, dict[str, str]]
    clarification_order: list[str]
    request_flow: dict[str, Any]
    skill_ids: list[str]
    # How a customer or peer reply is put together: "guarded" or "strict".  The runtime reads it
    # only through facade.dialogue.runtime.strict.composition_mode.
    composition_mode: str = GUARDED
    # What the contract publishes to customers (approvals/published.py): the price list
    # `{currency, items: [{name, amount}]}` and the delivery options `[{channel, note}]`.
    pricing: dict[str, Any] = field(default_factory=dict)
    delivery: list[dict[str, Any]] = field(default_factory=list)

    def published(self) -> dict[str, Any]:
        """The published parts as contract content (`{"pricing": …, "delivery": …}`)."""
        return {"pricing": self.pricing, "delivery": self.delivery}

    def boundary(self, language: str) -> str:
        """The owner's wording in `language`, else the owner's English, else the default."""
        own = self.boundary_wording.get(language) or self.boundary_wording.get("en")
        return str(own) if own else DEFAULT_WORDING[language]["boundary"]

    def said(self, language: str, situation: str) -> str | None:
        """The owner's own sentence for `situation` (greeting, unknown, handoff,
        request_registered) in `language`, else None: the caller says the platform's."""
        own = (self.wording.get(language) or {}).get(situation)
        return str(own) if own else None


def _terms(contract: AgentContract) -> ContractTerms:
    return ContractTerms(
        version=contract.version,
        content_hash=contract.content_hash,
        mission=contract.mission,
        boundary_wording=dict(contract.boundary_wording or {}),
        wording={str(k): dict(v) for k, v in (contract.wording or {}).items()},
        clarification_order=[str(f) for f in contract.clarification_order or []],
        request_flow=dict(contract.request_flow or {}),
        skill_ids=[str(s) for s in contract.skill_ids or []],
        composition_mode=str(contract.composition_mode or GUARDED),
        pricing=dict(contract.pricing or {}),
        delivery=[dict(option) for option in contract.delivery or [] if isinstance(option, dict)],
    )


def profile_content(agent: AgentProfile) -> dict[str, Any]:
    """Version 1 of an agent's contract: its `AgentProfile` fields plus the platform defaults.
    (The profile fields are read here and by the data migration only.)"""
    return {
        "mission": agent.mission,
        "boundary_wording": dict(agent.boundary_wording or {}),
        "clarification_order": list(agent.clarification_order or []),
        "request_flow": dict(agent.request_flow or {}),
        **default_content(),
    }


def live_contract(agent: AgentProfile) -> AgentContract | None:
    if agent.pk is None:
        return None
    return AgentContract.objects.filter(agent_id=agent.pk, is_live=True).first()


def live_content(agent: AgentProfile) -> dict[str, Any]:
    """The live version's content (from the profile fields when the agent has no version)."""
    contract = live_contract(agent)
    return contract.content() if contract is not None else profile_content(agent)


def live_terms(agent: AgentProfile) -> ContractTerms:
    """The live version's terms.  An agent without any version (an unsaved one, or a row
    written outside `agent_create` and the migration) is read from its profile fields."""
    contract = live_contract(agent)
    if contract is not None:
        return _terms(contract)
    content = profile_content(agent)
    return ContractTerms(
        version=None,
        content_hash=content_hash(content),
        mission=content["mission"],
        boundary_wording=content["boundary_wording"],
        wording=content["wording"],
        clarification_order=[str(f) for f in content["clarification_order"]],
        request_flow=content["request_flow"],
        skill_ids=list(content["skill_ids"]),
        composition_mode=str(content["composition_mode"]),
        pricing=dict(content["pricing"]),
        delivery=list(content["delivery"]),
    )


def _publish(
    *,
    agent: AgentProfile,
    content: dict[str, Any],
    actor: Actor,
    caused_by: str,
    previous: AgentContract | None,
    rolled_back_to: int | None = None,
) -> AgentContract:
    version = (previous.version if previous else 0) + 1
    if previous is not None:
        previous.is_live = False
        previous.save(update_fields=["is_live"])
    contract = AgentContract.objects.create(
        agent=agent,
        version=version,
        content_hash=content_hash(content),
        is_live=True,
        published_at=timezone.now(),
        published_by=actor.id,
        caused_by=caused_by[:64],
        rolled_back_to=rolled_back_to,
        **{name: content[name] for name in FIELDS},
    )
    before = previous.content() if previous else {}
    changed = [name for name in FIELDS if before.get(name) != content[name]]
    events.contract_published(
        agent=agent,
        version=version,
        previous_version=previous.version if previous else None,
        content_hash=contract.content_hash,
        caused_by=caused_by,
        changed=changed,
        actor=actor,
    )
    if previous is not None and removals(before, content):
        # A publish that takes away what open conversations rely on writes no session row
        # either: from its commit on, a customer session of an older version is ended at its
        # next message (the turn compares versions and asks `removals_since`), and the rows are
        # closed in batches after the commit — so a publish costs the same with 100 or 100,000
        # open sessions, and no turn waits for their close.
        transaction.on_commit(functools.partial(stale_sessions_close, agent=agent, version=version, actor=actor))
    return contract


SESSION_CLOSE_BATCH = 1000


def _stale_sessions(agent_id: int, version: int) -> Any:
    """Open customer sessions of the agent opened under a version before `version` (or before
    versions existed): never one opened under `version` or a later publish."""
    session_model = apps.get_model("dialogue", "DialogueSession")
    return session_model.objects.filter(agent_id=agent_id, audience="customer", status="open").filter(
        Q(contract_version__lt=version) | Q(contract_version__isnull=True)
    )


def stale_sessions_close(*, agent: AgentProfile, version: int, actor: Actor) -> int:
    """After a publish of `version`: close the agent's customer sessions of older versions with
    reason `contract_republished`, in batches of SESSION_CLOSE_BATCH rows, each its own short
    transaction (row locks held only for the batch), then one `contract.sessions_closed` event
    with the count.  Until a batch reaches a session, the session already refuses messages."""
    # The ids once (an index scan of the open customer sessions), then each batch by primary
    # key: re-running the search per batch would walk the index entries of the rows already
    # closed (they stay until vacuum) again and again.
    stale = list(_stale_sessions(agent.pk, version).values_list("pk", flat=True))
    closed = 0
    for start in range(0, len(stale), SESSION_CLOSE_BATCH):
        with transaction.atomic():
            closed += int(
                _stale_sessions(agent.pk, version)
                .filter(pk__in=stale[start : start + SESSION_CLOSE_BATCH])
                .update(status="closed", closed_reason=CLOSE_REASON)
            )
    with transaction.atomic():
        events.contract_sessions_closed(agent=agent, version=version, count=closed, actor=actor)
    return closed


def removals_since(agent: AgentProfile, version: int | None, to_version: int | None) -> list[str]:
    """What version `to_version` takes away that a conversation on `version` relies on
    (`contract_rules.removals`); None stands for the profile fields an agent without versions is
    read from.  Two reads by the unique (agent, version) index; empty when nothing is gone."""
    if version == to_version:
        return []
    wanted = [v for v in (version, to_version) if v is not None]
    rows = {c.version: c.content() for c in AgentContract.objects.filter(agent_id=agent.pk, version__in=wanted)}
    before = rows.get(version) if version is not None else profile_content(agent)
    after = rows.get(to_version) if to_version is not None else profile_content(agent)
    if before is None or after is None:  # a version that does not exist: nothing to rely on
        return []
    return removals(before, after)


def live_contract_version(agent_id: int) -> int | None:
    return AgentContract.objects.filter(agent_id=agent_id, is_live=True).values_list("version", flat=True).first()


@transaction.atomic
def contract_create_first(*, agent: AgentProfile, actor: Actor, skill_ids: list[str] | None = None) -> AgentContract:
    """Version 1 of a new agent, from its profile fields (see `agent_create`); `skill_ids`: the
    skills it starts with instead of the platform's default ones (checked like any contract)."""
    if AgentContract.objects.filter(agent_id=agent.pk).exists():
        raise ApplicationError("contract_exists", "this agent already has a contract", 409)
    content = profile_content(agent)
    if skill_ids is not None:
        content["skill_ids"] = list(skill_ids)
        problems = contract_problems(content)
        if problems:
            raise ContractInvalid(problems)
    return _publish(agent=agent, content=content, actor=actor, caused_by="agent_created", previous=None)


def _locked_live(agent: AgentProfile) -> AgentContract | None:
    # The agent row is the lock that orders publishes of one agent.  FOR NO KEY UPDATE: a plain
    # FOR UPDATE also blocks the KEY SHARE lock that every new row referring to the agent takes
    # at its commit (a session opening), which waited for the publish while holding the tenant's
    # ledger chain head the publish then wanted: a deadlock (bench/approvals.py found it).
    AgentProfile.objects.select_for_update(no_key=True).filter(pk=agent.pk).first()
    return AgentContract.objects.filter(agent_id=agent.pk, is_live=True).first()


Changes = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


def contract_compile(*, agent: AgentProfile, changes: Changes, actor: Actor, caused_by: str = "") -> AgentContract:
    """Publish version+1 = the live version with `changes` applied, or raise `contract_invalid`
    (every reason listed) and publish nothing.  `changes` may be a function of the live
    content, read under the publish lock (it may raise `ContractInvalid` itself, e.g. when the
    live value it replaces moved on)."""
    try:
        with transaction.atomic():
            previous = _locked_live(agent)
            base = previous.content() if previous else profile_content(agent)
            if callable(changes):
                changes = changes(base)
            unknown = [f"{name}: unknown field" for name in sorted(set(changes) - set(FIELDS))]
            content = {**base, **{k: v for k, v in changes.items() if k in FIELDS}}
            problems = unknown + contract_problems(content)
            if problems:
                raise ContractInvalid(problems)
            return _publish(agent=agent, content=content, actor=actor, caused_by=caused_by, previous=previous)
    except ContractInvalid as refused:
        live = live_contract(agent)
        events.contract_rejected(
            agent=agent,
            live_version=live.version if live else None,
            caused_by=caused_by,
            reasons=refused.reasons,
            actor=actor,
        )
        raise


@transaction.atomic
def contract_rollback(*, agent: AgentProfile, to_version: int, actor: Actor, caused_by: str = "") -> AgentContract:
    """Publish a new version carrying version `to_version`'s content (rollback is a new version)."""
    previous = _locked_live(agent)
    target = AgentContract.objects.filter(agent_id=agent.pk, version=to_version).first()
    if target is None or previous is None:
        raise ApplicationError("contract_version_unknown", f"this agent has no contract version {to_version}", 404)
    contract = _publish(
        agent=agent,
        content=target.content(),
        actor=actor,
        caused_by=caused_by or f"rollback:{to_version}",
        previous=previous,
        rolled_back_to=to_version,
    )
    events.contract_rolled_back(
        agent=agent, version=contract.version, to_version=to_version, content_hash=contract.content_hash, actor=actor
    )
    return contract
