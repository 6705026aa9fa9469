"""The guard app's rows.  Each block belongs to one feature; keep them apart."""

from __future__ import annotations

from django.conf import settings
from django.db import models

__all__ = ["DeliveredViolation", "GuardBreaker"]


# --- the nightly re-check of delivered replies (issue 15 §6; guard/recheck.py) ------------------


class DeliveredViolation(models.Model):
    """A customer's or peer's reply that was delivered and that a later rule set of the outgoing
    check blocks: the metric that must be 0.  One row per reply, whichever rule set found it
    first; the row names what objected, never what the reply or the customer said (the reply
    itself is `message`)."""

    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.PROTECT, related_name="+")
    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.CASCADE, related_name="delivered_violations")
    message = models.OneToOneField("dialogue.Message", on_delete=models.CASCADE, related_name="delivered_violation")
    run = models.ForeignKey("dialogue.Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    ruleset_hash = models.CharField(max_length=64)  # the rule set that found it (guard.outgoing.RULESET_HASH)
    category = models.CharField(max_length=32)
    # The check that objected, "guard" or "grounding" (guard.outgoing; `check` is a Model method).
    failed_check = models.CharField(max_length=16)
    rule = models.CharField(max_length=64, blank=True, default="")  # the rule that fired, when it has a name
    delivered_at = models.DateTimeField()  # when the reply was sent (its message's created_at)
    found_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["agent", "delivered_at"], name="violation_agent_delivered")]

    def __str__(self) -> str:
        return f"delivered violation ({self.category}) of message {self.message_id}"


# --- the breaker (issue 15 §5; guard/breaker.py) ---------------------------------------------
# One row per time an agent's breaker opened: it opens when the agent's blocked customer and peer
# replies in a sliding hour exceed FACADE_GUARD_BREAKER_THRESHOLD and stays open until an owner
# closes it (a partial unique index keeps at most one open row per agent).


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
