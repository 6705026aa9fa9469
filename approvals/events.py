"""The approvals app's ledger events for change proposals: one payload model and one typed
constructor per type (see ledger/catalogue.py).  The payload text stays in the proposal row; the
ledger keeps its fingerprint."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from facade.tenancy.schemas import Actor
from ledger.catalogue import EventPayload, EventType, register
from ledger.models import LedgerEvent
from ledger.schemas import AppendedEvent
from ledger.services import ledger_append

from .models import ChangeProposal, PreferenceSignal, ProposalReplay

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


class LessonRecorded(EventPayload):
    """Ids only: the lesson's words are in its knowledge version and its proposal."""

    agent: str
    entry_id: int
    version: int  # the knowledge version's number
    kind: str  # preference | wording | taboo
    proposal: str  # the pending L1 `lesson` proposal that decides it
    session: str  # the owner's chat it was recorded in


class PreferenceSignalRecorded(EventPayload):
    agent: str
    proposal: str
    kind: str
    origin: str
    decision: str  # approve | reject | expire
    # The owner's reason stays in the signal's row (the owner face shows it); the ledger, which
    # is never erased, keeps only its length and fingerprint.
    reason_length: int
    reason_sha256: str  # "" when no reason was given


class ProposalReplayed(EventPayload):
    """Counts only: no pointer, no text (the pointers stay in the replay's row)."""

    agent: str
    proposal: str
    version: int  # the proposal version replayed
    replay: int  # the ProposalReplay row
    status: str  # done | failed | skipped
    model: str
    days: int
    timed_out: bool
    counts: dict[str, int]


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
    description="A model claimed a level, `requires` or `confirm` for its proposal, or more sessions affected than its "
    "evidence shows; the claim was ignored (the sessions cut down to what the evidence shows).",
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
LESSON_RECORDED = register(
    "lesson.recorded",
    app=APP,
    entity_type=ENTITY,
    payload=LessonRecorded,
    description="A lesson from the owner's chat was recorded as a pending L1 proposal; it waits for the owner.",
)

PREFERENCE_SIGNAL_RECORDED = register(
    "preference.signal_recorded",
    app=APP,
    entity_type="preference_signal",
    payload=PreferenceSignalRecorded,
    description="An owner's decision of a proposal a model made (approve, reject, or left to expire) was recorded "
    "as a preference signal the daily review reads (the reason's length and fingerprint only).",
)

PROPOSAL_REPLAYED = register(
    "proposal.replayed",
    app=APP,
    entity_type=ENTITY,
    payload=ProposalReplayed,
    description="A proposal version was replayed on the past days' customer turns, before and after; counts only.",
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


def latest_seq(chain_id: int, entity_type: str, entity_id: str) -> int | None:
    """The seq of the latest event about an entity (None when there is none)."""
    found = LedgerEvent.objects.for_entity(chain_id, entity_type, entity_id).order_by("-seq")
    return found.values_list("seq", flat=True).first()


def change_seq(chain_id: int, change_id: str) -> int | None:
    """The latest event about a change proposal, when `change_id` names one."""
    return latest_seq(chain_id, ENTITY, change_id[:64]) if change_id.startswith("chg_") else None


def append(
    event_type: EventType,
    *,
    chain_id: int,
    entity_id: str,
    version: int | None,
    actor: Actor,
    payload: EventPayload,
    caused_by: int | None = None,
) -> AppendedEvent:
    """The approvals app's one way into the ledger, for its three event modules (this one, the
    decision authority's and the contract's).  Each event is caused-by-linked: to the event the
    caller names, else to the latest event about the same entity — so an auditor walks from the
    dialogue (or review) that started a change, through its authorisation and decision, to the
    contract version it published and back."""
    if caused_by is None:
        caused_by = latest_seq(chain_id, event_type.entity_type, entity_id)
    return ledger_append(
        chain_id=chain_id,
        event_type=event_type.name,
        entity_type=event_type.entity_type,
        entity_id=entity_id,
        entity_version=version,
        actor_type=actor.type,
        actor_id=actor.id,
        payload=payload.model_dump(),
        caused_by=caused_by,
    )


def _append(
    event_type: EventType,
    proposal: ChangeProposal,
    actor: Actor,
    payload: EventPayload,
    caused_by: int | None = None,
) -> AppendedEvent:
    return append(
        event_type,
        chain_id=proposal.tenant_id,
        entity_id=proposal.pk,
        version=proposal.version,
        actor=actor,
        payload=payload,
        caused_by=caused_by,
    )


def proposal_created(*, proposal: ChangeProposal, actor: Actor, caused_by: int | None = None) -> AppendedEvent:
    """`caused_by`: what started it (the owner's message in a dialogue, the change a rollback
    undoes); a rollback links to the change it undoes by default."""
    payload = ProposalCreated.model_validate(
        {**_described(proposal), "base": proposal.base, "evidence": proposal.evidence}
    )
    if caused_by is None and proposal.rollback_of_id:
        caused_by = change_seq(proposal.tenant_id, proposal.rollback_of_id)
    return _append(PROPOSAL_CREATED, proposal, actor, payload, caused_by)


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
    """Linked to the contract version's events its applying just wrote."""
    payload = ProposalPublished.model_validate(
        {
            **_described(proposal),
            "authorization_id": proposal.authorization_id,
            "contract_version": proposal.contract_version,
            "target": proposal.target.get("field", ""),
        }
    )
    contract = latest_seq(proposal.tenant_id, "contract", proposal.agent.slug)
    return _append(PROPOSAL_PUBLISHED, proposal, actor, payload, contract)


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


def lesson_recorded(
    *, proposal: ChangeProposal, entry_id: int, version: int, kind: str, session: str, actor: Actor
) -> AppendedEvent:
    """Caused by the owner's message in that chat (the latest event about the session), like the
    proposal's own `proposal.created`."""
    payload = LessonRecorded(
        agent=proposal.agent.slug,
        entry_id=entry_id,
        version=version,
        kind=kind,
        proposal=proposal.pk,
        session=session,
    )
    return _append(LESSON_RECORDED, proposal, actor, payload, latest_seq(proposal.tenant_id, "session", session))


def proposal_decide_refused(*, proposal: ChangeProposal, reason: str, actor: Actor) -> AppendedEvent:
    payload = DecideRefused.model_validate({**_described(proposal), "reason": reason})
    return _append(PROPOSAL_DECIDE_REFUSED, proposal, actor, payload)


def preference_signal_recorded(
    *, signal: PreferenceSignal, proposal: ChangeProposal, actor: Actor, caused_by: int
) -> AppendedEvent:
    """An entity of its own, caused by the decision (or the expiry) it records: the proposal's
    own chain of events (decided → published) stays unbroken."""
    payload = PreferenceSignalRecorded(
        agent=proposal.agent.slug,
        proposal=proposal.pk,
        kind=signal.kind,
        origin=signal.origin,
        decision=signal.decision,
        reason_length=len(signal.reason),
        reason_sha256=hashlib.sha256(signal.reason.encode()).hexdigest() if signal.reason else "",
    )
    return append(
        PREFERENCE_SIGNAL_RECORDED,
        chain_id=proposal.tenant_id,
        entity_id=str(signal.pk),
        version=None,
        actor=actor,
        payload=payload,
        caused_by=caused_by,
    )


def proposal_replayed(*, replay: ProposalReplay, actor: Actor) -> AppendedEvent:
    proposal = replay.proposal
    payload = ProposalReplayed(
        agent=proposal.agent.slug,
        proposal=proposal.pk,
        version=replay.proposal_version,
        replay=replay.pk,
        status=replay.status,
        model=replay.model,
        days=replay.days,
        timed_out=replay.timed_out,
        counts={str(k): int(v) for k, v in (replay.counts or {}).items()},
    )
    return append(
        PROPOSAL_REPLAYED,
        chain_id=proposal.tenant_id,
        entity_id=proposal.pk,
        version=replay.proposal_version,
        actor=actor,
        payload=payload,
    )
