"""Verification runs over tenants' ledgers (used by `manage.py ledger_verify` and beat)."""

from __future__ import annotations

from ledger.schemas import Checkpoint, VerifyResult
from ledger.selectors import ledger_verify
from ledger.services import checkpoint_issue

from .models import Tenant


def tenant_ledger_verify(
    *, tenant: Tenant, checkpoints: list[Checkpoint] | None = None
) -> tuple[VerifyResult, Checkpoint | None]:
    """Verify a tenant's chain; when it holds, sign a fresh checkpoint of it.  A chain that does
    not verify is never signed: a checkpoint must not bless a tampered history."""
    result = ledger_verify(chain_id=tenant.pk, checkpoints=checkpoints)
    if not result.ok:
        return result, None
    head = bytes.fromhex(result.head_hash)
    return result, checkpoint_issue(chain_id=tenant.pk, label=tenant.slug, size=result.checked, head=head)
