"""The approvals app's ledger events for the decision authority (one-time tokens and emailed
codes): one payload model and one typed constructor per type (see ledger/catalogue.py).

Each event is about the change (its public id) on the tenant's chain.  None carries a token or
a code: a token is named by its `authorization_id`, a challenge by its public id, the owner's
address only masked.  A refusal records its precise reason here even though the caller is told
only `invalid_token` / `invalid_challenge`."""

from __future__ import annotations

from typing import Literal

from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor
from ledger.catalogue import EventPayload, EventType, register
from ledger.schemas import AppendedEvent

from .events import append

APP = "approvals"
ENTITY = "change_proposal"  # the same entity as the proposal events (approvals/events.py)

TokenRefusal = Literal["unknown", "expired", "used", "agent", "change", "owner", "decision", "version"]
ChallengeRefusal = Literal[
    "unknown",
    "expired",
    "used",
    "dead",
    "replaced",
    "agent",
    "owner",
    "change",
    "decision",
    "rate_limited",
    "email_unavailable",
]

AttemptStep = Literal["authorize", "verify", "decide"]
AttemptRefusal = Literal[
    "rate_limited",  # the owner's authorisation attempts are over FACADE_RATE_AUTHORITY
    "reauthentication_required",  # L3 on a session signed in too long ago
    "totp_missing",  # the tenant requires an authenticator code and none was sent
    "totp_not_enrolled",  # ... and the owner has no confirmed authenticator
    "wrong_totp",  # ... and the one sent was wrong (or django-otp's throttle held it)
    "same_approver",  # two-owner rule: this owner already approved this version
    "assurance_required",  # an L3 decision with a token of too low an assurance
    "not_a_tenant_owner",  # L3 by someone who is not one of the tenant's own owners (an operator, a removed owner)
]
VoidReason = Literal["membership_revoked", "owner_role_changed", "agent_owner_removed"]


class AuthorizationIssued(EventPayload):
    agent: str
    version: int
    decision: str
    assurance: str
    authorization_id: str
    owner_id: int
    expires_at: str


class TokenConsumed(EventPayload):
    agent: str
    version: int
    decision: str
    assurance: str
    authorization_id: str
    owner_id: int


class TokenRefused(EventPayload):
    agent: str
    decision: str
    owner_id: int
    reason: TokenRefusal
    authorization_id: str  # of the token presented when it exists, else empty


class CodeSent(EventPayload):
    agent: str
    version: int
    decision: str
    challenge: str
    owner_id: int
    sent_to: str  # masked: o***@demo.test
    replaced: int  # earlier live challenges of the owner for this change it invalidated


class CodeFailed(EventPayload):
    agent: str
    challenge: str
    owner_id: int
    failures: int
    remaining: int


class ChallengeDead(EventPayload):
    agent: str
    challenge: str
    owner_id: int
    failures: int


class ChallengeRefused(EventPayload):
    agent: str
    decision: str
    owner_id: int
    reason: ChallengeRefusal
    challenge: str  # the challenge named, when it exists, else empty


class AttemptRefused(EventPayload):
    agent: str
    step: AttemptStep
    decision: str
    owner_id: int
    reason: AttemptRefusal


class SignatureRecorded(EventPayload):
    agent: str
    version: int
    owner_id: int
    authorization_id: str
    assurance: str
    approvals: int  # distinct owners' approvals of this version so far, this one included
    required: int


class ApprovalsVoided(EventPayload):
    agent: str
    owner_id: int
    reason: VoidReason
    authorizations: int  # unspent decision tokens (by authorization) of the owner for this change, now unusable
    challenges: int  # live e-mailed codes of the owner for this change, now dead
    approvals: int  # the owner's recorded approvals (two-owner rule) of this pending change, now void


def _type(name: str, payload: type[EventPayload], description: str) -> EventType:
    return register(name, app=APP, entity_type=ENTITY, payload=payload, description=description)


AUTHORIZATION_ISSUED = _type(
    "authority.issued",
    AuthorizationIssued,
    "A one-time decision token was issued for one decision on one version of a change (its id, never the token).",
)
TOKEN_CONSUMED = _type(
    "authority.token_consumed", TokenConsumed, "A decision token was used, once, for the decision it was bound to."
)
TOKEN_REFUSED = _type(
    "authority.token_refused",
    TokenRefused,
    "A decision token was refused: unknown, expired, used, or bound to another agent, change, owner, decision "
    "or version.",
)
CODE_SENT = _type(
    "authority.code_sent",
    CodeSent,
    "A 6-digit code was e-mailed to the owner for an L3 decision (the masked address, never the code).",
)
CODE_FAILED = _type(
    "authority.code_failed", CodeFailed, "A wrong code was entered for a challenge; how many tries remain."
)
CHALLENGE_DEAD = _type(
    "authority.challenge_dead", ChallengeDead, "A challenge took its last wrong code and can no longer be answered."
)
CHALLENGE_REFUSED = _type(
    "authority.challenge_refused",
    ChallengeRefused,
    "A code challenge could not be started (rate limit, no usable e-mail, mail not sent) or answered "
    "(unknown, expired, used, dead, replaced, or bound to another agent, owner, change or decision).",
)

ATTEMPT_REFUSED = _type(
    "authority.attempt_refused",
    AttemptRefused,
    "An authorisation attempt (authorize, verify or decide) was refused before or beside the token and code checks: "
    "rate limit, a sign-in too old for L3, a missing, wrong or unenrolled authenticator code, the same owner "
    "approving twice, or a token of too low an assurance.",
)
SIGNATURE_RECORDED = _type(
    "authority.signature_recorded",
    SignatureRecorded,
    "An owner's approval of an L3 change was recorded under the two-owner rule (the first leaves it pending).",
)


APPROVALS_VOIDED = _type(
    "authority.approvals_voided",
    ApprovalsVoided,
    "A person stopped being an owner of the agent (membership revoked, owner role changed, removed from its owners): "
    "their pending approvals, unspent tokens and live codes for this change were voided at once.",
)


def _append(
    event_type: EventType,
    *,
    agent: AgentProfile,
    change_id: str,
    actor: Actor,
    payload: EventPayload,
    version: int | None = None,
) -> AppendedEvent:
    return append(
        event_type, chain_id=agent.tenant_id, entity_id=change_id[:64], version=version, actor=actor, payload=payload
    )


def authority_issued(
    *,
    agent: AgentProfile,
    change_id: str,
    version: int,
    decision: str,
    assurance: str,
    authorization_id: str,
    owner_id: int,
    expires_at: str,
    actor: Actor,
) -> AppendedEvent:
    payload = AuthorizationIssued(
        agent=agent.slug,
        version=version,
        decision=decision,
        assurance=assurance,
        authorization_id=authorization_id,
        owner_id=owner_id,
        expires_at=expires_at,
    )
    return _append(
        AUTHORIZATION_ISSUED, agent=agent, change_id=change_id, actor=actor, payload=payload, version=version
    )


def authority_token_consumed(
    *,
    agent: AgentProfile,
    change_id: str,
    version: int,
    decision: str,
    assurance: str,
    authorization_id: str,
    owner_id: int,
    actor: Actor,
) -> AppendedEvent:
    payload = TokenConsumed(
        agent=agent.slug,
        version=version,
        decision=decision,
        assurance=assurance,
        authorization_id=authorization_id,
        owner_id=owner_id,
    )
    return _append(TOKEN_CONSUMED, agent=agent, change_id=change_id, actor=actor, payload=payload, version=version)


def authority_token_refused(
    *,
    agent: AgentProfile,
    change_id: str,
    decision: str,
    owner_id: int,
    reason: TokenRefusal,
    authorization_id: str,
    actor: Actor,
) -> AppendedEvent:
    payload = TokenRefused(
        agent=agent.slug,
        decision=decision[:16],
        owner_id=owner_id,
        reason=reason,
        authorization_id=authorization_id,
    )
    return _append(TOKEN_REFUSED, agent=agent, change_id=change_id, actor=actor, payload=payload)


def authority_code_sent(
    *,
    agent: AgentProfile,
    change_id: str,
    version: int,
    decision: str,
    challenge: str,
    owner_id: int,
    sent_to: str,
    replaced: int,
    actor: Actor,
) -> AppendedEvent:
    payload = CodeSent(
        agent=agent.slug,
        version=version,
        decision=decision,
        challenge=challenge,
        owner_id=owner_id,
        sent_to=sent_to,
        replaced=replaced,
    )
    return _append(CODE_SENT, agent=agent, change_id=change_id, actor=actor, payload=payload, version=version)


def authority_code_failed(
    *, agent: AgentProfile, change_id: str, challenge: str, owner_id: int, failures: int, remaining: int, actor: Actor
) -> AppendedEvent:
    payload = CodeFailed(
        agent=agent.slug, challenge=challenge, owner_id=owner_id, failures=failures, remaining=remaining
    )
    return _append(CODE_FAILED, agent=agent, change_id=change_id, actor=actor, payload=payload)


def authority_challenge_dead(
    *, agent: AgentProfile, change_id: str, challenge: str, owner_id: int, failures: int, actor: Actor
) -> AppendedEvent:
    payload = ChallengeDead(agent=agent.slug, challenge=challenge, owner_id=owner_id, failures=failures)
    return _append(CHALLENGE_DEAD, agent=agent, change_id=change_id, actor=actor, payload=payload)


def authority_challenge_refused(
    *,
    agent: AgentProfile,
    change_id: str,
    decision: str,
    owner_id: int,
    reason: ChallengeRefusal,
    challenge: str,
    actor: Actor,
) -> AppendedEvent:
    payload = ChallengeRefused(
        agent=agent.slug, decision=decision[:16], owner_id=owner_id, reason=reason, challenge=challenge[:40]
    )
    return _append(CHALLENGE_REFUSED, agent=agent, change_id=change_id, actor=actor, payload=payload)


def authority_attempt_refused(
    *,
    agent: AgentProfile,
    change_id: str,
    step: AttemptStep,
    decision: str,
    owner_id: int,
    reason: AttemptRefusal,
    actor: Actor,
) -> AppendedEvent:
    payload = AttemptRefused(agent=agent.slug, step=step, decision=decision[:16], owner_id=owner_id, reason=reason)
    return _append(ATTEMPT_REFUSED, agent=agent, change_id=change_id, actor=actor, payload=payload)


def authority_signature_recorded(
    *,
    agent: AgentProfile,
    change_id: str,
    version: int,
    owner_id: int,
    authorization_id: str,
    assurance: str,
    approvals: int,
    required: int,
    actor: Actor,
) -> AppendedEvent:
    payload = SignatureRecorded(
        agent=agent.slug,
        version=version,
        owner_id=owner_id,
        authorization_id=authorization_id,
        assurance=assurance,
        approvals=approvals,
        required=required,
    )
    return _append(SIGNATURE_RECORDED, agent=agent, change_id=change_id, actor=actor, payload=payload, version=version)


def authority_approvals_voided(
    *,
    agent: AgentProfile,
    change_id: str,
    owner_id: int,
    reason: VoidReason,
    authorizations: int,
    challenges: int,
    approvals: int,
    actor: Actor,
) -> AppendedEvent:
    payload = ApprovalsVoided(
        agent=agent.slug,
        owner_id=owner_id,
        reason=reason,
        authorizations=authorizations,
        challenges=challenges,
        approvals=approvals,
    )
    return _append(APPROVALS_VOIDED, agent=agent, change_id=change_id, actor=actor, payload=payload)
