"""Governance by exception (issue 13): one escalation budget per agent — the token bucket of the
proposals its daily review may send to the owner's inbox, and whether its proposing is paused
(rsi/governance_rules.py decides; rsi/review.py writes it under this row's lock)."""

from __future__ import annotations

from django.db import models

__all__ = ["EscalationBudget"]


class EscalationBudget(models.Model):
    """An agent's escalation budget.  `tokens` as of `refilled_at` (the refill is computed when it
    is next read).  `paused` from the review that found no token left (`paused_day` is the day it
    reviewed) until a review finds the owner's inbox cleared of every pending proposal a model
    made for this agent; then the bucket is full again."""

    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.PROTECT, related_name="+")
    agent = models.OneToOneField("tenancy.AgentProfile", on_delete=models.CASCADE, related_name="+")
    tokens = models.FloatField()
    refilled_at = models.DateTimeField()
    paused = models.BooleanField(default=False)
    paused_at = models.DateTimeField(null=True, blank=True)
    paused_day = models.DateField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"escalation budget of agent {self.agent_id}: {self.tokens:.1f}{' (paused)' if self.paused else ''}"
