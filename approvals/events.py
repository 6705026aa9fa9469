"""The approvals app's ledger events for change proposals: one payload model and one typed
constructor per type (see ledger/catalogue.py).  The payload text stays in the proposal row; the
ledger keeps its fingerprint."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from facade.tenancy.schemas import Actor
from ledger.catalogue import EventPayload, EventType, register
from ledger.schemas import AppendedEvent
from ledger.services import ledger_append

from .models import ChangeProposal

APP = "approvals"
ENTITY = "change_proposal"


class ProposalDescribed(EventPayload):
    agent: str
    proposal: str
    kind: str
    level: int
    requires: str
    origin: str
    status: str
    version: int
    payload_sha256: str


class ProposalCreated(ProposalDescribed):
    base: str
    evidence: list[dict[str, Any]]


class OverrideRecorded(EventPayload):
    agent: str
    proposal: str
    claimed: dict[str, str]  # what the model wrote (level, requires, confirm), as text, cut to 40
    assigned: dict[str, str]  # what the platform assigned


class ProposalDecided(ProposalDescribed):
    decision: str  # approve | reject
    assurance: str  # click | email_otp
    authorization_id: str  # the token's public id (never the token)


class ProposalApplied(ProposalDescribed):
    authorization_id: str
    knowledge_entry: int
    knowledge_version: int  # the EntryVersion's id that the owner's approval made live


class ProposalPublished(ProposalDescribed):
    authorization_id: str
    contract_version: int  # the contract version its applying published
    target: str  # the contract field it wrote


class ProposalFailed(ProposalDescribed):
    reasons: list[str]  # the compiler's reasons; nothing was published


class ProposalRebased(ProposalDescribed):
    base: str
    base_contract_version: int | None


class ProposalRolledBack(ProposalDescribed):
    rolled_back_by: str  # the rollback proposal that undid it
    contract_version: int


class DecideRefused(ProposalDescribed):
    reason: str  # stale_base


PROPOSAL_CREATED = register(
    "proposal.created",
    app=APP,
    entity_type=ENTITY,
    payload=ProposalCreated,
    description="A change was proposed; the platform assigned its level and who decides, and recorded its base.",
)
PROPOSAL_OVERRIDE_RECORDED = register(
    "proposal.override_recorded",
    app=APP,
    entity_type=ENTITY,
    payload=OverrideRecorded,
    description="A model claimed a level, `requires` or `confirm` for its proposal; the claim was ignored.",
)
PROPOSAL_EDITED = register(
    "proposal.edited",
    app=APP,
    entity_type=ENTITY,
    payload=ProposalDescribed,
    description="An owner edited a pending proposal's payload; its version went up.",
)
PROPOSAL_EXPIRED = register(
    "proposal.expired",
    app=APP,
    entity_type=ENTITY,
    payload=ProposalDescribed,
    description="A pending proposal passed its expiry without a decision.",
)

PROPOSAL_DECIDED = register(
    "proposal.decided",
    app=APP,
    entity_type=ENTITY,
    payload=ProposalDecided,
    description="The owner approved or rejected a proposal with a one-time token (its assurance and authorization id).",
)
PROPOSAL_APPLIED = register(
    "proposal.applied",
    app=APP,
    entity_type=ENTITY,
    payload=ProposalApplied,
    description="An approved L1 proposal took effect: its knowledge version was approved by the knowledge services.",
)
PROPOSAL_PUBLISHED = register(
    "proposal.published",
    app=APP,
    entity_type=ENTITY,
    payload=ProposalPublished,
    description="An approved L2/L3 proposal took effect: the contract compiler published a new contract version.",
)
PROPOSAL_FAILED = register(
    "proposal.failed",
    app=APP,
    entity_type=ENTITY,
    payload=ProposalFailed,
    description="An approved proposal could not be applied (the compiler's reasons); the previous version stays live.",
)
PROPOSAL_REBASED = register(
    "proposal.rebased",
    app=APP,
    entity_type=ENTITY,
    payload=ProposalRebased,
    description="The owner re-based a pending proposal on the live contract; its version went up.",
)
PROPOSAL_ROLLED_BACK = register(
    "proposal.rolled_back",
    app=APP,
    entity_type=ENTITY,
    payload=ProposalRolledBack,
    description="An applied change was undone by an applied rollback proposal.",
)
PROPOSAL_DECIDE_REFUSED = register(
    "proposal.decide_refused",
    app=APP,
    entity_type=ENTITY,
    payload=DecideRefused,
    description="A decision was refused because the live state moved on since the proposal was made (`stale_base`).",
)


def payload_sha256(payload: object) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _described(proposal: ChangeProposal) -> dict[str, Any]:
    return {
        "agent": proposal.agent.slug,
        "proposal": proposal.pk,
        "kind": proposal.kind,
        "level": proposal.level,
        "requires": proposal.requires,
        "origin": proposal.origin,
        "status": proposal.status,
        "version": proposal.version,
        "payload_sha256": payload_sha256(proposal.payload),
    }


def append(
    event_type: EventType, *, chain_id: int, entity_id: str, version: int | None, actor: Actor, payload: EventPayload
) -> AppendedEvent:
    """The approvals app's one way into the ledger, for its three event modules (this one, the
    decision authority's and the contract's)."""
    return ledger_append(
        chain_id=chain_id,
        event_type=event_type.name,
        entity_type=event_type.entity_type,
        entity_id=entity_id,
        entity_version=version,
        actor_type=actor.type,
        actor_id=actor.id,
        payload=payload.model_dump(),
    )


def _append(event_type: EventType, proposal: ChangeProposal, actor: Actor, payload: EventPayload) -> AppendedEvent:
    return append(
        event_type,
        chain_id=proposal.tenant_id,
        entity_id=proposal.pk,
        version=proposal.version,
        actor=actor,
        payload=payload,
    )


def proposal_created(*, proposal: ChangeProposal, actor: Actor) -> AppendedEvent:
    payload = ProposalCreated.model_validate(
        {**_described(proposal), "base": proposal.base, "evidence": proposal.evidence}
    )
    return _append(PROPOSAL_CREATED, proposal, actor, payload)


def proposal_override_recorded(*, proposal: ChangeProposal, claimed: dict[str, str], actor: Actor) -> AppendedEvent:
    payload = OverrideRecorded(
        agent=proposal.agent.slug,
        proposal=proposal.pk,
        claimed={k: v[:40] for k, v in claimed.items()},
        assigned={"level": str(proposal.level), "requires": proposal.requires, "confirm": "ignored"},
    )
    return _append(PROPOSAL_OVERRIDE_RECORDED, proposal, actor, payload)


def proposal_edited(*, proposal: ChangeProposal, actor: Actor) -> AppendedEvent:
    return _append(PROPOSAL_EDITED, proposal, actor, ProposalDescribed.model_validate(_described(proposal)))


def proposal_expired(*, proposal: ChangeProposal, actor: Actor) -> AppendedEvent:
    return _append(PROPOSAL_EXPIRED, proposal, actor, ProposalDescribed.model_validate(_described(proposal)))


def proposal_decided(*, proposal: ChangeProposal, decision: str, actor: Actor) -> AppendedEvent:
    payload = ProposalDecided.model_validate(
        {
            **_described(proposal),
            "decision": decision,
            "assurance": proposal.assurance,
            "authorization_id": proposal.authorization_id,
        }
    )
    return _append(PROPOSAL_DECIDED, proposal, actor, payload)


def proposal_applied(
    *, proposal: ChangeProposal, knowledge_entry: int, knowledge_version: int, actor: Actor
) -> AppendedEvent:
    payload = ProposalApplied.model_validate(
        {
            **_described(proposal),
            "authorization_id": proposal.authorization_id,
            "knowledge_entry": knowledge_entry,
            "knowledge_version": knowledge_version,
        }
    )
    return _append(PROPOSAL_APPLIED, proposal, actor, payload)


def proposal_published(*, proposal: ChangeProposal, actor: Actor) -> AppendedEvent:
    payload = ProposalPublished.model_validate(
        {
            **_described(proposal),
            "authorization_id": proposal.authorization_id,
            "contract_version": proposal.contract_version,
            "target": proposal.target.get("field", ""),
        }
    )
    return _append(PROPOSAL_PUBLISHED, proposal, actor, payload)


def proposal_failed(*, proposal: ChangeProposal, actor: Actor) -> AppendedEvent:
    payload = ProposalFailed.model_validate({**_described(proposal), "reasons": list(proposal.failure_reasons)})
    return _append(PROPOSAL_FAILED, proposal, actor, payload)


def proposal_rebased(*, proposal: ChangeProposal, actor: Actor) -> AppendedEvent:
    payload = ProposalRebased.model_validate(
        {**_described(proposal), "base": proposal.base, "base_contract_version": proposal.base_contract_version}
    )
    return _append(PROPOSAL_REBASED, proposal, actor, payload)


def proposal_rolled_back(*, proposal: ChangeProposal, by: ChangeProposal, actor: Actor) -> AppendedEvent:
    payload = ProposalRolledBack.model_validate(
        {**_described(proposal), "rolled_back_by": by.pk, "contract_version": by.contract_version}
    )
    return _append(PROPOSAL_ROLLED_BACK, proposal, actor, payload)


def proposal_decide_refused(*, proposal: ChangeProposal, reason: str, actor: Actor) -> AppendedEvent:
    payload = DecideRefused.model_validate({**_described(proposal), "reason": reason})
    return _append(PROPOSAL_DECIDE_REFUSED, proposal, actor, payload)
