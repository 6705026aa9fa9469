"""Reads of change proposals."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import F, QuerySet
from django.utils import timezone

from facade.tenancy.models import AgentProfile
from facade.tenancy.policy import NotFound

from .models import ChangeProposal, PreferenceSignal, ProposalStatus
from .rules import MODEL_ORIGINS


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


def proposal_card(proposal: ChangeProposal) -> dict[str, Any]:
    """A proposal as a card: the one dict the owner face puts into a reply's metadata and a tool
    answers the model with (the page renders the card itself from the proposal's id).  What would
    change, who decides and where it stands — never a token or a code."""
    return {
        "id": proposal.pk,
        "kind": proposal.kind,
        "level": proposal.level,
        "status": proposal.status,
        "version": proposal.version,
        "summary": proposal.summary,
        "requires": proposal.requires,
        "origin": proposal.origin,
        "payload": proposal.payload,
        "evidence": proposal.evidence,
        "contract_version": proposal.contract_version,
        "failure_reasons": list(proposal.failure_reasons or []),
        "rollback_of": proposal.rollback_of_id,
    }


def pending_proposals(*, agent: AgentProfile, limit: int = 200) -> QuerySet[ChangeProposal]:
    """What waits for the owner's decision, oldest first (the first made is the first to expire)."""
    return ChangeProposal.objects.filter(agent=agent, status=ProposalStatus.PENDING).order_by("created_at")[:limit]


def pending_count(*, agent: AgentProfile) -> int:
    return ChangeProposal.objects.filter(agent=agent, status=ProposalStatus.PENDING).count()


def pending_from_models(*, agent: AgentProfile, now: datetime | None = None) -> int:
    """How many proposals a model made (the review, observe, a customer candidate, the owner
    dialogue's model) wait for the owner's decision — not counting any past its expiry."""
    return ChangeProposal.objects.filter(
        agent=agent,
        status=ProposalStatus.PENDING,
        origin__in=[o.value for o in MODEL_ORIGINS],
        expires_at__gt=now or timezone.now(),
    ).count()


def preference_decisions(*, agent: AgentProfile, origin: str, since: datetime) -> list[tuple[str, str]]:
    """(kind, decision) of the preference signals of `agent`'s proposals of `origin` decided
    since `since`, oldest first."""
    found = PreferenceSignal.objects.filter(agent=agent, origin=origin, decided_at__gte=since).order_by("decided_at")
    return [(kind, decision) for kind, decision in found.values_list("kind", "decision")]


def recently_decided(*, agent: AgentProfile, limit: int = 30) -> QuerySet[ChangeProposal]:
    """Proposals no longer pending, the latest decided (or expired) first."""
    return (
        ChangeProposal.objects.filter(agent=agent)
        .exclude(status=ProposalStatus.PENDING)
        .order_by(F("decided_at").desc(nulls_last=True), "-created_at")[:limit]
    )


def knowledge_proposal_ids(*, agent: AgentProfile, version_ids: list[int]) -> dict[int, str]:
    """The pending proposal that decides each of these knowledge versions (by version id)."""
    found = ChangeProposal.objects.filter(
        agent=agent, status=ProposalStatus.PENDING, payload__version_id__in=version_ids
    ).values_list("payload__version_id", "pk")
    return {int(version_id): pk for version_id, pk in found}
