"""Writes of the tenancy app.  Each is one transaction with its ledger event inside it."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from facade.errors import ApplicationError

from . import events, rules
from .models import AgentProfile, Customer, Membership, PeerCredential, PeerTrust, Role, Tenant, UserLanguage
from .schemas import Actor, IssuedPeerKey
from .signals import owner_authority_ended

PEER_KEY_PREFIX = "fpk"


class TenancyError(ApplicationError):
    """A refusal of the tenancy services (400 unless the raiser says otherwise)."""


@transaction.atomic
def tenant_create(*, slug: str, name: str, actor: Actor) -> Tenant:
    if Tenant.objects.filter(slug=slug).exists():
        raise TenancyError("tenant_exists", f"a tenant with slug {slug!r} already exists")
    tenant = Tenant.objects.create(slug=slug, name=name)
    events.tenant_created(tenant=tenant, actor=actor)
    return tenant


@transaction.atomic
def tenant_totp_require(*, tenant: Tenant, required: bool, actor: Actor) -> Tenant:
    """Require (or stop requiring) the tenant's owners to sign in with an authenticator code.
    Setting what is already set writes nothing."""
    tenant = Tenant.objects.select_for_update().get(pk=tenant.pk)
    if tenant.owners_require_totp == required:
        return tenant
    tenant.owners_require_totp = required
    tenant.save(update_fields=["owners_require_totp"])
    events.tenant_totp_requirement_changed(tenant=tenant, actor=actor)
    return tenant


@transaction.atomic
def tenant_l3_policy_set(
    *, tenant: Tenant, requires_totp: bool | None = None, requires_two_owners: bool | None = None, actor: Actor
) -> Tenant:
    """What an L3 decision needs in this tenant beyond the e-mailed code: an authenticator code
    (`requires_totp`) and/or two different owners' approvals (`requires_two_owners`); None leaves
    a setting as it is.  Setting what is already set writes nothing."""
    tenant = Tenant.objects.select_for_update().get(pk=tenant.pk)
    wanted = {
        "l3_requires_totp": tenant.l3_requires_totp if requires_totp is None else requires_totp,
        "l3_requires_two_owners": tenant.l3_requires_two_owners if requires_two_owners is None else requires_two_owners,
    }
    changed = [name for name, value in wanted.items() if getattr(tenant, name) != value]
    if not changed:
        return tenant
    for name in changed:
        setattr(tenant, name, wanted[name])
    tenant.save(update_fields=changed)
    events.tenant_l3_policy_changed(tenant=tenant, actor=actor)
    return tenant


@transaction.atomic
def tenant_time_zone_set(*, tenant: Tenant, time_zone: str, actor: Actor) -> Tenant:
    """The IANA time zone the tenant's days are counted in (e.g. "Asia/Shanghai")."""
    problem = rules.time_zone_problem(time_zone)
    if problem:
        raise TenancyError("invalid_time_zone", problem)
    tenant = Tenant.objects.select_for_update().get(pk=tenant.pk)
    if tenant.time_zone == time_zone:
        return tenant
    previous, tenant.time_zone = tenant.time_zone, time_zone
    tenant.save(update_fields=["time_zone"])
    events.tenant_time_zone_changed(tenant=tenant, previous=previous, actor=actor)
    return tenant


@transaction.atomic
def tenant_audit_raw_text_set(*, tenant: Tenant, allowed: bool, actor: Actor) -> Tenant:
    """Allow (or stop allowing) the tenant's auditors to read customers' own words in the auditor
    console; owners decide it for their tenant.  Off by default: auditors see pointers, sizes and
    figures.  Setting what is already set writes nothing."""
    tenant = Tenant.objects.select_for_update().get(pk=tenant.pk)
    if tenant.auditors_read_raw_text == allowed:
        return tenant
    tenant.auditors_read_raw_text = allowed
    tenant.save(update_fields=["auditors_read_raw_text"])
    events.tenant_audit_raw_text_changed(tenant=tenant, actor=actor)
    return tenant


@transaction.atomic
def membership_grant(*, tenant: Tenant, user: Any, role: Role | str, actor: Actor) -> Membership:
    role = Role(role)
    membership, created = Membership.objects.get_or_create(user=user, tenant=tenant, defaults={"role": role})
    if not created and membership.role == role:
        return membership
    if not created:
        was_owner = membership.role == Role.OWNER
        membership.role = role
        membership.save(update_fields=["role"])
        if was_owner:
            # No longer an owner of the tenant: no longer an owner of its agents' decisions.
            _authority_ended(tenant=tenant, user=user, reason="owner_role_changed", actor=actor)
    events.membership_granted(membership=membership, actor=actor)
    return membership


def _authority_ended(
    *, tenant: Tenant, user: Any, reason: str, actor: Actor, agents: list[AgentProfile] | None = None
) -> None:
    """Inside the caller's transaction: tell the listeners that `user` no longer owns `agents`
    (default: every agent of the tenant), so that their pending approvals are void at once."""
    if agents is None:
        agents = list(AgentProfile.objects.filter(tenant=tenant).order_by("pk"))
    owner_authority_ended.send(sender=Membership, tenant=tenant, user=user, agents=agents, reason=reason, actor=actor)


@transaction.atomic
def membership_revoke(*, tenant: Tenant, user: Any, actor: Actor) -> None:
    """Remove a user from a tenant, and with it from the owners of the tenant's agents; their
    pending approvals, unspent decision tokens and live codes there are void at once (issue 28:
    the approvals app does it on `owner_authority_ended`, with its ledger events)."""
    membership = Membership.objects.select_for_update().filter(user=user, tenant=tenant).first()
    if membership is None:
        raise TenancyError("not_a_member", "that user is not a member of this tenant")
    _authority_ended(tenant=tenant, user=user, reason="membership_revoked", actor=actor)
    for agent in AgentProfile.objects.filter(tenant=tenant, owners=user).order_by("pk"):
        agent.owners.remove(user)
        events.agent_owner_removed(agent=agent, user_id=user.pk, actor=actor)
    membership_id = membership.pk
    membership.delete()
    events.membership_revoked(tenant=tenant, membership_id=membership_id, user_id=user.pk, actor=actor)


@transaction.atomic
def agent_create(
    *,
    tenant: Tenant,
    slug: str,
    name: str,
    actor: Actor,
    owners: list[Any] | None = None,
    skill_ids: list[str] | None = None,
) -> AgentProfile:
    """A new agent and version 1 of its contract (`skill_ids`: its skills, when not the platform's
    default ones)."""
    if AgentProfile.objects.filter(slug=slug).exists():
        raise TenancyError("agent_exists", f"an agent with slug {slug!r} already exists")
    agent = AgentProfile.objects.create(tenant=tenant, slug=slug, name=name)
    events.agent_created(agent=agent, actor=actor)
    # Version 1 of its contract, from the profile's defaults.  Imported here because approvals
    # sits above tenancy; the contract is the one thing every agent must have from birth.
    from approvals.contract import contract_create_first

    contract_create_first(agent=agent, actor=actor, skill_ids=skill_ids)
    for user in owners or []:
        agent_owner_add(agent=agent, user=user, actor=actor)
    return agent


@transaction.atomic
def agent_owner_add(*, agent: AgentProfile, user: Any, actor: Actor) -> None:
    """Make a user an owner of an agent.  The user must hold the owner role in the tenant."""
    if not Membership.objects.filter(user=user, tenant=agent.tenant, role=Role.OWNER).exists():
        raise TenancyError("not_a_tenant_owner", "only owners of the agent's tenant can own the agent")
    if agent.owners.filter(pk=user.pk).exists():
        return
    agent.owners.add(user)
    events.agent_owner_added(agent=agent, user_id=user.pk, actor=actor)


@transaction.atomic
def agent_owner_remove(*, agent: AgentProfile, user: Any, actor: Actor) -> None:
    if not agent.owners.filter(pk=user.pk).exists():
        raise TenancyError("not_an_owner", "that user is not an owner of this agent")
    _authority_ended(tenant=agent.tenant, user=user, reason="agent_owner_removed", actor=actor, agents=[agent])
    agent.owners.remove(user)
    events.agent_owner_removed(agent=agent, user_id=user.pk, actor=actor)


def hash_peer_secret(secret: str) -> str:
    # The secret has 256 bits of entropy, so a fast hash is enough; what matters is that the
    # database never holds a usable key.
    return hashlib.sha256(secret.encode()).hexdigest()


def split_peer_key(key: str) -> tuple[str, str] | None:
    parts = key.split("_")
    if len(parts) != 3 or parts[0] != PEER_KEY_PREFIX or not parts[1] or not parts[2]:
        return None
    return parts[1], parts[2]


def peer_key_matches(credential: PeerCredential, secret: str) -> bool:
    return hmac.compare_digest(credential.key_hash, hash_peer_secret(secret))


@transaction.atomic
def peer_key_create(*, agent: AgentProfile, name: str, actor: Actor, created_by: Any | None = None) -> IssuedPeerKey:
    name = name.strip()
    if not name or len(name) > 100:
        raise TenancyError("invalid_name", "a peer key needs a name of 1 to 100 characters")
    prefix = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32).replace("_", "-")
    credential = PeerCredential.objects.create(
        agent=agent, name=name, key_prefix=prefix, key_hash=hash_peer_secret(secret), created_by=created_by
    )
    events.peer_key_created(credential=credential, agent=agent, actor=actor)
    return IssuedPeerKey(credential_id=str(credential.pk), name=name, key=f"{PEER_KEY_PREFIX}_{prefix}_{secret}")


@transaction.atomic
def peer_key_revoke(*, credential: PeerCredential, actor: Actor) -> PeerCredential:
    credential = PeerCredential.objects.select_for_update().select_related("agent__tenant").get(pk=credential.pk)
    if credential.revoked_at is not None:
        return credential
    credential.revoked_at = timezone.now()
    credential.save(update_fields=["revoked_at"])
    events.peer_key_revoked(credential=credential, agent=credential.agent, actor=actor)
    return credential


@transaction.atomic
def peer_key_trust_set(*, credential: PeerCredential, trust: str, actor: Actor) -> PeerCredential:
    """Set how far the owner trusts a key (`PeerTrust`); a revoked key stays revoked."""
    if trust not in PeerTrust.values:
        raise TenancyError("invalid_trust", f"trust is one of {', '.join(PeerTrust.values)}")
    credential = PeerCredential.objects.select_for_update().select_related("agent__tenant").get(pk=credential.pk)
    if credential.revoked_at is not None:
        raise TenancyError("key_revoked", "a revoked key cannot be trusted again; issue a new one")
    previous = credential.trust
    if previous == trust:
        return credential
    credential.trust = trust
    credential.save(update_fields=["trust"])
    events.peer_key_trust_changed(credential=credential, agent=credential.agent, previous=previous, actor=actor)
    return credential


@transaction.atomic
def customer_create(*, tenant: Tenant) -> Customer:
    customer = Customer.objects.create(tenant=tenant)
    events.customer_created(customer=customer, actor=Actor.platform("customer-cookie"))
    return customer


@transaction.atomic
def user_ensure(
    *, email: str, password: str | None, is_staff: bool = False, is_superuser: bool = False
) -> tuple[Any, bool]:
    """Create a user whose username is their email, or return the existing one (unchanged: its
    rights are never raised here)."""
    User = get_user_model()
    user = User.objects.filter(username=email).first()
    if user is not None:
        return user, False
    user = User.objects.create_user(
        username=email, email=email, password=password, is_staff=is_staff, is_superuser=is_superuser
    )
    return user, True


def user_language_set(*, user: Any, language: str) -> bool:
    """Remember the language `user` reads the site in (one of settings.LANGUAGES; anything else
    is ignored); True when it changed.  No ledger event: it is a reading preference, no
    governance, and the person's own."""
    if language not in {code for code, _name in settings.LANGUAGES} or not getattr(user, "pk", None):
        return False
    with transaction.atomic():
        row, created = UserLanguage.objects.select_for_update().get_or_create(
            user_id=user.pk, defaults={"language": language}
        )
        if created or row.language == language:
            return created
        row.language = language
        row.save(update_fields=["language", "updated_at"])
        return True


def language_of_addresses(addresses: list[str]) -> dict[str, str]:
    """The language each e-mail address's person reads the site in (their remembered one, else the
    site's default), for writing to them in it."""
    found: dict[str, str] = {}
    User = get_user_model()
    users = User.objects.filter(email__in=addresses).values_list("email", "site_language__language")
    for email, language in users:
        if language and email not in found:
            found[email] = language
    return {a: found.get(a, settings.LANGUAGE_CODE) for a in addresses}
