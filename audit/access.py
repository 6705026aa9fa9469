"""Who may read which tenant's ledger in the auditor console (`/audit/`, `/api/audit/`).

Readers of a tenant's ledger: its auditors and owners (membership roles), platform operators
(staff) and platform auditors (users holding the permission `tenancy.audit_all_tenants`, for
every tenant).  Everything the console shows is read-only; a tenant a caller may not read raises
the same NotFound as one that does not exist.  Every view and export is recorded in the tenant's
own chain (`audit.events`) by the caller that served it.
"""

from __future__ import annotations

from typing import Any, cast

from facade.errors import ApplicationError
from facade.tenancy.ledger_chains import readable_tenant
from facade.tenancy.models import Role, Tenant
from facade.tenancy.policy import (
    NotFound,
    UserLike,
    is_platform_auditor,
    is_platform_operator,
    ledger_tenants,
)
from ledger.chains import ChainRefused


def audit_tenant(user: UserLike, slug: str) -> Tenant:
    tenant = ledger_tenants(user).filter(slug=slug).first()
    if tenant is None:
        raise NotFound(slug)
    return tenant


def is_auditor_only(user: UserLike) -> bool:
    """Whether the signed-in user reads ledgers and owns nothing: an auditor of some tenant or a
    platform auditor, with no owner role anywhere and not a platform operator.  Such a user may
    change nothing anywhere (`audit.readonly`)."""
    if not getattr(user, "is_authenticated", False) or is_platform_operator(user):
        return False
    roles = set(cast(Any, user).memberships.values_list("role", flat=True))
    if Role.OWNER.value in roles:
        return False
    return Role.AUDITOR.value in roles or is_platform_auditor(user)


def may_read_raw_text(user: UserLike, tenant: Tenant) -> bool:
    """Whether `user` may read customers' own words in `tenant`'s conversations in the console:
    only when the tenant allows it (`auditors_read_raw_text`, its owners' decision) and only as an
    auditor — of this tenant (membership role `auditor`) or of the platform — never as an owner
    or a platform operator: owners never see raw customer transcripts through the console."""
    if not tenant.auditors_read_raw_text or not getattr(user, "is_authenticated", False):
        return False
    if is_platform_operator(user):
        return False
    role = cast(Any, user).memberships.filter(tenant=tenant).values_list("role", flat=True).first()
    if role == Role.OWNER.value:
        return False
    return role == Role.AUDITOR.value or is_platform_auditor(user)


def api_tenant(user: UserLike, slug: str | None) -> Tenant:
    """The tenant an API caller reads (`/api/audit/…?tenant=<slug>`), chosen as the ledger API
    chooses it (`readable_tenant`); its refusals in the project's one error type."""
    try:
        return readable_tenant(user, slug)
    except ChainRefused as exc:
        raise ApplicationError(exc.code, exc.detail, exc.http_status) from exc
