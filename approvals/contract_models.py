"""Versions of an agent's contract: what its customer face is told and may do (issue 12, L3).

A version is immutable once written: the compiler (approvals/contract.py) only ever inserts the
next version and moves `is_live`, in one transaction.  Exactly one version per agent is live (a
partial unique constraint), and the runtime reads that one."""

from __future__ import annotations

from django.db import models

__all__ = ["AgentContract"]


class AgentContract(models.Model):
    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.PROTECT, related_name="contracts")
    version = models.PositiveIntegerField()
    mission = models.TextField(blank=True, default="")
    boundary_wording = models.JSONField(default=dict, blank=True)  # {language: text}
    wording = models.JSONField(default=dict, blank=True)  # {language: {situation: text}}
    clarification_order = models.JSONField(default=list)
    request_flow = models.JSONField(default=dict)  # the request state machine
    skill_ids = models.JSONField(default=list)  # ids from approvals/skills.py
    delivery = models.JSONField(default=list)  # [{channel (approvals/skills.py), note}]
    pricing = models.JSONField(default=dict)  # {currency, items: [{name, amount: "35.00"}]}
    # "guarded" or "strict" (contract_rules.COMPOSITION_MODES; facade/dialogue/runtime/strict.py)
    composition_mode = models.CharField(max_length=16, default="guarded")
    content_hash = models.CharField(max_length=64)  # approvals.contract_rules.content_hash
    is_live = models.BooleanField(default=False)
    published_at = models.DateTimeField()
    published_by = models.CharField(max_length=128)  # the ledger's actor id
    caused_by = models.CharField(max_length=64, blank=True, default="")  # e.g. the change id
    rolled_back_to = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["agent", "version"], name="contract_agent_version"),
            models.UniqueConstraint(fields=["agent"], condition=models.Q(is_live=True), name="contract_one_live"),
        ]

    def __str__(self) -> str:
        return f"{self.agent_id} contract v{self.version}{' (live)' if self.is_live else ''}"

    def content(self) -> dict[str, object]:
        return {
            "mission": self.mission,
            "boundary_wording": self.boundary_wording,
            "wording": self.wording,
            "clarification_order": self.clarification_order,
            "request_flow": self.request_flow,
            "skill_ids": self.skill_ids,
            "delivery": self.delivery,
            "pricing": self.pricing,
            "composition_mode": self.composition_mode,
        }
