"""Audience-bound sessions and the messages in them."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class SessionStatus(models.TextChoices):
    OPEN = "open"
    CLOSED = "closed"
    EXPIRED = "expired"


class DialogueSession(models.Model):
    """The audience and principal are fixed when the session opens and never recomputed."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.PROTECT, related_name="+")
    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.PROTECT, related_name="sessions")
    audience = models.CharField(max_length=16, choices=[("owner", "owner"), ("customer", "customer"), ("peer", "peer")])
    principal_type = models.CharField(max_length=16)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, related_name="+")
    customer = models.ForeignKey("tenancy.Customer", on_delete=models.PROTECT, null=True, related_name="+")
    peer = models.ForeignKey("tenancy.PeerCredential", on_delete=models.PROTECT, null=True, related_name="+")
    status = models.CharField(max_length=16, choices=SessionStatus.choices, default=SessionStatus.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)
    last_activity_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                name="session_one_principal",
                condition=(
                    models.Q(principal_type="user", user__isnull=False, customer__isnull=True, peer__isnull=True)
                    | models.Q(principal_type="customer", user__isnull=True, customer__isnull=False, peer__isnull=True)
                    | models.Q(principal_type="peer", user__isnull=True, customer__isnull=True, peer__isnull=False)
                ),
            )
        ]

    @property
    def principal_id(self) -> str:
        return str(self.user_id or self.customer_id or self.peer_id)


class Message(models.Model):
    """A message in a session.  Raw text stays here; the ledger records ids and sizes only."""

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(DialogueSession, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16, choices=[("principal", "principal"), ("agent", "agent")])
    text = models.TextField()
    client_message_id = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["session", "client_message_id"],
                condition=~models.Q(client_message_id=""),
                name="message_idempotent_client_id",
            )
        ]
