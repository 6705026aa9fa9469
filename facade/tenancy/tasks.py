from __future__ import annotations

import logging

from celery import shared_task

from .audit import tenant_ledger_verify
from .models import Tenant

log = logging.getLogger(__name__)


@shared_task(name="facade.tenancy.tasks.ledger_verify_all")
def ledger_verify_all() -> dict[str, bool]:
    """Verify every tenant's chain and checkpoint the ones that hold.  Harmless to run twice."""
    outcome: dict[str, bool] = {}
    for tenant in Tenant.objects.order_by("pk"):
        result, _ = tenant_ledger_verify(tenant=tenant)
        outcome[tenant.slug] = result.ok
        if not result.ok:
            log.error(
                "ledger of tenant %s failed verification at seq %s (%s)",
                tenant.slug,
                result.first_bad_seq,
                result.reason,
            )
    return outcome
