"""One policy per resource: "may this principal?" and "which objects?" answered in one place.

Every view, selector and (later) WebSocket group asks these; a lookup outside the caller's
reach raises NotFound, so another tenant's object looks exactly like one that does not exist.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any, cast

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils.translation import gettext

from facade.errors import ApplicationError

from .models import AgentProfile, Membership, Role, Tenant

UserLike = AbstractBaseUser | AnonymousUser | Any


class NotFound(ApplicationError):
    """The object does not exist for this caller (whether or not it exists at all).  `what` is
    kept for tracebacks only: the answer never echoes it, so "no such" and "not yours" read
    alike."""

    http_status = HTTPStatus.NOT_FOUND

    def __init__(self, what: str = "") -> None:
        super().__init__("not_found", gettext("Not found."))
        self.what = what


def _active(user: UserLike) -> bool:
    return bool(getattr(user, "is_authenticated", False) and getattr(user, "is_active", False))


def is_platform_operator(user: UserLike) -> bool:
    return _active(user) and bool(getattr(user, "is_staff", False))


class AgentPolicy:
    """Who owns which agent.  An owner is listed among the agent's owners *and* holds the owner
    role in its tenant; platform operators (staff) act as owners of every agent — except for L3
    decisions, which only the tenant's own owners make (`tenant_owners`, issue 28)."""

    @staticmethod
    def owned(user: UserLike) -> QuerySet[AgentProfile]:
        if not _active(user):
            return AgentProfile.objects.none()
        if is_platform_operator(user):
            return AgentProfile.objects.all()
        user_id = cast(int, user.pk)  # an active user has been saved
        owner_role = Membership.objects.filter(user_id=user_id, tenant=OuterRef("tenant"), role=Role.OWNER)
        return AgentProfile.objects.filter(owners__pk=user_id).filter(Exists(owner_role)).distinct()

    @classmethod
    def is_owner(cls, user: UserLike, agent: AgentProfile) -> bool:
        return cls.owned(user).filter(pk=agent.pk).exists()

    @staticmethod
    def still_owns(*, user_id: int, agent: AgentProfile) -> bool:
        """`is_owner` for a user known by id, asked of the database in one query.  A WebSocket
        keeps the user it connected with for hours: deactivation, a lost owner role or removal
        from the agent's owners must count at its next message all the same."""
        listed = AgentProfile.objects.filter(pk=agent.pk, owners=OuterRef("pk"))
        owner_role = Membership.objects.filter(user_id=OuterRef("pk"), tenant_id=agent.tenant_id, role=Role.OWNER)
        users = get_user_model().objects.filter(pk=user_id, is_active=True)
        return users.filter(Q(is_staff=True) | (Exists(listed) & Exists(owner_role))).exists()

    @staticmethod
    def tenant_owners(agent: AgentProfile) -> QuerySet[Any]:
        """The agent's own owners, as the tenant's members (issue 28): active users listed among
        its owners who hold the owner role in its tenant.  Platform operators are not among them
        (they act for owners, but they are not owners of a tenant's commitments)."""
        listed = AgentProfile.objects.filter(pk=agent.pk, owners=OuterRef("pk"))
        owner_role = Membership.objects.filter(user_id=OuterRef("pk"), tenant_id=agent.tenant_id, role=Role.OWNER)
        return get_user_model().objects.filter(is_active=True).filter(Exists(listed) & Exists(owner_role))

    @classmethod
    def is_tenant_owner(cls, user_id: object, agent: AgentProfile) -> bool:
        return cls.tenant_owners(agent).filter(pk=user_id).exists()

    @classmethod
    def get_owned(cls, user: UserLike, slug: str) -> AgentProfile:
        agent = cls.owned(user).select_related("tenant").filter(slug=slug).first()
        if agent is None:
            raise NotFound(slug)
        return agent

    @staticmethod
    def get_public(slug: str) -> AgentProfile:
        """The customer and peer faces of an agent are public by slug."""
        agent = AgentProfile.objects.select_related("tenant").filter(slug=slug).first()
        if agent is None:
            raise NotFound(slug)
        return agent


class TenantPolicy:
    """Which tenants a user may read as a member in a given role."""

    @staticmethod
    def with_roles(user: UserLike, roles: tuple[str, ...]) -> QuerySet[Tenant]:
        if not _active(user):
            return Tenant.objects.none()
        if is_platform_operator(user):
            return Tenant.objects.all()
        return Tenant.objects.filter(memberships__user_id=cast(int, user.pk), memberships__role__in=roles).distinct()

    @classmethod
    def get(cls, user: UserLike, slug: str, roles: tuple[str, ...]) -> Tenant:
        tenant = cls.with_roles(user, roles).filter(slug=slug).first()
        if tenant is None:
            raise NotFound(slug)
        return tenant

    @staticmethod
    def as_member(user: UserLike, roles: tuple[str, ...]) -> QuerySet[Tenant]:
        """The tenants where `user` itself holds one of `roles` — platform operators included only
        where they are members.  Membership is authority (issue 32): who belongs to a business is
        its own owners' to decide; an operator takes a business on and invites its first owner,
        but does not add, promote or remove its people."""
        if not _active(user):
            return Tenant.objects.none()
        return Tenant.objects.filter(memberships__user_id=cast(int, user.pk), memberships__role__in=roles).distinct()

    @classmethod
    def get_as_member(cls, user: UserLike, slug: str, roles: tuple[str, ...]) -> Tenant:
        tenant = cls.as_member(user, roles).filter(slug=slug).first()
        if tenant is None:
            raise NotFound(slug)
        return tenant


LEDGER_READERS = (Role.OWNER.value, Role.AUDITOR.value)
PLATFORM_AUDIT_PERMISSION = "tenancy.audit_all_tenants"


def is_platform_auditor(user: UserLike) -> bool:
    """A platform auditor (the permission `tenancy.audit_all_tenants`) reads every tenant's
    ledger, and nothing else of theirs."""
    return _active(user) and bool(cast(Any, user).has_perm(PLATFORM_AUDIT_PERMISSION))


def ledger_tenants(user: UserLike) -> QuerySet[Tenant]:
    """The tenants whose ledger `user` may read: as an owner or auditor of the tenant, a platform
    operator or a platform auditor.  (The ledger API and the auditor console both ask this.)"""
    if is_platform_auditor(user):
        return Tenant.objects.all()
    return TenantPolicy.with_roles(user, LEDGER_READERS)
