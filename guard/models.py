"""The guard breaker (issue 15 §5): one row per time an agent's breaker opened.  It opens when
the agent's blocked customer and peer replies in a sliding hour exceed
FACADE_GUARD_BREAKER_THRESHOLD, and stays open until an owner closes it (guard/breaker.py
writes it; a partial unique index keeps at most one open row per agent)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

__all__ = ["GuardBreaker"]


class GuardBreaker(models.Model):
    """Open while `closed_at` is null.  `blocks` is how many blocked replies the hour before
    `opened_at` held (more than `threshold`, the setting when it opened)."""

    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.PROTECT, related_name="+")
    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.CASCADE, related_name="+")
    opened_at = models.DateTimeField()
    blocks = models.PositiveIntegerField()
    threshold = models.PositiveIntegerField()
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["agent"], condition=models.Q(closed_at__isnull=True), name="guard_breaker_one_open_per_agent"
            )
        ]
        indexes = [models.Index(fields=["agent", "closed_at"], name="guard_breaker_agent_closed")]

    def __str__(self) -> str:
        return f"guard breaker of agent {self.agent_id} opened {self.opened_at:%Y-%m-%d %H:%M}" + (
            "" if self.closed_at is None else " (closed)"
        )
