"""The console's writes: the records of who read what (`audit.events`), and the verification
runs, which also sign a checkpoint of a sound chain (outside the database).  Nothing else in the
console writes; reading a ledger never changes it except by appending these records."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from facade.tenancy.models import Tenant
from ledger.audit import chain_verify_and_checkpoint
from ledger.chains import NamedChain
from ledger.schemas import VerifyResult
from ledger.services import LedgerError

from . import events
from .export import ExportPlan


def access_record(*, tenant: Tenant, reader: Any, view: str, params: dict[str, Any]) -> int:
    """Record that `reader` opened `view` of `tenant`'s ledger with these filters; answers the
    record's sequence number."""
    with transaction.atomic():
        return events.audit_viewed(tenant=tenant, reader=reader, view=view, params=params).seq


def verification_run(*, tenant: Tenant, reader: Any) -> VerifyResult:
    """Verify the tenant's chain now (signing a checkpoint when it holds) and record the result
    as `audit.verified`.  Not a change to governance data: any reader may run it."""
    try:
        result, _ = chain_verify_and_checkpoint(chain=NamedChain(id=tenant.pk, label=tenant.slug))
    except LedgerError as exc:  # reported like any failed run, never a crash of the page
        result = VerifyResult(ok=False, checked=0, first_bad_seq=None, reason="checkpoint_refused", detail=str(exc))
    with transaction.atomic():
        events.audit_verified(
            tenant=tenant,
            reader=reader,
            ok=result.ok,
            checked=result.checked,
            first_bad_seq=result.first_bad_seq,
            reason=result.reason,
        )
    return result


def export_record(*, tenant: Tenant, reader: Any, plan: ExportPlan) -> int:
    """Record that `reader` exported `plan` (before it is streamed: what was handed out, even
    if the download is cut short); answers the record's seq."""
    with transaction.atomic():
        return events.audit_exported(
            tenant=tenant,
            reader=reader,
            first_seq=plan.first_seq,
            last_seq=plan.last_seq,
            events=plan.events,
            checkpoint_size=plan.checkpoint.size if plan.checkpoint is not None else None,
        ).seq


def raw_text_record(*, tenant: Tenant, reader: Any, session: str, messages: int) -> int:
    """Record that `reader` read the customer text of `messages` messages of a conversation (only
    ever after `access.may_read_raw_text` allowed it); answers the record's sequence number.  The
    page shows the text only once this is committed."""
    with transaction.atomic():
        return events.audit_raw_text_read(tenant=tenant, reader=reader, session=session, messages=messages).seq
