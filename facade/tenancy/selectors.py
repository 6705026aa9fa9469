"""Reads of the tenancy app, scoped to one tenant the caller was already allowed (policy.py)."""

from __future__ import annotations

from django.db.models import Case, IntegerField, QuerySet, Value, When

from .models import Invitation, InvitationStatus, Membership, Role, Tenant


def team_members(tenant: Tenant) -> QuerySet[Membership]:
    """The tenant's members: owners first, then auditors, then anyone else; each by when they joined."""
    rank = Case(
        When(role=Role.OWNER, then=Value(0)),
        When(role=Role.AUDITOR, then=Value(1)),
        default=Value(2),
        output_field=IntegerField(),
    )
    return (
        Membership.objects.filter(tenant=tenant)
        .select_related("user")
        .annotate(role_rank=rank)
        .order_by("role_rank", "created_at", "pk")
    )


def team_invitations(tenant: Tenant) -> QuerySet[Invitation]:
    """The tenant's pending invitations (expired ones included: they show as expired), newest first."""
    return Invitation.objects.filter(tenant=tenant, status=InvitationStatus.PENDING).order_by("-created_at", "-pk")
