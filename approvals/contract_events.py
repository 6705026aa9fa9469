"""The approvals app's ledger events for agent contract versions: one payload model and one
typed constructor per type (see ledger/catalogue.py).  They are about the agent's contract
(entity `contract`, id = the agent's slug, entity version = the contract version)."""

from __future__ import annotations

from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor
from ledger.catalogue import EventPayload, EventType, register
from ledger.schemas import AppendedEvent

from .events import append, change_seq

APP = "approvals"
ENTITY = "contract"


class ContractPublished(EventPayload):
    agent: str
    version: int
    previous_version: int | None  # None for an agent's first version
    hash: str
    caused_by: str
    changed: list[str]  # the contract fields that differ from the previous version


class ContractRolledBack(EventPayload):
    agent: str
    version: int  # the new version, a copy of the target's content
    to_version: int
    hash: str


class ContractSessionsClosed(EventPayload):
    agent: str
    version: int  # the version that made them stale
    reason: str
    count: int


class ContractRejected(EventPayload):
    agent: str
    live_version: int | None
    caused_by: str
    reasons: list[str]


def _type(name: str, payload: type[EventPayload], description: str) -> EventType:
    return register(name, app=APP, entity_type=ENTITY, payload=payload, description=description)


CONTRACT_PUBLISHED = _type(
    "contract.published",
    ContractPublished,
    "The contract compiler published a new version of an agent's contract (its hash, what changed, what caused it).",
)
CONTRACT_ROLLED_BACK = _type(
    "contract.rolled_back",
    ContractRolledBack,
    "An agent's contract was rolled back: a new version carrying an earlier version's content.",
)
CONTRACT_SESSIONS_CLOSED = _type(
    "contract.sessions_closed",
    ContractSessionsClosed,
    "Customer sessions opened under an older contract version were closed by one publish (a count).",
)
CONTRACT_REJECTED = _type(
    "contract.rejected",
    ContractRejected,
    "A contract change failed to compile and nothing was published (the reasons).",
)


def _append(
    event_type: EventType,
    *,
    agent: AgentProfile,
    actor: Actor,
    payload: EventPayload,
    version: int | None,
    caused_by: str = "",
) -> AppendedEvent:
    """Linked to the change that caused it when `caused_by` names one, else to the contract's
    previous event."""
    return append(
        event_type,
        chain_id=agent.tenant_id,
        entity_id=agent.slug,
        version=version,
        actor=actor,
        payload=payload,
        caused_by=change_seq(agent.tenant_id, caused_by),
    )


def contract_published(
    *,
    agent: AgentProfile,
    version: int,
    previous_version: int | None,
    content_hash: str,
    caused_by: str,
    changed: list[str],
    actor: Actor,
) -> AppendedEvent:
    payload = ContractPublished(
        agent=agent.slug,
        version=version,
        previous_version=previous_version,
        hash=content_hash,
        caused_by=caused_by,
        changed=changed,
    )
    return _append(CONTRACT_PUBLISHED, agent=agent, actor=actor, payload=payload, version=version, caused_by=caused_by)


def contract_rolled_back(
    *, agent: AgentProfile, version: int, to_version: int, content_hash: str, actor: Actor
) -> AppendedEvent:
    payload = ContractRolledBack(agent=agent.slug, version=version, to_version=to_version, hash=content_hash)
    return _append(CONTRACT_ROLLED_BACK, agent=agent, actor=actor, payload=payload, version=version)


def contract_sessions_closed(*, agent: AgentProfile, version: int, count: int, actor: Actor) -> AppendedEvent:
    payload = ContractSessionsClosed(agent=agent.slug, version=version, reason="contract_republished", count=count)
    return _append(CONTRACT_SESSIONS_CLOSED, agent=agent, actor=actor, payload=payload, version=version)


def contract_rejected(
    *, agent: AgentProfile, live_version: int | None, caused_by: str, reasons: list[str], actor: Actor
) -> AppendedEvent:
    payload = ContractRejected(agent=agent.slug, live_version=live_version, caused_by=caused_by, reasons=reasons)
    return _append(
        CONTRACT_REJECTED, agent=agent, actor=actor, payload=payload, version=live_version, caused_by=caused_by
    )
