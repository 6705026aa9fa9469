"""Tenants, who belongs to them, their agents, and the identities of customers and peers."""

from __future__ import annotations

import uuid
from decimal import Decimal

from django.conf import settings
from django.db import models


class Tenant(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

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


class AgentProfile(models.Model):
    """One facade agent of a business.  `slug` is global because it appears in public URLs."""

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="agents")
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    owners = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="owned_agents", blank=True)
    knowledge_threshold = models.DecimalField(
        max_digits=4, decimal_places=3, default=Decimal("0.700"),
        help_text="L1 approves owner material automatically only at or above this confidence",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.slug


class Customer(models.Model):
    """An anonymous browser visitor of one tenant, known by a signed cookie the server issued."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="customers")
    created_at = models.DateTimeField(auto_now_add=True)


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

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
