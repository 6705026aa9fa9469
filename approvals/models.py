"""Change proposals (issue 12, first increment): what the agent or the owner proposes to change
in what customers are told, with the level and who decides assigned by the platform; and the
decision authority's rows (authority_models.py: one-time tokens, emailed codes)."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models

from .authority_models import *  # noqa: F401,F403
from .contract_models import AgentContract  # noqa: F401
from .rules import Origin, Requires
from .schemas import Kind

DECISION_REASON_MAX = 200


def proposal_id() -> str:
    return "chg_" + secrets.token_urlsafe(12)


class ProposalStatus(models.TextChoices):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    APPLIED = "applied"
    FAILED = "failed"
    ROLLED_BACK = "rolled_back"
    EXPIRED = "expired"


class ChangeProposal(models.Model):
    id = models.CharField(primary_key=True, max_length=32, default=proposal_id, editable=False)
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.PROTECT, related_name="+")
    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.PROTECT, related_name="proposals")
    kind = models.CharField(max_length=32, choices=[(k.value, k.value) for k in Kind])
    level = models.PositiveSmallIntegerField(choices=[(1, "1"), (2, "2"), (3, "3")])
    payload = models.JSONField()
    summary = models.CharField(max_length=300)
    diff = models.JSONField(default=dict)  # {"before": …, "after": …}
    evidence = models.JSONField(default=list)  # [{"type": "session"|"knowledge_version", "id": n}]
    origin = models.CharField(max_length=32, choices=[(o.value, o.value) for o in Origin])
    requires = models.CharField(max_length=32, choices=[(r.value, r.value) for r in Requires])
    status = models.CharField(max_length=16, choices=ProposalStatus.choices, default=ProposalStatus.PENDING)
    version = models.PositiveIntegerField(default=1)
    base = models.CharField(max_length=64)
    authorization_id = models.CharField(max_length=64, blank=True, default="")
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    assurance = models.CharField(max_length=32, blank=True, default="")
    # L2/L3: where in the contract the change writes ({"field": …, "path": […]}), the live
    # contract version it was made against, the version its applying published, and why
    # applying failed (the compiler's reasons).
    target = models.JSONField(default=dict, blank=True)
    base_contract_version = models.PositiveIntegerField(null=True, blank=True)
    contract_version = models.PositiveIntegerField(null=True, blank=True)
    failure_reasons = models.JSONField(default=list, blank=True)
    # A rollback proposal: the applied change it undoes.
    rollback_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="rollbacks")
    # The owner's optional short reason for the decision (their own words, shown in the owner
    # face only; the ledger keeps its length and fingerprint, see PreferenceSignal).
    decision_reason = models.CharField(max_length=DECISION_REASON_MAX, blank=True, default="")
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["agent", "status", "-created_at"]),
            models.Index(fields=["status", "expires_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.pk} ({self.kind}, L{self.level}, {self.status})"


class PreferenceSignal(models.Model):
    """What an owner's decision of a proposal a model made says about their preferences (issue
    13, "Learn"): one row per final decision — approve, reject, or the proposal left to expire —
    written in the decision's transaction.  The daily review reads the recent ones per kind
    (rsi/governance_rules.py `preference_thresholds`).  The owner's own proposals give none."""

    class Decision(models.TextChoices):
        APPROVE = "approve"
        REJECT = "reject"
        EXPIRE = "expire"

    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.PROTECT, related_name="+")
    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.CASCADE, related_name="preference_signals")
    proposal = models.OneToOneField(ChangeProposal, on_delete=models.PROTECT, related_name="preference_signal")
    kind = models.CharField(max_length=32)
    origin = models.CharField(max_length=32)
    decision = models.CharField(max_length=16, choices=Decision.choices)
    reason = models.CharField(max_length=DECISION_REASON_MAX, blank=True, default="")
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["agent", "-decided_at"])]

    def __str__(self) -> str:
        return f"{self.decision} of a {self.kind} ({self.proposal_id})"


class ReplayStatus(models.TextChoices):
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    SKIPPED = "skipped"  # nothing to replay yet (a review's draft before the owner wrote its answer)


class ProposalReplay(models.Model):
    """The replay preview of one version of a proposal (approvals/replay.py): counts and
    pointers (message and session ids) only, never a customer's words."""

    proposal = models.ForeignKey(ChangeProposal, on_delete=models.CASCADE, related_name="replays")
    proposal_version = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=ReplayStatus.choices, default=ReplayStatus.RUNNING)
    counts = models.JSONField(default=dict, blank=True)  # replay_rules.Counts.figures()
    pointers = models.JSONField(default=dict, blank=True)  # {count: [{"message": id, "session": uuid}]}
    model = models.CharField(max_length=120, blank=True, default="")  # the provider (and model) replayed with
    days = models.PositiveSmallIntegerField(default=14)
    timed_out = models.BooleanField(default=False)  # stopped at FACADE_REPLAY_SECONDS: counts cover what ran
    error = models.CharField(max_length=64, blank=True, default="")
    started_at = models.DateTimeField(auto_now_add=True)
    computed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["proposal", "proposal_version"], name="approvals_replay_version")
        ]

    def __str__(self) -> str:
        return f"replay of {self.proposal_id} v{self.proposal_version} ({self.status})"
