"""Reads of change proposals."""

from __future__ import annotations

from django.db.models import QuerySet

from facade.tenancy.models import AgentProfile
from facade.tenancy.policy import NotFound

from .models import ChangeProposal, ProposalStatus


def proposal_list(*, agent: AgentProfile, status: str | None = None, limit: int = 200) -> QuerySet[ChangeProposal]:
    found = ChangeProposal.objects.filter(agent=agent).order_by("-created_at")
    if status:
        found = found.filter(status=status)
    return found[:limit]


def proposal_get(*, agent: AgentProfile, proposal_id: str) -> ChangeProposal:
    proposal = ChangeProposal.objects.filter(agent=agent, pk=proposal_id).first()
    if proposal is None:
        raise NotFound(proposal_id)
    return proposal


STATUSES = [s.value for s in ProposalStatus]


def knowledge_proposal_ids(*, agent: AgentProfile, version_ids: list[int]) -> dict[int, str]:
    """The pending proposal that decides each of these knowledge versions (by version id)."""
    found = ChangeProposal.objects.filter(
        agent=agent, status=ProposalStatus.PENDING, payload__version_id__in=version_ids
    ).values_list("payload__version_id", "pk")
    return {int(version_id): pk for version_id, pk in found}
