"""The console's writes: the records of who read what (`audit.events`).  Nothing else in the
console writes; reading a ledger never changes it except by appending these records."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from facade.tenancy.models import Tenant

from . import events


def access_record(*, tenant: Tenant, reader: Any, view: str, params: dict[str, Any]) -> int:
    """Record that `reader` opened `view` of `tenant`'s ledger with these filters; answers the
    record's sequence number."""
    with transaction.atomic():
        return events.audit_viewed(tenant=tenant, reader=reader, view=view, params=params).seq


def raw_text_record(*, tenant: Tenant, reader: Any, session: str, messages: int) -> int:
    """Record that `reader` read the customer text of `messages` messages of a conversation (only
    ever after `access.may_read_raw_text` allowed it); answers the record's sequence number.  The
    page shows the text only once this is committed."""
    with transaction.atomic():
        return events.audit_raw_text_read(tenant=tenant, reader=reader, session=session, messages=messages).seq
