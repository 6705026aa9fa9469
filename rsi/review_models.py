"""The daily review's state: one report per (agent, local day) and the aggregates it was built
from.  Neither holds a customer's words: figures, session ids, hashes and scrubbed topic labels
shown only under the k-anonymity rule (rsi/review_rules.py)."""

from __future__ import annotations

import uuid

from django.db import models

__all__ = ["ReviewAggregate", "ReviewReport"]


class ReviewReport(models.Model):
    """The review of one agent's local day.  Unique per (agent, day): a second run — or a
    concurrent one from another process — finds the same row (claimed under a row lock).  A day
    that is not over yet gives a `partial` report, updated in place by the next run."""

    class Status(models.TextChoices):
        RUNNING = "running"
        FINISHED = "finished"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.PROTECT, related_name="+")
    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    time_zone = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    partial = models.BooleanField(default=True)
    runs = models.PositiveIntegerField(default=0)
    input_digest = models.CharField(max_length=64, blank=True, default="")
    review_input = models.JSONField(default=dict, blank=True)  # ReviewInput, aggregates only
    wins = models.JSONField(default=list, blank=True)
    misses = models.JSONField(default=list, blank=True)
    gaps = models.JSONField(default=list, blank=True)
    # [{"change_id", "kind", "summary", "key"}]: the change proposals this report made
    proposals = models.JSONField(default=list, blank=True)
    held_back = models.PositiveIntegerField(default=0)  # all held back, whatever the reason
    # HoldReason → count: the daily cap, the owner's preference, proposing paused
    held_back_reasons = models.JSONField(default=dict, blank=True)
    # [{"kind", "approvals", "rejections", "min_sessions", "held_back"}]: the kinds the owner's
    # recent decisions put a bar on when this report ran
    preferences = models.JSONField(default=list, blank=True)
    paused = models.BooleanField(default=False)  # proposing was paused (the escalation budget ran out)
    # [{"reason", "kind", "reviewer"}]
    dropped_claims = models.JSONField(default=list, blank=True)
    overrides = models.PositiveIntegerField(default=0)
    # Monday's report (the one of a Sunday, complete): rsi.weekly.WeeklyComparison — the seven days
    # ending that Sunday against the seven before, counts and rates only.  None on other days.
    week_over_week = models.JSONField(null=True, blank=True)
    reviewer = models.CharField(max_length=64, blank=True, default="")
    model = models.CharField(max_length=128, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "day"], name="review_report_agent_day")]

    def __str__(self) -> str:
        return f"review of agent {self.agent_id} on {self.day} ({self.status}{', partial' if self.partial else ''})"


class ReviewAggregate(models.Model):
    """One figure of a report's input: the value an aggregate pointer resolves to, with a few
    session ids (never more than the review shows)."""

    report = models.ForeignKey(ReviewReport, on_delete=models.CASCADE, related_name="aggregates")
    key = models.CharField(max_length=64)
    value = models.IntegerField()
    label = models.CharField(max_length=200, blank=True, default="")  # a scrubbed, shown topic only
    session_ids = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["report", "key"], name="review_aggregate_report_key")]

    def __str__(self) -> str:
        return f"{self.key} = {self.value} (report {self.report_id})"
