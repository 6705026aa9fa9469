"""Writes of the tenancy app.  Each is one transaction with its ledger event inside it."""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.core.exceptions import ValidationError
from django.core.mail import get_connection, send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext

from facade.errors import ApplicationError
from facade.ratelimit import rate_check, rate_limited_error

from . import events, rules
from .models import (
    AgentProfile,
    Customer,
    Invitation,
    InvitationStatus,
    Membership,
    PeerCredential,
    PeerTrust,
    Role,
    Tenant,
    UserLanguage,
)
from .schemas import Actor, IssuedPeerKey
from .signals import owner_authority_ended

PEER_KEY_PREFIX = "fpk"
logger = logging.getLogger(__name__)


class TenancyError(ApplicationError):
    """A refusal of the tenancy services (400 unless the raiser says otherwise)."""


@transaction.atomic
def tenant_create(*, slug: str, name: str, actor: Actor) -> Tenant:
    if Tenant.objects.filter(slug=slug).exists():
        raise TenancyError(
            "tenant_exists",
            gettext("The address %(slug)s is taken: choose another.") % {"slug": slug},
            HTTPStatus.CONFLICT,
        )
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
def tenant_languages_set(*, tenant: Tenant, languages: list[str], actor: Actor) -> Tenant:
    """The languages the business serves its customers in (codes of settings.LANGUAGES, the main
    one first).  Setting what is already set writes nothing."""
    problem = rules.languages_problem(languages, tuple(code for code, _name in settings.LANGUAGES))
    if problem:
        raise TenancyError("invalid_languages", problem)
    tenant = Tenant.objects.select_for_update().get(pk=tenant.pk)
    if list(tenant.languages) == languages:
        return tenant
    previous, tenant.languages = list(tenant.languages), list(languages)
    tenant.save(update_fields=["languages"])
    events.tenant_languages_changed(tenant=tenant, previous=previous, actor=actor)
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
    """Give `user` a role in the tenant, or change the role they have (`membership.granted`, or
    `membership.role_changed`).  The last owner cannot be made something else (409 `last_owner`);
    an owner who stops being one loses their pending approvals at once (issue 28)."""
    role = Role(role)
    membership = _memberships_locked(tenant=tenant, user=user)
    if membership is None:
        membership = Membership.objects.create(user=user, tenant=tenant, role=role)
        events.membership_granted(membership=membership, actor=actor)
        return membership
    if membership.role == role:
        return membership
    previous = membership.role
    _keep_an_owner(tenant=tenant, membership=membership, role_after=role)
    membership.role = role
    membership.save(update_fields=["role"])
    if previous == Role.OWNER:
        # No longer an owner of the tenant: no longer an owner of its agents' decisions.
        _authority_ended(tenant=tenant, user=user, reason="owner_role_changed", actor=actor)
    events.membership_role_changed(membership=membership, previous=previous, actor=actor)
    return membership


def _memberships_locked(*, tenant: Tenant, user: Any) -> Membership | None:
    """Inside the caller's transaction: lock the tenant's owner memberships and `user`'s own, in id
    order — the order an L3 decision locks the owners in (approvals.step_up.owners_lock), so a
    removal and a decision never wait on each other both ways — and return `user`'s, if any."""
    rows = list(
        Membership.objects.select_for_update()
        .filter(tenant=tenant)
        .filter(Q(role=Role.OWNER) | Q(user_id=user.pk))
        .order_by("pk")
    )
    return next((row for row in rows if row.user_id == user.pk), None)


def _keep_an_owner(*, tenant: Tenant, membership: Membership, role_after: str | None) -> None:
    """Refuse (409 `last_owner`) a removal or role change that would leave the tenant no owner.
    The owner memberships are locked by the caller (`_memberships_locked`)."""
    others = (
        Membership.objects.filter(tenant=tenant, role=Role.OWNER, user__is_active=True)
        .exclude(pk=membership.pk)
        .count()
    )
    if not rules.keeps_an_owner(role_now=membership.role, role_after=role_after, other_owners=others):
        raise TenancyError(
            "last_owner",
            gettext(
                "The business's last owner cannot be removed or given another role: make someone else an owner first."
            ),
            HTTPStatus.CONFLICT,
        )


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
    """Remove a user from a tenant, and with it from the owners of the tenant's agents (never its
    last owner: 409 `last_owner`); their pending approvals, unspent decision tokens and live codes
    there are void at once (issue 28: the approvals app does it on `owner_authority_ended`, with
    its ledger events)."""
    membership = _memberships_locked(tenant=tenant, user=user)
    if membership is None:
        raise TenancyError("not_a_member", "that user is not a member of this tenant", HTTPStatus.NOT_FOUND)
    _keep_an_owner(tenant=tenant, membership=membership, role_after=None)
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
        raise TenancyError(
            "agent_exists",
            gettext("The agent address %(slug)s is taken: choose another.") % {"slug": slug},
            HTTPStatus.CONFLICT,
        )
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


# --- the team: invitations, roles, removal (issue 32 §2) ---------------------------------


def hash_invitation_secret(secret: str) -> str:
    # 256 bits of entropy, like a peer key: a fast hash is enough, and the table holds no usable link.
    return hashlib.sha256(secret.encode()).hexdigest()


def mask_address(address: str) -> str:
    """`owner@demo.test` → `o***@demo.test`: what the ledger says of an invited address."""
    local, _, domain = address.rpartition("@")
    return f"{local[:1]}***@{domain}"


def normalised_address(email: str) -> str:
    """An invited address as the account it makes will be named: stripped and lower-cased (a
    user name is matched exactly at sign-in, so a capital letter would make it unreachable)."""
    address = email.strip().lower()
    try:
        validate_email(address)
    except ValidationError:
        raise TenancyError("invalid_email", gettext("Enter a valid e-mail address.")) from None
    return address


def accounts_of_address(address: str) -> Any:
    """The accounts an address names (its user name or its e-mail, case-insensitively)."""
    return get_user_model().objects.filter(Q(username__iexact=address) | Q(email__iexact=address))


def invitation_link(secret: str) -> str:
    """The link the e-mail carries.  The secret is in the query string, which the access log
    withholds (facade/server.py); the page moves it into the session at once and drops it from
    the address bar."""
    return f"{settings.FACADE_PUBLIC_URL.rstrip('/')}{reverse('invitation')}?token={secret}"


class _MailFailed(Exception):
    """Raised inside the invitation's transaction to roll it back when the mail did not go."""


def _send_invitation(*, invitation: Invitation, secret: str, inviter: str, language: str) -> None:
    with translation.override(language):
        role = gettext("a co-owner") if invitation.role == Role.OWNER else gettext("an auditor")
        tenant = " ".join(invitation.tenant.name.split())
        subject = gettext("You are invited to join %(tenant)s on Facade") % {"tenant": tenant}
        until = timezone.localtime(invitation.expires_at, timezone.get_fixed_timezone(0)).strftime("%Y-%m-%d %H:%M")
        body = "\n".join(
            [
                gettext("%(inviter)s invited you to join %(tenant)s as %(role)s.")
                % {"inviter": inviter, "tenant": tenant, "role": role},
                "",
                gettext("Open this link to accept (it works once, until %(until)s UTC):") % {"until": until},
                invitation_link(secret),
                "",
                gettext("It works only for %(address)s: you create an account with this address, or sign in with it.")
                % {"address": invitation.email},
                gettext("If you did not expect this invitation, ignore this e-mail."),
            ]
        )
    connection = get_connection(timeout=settings.FACADE_INVITATION_EMAIL_TIMEOUT)
    send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [invitation.email], connection=connection)


def invitation_create(
    *,
    tenant: Tenant,
    email: str,
    role: str,
    invited_by: Any | None,
    actor: Actor,
    language: str | None = None,
    now: datetime | None = None,
) -> Invitation:
    """Invite an address into the tenant as a co-owner or an auditor: e-mail it a one-time link
    valid FACADE_INVITATION_DAYS days (an earlier pending invitation of the address stops
    working).  The invitation exists only once the mail server took the e-mail (else 503
    `email_unavailable`, nothing kept); the link is never shown to the inviter, nor stored.
    Refused: an address that is already a member (409 `already_a_member`: change their role
    instead), a role other than owner or auditor, more than FACADE_RATE_INVITATIONS per inviter."""
    address = normalised_address(email)
    if role not in rules.INVITABLE_ROLES:
        raise TenancyError("invalid_role", gettext("Invite a co-owner (owner) or an auditor (auditor)."))
    if Membership.objects.filter(tenant=tenant, user__in=accounts_of_address(address)).exists():
        raise TenancyError(
            "already_a_member",
            gettext("%(address)s is already a member of this business: change their role instead.")
            % {"address": address},
            HTTPStatus.CONFLICT,
        )
    if invited_by is not None:
        # Counted once the invitation would be sent: each one is an e-mail to someone.
        limited = rate_check([("invite:user", str(invited_by.pk), settings.FACADE_RATE_INVITATIONS)])
        if limited is not None:
            raise rate_limited_error(limited, "invitations")
    now = now or timezone.now()
    if language is None:
        language = language_of_addresses([address])[address]
    inviter = getattr(invited_by, "email", "") or gettext("The platform")
    try:
        with transaction.atomic():
            # The tenant's row serialises its invitations, so one address has one pending at most.
            Tenant.objects.select_for_update().filter(pk=tenant.pk).first()
            earlier = list(
                Invitation.objects.select_for_update()
                .filter(tenant=tenant, email=address, status=InvitationStatus.PENDING)
                .order_by("pk")
            )
            for old in earlier:
                old.status, old.closed_at = InvitationStatus.CANCELLED, now
                old.save(update_fields=["status", "closed_at"])
                events.invitation_cancelled(invitation=old, reason="replaced", actor=actor)
            secret = secrets.token_urlsafe(32)
            invitation = Invitation.objects.create(
                tenant=tenant,
                email=address,
                role=role,
                token_hash=hash_invitation_secret(secret),
                invited_by=invited_by,
                created_at=now,
                expires_at=now + timedelta(days=settings.FACADE_INVITATION_DAYS),
            )
            events.invitation_created(
                invitation=invitation, sent_to=mask_address(address), replaced=len(earlier), actor=actor
            )
            try:
                _send_invitation(invitation=invitation, secret=secret, inviter=inviter, language=language)
            except Exception as exc:
                # What the mail backend raised may quote the conversation with the server: its type only.
                logger.warning("invitation e-mail for tenant %s not sent: %s", tenant.slug, type(exc).__name__)
                raise _MailFailed from None
    except _MailFailed:
        raise TenancyError(
            "email_unavailable",
            gettext("The invitation could not be e-mailed, so it was not made. Try again later."),
            HTTPStatus.SERVICE_UNAVAILABLE,
        ) from None
    return invitation


def invitation_find(secret: str) -> Invitation | None:
    """The invitation a link's secret names (whatever its state), or None."""
    if not secret or len(secret) > 128:
        return None
    return Invitation.objects.select_related("tenant").filter(token_hash=hash_invitation_secret(secret)).first()


def _refuse_invitation(invitation: Invitation, verdict: rules.InvitationVerdict, user: Any | None) -> TenancyError:
    """Record the refused use of a link (its own transaction: the refusal stands though nothing
    else does) and the error to raise."""
    user_id = getattr(user, "pk", None)
    actor = Actor.human(user_id) if user_id is not None else Actor.platform("invitation-link")
    with transaction.atomic():
        events.invitation_refused(invitation=invitation, reason=verdict.value, user_id=user_id, actor=actor)  # type: ignore[arg-type]
    return invitation_refusal(verdict)


def invitation_refusal(verdict: rules.InvitationVerdict) -> TenancyError:
    texts = {
        rules.InvitationVerdict.EXPIRED: gettext("This invitation has expired. Ask the business for a new one."),
        rules.InvitationVerdict.USED: gettext("This invitation has already been accepted."),
        rules.InvitationVerdict.CANCELLED: gettext("This invitation no longer works. Ask the business for a new one."),
        rules.InvitationVerdict.WRONG_ACCOUNT: gettext(
            "This invitation is for another e-mail address than the account you are signed in with."
        ),
    }
    status = HTTPStatus.FORBIDDEN if verdict is rules.InvitationVerdict.WRONG_ACCOUNT else HTTPStatus.GONE
    return TenancyError(
        f"invitation_{verdict.value}", texts.get(verdict, texts[rules.InvitationVerdict.CANCELLED]), status
    )


def invitation_accept(
    *, invitation_id: int, user: Any | None = None, password: str | None = None, now: datetime | None = None
) -> tuple[Membership, Any]:
    """Accept an invitation: as the signed-in `user` (their account must be of the invited
    address), or — no `user` — by creating the invited address's account with `password`
    (already validated), when it has none yet (409 `account_exists`: sign in first).  The account
    becomes a member in the invited role; an owner also becomes an owner of each of the tenant's
    agents.  A link that cannot be accepted is refused, and the refusal recorded.  Returns the
    membership and the account."""
    now = now or timezone.now()
    with transaction.atomic():
        invitation = Invitation.objects.select_for_update().select_related("tenant").get(pk=invitation_id)
        addresses = None if user is None else (str(user.email or ""), str(user.get_username()))
        verdict = rules.invitation_verdict(
            status=invitation.status,
            expires_at=invitation.expires_at,
            now=now,
            invited=invitation.email,
            account_addresses=addresses,
        )
        if verdict is rules.InvitationVerdict.OK:
            created = False
            if user is None:
                if password is None or accounts_of_address(invitation.email).exists():
                    raise TenancyError(
                        "account_exists",
                        gettext("An account with this address exists: sign in with it to accept."),
                        HTTPStatus.CONFLICT,
                    )
                user, created = user_ensure(email=invitation.email, password=password)
            actor = Actor.human(user.pk)
            tenant = invitation.tenant
            membership = membership_grant(tenant=tenant, user=user, role=invitation.role, actor=actor)
            if membership.role == Role.OWNER:
                for agent in AgentProfile.objects.filter(tenant=tenant).order_by("pk"):
                    agent_owner_add(agent=agent, user=user, actor=actor)
            invitation.status, invitation.accepted_by, invitation.closed_at = InvitationStatus.ACCEPTED, user, now
            invitation.save(update_fields=["status", "accepted_by", "closed_at"])
            events.invitation_accepted(invitation=invitation, user_id=user.pk, account_created=created, actor=actor)
            return membership, user
    raise _refuse_invitation(invitation, verdict, user)


@transaction.atomic
def invitation_cancel(*, invitation: Invitation, actor: Actor, now: datetime | None = None) -> Invitation:
    """An owner withdraws a pending invitation: its link stops working (409 `not_pending` when it
    was already accepted or cancelled)."""
    invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if invitation.status != InvitationStatus.PENDING:
        raise TenancyError("not_pending", gettext("This invitation is no longer pending."), HTTPStatus.CONFLICT)
    invitation.status, invitation.closed_at = InvitationStatus.CANCELLED, now or timezone.now()
    invitation.save(update_fields=["status", "closed_at"])
    events.invitation_cancelled(invitation=invitation, reason="cancelled", actor=actor)
    return invitation


@transaction.atomic
def member_role_set(*, membership: Membership, role: str, actor: Actor) -> Membership:
    """An owner changes a member's role to co-owner or auditor (`membership_grant`: the last owner
    keeps theirs, and an owner who stops being one loses their pending approvals at once).  A new
    owner owns each of the tenant's agents; one who stops being an owner owns none of them."""
    if role not in rules.INVITABLE_ROLES:
        raise TenancyError("invalid_role", gettext("Invite a co-owner (owner) or an auditor (auditor)."))
    tenant, user = membership.tenant, membership.user
    membership = membership_grant(tenant=tenant, user=user, role=role, actor=actor)
    agents = AgentProfile.objects.filter(tenant=tenant).order_by("pk")
    if membership.role == Role.OWNER:
        for agent in agents:
            agent_owner_add(agent=agent, user=user, actor=actor)
    else:
        for agent in agents.filter(owners=user):
            agent_owner_remove(agent=agent, user=user, actor=actor)
    return membership


# --- a business joins (issue 32 §1) ------------------------------------------------------


@dataclass(frozen=True)
class NewBusiness:
    tenant: Tenant
    agent: AgentProfile
    invitation: Invitation | None  # of its first owner, when an address was given


def business_create(
    *,
    name: str,
    slug: str,
    time_zone: str,
    languages: list[str],
    agent_slug: str,
    agent_name: str,
    actor: Actor,
    owner_email: str | None = None,
    invited_by: Any | None = None,
    language: str | None = None,
    skill_ids: list[str] | None = None,
) -> NewBusiness:
    """A business joins: its tenant (name, address, time zone, languages), its first agent and —
    given `owner_email` — the invitation of its first owner, who owns the agent once they accept.
    All or nothing, in one transaction: a taken address (409 `tenant_exists`, `agent_exists`), a
    bad one (400 `invalid_slug`), a time zone or languages refused, or an invitation e-mail that
    could not be sent (503 `email_unavailable`) leaves nothing behind.  The same services as
    every other write, each with its ledger event (`manage.py seed_demo` calls this too)."""
    name = " ".join(str(name).split())
    if not 1 <= len(name) <= 200:
        raise TenancyError("invalid_name", gettext("A business needs a name of 1 to 200 characters."))
    agent_name = " ".join(str(agent_name).split()) or name
    for value in (slug, agent_slug):
        problem = rules.slug_problem(value)
        if problem:
            raise TenancyError("invalid_slug", problem)
    address = normalised_address(owner_email) if owner_email else None
    with transaction.atomic():
        tenant = tenant_create(slug=slug, name=name, actor=actor)
        tenant = tenant_time_zone_set(tenant=tenant, time_zone=time_zone, actor=actor)
        tenant = tenant_languages_set(tenant=tenant, languages=languages, actor=actor)
        agent = agent_create(tenant=tenant, slug=agent_slug, name=agent_name[:200], actor=actor, skill_ids=skill_ids)
        invitation = None
        if address is not None:
            invitation = invitation_create(
                tenant=tenant,
                email=address,
                role=Role.OWNER,
                invited_by=invited_by,
                actor=actor,
                language=language,
            )
    return NewBusiness(tenant=tenant, agent=agent, invitation=invitation)


# --- self-service sign-up (FACADE_SIGNUP=open) ------------------------------------------------

SIGNUP_SALT = "facade.tenancy.signup"


@dataclass(frozen=True)
class SignupRequest:
    """What a person signing a business up asked for; nothing of it is stored until their
    e-mailed link is opened (it travels signed, inside the link)."""

    name: str
    slug: str
    time_zone: str
    languages: list[str]
    agent_slug: str
    agent_name: str
    email: str


def signup_check(request: SignupRequest) -> SignupRequest:
    """The request as it will be made (the address normalised), or a refusal with the reason the
    form shows: a bad name, address, time zone or languages, or a taken address (409)."""
    name = " ".join(request.name.split())
    if not 1 <= len(name) <= 200:
        raise TenancyError("invalid_name", gettext("A business needs a name of 1 to 200 characters."))
    for value in (request.slug, request.agent_slug):
        problem = rules.slug_problem(value)
        if problem:
            raise TenancyError("invalid_slug", problem)
    problem = rules.time_zone_problem(request.time_zone)
    if problem:
        raise TenancyError("invalid_time_zone", problem)
    problem = rules.languages_problem(request.languages, tuple(code for code, _name in settings.LANGUAGES))
    if problem:
        raise TenancyError("invalid_languages", problem)
    if Tenant.objects.filter(slug=request.slug).exists():
        raise TenancyError(
            "tenant_exists",
            gettext("The address %(slug)s is taken: choose another.") % {"slug": request.slug},
            HTTPStatus.CONFLICT,
        )
    if AgentProfile.objects.filter(slug=request.agent_slug).exists():
        raise TenancyError(
            "agent_exists",
            gettext("The agent address %(slug)s is taken: choose another.") % {"slug": request.agent_slug},
            HTTPStatus.CONFLICT,
        )
    return SignupRequest(
        name=name,
        slug=request.slug,
        time_zone=request.time_zone,
        languages=list(request.languages),
        agent_slug=request.agent_slug,
        agent_name=" ".join(request.agent_name.split())[:200] or name,
        email=normalised_address(request.email),
    )


def signup_link_send(*, request: SignupRequest, client_ip: str, language: str) -> SignupRequest:
    """Check a sign-up and e-mail its address a link that makes the business once opened (within
    FACADE_SIGNUP_LINK_HOURS).  Nothing is stored.  Limited per address and per client address
    (429 `rate_limited`); a mail server that does not take it answers 503 `email_unavailable`.
    Whether the address already has an account is not said here: the e-mail's link asks its
    holder to sign in with it then."""
    checked = signup_check(request)
    limited = rate_check(
        [
            ("signup:address", hashlib.sha256(checked.email.encode()).hexdigest(), settings.FACADE_RATE_SIGNUP),
            ("signup:ip", client_ip or "unknown", settings.FACADE_RATE_SIGNUP_IP),
        ]
    )
    if limited is not None:
        raise rate_limited_error(limited, "sign-up links")
    token = signing.dumps({**checked.__dict__, "language": language}, salt=SIGNUP_SALT, compress=True)
    link = f"{settings.FACADE_PUBLIC_URL.rstrip('/')}{reverse('signup-verify')}?token={token}"
    with translation.override(language):
        subject = gettext("Confirm the sign-up of %(name)s on Facade") % {"name": checked.name}
        body = "\n".join(
            [
                gettext("Someone, hopefully you, asked to sign up %(name)s (%(slug)s) on Facade with this address.")
                % {"name": checked.name, "slug": checked.slug},
                "",
                gettext("Open this link within %(hours)s hours to create it:")
                % {"hours": settings.FACADE_SIGNUP_LINK_HOURS},
                link,
                "",
                gettext("Nothing is created until you open it. If it was not you, ignore this e-mail."),
            ]
        )
    try:
        connection = get_connection(timeout=settings.FACADE_INVITATION_EMAIL_TIMEOUT)
        send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [checked.email], connection=connection)
    except Exception as exc:
        logger.warning("sign-up e-mail not sent: %s", type(exc).__name__)
        raise TenancyError(
            "email_unavailable",
            gettext("The confirmation e-mail could not be sent. Try again later."),
            HTTPStatus.SERVICE_UNAVAILABLE,
        ) from None
    return checked


def signup_link_read(token: str) -> tuple[SignupRequest, str] | None:
    """The sign-up a link carries and the language it was asked in, or None (forged, altered,
    expired)."""
    try:
        data = signing.loads(token, salt=SIGNUP_SALT, max_age=settings.FACADE_SIGNUP_LINK_HOURS * 3600)
        language = str(data.pop("language", settings.LANGUAGE_CODE))
        return SignupRequest(**data), language
    except (signing.BadSignature, TypeError, ValueError, AttributeError):
        return None


def business_signup(
    *, request: SignupRequest, user: Any | None = None, password: str | None = None
) -> tuple[NewBusiness, Any]:
    """Make the business a verified sign-up asked for, in one transaction: the account of its
    address (created with `password`, or the signed-in `user`, whose address it must be: 403
    `wrong_account`), the business through `business_create` and that account as its first
    owner.  A link opened twice finds its address taken (409 `tenant_exists`)."""
    checked = signup_check(request)
    with transaction.atomic():
        if user is None:
            if password is None or accounts_of_address(checked.email).exists():
                raise TenancyError(
                    "account_exists",
                    gettext("An account with this address exists: sign in with it to accept."),
                    HTTPStatus.CONFLICT,
                )
            user, _created = user_ensure(email=checked.email, password=password)
        elif not any(rules.same_address(checked.email, a) for a in (str(user.email or ""), user.get_username())):
            raise TenancyError(
                "wrong_account",
                gettext("This sign-up is for another e-mail address than the account you are signed in with."),
                HTTPStatus.FORBIDDEN,
            )
        actor = Actor.human(user.pk)
        made = business_create(
            name=checked.name,
            slug=checked.slug,
            time_zone=checked.time_zone,
            languages=checked.languages,
            agent_slug=checked.agent_slug,
            agent_name=checked.agent_name,
            actor=actor,
        )
        membership_grant(tenant=made.tenant, user=user, role=Role.OWNER, actor=actor)
        agent_owner_add(agent=made.agent, user=user, actor=actor)
    return made, user
