"""Facade's answer to the ledger's question "which chains are there, and who may read one"
(`ledger.chains.ChainDirectory`, named by the setting FACADE_LEDGER_CHAINS).

Every tenant has one chain: its id is the tenant's primary key, its label the tenant's slug.  A
tenant's owners and auditors (and platform operators) may read it; for anyone else it does not
exist (TenantPolicy raises the same NotFound as for any other tenant object)."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from ledger.chains import ChainDirectory, ChainRefused, NamedChain

from .models import Tenant
from .policy import NotFound, ledger_tenants


def _chain(tenant: Tenant) -> NamedChain:
    return NamedChain(id=tenant.pk, label=tenant.slug)


class TenantChains(ChainDirectory):
    def chains(self) -> list[NamedChain]:
        return [_chain(tenant) for tenant in Tenant.objects.order_by("pk")]

    def chain(self, label: str) -> NamedChain | None:
        tenant = Tenant.objects.filter(slug=label).first()
        return None if tenant is None else _chain(tenant)

    def readable(self, *, user: Any, label: str | None) -> NamedChain:
        return _chain(readable_tenant(user, label))


def readable_tenant(user: Any, label: str | None) -> Tenant:
    """The tenant whose ledger `user` means: the one `label` names, else the only one they may
    read.  NotFound for a tenant out of reach (as for one that does not exist); `tenant_required`
    when they read several and named none.  The ledger API and the auditor console's API both ask
    this."""
    if label:
        tenant = ledger_tenants(user).filter(slug=label).first()
        if tenant is None:
            raise NotFound(label)
        return tenant
    tenants = list(ledger_tenants(user).order_by("pk")[:2])
    if len(tenants) == 1:
        return tenants[0]
    if not tenants:
        raise ChainRefused("not_found", "no ledger you may read", HTTPStatus.NOT_FOUND)
    raise ChainRefused("tenant_required", "you read several tenants' ledgers: add ?tenant=<slug>")
