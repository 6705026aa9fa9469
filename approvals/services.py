"""Writes of change proposals.  Each appends its ledger event in the same transaction.

The platform assigns the level (rules.level_for) and who decides (rules.who_decides); whatever a
model claims about level, `requires` or `confirm` is ignored and recorded as an override.
Deciding: the owner authorises (a click token for L1/L2, an e-mailed code for L3, see
authority.py) and decides with the token and a compare-and-swap on `version`.  Applying: L1
(knowledge drafts and lessons) through the knowledge services inside the decision's transaction;
L2/L3 through the contract compiler, in a transaction of its own after the decision (the decision
stands whatever the compiler says: a change that does not compile becomes `failed` with the
compiler's reasons, and the previous contract version stays live).  The owner's own L2 change
(`requires: owner_direct`) is decided by proposing it and applied at once."""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import timedelta
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from pydantic import ValidationError

from facade.dialogue.models import DialogueSession
from facade.dialogue.services import owner_decision_message
from facade.errors import ApplicationError
from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor
from guard.engine import guard_check
from knowledge.models import EntryVersion, KnowledgeEntry, SourceType, Status
from knowledge.models import Kind as KnowledgeKind
from knowledge.schemas import SourceIn
from knowledge.services import (
    entry_approve,
    entry_propose,
    entry_reject,
    topics_resolve_published,
    written_by_model,
)

from . import events, rules, targets
from .authority import Challenge, IssuedToken, challenge_start, token_consume, token_issue
from .authority_models import Assurance, Decision, DecisionChallenge
from .contract import ContractInvalid, contract_compile, live_content
from .models import DECISION_REASON_MAX, ChangeProposal, PreferenceSignal, ProposalStatus
from .replay import replay_send_on_commit
from .schemas import REVIEW_DRAFT_PLACEHOLDER, Kind, Pointer, PointerType, Strict, payload_parse
from .step_up import decide_gate, owners_lock

logger = logging.getLogger(__name__)


class ProposalError(ApplicationError):
    pass


def _not_by_model(what: str) -> None:
    """Inside a model's tool call (knowledge.services.model_writing) nothing is decided: a
    tool that tried would be a model authorising itself (issue 28 §1).  Fails closed."""
    if written_by_model():
        raise ProposalError("owner_decides", f"a model cannot {what}: only the owner does", HTTPStatus.FORBIDDEN)


DIRECT = "owner_session"  # the assurance of the owner's own L2 change: their signed-in session


def _parsed(kind: str, payload: object) -> Strict:
    try:
        Kind(kind)
    except ValueError as exc:
        raise ProposalError("unknown_kind", f"kind must be one of: {', '.join(k.value for k in Kind)}") from exc
    try:
        return payload_parse(kind, payload)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'payload'}: {e['msg']}" for e in exc.errors())
        raise ProposalError("invalid_payload", problems[:500]) from exc


def _sha(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


CONTRACT_KINDS = frozenset(targets.FIELD_OF)


def live_value(agent: AgentProfile, kind: str, payload: Strict) -> Any:
    """What the payload would replace today (the `before` of the diff): for an L2/L3 change the
    value at its target in the live contract, for a knowledge draft of an existing entry its
    approved version, else None."""
    data = payload.model_dump()
    if kind in CONTRACT_KINDS:
        return targets.read(live_content(agent), targets.target_of(kind, data))
    if kind == Kind.KNOWLEDGE_DRAFT and data.get("entry_id"):
        current = (
            EntryVersion.objects.filter(entry_id=data["entry_id"], agent=agent, status="approved")
            .order_by("-number")
            .first()
        )
        return None if current is None else {"title": current.title, "text": current.body}
    return None


def base_for(agent: AgentProfile, kind: str, payload: Strict) -> str:
    """The live version a proposal is made against: for a knowledge draft of an existing entry
    the entry's current version number, for a new entry or a lesson "new"; for a contract
    change the SHA-256 of the live value at its target."""
    data = payload.model_dump()
    if kind == Kind.KNOWLEDGE_DRAFT and data.get("entry_id"):
        entry = KnowledgeEntry.objects.filter(pk=data["entry_id"], agent=agent).first()
        if entry is None:
            raise ProposalError("unknown_entry", "no such knowledge entry for this agent")
        latest = EntryVersion.objects.filter(entry=entry).order_by("-number").values_list("number", flat=True).first()
        return str(latest or 0)
    if kind in (Kind.KNOWLEDGE_DRAFT, Kind.LESSON):
        return "new"
    return _sha(live_value(agent, kind, payload))


def evidence_check(agent: AgentProfile, evidence: object) -> list[dict[str, Any]]:
    """Each pointer must resolve to something of this agent: a conversation or a knowledge version."""
    if evidence is None:
        return []
    if not isinstance(evidence, list) or len(evidence) > 20:
        raise ProposalError("invalid_evidence", "evidence is a list of at most 20 pointers")
    pointers = []
    for item in evidence:
        try:
            pointer = Pointer.model_validate(item)
        except ValidationError as exc:
            raise ProposalError(
                "invalid_evidence", 'a pointer is {"type": "session"|"knowledge_version", "id": n}'
            ) from exc
        if pointer.type == PointerType.SESSION:
            found = DialogueSession.objects.filter(pk=str(pointer.id), agent=agent).exists()
        else:
            found = EntryVersion.objects.filter(pk=int(pointer.id), agent=agent).exists()
        if not found:
            raise ProposalError("unresolved_evidence", f"no {pointer.type.value} {pointer.id} of this agent")
        pointers.append(pointer.model_dump(mode="json"))
    return pointers


def touches_commitments(kind: str, after: Any) -> bool:
    """Boundary wording always; other wording when the commitment guard flags its text."""
    if kind == Kind.BOUNDARY_WORDING:
        return True
    if kind == Kind.WORDING:
        return isinstance(after, str) and guard_check(after).blocked
    return False


def _live_contract_version(agent: AgentProfile) -> int | None:
    from .contract import live_contract

    contract = live_contract(agent)
    return contract.version if contract is not None else None


def proposal_create(
    *,
    agent: AgentProfile,
    kind: str,
    payload: object,
    summary: str,
    origin: str,
    actor: Actor,
    evidence: object = None,
    claimed: dict[str, str] | None = None,
    owner: Any = None,
    caused_by: int | None = None,
) -> ChangeProposal:
    """Create a proposal.  `caused_by` is the seq of the ledger event that started it (the
    owner's message in a dialogue, a review report).  `claimed` is what a model wrote about level, requires or confirm:
    never used, recorded as an override event when present.  The owner's own L2 change that
    touches no commitment (`requires: owner_direct`, `owner` given) is decided by this and
    applied at once; everything else waits, pending."""
    if kind == Kind.ROLLBACK:
        raise ProposalError("use_rollback", "propose a rollback with POST …/changes/<id>/rollback")
    parsed = _parsed(kind, payload)
    data = parsed.model_dump(mode="json")
    target = targets.target_of(kind, data) if kind in CONTRACT_KINDS else {}
    after = targets.value_of(kind, data) if target else data
    return _create(
        agent=agent,
        kind=kind,
        level=rules.level_for(kind, parsed),
        payload=data,
        target=target,
        diff={"before": live_value(agent, kind, parsed), "after": after},
        base=base_for(agent, kind, parsed),
        touches=touches_commitments(kind, after),
        summary=summary,
        origin=origin,
        actor=actor,
        evidence=evidence,
        claimed=claimed,
        owner=owner,
        caused_by=caused_by,
    )


def _create(
    *,
    agent: AgentProfile,
    kind: str,
    level: int,
    payload: dict[str, Any],
    target: dict[str, Any],
    diff: dict[str, Any],
    base: str,
    touches: bool,
    summary: str,
    origin: str,
    actor: Actor,
    evidence: object,
    claimed: dict[str, str] | None,
    owner: Any,
    rollback_of: ChangeProposal | None = None,
    caused_by: int | None = None,
) -> ChangeProposal:
    summary = (summary or "").strip()
    if not summary or len(summary) > 300:
        raise ProposalError("invalid_summary", "summary is one line of 1 to 300 characters")
    pointers = evidence_check(agent, evidence)
    effective = targets.KIND_OF[target["field"]] if target else kind
    if written_by_model():
        owner = None  # a model's proposal is never the owner's own change, whatever the caller passed
    requires = rules.who_decides(origin, effective, level, touches)
    with transaction.atomic():
        proposal = ChangeProposal.objects.create(
            tenant_id=agent.tenant_id,
            agent=agent,
            kind=kind,
            level=int(level),
            payload=payload,
            summary=summary,
            diff=diff,
            target=target,
            evidence=pointers,
            origin=origin,
            requires=requires.value,
            base=base,
            base_contract_version=_live_contract_version(agent) if target else None,
            rollback_of=rollback_of,
            expires_at=timezone.now() + timedelta(days=settings.FACADE_PROPOSAL_EXPIRY_DAYS),
        )
        events.proposal_created(proposal=proposal, actor=actor, caused_by=caused_by)
        if claimed:
            events.proposal_override_recorded(proposal=proposal, claimed=claimed, actor=actor)
        if requires == rules.Requires.OWNER_DIRECT and owner is not None:
            # The owner's own change: proposing it is the decision (their signed-in session,
            # CSRF-checked); it takes effect on the next turn and can be rolled back in one click.
            proposal.status = ProposalStatus.APPROVED
            proposal.decided_by = owner
            proposal.decided_at = timezone.now()
            proposal.assurance = DIRECT
            proposal.version += 1
            proposal.save(update_fields=["status", "decided_by", "decided_at", "assurance", "version"])
            events.proposal_decided(proposal=proposal, decision=Decision.APPROVE, actor=actor)
        replay_send_on_commit(proposal)  # a pending one that changes what customers are told
    if proposal.status == ProposalStatus.APPROVED:
        return _apply_contract(proposal, actor=actor)
    return proposal


def _pending_locked(*, agent: AgentProfile, proposal_id: str, expected_version: int) -> ChangeProposal:
    """A pending proposal of the agent at `expected_version`, row-locked (inside a transaction)."""
    proposal = _locked(ChangeProposal.objects.filter(pk=proposal_id, agent=agent)).first()
    if proposal is None:
        raise ProposalError("not_found", "no such proposal", HTTPStatus.NOT_FOUND)
    _still_pending(proposal)
    if proposal.version != expected_version:
        raise ProposalError("version_mismatch", "the proposal changed; reload it", HTTPStatus.CONFLICT)
    return proposal


def proposal_edit(
    *, proposal_id: str, agent: AgentProfile, payload: object, expected_version: int, actor: Actor
) -> ChangeProposal:
    """Replace a pending proposal's payload; compare-and-swap on `version`, which goes up."""
    with transaction.atomic():
        proposal = _pending_locked(agent=agent, proposal_id=proposal_id, expected_version=expected_version)
        if proposal.kind == Kind.ROLLBACK:
            raise ProposalError("not_editable", "a rollback has nothing to edit; reject it", HTTPStatus.CONFLICT)
        parsed = _parsed(proposal.kind, payload)
        topic = proposal.payload.get("topic")
        if topic and isinstance(payload, dict) and "topic" not in payload:
            # The topic a review's draft answers is the platform's, not part of the owner's edit
            # of its title and text: an edit that leaves it out keeps it.
            parsed = _parsed(proposal.kind, {**payload, "topic": topic})
        knowledge_edit_check(before=proposal.payload, after=parsed.model_dump(mode="json"))
        proposal.payload = parsed.model_dump(mode="json")
        if proposal.kind in CONTRACT_KINDS:
            target = targets.target_of(proposal.kind, proposal.payload)
            if target != proposal.target:  # another language or situation: made against it now
                proposal.target = target
                proposal.diff = {**proposal.diff, "before": live_value(agent, proposal.kind, parsed)}
                proposal.base = base_for(agent, proposal.kind, parsed)
            proposal.diff = {**proposal.diff, "after": targets.value_of(proposal.kind, proposal.payload)}
        else:
            proposal.diff = {"before": proposal.diff.get("before"), "after": proposal.payload}
        proposal.version += 1
        proposal.save(update_fields=["payload", "diff", "target", "base", "version"])
        events.proposal_edited(proposal=proposal, actor=actor)
        replay_send_on_commit(proposal)  # the new version is replayed again
    return proposal


def proposals_expire(*, now: Any = None) -> int:
    """Pending proposals past their expiry become `expired`, one event each."""
    now = now or timezone.now()
    count = 0
    due = ChangeProposal.objects.filter(status=ProposalStatus.PENDING, expires_at__lte=now).values_list("pk", flat=True)
    for pk in list(due[:1000]):
        with transaction.atomic():
            proposal = (
                ChangeProposal.objects.select_for_update()
                .select_related("agent")
                .filter(pk=pk, status=ProposalStatus.PENDING)
                .first()
            )
            if proposal is None:
                continue
            proposal.status = ProposalStatus.EXPIRED
            proposal.save(update_fields=["status"])
            actor = Actor.platform("proposal_expiry")
            expired = events.proposal_expired(proposal=proposal, actor=actor)
            _preference_signal(proposal, PreferenceSignal.Decision.EXPIRE, actor=actor, at=now, caused_by=expired.seq)
            count += 1
    return count


def _pending(*, agent: AgentProfile, proposal_id: str) -> ChangeProposal:
    proposal = ChangeProposal.objects.filter(pk=proposal_id, agent=agent).first()
    if proposal is None:
        raise ProposalError("not_found", "no such proposal", HTTPStatus.NOT_FOUND)
    _still_pending(proposal)
    return proposal


def _still_pending(proposal: ChangeProposal) -> None:
    """Pending and not past its expiry (the hourly sweep marks it `expired`; until then it is
    refused as if it were)."""
    if proposal.status != ProposalStatus.PENDING:
        raise ProposalError("not_pending", f"the proposal is {proposal.status}", HTTPStatus.CONFLICT)
    if proposal.expires_at <= timezone.now():
        raise ProposalError("not_pending", "the proposal is expired", HTTPStatus.CONFLICT)


def decision_reason(reason: object) -> str:
    """The owner's optional reason for a decision: one line of at most DECISION_REASON_MAX
    characters (whitespace runs become one space); none is ""."""
    if reason is None:
        return ""
    if not isinstance(reason, str):
        raise ProposalError("invalid_reason", "reason is a short text")
    text = " ".join(reason.split())
    if len(text) > DECISION_REASON_MAX:
        raise ProposalError("invalid_reason", f"reason is at most {DECISION_REASON_MAX} characters")
    return text


def _preference_signal(
    proposal: ChangeProposal, decision: str, *, actor: Actor, at: Any, caused_by: int, owner: Any = None
) -> PreferenceSignal | None:
    """Inside the decision's (or the expiry's) transaction: a proposal a model made records what
    its fate says of the owner's preferences, with the ledger event; the owner's own proposals
    record none (they say what the owner wants already)."""
    if proposal.origin not in rules.MODEL_ORIGINS:
        return None
    signal = PreferenceSignal.objects.create(
        tenant_id=proposal.tenant_id,
        agent_id=proposal.agent_id,
        proposal=proposal,
        kind=proposal.kind,
        origin=proposal.origin,
        decision=decision,
        reason=proposal.decision_reason,
        decided_by=owner,
        decided_at=at,
    )
    events.preference_signal_recorded(signal=signal, proposal=proposal, actor=actor, caused_by=caused_by)
    return signal


def _decision(decision: object) -> str:
    if decision not in Decision.values:
        raise ProposalError("invalid_decision", "decision must be approve or reject")
    return str(decision)


def proposal_authorize(
    *, agent: AgentProfile, proposal_id: str, owner: Any, decision: object
) -> IssuedToken | Challenge:
    """The owner asks to decide a pending proposal: L1/L2 get a click-level one-time token bound
    to the proposal's current version; L3 gets an e-mailed code (the challenge), whose right
    answer (challenge_verify) earns an `email_otp` token.  The owner's message `approve <id>` /
    `reject <id>` is in their owner-face session afterwards (`owner_decision_message`).  The
    caller has checked ownership."""
    _not_by_model("ask to decide a change")
    decision = _decision(decision)
    proposal = _pending(agent=agent, proposal_id=proposal_id)
    if (
        decision == Decision.APPROVE
        and proposal.kind == Kind.KNOWLEDGE_DRAFT
        and str(proposal.payload.get("text", "")).strip() == REVIEW_DRAFT_PLACEHOLDER
    ):
        raise ProposalError(
            "draft_unwritten", "write the answer into this draft (edit it) before approving it", HTTPStatus.CONFLICT
        )
    # The decision is the owner's own message in their owner-face session (typed there, or sent
    # by the card's button from their signed-in request): never anything a model wrote.
    owner_decision_message(agent=agent, user=owner, text=f"{decision} {proposal.pk}")
    if proposal.level == 3:
        return challenge_start(
            agent=agent, change_id=proposal.pk, version=proposal.version, owner=owner, decision=decision
        )
    return token_issue(
        agent=agent,
        change_id=proposal.pk,
        version=proposal.version,
        owner=owner,
        decision=decision,
        assurance=Assurance.CLICK,
    )


def challenge_decision(challenge_id: object) -> str:
    """The decision a challenge was started for (what verify binds the code to); a challenge
    that does not exist answers `approve` and is then refused like any unknown challenge."""
    if not isinstance(challenge_id, str) or len(challenge_id) > 40:
        return Decision.APPROVE
    found = DecisionChallenge.objects.filter(challenge_id=challenge_id).values_list("decision", flat=True).first()
    return found or Decision.APPROVE


def proposal_decide(
    *,
    agent: AgentProfile,
    proposal_id: str,
    owner: Any,
    token: object,
    decision: object,
    expected_version: int,
    reason: object = None,
) -> ChangeProposal:
    """Decide a pending proposal with a one-time token.  Under the proposal's row lock: the
    version must be `expected_version` (else 409 `version_mismatch`, nothing consumed or
    applied), the token is consumed atomically for this agent, change, version, owner and
    decision (else 403 `invalid_token`), an L3 proposal needs an `email_otp` token — with
    `+totp` where the tenant requires it — (else 403 `assurance_required`; the token is spent),
    and under the two-owner rule an L3 approval by the first owner is recorded and leaves the
    proposal pending (step_up.decide_gate); approving an L2/L3 change whose target moved on
    answers 409 `stale_base` (recorded; nothing consumed).  Approve moves the proposal to
    `approved` and applies it: L1 in the same transaction, L2/L3 through the compiler right after
    (`applied` or `failed`); reject moves it to `rejected`.  The version goes up by one.  The
    owner's optional `reason` (400 `invalid_reason` when too long) is kept with the decision, and
    a proposal a model made records a preference signal in the same transaction."""
    _not_by_model("decide a change")
    decision = _decision(decision)
    reason = decision_reason(reason)
    actor = Actor.human(owner.pk)
    refused: ApplicationError | None = None
    with transaction.atomic():
        proposal = (
            ChangeProposal.objects.select_for_update()
            .select_related("agent")
            .filter(pk=proposal_id, agent=agent)
            .first()
        )
        if proposal is None:
            raise ProposalError("not_found", "no such proposal", HTTPStatus.NOT_FOUND)
        if proposal.version != expected_version:
            raise ProposalError("version_mismatch", "the proposal changed; reload it", HTTPStatus.CONFLICT)
        _still_pending(proposal)
        if proposal.level == 3:
            owners_lock(proposal.agent)  # a concurrent removal of an owner waits, or is seen (issue 28)
        if decision == Decision.APPROVE and is_stale(proposal):
            # Recorded, and nothing consumed: the owner re-bases and decides the new version.
            events.proposal_decide_refused(proposal=proposal, reason="stale_base", actor=actor)
            refused = ProposalError(
                "stale_base",
                "what this change replaces has changed since it was proposed; re-base it and decide again",
                HTTPStatus.CONFLICT,
            )
        else:
            try:
                # token_consume records its own refusal before raising; catching it here keeps that
                # record (and a spent token spent) while nothing about the proposal moves.
                consumed = token_consume(
                    token=token,  # type: ignore[arg-type]  # anything not a string is refused as unknown
                    agent=agent,
                    change_id=proposal.pk,
                    owner=owner,
                    decision=decision,
                    version=proposal.version,
                )
            except ApplicationError as exc:
                refused = exc
            else:
                # L3: the assurance the tenant asks for, and the two-owner rule (step_up.py).
                gate = decide_gate(proposal=proposal, owner=owner, consumed=consumed, decision=decision)
                if gate.refused is not None:
                    refused = gate.refused
                elif not gate.awaiting_second_owner:
                    proposal.status = (
                        ProposalStatus.APPROVED if decision == Decision.APPROVE else ProposalStatus.REJECTED
                    )
                    proposal.decided_by = owner
                    proposal.decided_at = timezone.now()
                    proposal.assurance = consumed.assurance
                    proposal.authorization_id = consumed.authorization_id
                    proposal.decision_reason = reason
                    proposal.version += 1
                    proposal.save(
                        update_fields=[
                            "status",
                            "decided_by",
                            "decided_at",
                            "assurance",
                            "authorization_id",
                            "decision_reason",
                            "version",
                        ]
                    )
                    decided = events.proposal_decided(proposal=proposal, decision=decision, actor=actor)
                    _preference_signal(
                        proposal, decision, actor=actor, at=proposal.decided_at, caused_by=decided.seq, owner=owner
                    )
                    if proposal.kind in (Kind.KNOWLEDGE_DRAFT, Kind.LESSON):
                        if decision == Decision.APPROVE:
                            _apply_knowledge(proposal, actor=actor)
                        else:
                            _reject_knowledge(proposal, actor=actor)
    if refused is not None:
        raise refused
    if proposal.status == ProposalStatus.APPROVED and proposal.target:
        return _apply_contract(proposal, actor=actor)
    return proposal


def is_stale(proposal: ChangeProposal) -> bool:
    """Whether what a change replaces moved on since it was proposed (or re-based): for a
    contract change the live value at its target, for a knowledge proposal the version it
    decides or the entry it drafts (`_knowledge_current`)."""
    if proposal.kind in (Kind.KNOWLEDGE_DRAFT, Kind.LESSON):
        try:
            _knowledge_current(proposal, _decided_version(proposal))
        except ProposalError as stale:
            return stale.code == "stale_base"
        return False
    if not proposal.target:
        return False
    return _sha(targets.read(live_content(proposal.agent), proposal.target)) != proposal.base


def _apply_contract(proposal: ChangeProposal, *, actor: Actor) -> ChangeProposal:
    """After the decision: publish the change through the contract compiler.  The compiler's
    refusal (or a live value that moved on under the publish lock) makes the proposal `failed`
    with its reasons and publishes nothing; success makes it `applied` with the new contract
    version, and an applied rollback marks the change it undid `rolled_back`."""
    target, after = proposal.target, proposal.diff.get("after")

    def change(live: dict[str, Any]) -> dict[str, Any]:
        if _sha(targets.read(live, target)) != proposal.base:
            raise ContractInvalid([f"stale_base: {target['field']} changed after this change was proposed"])
        return {target["field"]: targets.written(live, target, after)}

    try:
        with transaction.atomic():
            locked = _locked(ChangeProposal.objects.filter(pk=proposal.pk)).get()
            try:
                contract = contract_compile(agent=locked.agent, changes=change, actor=actor, caused_by=locked.pk)
            except ContractInvalid as invalid:
                _failed(locked, invalid.reasons, actor=actor)
                return locked
            locked.status = ProposalStatus.APPLIED
            locked.contract_version = contract.version
            locked.save(update_fields=["status", "contract_version"])
            events.proposal_published(proposal=locked, actor=actor)
            if locked.rollback_of_id:
                undone = _locked(ChangeProposal.objects.filter(pk=locked.rollback_of_id)).get()
                undone.status = ProposalStatus.ROLLED_BACK
                undone.save(update_fields=["status"])
                events.proposal_rolled_back(proposal=undone, by=locked, actor=actor)
            return locked
    except Exception:
        # Not the contract's fault (the database, a bug): nothing was published; the decision
        # stands and the card says the change did not apply.
        logger.exception("applying %s failed", proposal.pk)
        with transaction.atomic():
            locked = _locked(ChangeProposal.objects.filter(pk=proposal.pk)).get()
            _failed(locked, ["internal_error: the change could not be applied; nothing was published"], actor=actor)
        return locked


def _locked(proposals: Any) -> Any:
    """The proposals row-locked, their agent read along — and not locked (`of=("self",)`).

    Lock order (issue 28 §4): a FOR UPDATE with a join locks the joined rows too, so locking a
    proposal used to lock its agent row FOR UPDATE, which every insert that refers to the agent
    (its FK check takes FOR KEY SHARE) must wait for — a new proposal, a replay's rows, a turn.
    The decider then appended to the tenant's ledger chain while such an insert, holding that
    chain's head since its own append, waited for the agent: a deadlock (`POST …/changes` during
    a replay).  The agent row is locked in one place only, the contract publish
    (`contract._locked_live`, FOR NO KEY UPDATE, which no FK check waits for); the order is
    proposal row → agent row → ledger chain head, the head always last."""
    return proposals.select_for_update(of=("self",)).select_related("agent")


def _failed(proposal: ChangeProposal, reasons: list[str], *, actor: Actor) -> None:
    proposal.status = ProposalStatus.FAILED
    proposal.failure_reasons = [str(r)[:300] for r in reasons][:20]
    proposal.save(update_fields=["status", "failure_reasons"])
    events.proposal_failed(proposal=proposal, actor=actor)


def proposal_rebase(*, agent: AgentProfile, proposal_id: str, expected_version: int, actor: Actor) -> ChangeProposal:
    """Make a pending contract change against the live state as it is now: a new `before`,
    base and contract version; its version goes up (tokens for the old version stop working)."""
    with transaction.atomic():
        proposal = _pending_locked(agent=agent, proposal_id=proposal_id, expected_version=expected_version)
        if not proposal.target:
            raise ProposalError("not_rebasable", "only a change of the contract is re-based", HTTPStatus.CONFLICT)
        before = targets.read(live_content(agent), proposal.target)
        proposal.diff = {**proposal.diff, "before": before}
        proposal.base = _sha(before)
        proposal.base_contract_version = _live_contract_version(agent)
        proposal.version += 1
        proposal.save(update_fields=["diff", "base", "base_contract_version", "version"])
        events.proposal_rebased(proposal=proposal, actor=actor)
        replay_send_on_commit(proposal)  # the new version is replayed against the live state as it is now
    return proposal


def proposal_rollback(*, agent: AgentProfile, proposal_id: str, actor: Actor, owner: Any) -> ChangeProposal:
    """Propose undoing an applied contract change: what it set goes back to what it replaced.
    Decided like the change itself (the owner's own L2 wording is rolled back at once; boundary
    wording and L3 wait for the token flow).  Refused when a later change already replaced
    what it set (roll that one back first) or a rollback of it is waiting."""
    _not_by_model("roll a change back")
    original = ChangeProposal.objects.filter(pk=proposal_id, agent=agent).first()
    if original is None:
        raise ProposalError("not_found", "no such proposal", HTTPStatus.NOT_FOUND)
    if original.status != ProposalStatus.APPLIED or not original.target:
        raise ProposalError(
            "not_rollbackable", "only an applied change of the contract can be rolled back", HTTPStatus.CONFLICT
        )
    live = targets.read(live_content(agent), original.target)
    if live != original.diff.get("after"):
        raise ProposalError(
            "superseded", "a later change replaced what this one set; roll that one back instead", HTTPStatus.CONFLICT
        )
    if original.rollbacks.filter(status=ProposalStatus.PENDING).exists():
        raise ProposalError("rollback_pending", "a rollback of this change is already waiting", HTTPStatus.CONFLICT)
    undone_kind = targets.KIND_OF[original.target["field"]]
    restored = original.diff.get("before")
    return _create(
        agent=agent,
        kind=Kind.ROLLBACK,
        level=rules.level_for(Kind.ROLLBACK, undoes=undone_kind),
        payload={"change_id": original.pk},
        target=original.target,
        diff={"before": live, "after": restored},
        base=_sha(live),
        touches=touches_commitments(undone_kind, restored),
        summary=f"Roll back {original.pk}: {original.summary}"[:300],
        origin=rules.Origin.OWNER_DIRECT,
        actor=actor,
        evidence=None,
        claimed=None,
        owner=owner,
        rollback_of=original,
    )


LESSON_KINDS = {"preference": KnowledgeKind.PREFERENCE, "wording": KnowledgeKind.WORDING, "taboo": KnowledgeKind.TABOO}


def knowledge_edit_check(*, before: dict[str, Any], after: dict[str, Any]) -> None:
    """An edit keeps the knowledge version a proposal decides: without it the version would be
    left pending with nothing to decide it (edit its title and text instead)."""
    if before.get("version_id") != after.get("version_id"):
        raise ProposalError(
            "invalid_payload", "version_id: the version this proposal decides cannot change; edit the title and text"
        )
    if before.get("topic") != after.get("topic"):
        raise ProposalError("invalid_payload", "topic: the unanswered topic this draft answers cannot change")


def _stale() -> ProposalError:
    return ProposalError(
        "stale_base",
        "the knowledge this proposal was made against has changed since (a newer version, a restore, or a "
        "quarantine); nothing was applied",
        HTTPStatus.CONFLICT,
    )


def _decided_version(proposal: ChangeProposal) -> EntryVersion | None:
    """The pending knowledge version a proposal decides (`version_id`), locked; None for a draft
    that names none."""
    version_id = proposal.payload.get("version_id")
    if not version_id:
        return None
    version = (
        EntryVersion.objects.select_for_update()
        .select_related("entry", "agent")
        .filter(pk=version_id, agent=proposal.agent)
        .first()
    )
    entry_id = proposal.payload.get("entry_id")
    if version is None or (entry_id is not None and version.entry_id != entry_id):
        raise ProposalError("unknown_version", "no such knowledge version of this entry", HTTPStatus.CONFLICT)
    return version


def _knowledge_current(proposal: ChangeProposal, version: EntryVersion | None) -> None:
    """Refuse (409 `stale_base`) a knowledge proposal whose base moved: the version it decides is
    no longer pending (rejected, quarantined) or no longer the entry's latest (a newer version or
    a restore superseded it); a draft of an existing entry whose entry got a version since."""
    if version is not None:
        if version.status != Status.PENDING or version.entry.latest_number != version.number:
            raise _stale()
        return
    entry_id = proposal.payload.get("entry_id")
    if proposal.kind == Kind.KNOWLEDGE_DRAFT and entry_id:
        latest = KnowledgeEntry.objects.filter(pk=entry_id).values_list("latest_number", flat=True).first()
        if str(latest or 0) != proposal.base:
            raise _stale()


def _apply_knowledge(proposal: ChangeProposal, *, actor: Actor) -> None:
    """Inside the decide's transaction, for an approval: a proposal filed for a pending version
    approves exactly that version through `entry_approve` — or, when the owner edited its title
    or text, rejects it and approves the edited text as the entry's next version.  A draft that
    names no version becomes a version of its entry (a new entry when it names none) through the
    knowledge services, approved by the owner's decision.  A base that moved raises 409
    `stale_base`, which rolls the whole decide back (the token stays unused)."""
    data = proposal.payload
    target = _decided_version(proposal)
    _knowledge_current(proposal, target)
    entry = None
    if target is not None:
        # Imported here: knowledge_proposals imports this module for proposal_create.
        from .knowledge_proposals import draft_of

        if draft_of(target)[1] == data:
            version = entry_approve(version=target, actor=actor)
            _knowledge_applied(proposal, version, actor=actor)
            return
        entry_reject(version=target, actor=actor, reason=f"replaced by the owner's edit in {proposal.pk}")
        entry = target.entry
        kind = KnowledgeKind(entry.kind)
    elif proposal.kind == Kind.KNOWLEDGE_DRAFT:
        kind = KnowledgeKind.FACT
        if data.get("entry_id"):
            # base_for checked the entry at proposal time; entries are never deleted (their
            # versions protect them).
            entry = KnowledgeEntry.objects.get(pk=data["entry_id"], agent=proposal.agent)
            kind = KnowledgeKind(entry.kind)
    else:
        kind = LESSON_KINDS[data["kind"]]
    # The draft's other language: as written; a draft that says nothing of it keeps the entry's
    # (a new version of an entry written elsewhere, e.g. in the owner's chat), a new entry has none.
    translations: dict[str, Any] | None = data.get("translations")
    if translations is None and (entry is None or target is not None):
        translations = {}
    # Its source is this proposal, which tells knowledge_proposals not to file another for it.
    version = entry_propose(
        agent=proposal.agent,
        title=data["title"],
        body=data["text"],
        source=SourceIn(type=SourceType.OWNER_DIALOGUE, ref=proposal.pk, version=str(proposal.version)),
        actor=actor,
        kind=kind,
        entry=entry,
        questions=data.get("questions"),
        translations=translations,
    )
    if version.status == Status.PENDING:
        version = entry_approve(version=version, actor=actor)
    _knowledge_applied(proposal, version, actor=actor)


def _knowledge_applied(proposal: ChangeProposal, version: EntryVersion, *, actor: Actor) -> None:
    """The approved answer is published: the unanswered topic the draft names (the daily review's
    drafts and "already answered by entry …" offers do) is resolved everywhere from now on."""
    topic = proposal.payload.get("topic")
    if topic:
        topics_resolve_published(agent=proposal.agent, refs=[str(topic)], version=version, actor=actor)
    proposal.status = ProposalStatus.APPLIED
    proposal.save(update_fields=["status"])
    events.proposal_applied(
        proposal=proposal, knowledge_entry=version.entry_id, knowledge_version=version.pk, actor=actor
    )


def _reject_knowledge(proposal: ChangeProposal, *, actor: Actor) -> None:
    """Inside the decide's transaction, for a rejection: the version the proposal decides is
    rejected through the knowledge services when it still waits (one that has left pending —
    quarantined, superseded and rejected — is left as it is)."""
    target = _decided_version(proposal)
    if target is not None and target.status == Status.PENDING:
        entry_reject(version=target, actor=actor, reason=f"rejected in {proposal.pk}")
