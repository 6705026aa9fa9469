"""The tenancy app's ledger events: one payload model and one typed constructor per type.

The services call these constructors inside their transaction; nothing else in the app writes
to the ledger.  Payloads carry ids, slugs and names, never a secret (a peer key's prefix is its
public half).
"""

from __future__ import annotations

from typing import Any, Literal

from ledger.catalogue import EventPayload, EventType, register
from ledger.schemas import AppendedEvent
from ledger.services import ledger_append

from .models import AgentProfile, Customer, Invitation, Membership, PeerCredential, Tenant
from .schemas import Actor

APP = "tenancy"


class TenantCreated(EventPayload):
    slug: str
    name: str


class TenantTotpRequirementChanged(EventPayload):
    required: bool


class TenantL3PolicyChanged(EventPayload):
    l3_requires_totp: bool
    l3_requires_two_owners: bool


class TenantTimeZoneChanged(EventPayload):
    time_zone: str  # IANA name
    previous: str


class TenantLanguagesChanged(EventPayload):
    languages: list[str]  # codes of the site's languages, the main one first
    previous: list[str]


class TenantAuditRawTextChanged(EventPayload):
    allowed: bool  # auditors may now (or may no longer) read customers' own words in the console


class MembershipGranted(EventPayload):
    user_id: int
    role: str


class MembershipRevoked(EventPayload):
    user_id: int


class MembershipRoleChanged(EventPayload):
    user_id: int
    role: str
    previous: str


class InvitationCreated(EventPayload):
    role: str
    sent_to: str  # masked: b***@shop.example — the address itself stays on the invitation row
    expires_at: str  # ISO 8601, UTC
    replaced: int  # earlier pending invitations of the same address, now cancelled


class InvitationAccepted(EventPayload):
    user_id: int
    role: str
    account_created: bool


class InvitationCancelled(EventPayload):
    reason: Literal["cancelled", "replaced"]


class InvitationRefused(EventPayload):
    # Someone holding the link tried to accept an invitation that cannot be accepted any more, or
    # while signed in as another address.  `user_id`: the signed-in account, if any.
    reason: Literal["expired", "used", "cancelled", "wrong_account"]
    user_id: int | None


class AgentCreated(EventPayload):
    slug: str
    name: str


class AgentOwnerChanged(EventPayload):
    user_id: int


class PeerKeyCreated(EventPayload):
    agent: str
    name: str
    key_prefix: str


class PeerKeyRevoked(EventPayload):
    agent: str
    key_prefix: str


class PeerKeyTrustChanged(EventPayload):
    agent: str
    key_prefix: str
    trust: str
    previous: str


class CustomerCreated(EventPayload):
    pass


TENANT_CREATED = register(
    "tenant.created", app=APP, entity_type="tenant", payload=TenantCreated, description="A tenant was created."
)
TENANT_TOTP_REQUIREMENT_CHANGED = register(
    "tenant.totp_requirement_changed",
    app=APP,
    entity_type="tenant",
    payload=TenantTotpRequirementChanged,
    description="The tenant started or stopped requiring its owners to sign in with an authenticator code.",
)
TENANT_L3_POLICY_CHANGED = register(
    "tenant.l3_policy_changed",
    app=APP,
    entity_type="tenant",
    payload=TenantL3PolicyChanged,
    description="The tenant changed what an L3 decision needs: an authenticator code besides the e-mailed one, "
    "and/or the approval of two different owners.",
)
TENANT_TIME_ZONE_CHANGED = register(
    "tenant.time_zone_changed",
    app=APP,
    entity_type="tenant",
    payload=TenantTimeZoneChanged,
    description="The tenant's time zone changed: its nightly review and morning observe follow its local days.",
)
TENANT_LANGUAGES_CHANGED = register(
    "tenant.languages_changed",
    app=APP,
    entity_type="tenant",
    payload=TenantLanguagesChanged,
    description="The languages the business serves its customers in changed.",
)
TENANT_AUDIT_RAW_TEXT_CHANGED = register(
    "tenant.audit_raw_text_changed",
    app=APP,
    entity_type="tenant",
    payload=TenantAuditRawTextChanged,
    description="The tenant allowed, or stopped allowing, its auditors to read customers' own words in the "
    "auditor console (each such read is itself recorded).",
)
MEMBERSHIP_GRANTED = register(
    "membership.granted",
    app=APP,
    entity_type="membership",
    payload=MembershipGranted,
    description="A user was given a role in the tenant.",
)
MEMBERSHIP_ROLE_CHANGED = register(
    "membership.role_changed",
    app=APP,
    entity_type="membership",
    payload=MembershipRoleChanged,
    description="A member's role in the tenant was changed (an owner who stops being one loses their "
    "pending approvals at once: authority.approvals_voided).",
)
INVITATION_CREATED = register(
    "invitation.created",
    app=APP,
    entity_type="invitation",
    payload=InvitationCreated,
    description="An owner invited an e-mail address into the tenant; the e-mail with its one-time link was "
    "accepted by the mail server (only a hash of the link's secret is stored).",
)
INVITATION_ACCEPTED = register(
    "invitation.accepted",
    app=APP,
    entity_type="invitation",
    payload=InvitationAccepted,
    description="The invited address accepted: its account (created now, or signed in) became a member.",
)
INVITATION_CANCELLED = register(
    "invitation.cancelled",
    app=APP,
    entity_type="invitation",
    payload=InvitationCancelled,
    description="A pending invitation stopped working: an owner cancelled it, or a newer one replaced it.",
)
INVITATION_REFUSED = register(
    "invitation.refused",
    app=APP,
    entity_type="invitation",
    payload=InvitationRefused,
    description="An invitation's link was used but refused: expired, already used, cancelled, or by another "
    "account than the invited address.",
)
MEMBERSHIP_REVOKED = register(
    "membership.revoked",
    app=APP,
    entity_type="membership",
    payload=MembershipRevoked,
    description="A user was removed from the tenant.",
)
AGENT_CREATED = register(
    "agent.created", app=APP, entity_type="agent", payload=AgentCreated, description="An agent was created."
)
AGENT_OWNER_ADDED = register(
    "agent.owner_added",
    app=APP,
    entity_type="agent",
    payload=AgentOwnerChanged,
    description="A tenant owner was made an owner of the agent.",
)
AGENT_OWNER_REMOVED = register(
    "agent.owner_removed",
    app=APP,
    entity_type="agent",
    payload=AgentOwnerChanged,
    description="A user stopped owning the agent (removed, or left the tenant).",
)
PEER_KEY_CREATED = register(
    "peer_key.created",
    app=APP,
    entity_type="peer_credential",
    payload=PeerKeyCreated,
    description="An API key for a peer agent was issued (only its public prefix is recorded).",
)
PEER_KEY_REVOKED = register(
    "peer_key.revoked",
    app=APP,
    entity_type="peer_credential",
    payload=PeerKeyRevoked,
    description="A peer agent's API key was revoked.",
)
PEER_KEY_TRUST_CHANGED = register(
    "peer_key.trust_changed",
    app=APP,
    entity_type="peer_credential",
    payload=PeerKeyTrustChanged,
    description="The owner set how far a peer key is trusted: ask (questions only), requests, or paused.",
)
CUSTOMER_CREATED = register(
    "customer.created",
    app=APP,
    entity_type="customer",
    payload=CustomerCreated,
    description="An anonymous customer identity was issued (the signed cookie).",
)


def _append(
    event_type: EventType, tenant_id: int, entity_id: Any, actor: Actor, payload: EventPayload
) -> AppendedEvent:
    return ledger_append(
        chain_id=tenant_id,
        event_type=event_type.name,
        entity_type=event_type.entity_type,
        entity_id=str(entity_id),
        actor_type=actor.type,
        actor_id=actor.id,
        payload=payload.model_dump(),
    )


def tenant_created(*, tenant: Tenant, actor: Actor) -> AppendedEvent:
    return _append(TENANT_CREATED, tenant.pk, tenant.pk, actor, TenantCreated(slug=tenant.slug, name=tenant.name))


def tenant_totp_requirement_changed(*, tenant: Tenant, actor: Actor) -> AppendedEvent:
    payload = TenantTotpRequirementChanged(required=tenant.owners_require_totp)
    return _append(TENANT_TOTP_REQUIREMENT_CHANGED, tenant.pk, tenant.pk, actor, payload)


def tenant_l3_policy_changed(*, tenant: Tenant, actor: Actor) -> AppendedEvent:
    payload = TenantL3PolicyChanged(
        l3_requires_totp=tenant.l3_requires_totp, l3_requires_two_owners=tenant.l3_requires_two_owners
    )
    return _append(TENANT_L3_POLICY_CHANGED, tenant.pk, tenant.pk, actor, payload)


def tenant_time_zone_changed(*, tenant: Tenant, previous: str, actor: Actor) -> AppendedEvent:
    payload = TenantTimeZoneChanged(time_zone=tenant.time_zone, previous=previous)
    return _append(TENANT_TIME_ZONE_CHANGED, tenant.pk, tenant.pk, actor, payload)


def tenant_languages_changed(*, tenant: Tenant, previous: list[str], actor: Actor) -> AppendedEvent:
    payload = TenantLanguagesChanged(languages=list(tenant.languages), previous=previous)
    return _append(TENANT_LANGUAGES_CHANGED, tenant.pk, tenant.pk, actor, payload)


def tenant_audit_raw_text_changed(*, tenant: Tenant, actor: Actor) -> AppendedEvent:
    payload = TenantAuditRawTextChanged(allowed=tenant.auditors_read_raw_text)
    return _append(TENANT_AUDIT_RAW_TEXT_CHANGED, tenant.pk, tenant.pk, actor, payload)


def membership_granted(*, membership: Membership, actor: Actor) -> AppendedEvent:
    payload = MembershipGranted(user_id=membership.user_id, role=membership.role)
    return _append(MEMBERSHIP_GRANTED, membership.tenant_id, membership.pk, actor, payload)


def membership_revoked(*, tenant: Tenant, membership_id: int, user_id: int, actor: Actor) -> AppendedEvent:
    """Written after the membership row is gone, hence ids rather than the row."""
    return _append(MEMBERSHIP_REVOKED, tenant.pk, membership_id, actor, MembershipRevoked(user_id=user_id))


def membership_role_changed(*, membership: Membership, previous: str, actor: Actor) -> AppendedEvent:
    payload = MembershipRoleChanged(user_id=membership.user_id, role=membership.role, previous=previous)
    return _append(MEMBERSHIP_ROLE_CHANGED, membership.tenant_id, membership.pk, actor, payload)


def invitation_created(*, invitation: Invitation, sent_to: str, replaced: int, actor: Actor) -> AppendedEvent:
    payload = InvitationCreated(
        role=invitation.role, sent_to=sent_to, expires_at=invitation.expires_at.isoformat(), replaced=replaced
    )
    return _append(INVITATION_CREATED, invitation.tenant_id, invitation.pk, actor, payload)


def invitation_accepted(*, invitation: Invitation, user_id: int, account_created: bool, actor: Actor) -> AppendedEvent:
    payload = InvitationAccepted(user_id=user_id, role=invitation.role, account_created=account_created)
    return _append(INVITATION_ACCEPTED, invitation.tenant_id, invitation.pk, actor, payload)


def invitation_cancelled(
    *, invitation: Invitation, reason: Literal["cancelled", "replaced"], actor: Actor
) -> AppendedEvent:
    return _append(INVITATION_CANCELLED, invitation.tenant_id, invitation.pk, actor, InvitationCancelled(reason=reason))


def invitation_refused(
    *,
    invitation: Invitation,
    reason: Literal["expired", "used", "cancelled", "wrong_account"],
    user_id: int | None,
    actor: Actor,
) -> AppendedEvent:
    payload = InvitationRefused(reason=reason, user_id=user_id)
    return _append(INVITATION_REFUSED, invitation.tenant_id, invitation.pk, actor, payload)


def agent_created(*, agent: AgentProfile, actor: Actor) -> AppendedEvent:
    return _append(AGENT_CREATED, agent.tenant_id, agent.pk, actor, AgentCreated(slug=agent.slug, name=agent.name))


def agent_owner_added(*, agent: AgentProfile, user_id: int, actor: Actor) -> AppendedEvent:
    return _append(AGENT_OWNER_ADDED, agent.tenant_id, agent.pk, actor, AgentOwnerChanged(user_id=user_id))


def agent_owner_removed(*, agent: AgentProfile, user_id: int, actor: Actor) -> AppendedEvent:
    return _append(AGENT_OWNER_REMOVED, agent.tenant_id, agent.pk, actor, AgentOwnerChanged(user_id=user_id))


def peer_key_created(*, credential: PeerCredential, agent: AgentProfile, actor: Actor) -> AppendedEvent:
    payload = PeerKeyCreated(agent=agent.slug, name=credential.name, key_prefix=credential.key_prefix)
    return _append(PEER_KEY_CREATED, agent.tenant_id, credential.pk, actor, payload)


def peer_key_revoked(*, credential: PeerCredential, agent: AgentProfile, actor: Actor) -> AppendedEvent:
    payload = PeerKeyRevoked(agent=agent.slug, key_prefix=credential.key_prefix)
    return _append(PEER_KEY_REVOKED, agent.tenant_id, credential.pk, actor, payload)


def peer_key_trust_changed(
    *, credential: PeerCredential, agent: AgentProfile, previous: str, actor: Actor
) -> AppendedEvent:
    payload = PeerKeyTrustChanged(
        agent=agent.slug, key_prefix=credential.key_prefix, trust=credential.trust, previous=previous
    )
    return _append(PEER_KEY_TRUST_CHANGED, agent.tenant_id, credential.pk, actor, payload)


def customer_created(*, customer: Customer, actor: Actor) -> AppendedEvent:
    return _append(CUSTOMER_CREATED, customer.tenant_id, customer.pk, actor, CustomerCreated())
