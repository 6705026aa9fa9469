"""Writes of change proposals.  Each appends its ledger event in the same transaction.

The platform assigns the level (rules.level_for) and who decides (rules.who_decides); whatever a
model claims about level, `requires` or `confirm` is ignored and recorded as an override.
Deciding: the owner authorises (a click token for L1/L2, an e-mailed code for L3, see
authority.py) and decides with the token and a compare-and-swap on `version`.  Applying, in this
increment: L1 (knowledge drafts and lessons) through the knowledge services; L2/L3 stay
`approved` until the contract compiler applies them."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from pydantic import ValidationError

from facade.dialogue.models import DialogueSession
from facade.dialogue.runtime.guard import guard_check
from facade.errors import ApplicationError
from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor
from knowledge.models import EntryVersion, KnowledgeEntry, SourceType, Status
from knowledge.models import Kind as KnowledgeKind
from knowledge.schemas import SourceIn
from knowledge.services import entry_approve, entry_propose, entry_reject

from . import events, rules
from .authority import Challenge, IssuedToken, challenge_start, token_consume, token_issue
from .authority_models import Assurance, Decision, DecisionChallenge
from .models import ChangeProposal, ProposalStatus
from .schemas import Kind, Pointer, PointerType, Strict, payload_parse


class ProposalError(ApplicationError):
    pass


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


def live_value(agent: AgentProfile, kind: str, payload: Strict) -> Any:
    """What the payload would replace today (the `before` of the diff).  Wording, skills,
    delivery and pricing have no live value yet (the contract arrives with the compiler): None."""
    data = payload.model_dump()
    if kind == Kind.BOUNDARY_WORDING:
        return (agent.boundary_wording or {}).get(data["language"])
    if kind == Kind.CLARIFICATION_ORDER:
        return list(agent.clarification_order or [])
    if kind == Kind.STATE_CONTRACT:
        return agent.request_flow
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
    the entry's current version number, for a new entry or a lesson "new"; for agent fields the
    SHA-256 of the current value."""
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


def touches_commitments(kind: str, payload: Strict) -> bool:
    """Boundary wording always; other wording when the commitment guard flags its text."""
    if kind == Kind.BOUNDARY_WORDING:
        return True
    if kind == Kind.WORDING:
        return guard_check(payload.model_dump()["text"]).blocked
    return False


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
) -> ChangeProposal:
    """Create a pending proposal.  `claimed` is what a model wrote about level, requires or
    confirm: never used, recorded as an override event when present."""
    parsed = _parsed(kind, payload)
    summary = (summary or "").strip()
    if not summary or len(summary) > 300:
        raise ProposalError("invalid_summary", "summary is one line of 1 to 300 characters")
    pointers = evidence_check(agent, evidence)
    level = rules.level_for(kind, parsed)
    requires = rules.who_decides(origin, kind, level, touches_commitments(kind, parsed))
    with transaction.atomic():
        proposal = ChangeProposal.objects.create(
            tenant_id=agent.tenant_id,
            agent=agent,
            kind=kind,
            level=int(level),
            payload=parsed.model_dump(mode="json"),
            summary=summary,
            diff={"before": live_value(agent, kind, parsed), "after": parsed.model_dump(mode="json")},
            evidence=pointers,
            origin=origin,
            requires=requires.value,
            base=base_for(agent, kind, parsed),
            expires_at=timezone.now() + timedelta(days=settings.FACADE_PROPOSAL_EXPIRY_DAYS),
        )
        events.proposal_created(proposal=proposal, actor=actor)
        if claimed:
            events.proposal_override_recorded(proposal=proposal, claimed=claimed, actor=actor)
    return proposal


def proposal_edit(
    *, proposal_id: str, agent: AgentProfile, payload: object, expected_version: int, actor: Actor
) -> ChangeProposal:
    """Replace a pending proposal's payload; compare-and-swap on `version`, which goes up."""
    with transaction.atomic():
        proposal = ChangeProposal.objects.select_for_update().filter(pk=proposal_id, agent=agent).first()
        if proposal is None:
            raise ProposalError("not_found", "no such proposal", HTTPStatus.NOT_FOUND)
        if proposal.status != ProposalStatus.PENDING:
            raise ProposalError("not_pending", f"the proposal is {proposal.status}", HTTPStatus.CONFLICT)
        if proposal.version != expected_version:
            raise ProposalError("version_mismatch", "the proposal changed; reload it", HTTPStatus.CONFLICT)
        parsed = _parsed(proposal.kind, payload)
        knowledge_edit_check(before=proposal.payload, after=parsed.model_dump(mode="json"))
        proposal.payload = parsed.model_dump(mode="json")
        proposal.diff = {"before": proposal.diff.get("before"), "after": proposal.payload}
        proposal.version += 1
        proposal.save(update_fields=["payload", "diff", "version"])
        events.proposal_edited(proposal=proposal, actor=actor)
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
            events.proposal_expired(proposal=proposal, actor=Actor.platform("proposal_expiry"))
            count += 1
    return count


def _pending(*, agent: AgentProfile, proposal_id: str) -> ChangeProposal:
    proposal = ChangeProposal.objects.filter(pk=proposal_id, agent=agent).first()
    if proposal is None:
        raise ProposalError("not_found", "no such proposal", HTTPStatus.NOT_FOUND)
    if proposal.status != ProposalStatus.PENDING:
        raise ProposalError("not_pending", f"the proposal is {proposal.status}", HTTPStatus.CONFLICT)
    return proposal


def _decision(decision: object) -> str:
    if decision not in Decision.values:
        raise ProposalError("invalid_decision", "decision must be approve or reject")
    return str(decision)


def proposal_authorize(
    *, agent: AgentProfile, proposal_id: str, owner: Any, decision: object
) -> IssuedToken | Challenge:
    """The owner asks to decide a pending proposal: L1/L2 get a click-level one-time token bound
    to the proposal's current version; L3 gets an e-mailed code (the challenge), whose right
    answer (challenge_verify) earns an `email_otp` token.  The caller has checked ownership."""
    decision = _decision(decision)
    proposal = _pending(agent=agent, proposal_id=proposal_id)
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
    *, agent: AgentProfile, proposal_id: str, owner: Any, token: object, decision: object, expected_version: int
) -> ChangeProposal:
    """Decide a pending proposal with a one-time token.  Under the proposal's row lock: the
    version must be `expected_version` (else 409 `version_mismatch`, nothing consumed or
    applied), the token is consumed atomically for this agent, change, version, owner and
    decision (else 403 `invalid_token`), an L3 proposal needs an `email_otp` token (else 403
    `assurance_required`; the token is spent).  Approve moves the proposal to `approved` and, for
    L1, applies it (`applied`); reject to `rejected`.  The version goes up by one."""
    decision = _decision(decision)
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
        if proposal.status != ProposalStatus.PENDING:
            raise ProposalError("not_pending", f"the proposal is {proposal.status}", HTTPStatus.CONFLICT)
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
            if proposal.level == 3 and consumed.assurance != Assurance.EMAIL_OTP:
                refused = ProposalError(
                    "assurance_required",
                    "this change needs the code sent by e-mail before it can be decided",
                    HTTPStatus.FORBIDDEN,
                )
            else:
                proposal.status = ProposalStatus.APPROVED if decision == Decision.APPROVE else ProposalStatus.REJECTED
                proposal.decided_by = owner
                proposal.decided_at = timezone.now()
                proposal.assurance = consumed.assurance
                proposal.authorization_id = consumed.authorization_id
                proposal.version += 1
                proposal.save(
                    update_fields=["status", "decided_by", "decided_at", "assurance", "authorization_id", "version"]
                )
                events.proposal_decided(proposal=proposal, decision=decision, actor=actor)
                if proposal.kind in (Kind.KNOWLEDGE_DRAFT, Kind.LESSON):
                    if decision == Decision.APPROVE:
                        _apply_knowledge(proposal, actor=actor)
                    else:
                        _reject_knowledge(proposal, actor=actor)
    if refused is not None:
        raise refused
    return proposal


LESSON_KINDS = {"preference": KnowledgeKind.PREFERENCE, "wording": KnowledgeKind.WORDING, "taboo": KnowledgeKind.TABOO}


def knowledge_edit_check(*, before: dict[str, Any], after: dict[str, Any]) -> None:
    """An edit keeps the knowledge version a proposal decides: without it the version would be
    left pending with nothing to decide it (edit its title and text instead)."""
    if before.get("version_id") != after.get("version_id"):
        raise ProposalError(
            "invalid_payload", "version_id: the version this proposal decides cannot change; edit the title and text"
        )


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
    # Its source is this proposal, which tells knowledge_proposals not to file another for it.
    version = entry_propose(
        agent=proposal.agent,
        title=data["title"],
        body=data["text"],
        source=SourceIn(type=SourceType.OWNER_DIALOGUE, ref=proposal.pk, version=str(proposal.version)),
        actor=actor,
        kind=kind,
        entry=entry,
    )
    if version.status == Status.PENDING:
        version = entry_approve(version=version, actor=actor)
    _knowledge_applied(proposal, version, actor=actor)


def _knowledge_applied(proposal: ChangeProposal, version: EntryVersion, *, actor: Actor) -> None:
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
