"""Tenants, who belongs to them, their agents, and the identities of customers and peers."""

from __future__ import annotations

import uuid
from decimal import Decimal

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from facade.i18n import Phrasebook


def default_time_zone() -> str:
    return str(settings.TIME_ZONE)


def default_languages() -> list[str]:
    """A business serves its customers in every language of the site unless it says otherwise."""
    return [code for code, _name in settings.LANGUAGES]


class Tenant(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    # Its owners sign in with a password and a code from an authenticator app; one without an
    # authenticator is sent to enrol one before any owner page or API answers them.
    owners_require_totp = models.BooleanField(default=False)
    # An L3 decision needs, besides the e-mailed code, a code from the owner's authenticator.
    l3_requires_totp = models.BooleanField(default=False)
    # An L3 approval needs two different owners, each with their own token and code.
    l3_requires_two_owners = models.BooleanField(default=False)
    # The IANA time zone the tenant's days are counted in: the nightly review (03:30) and the
    # morning observe (05:00) run at these local times and cover local days.  Validated by
    # `tenant_time_zone_set` (rules.time_zone_problem).
    time_zone = models.CharField(max_length=64, default=default_time_zone)
    # Auditors may read customers' own words in the auditor console (each read is recorded in
    # the ledger); off by default: auditors see pointers, summaries and metrics.
    auditors_read_raw_text = models.BooleanField(default=False)
    # The languages the business serves its customers in (codes of settings.LANGUAGES, its first
    # the main one); set when it joins (`business_create`) and by `tenant_languages_set`.
    languages = models.JSONField(default=default_languages)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        permissions = [
            ("audit_all_tenants", "Can read every tenant's ledger in the auditor console (a platform auditor)")
        ]

    def __str__(self) -> str:
        return self.slug


class Role(models.TextChoices):
    OWNER = "owner"
    MEMBER = "member"
    AUDITOR = "auditor"


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "tenant"], name="membership_user_tenant")]

    def __str__(self) -> str:
        return f"{self.user_id}@{self.tenant_id}:{self.role}"


# What the agent says instead of a price, a date or an outcome, unless its owner worded it (the
# Chinese is in locale/; facade/i18n.py).
DEFAULT_WORDING = Phrasebook(
    boundary=_("I can't confirm prices, dates or outcomes here: the owner confirms those personally.")
)


def default_boundary_wording() -> dict[str, str]:
    """An agent starts with no wording of its own: `AgentProfile.boundary` then says
    the default wording in the conversation's language.  (Agents created before this kept a copy
    of the same sentences, which reads the same.)"""
    return {}


def default_clarification_order() -> list[str]:
    """What the agent asks for, in this order, before it registers a request."""
    return ["need", "when", "contact"]


def default_request_flow() -> dict[str, object]:
    """The request state machine every agent starts with: each state names who acts next.

    `withdrawn` is no state the owner moves a request to (no `to` names it): the customer takes
    a request there themselves while it stands in the first state and the business has not
    acted on it (`dialogue.services.request_withdraw`)."""
    return {
        "initial": "submitted",
        "states": {
            "submitted": {"next_actor": "owner", "to": ["accepted", "needs_info", "declined", "cancelled"]},
            "needs_info": {"next_actor": "customer", "to": ["submitted", "cancelled"]},
            "accepted": {"next_actor": "owner", "to": ["in_progress", "cancelled"]},
            "in_progress": {"next_actor": "owner", "to": ["done", "cancelled"]},
            "done": {"next_actor": "nobody", "to": []},
            "declined": {"next_actor": "nobody", "to": []},
            "cancelled": {"next_actor": "nobody", "to": []},
            "withdrawn": {"next_actor": "nobody", "to": []},
        },
    }


class AgentProfile(models.Model):
    """One facade agent of a business.  `slug` is global because it appears in public URLs."""

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="agents")
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    owners = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="owned_agents", blank=True)
    knowledge_threshold = models.DecimalField(
        max_digits=4,
        decimal_places=3,
        default=Decimal("0.700"),
        help_text="L1 approves owner material automatically only at or above this confidence",
    )
    # The version-1 source of the agent's contract only: `agent_create` and the data migration
    # copy them into `approvals.AgentContract` version 1, and from then on the runtime reads the
    # live contract version (`approvals.contract.live_terms`), never these fields.
    mission = models.TextField(blank=True, default="")
    boundary_wording = models.JSONField(default=default_boundary_wording, blank=True)
    clarification_order = models.JSONField(default=default_clarification_order, blank=True)
    request_flow = models.JSONField(default=default_request_flow, blank=True)
    max_steps = models.PositiveSmallIntegerField(default=6)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.slug

    def boundary(self, language: str) -> str:
        """The profile's wording in `language`, else its English, else the default.  The runtime
        says the live contract's wording instead (`live_terms(agent).boundary`)."""
        wording = self.boundary_wording or {}
        own = wording.get(language) or wording.get("en")
        return str(own) if own else DEFAULT_WORDING[language]["boundary"]


class Customer(models.Model):
    """An anonymous browser visitor of one tenant, known by a signed cookie the server issued."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="customers")
    # 0–100; completed requests raise it. A reply the guard blocked or a rate-limit hit changes nothing.
    trust = models.PositiveSmallIntegerField(default=50)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"customer {self.pk} of tenant {self.tenant_id}"


class PeerTrust(models.TextChoices):
    """How far the owner trusts a peer key (issue 33 §3): `ask` — questions only; `requests` —
    questions, and it may register and follow its requests; `paused` — the key does not work
    until the owner sets it back."""

    ASK = "ask"
    REQUESTS = "requests"
    PAUSED = "paused"


class PeerCredential(models.Model):
    """An API key another agent uses.  Only a SHA-256 of the secret part is stored."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    agent = models.ForeignKey(AgentProfile, on_delete=models.CASCADE, related_name="peer_credentials")
    name = models.CharField(max_length=100)
    key_prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # What the peer face offers this key: the contract's peer skills intersected with it.  Keys
    # issued before trust existed could register requests, and keep that.
    trust = models.CharField(max_length=16, choices=PeerTrust.choices, default=PeerTrust.REQUESTS)

    def __str__(self) -> str:
        # The prefix is public (it is in the ledger and `peer_key --list`); the secret is not stored.
        state = "" if self.revoked_at is None else ", revoked"
        return f"{self.name} (fpk_{self.key_prefix}_…{state})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class UserLanguage(models.Model):
    """The language a person reads the site in — the one they last used it in (or switched to on
    its language menu) — so that what is written to them away from the site (an e-mailed code,
    a new request, an opened breaker) is in their language, not the site's default."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="site_language"
    )
    language = models.CharField(max_length=16)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user_id}: {self.language}"


class InvitationStatus(models.TextChoices):
    PENDING = "pending"
    ACCEPTED = "accepted"
    # Cancelled by an owner, or replaced by a newer invitation of the same address.
    CANCELLED = "cancelled"


class Invitation(models.Model):
    """An owner's invitation of an e-mail address into the tenant, as a co-owner or an auditor
    (issue 32 §2).  The e-mail carries a one-time link; only a SHA-256 of its secret is stored,
    like a peer key's.  It works once, until `expires_at`, and only for an account of `email`."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField(max_length=254)  # lower-cased; the account it makes or joins
    role = models.CharField(max_length=16, choices=Role.choices)
    token_hash = models.CharField(max_length=64, unique=True)
    status = models.CharField(max_length=16, choices=InvitationStatus.choices, default=InvitationStatus.PENDING)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    # Who accepted it, and when (the account bound to `email`).
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "email", "status"], name="tenancy_invitation_address")]

    def __str__(self) -> str:
        return f"invitation {self.pk} to {self.tenant_id} as {self.role} ({self.status})"
