"""The auditor console's ledger events: every view, export, verification and raw-text read is
itself recorded in the chain of the tenant it read, with who read it and what they asked for
(filters and pointers; never customer text, never a secret).

The entity of these events is the reader (`auditor`, the user's id), so one reader's accesses
are found with the entity index like any entity's history.
"""

from __future__ import annotations

from typing import Any

from facade.tenancy.models import Tenant
from facade.tenancy.schemas import Actor
from ledger.catalogue import EventPayload, EventType, register
from ledger.schemas import AppendedEvent
from ledger.services import ledger_append

APP = "audit"
# A query parameter recorded with a view is cut to this many characters, and at most this many
# parameters are kept: the record says what was asked, it is not a second copy of the request.
PARAM_CHARS = 64
PARAMS_MAX = 12


class AuditViewed(EventPayload):
    view: str  # which console page or API ("timeline", "lineage", "replay", …)
    params: dict[str, str]  # the filters and pointers it was asked for


class AuditExported(EventPayload):
    first_seq: int | None
    last_seq: int | None
    events: int
    checkpoint_size: int | None


class AuditVerified(EventPayload):
    ok: bool
    checked: int
    first_bad_seq: int | None
    reason: str | None


class AuditRawTextRead(EventPayload):
    session: str
    messages: int


AUDIT_VIEWED = register(
    "audit.viewed",
    app=APP,
    entity_type="auditor",
    payload=AuditViewed,
    description="A reader opened an auditor console page or API over this tenant's ledger (what they asked for).",
)
AUDIT_EXPORTED = register(
    "audit.exported",
    app=APP,
    entity_type="auditor",
    payload=AuditExported,
    description="A reader exported a range of this tenant's ledger as JSON Lines with its covering checkpoint.",
)
AUDIT_VERIFIED = register(
    "audit.verified",
    app=APP,
    entity_type="auditor",
    payload=AuditVerified,
    description="A reader verified this tenant's chain from the console (the result).",
)
AUDIT_RAW_TEXT_READ = register(
    "audit.raw_text_read",
    app=APP,
    entity_type="auditor",
    payload=AuditRawTextRead,
    description="A reader read a conversation's customer text, which the tenant allows auditors to read.",
)


def _append(event_type: EventType, tenant: Tenant, reader: Any, payload: EventPayload) -> AppendedEvent:
    actor = Actor.human(reader.pk)
    return ledger_append(
        chain_id=tenant.pk,
        event_type=event_type.name,
        entity_type=event_type.entity_type,
        entity_id=str(reader.pk),
        actor_type=actor.type,
        actor_id=actor.id,
        payload=payload.model_dump(),
    )


def recorded_params(params: dict[str, Any]) -> dict[str, str]:
    kept = sorted((str(k)[:PARAM_CHARS], str(v)[:PARAM_CHARS]) for k, v in params.items() if v not in (None, ""))
    return dict(kept[:PARAMS_MAX])


def audit_viewed(*, tenant: Tenant, reader: Any, view: str, params: dict[str, Any]) -> AppendedEvent:
    return _append(AUDIT_VIEWED, tenant, reader, AuditViewed(view=view, params=recorded_params(params)))


def audit_exported(
    *,
    tenant: Tenant,
    reader: Any,
    first_seq: int | None,
    last_seq: int | None,
    events: int,
    checkpoint_size: int | None,
) -> AppendedEvent:
    payload = AuditExported(first_seq=first_seq, last_seq=last_seq, events=events, checkpoint_size=checkpoint_size)
    return _append(AUDIT_EXPORTED, tenant, reader, payload)


def audit_verified(
    *, tenant: Tenant, reader: Any, ok: bool, checked: int, first_bad_seq: int | None, reason: str | None
) -> AppendedEvent:
    payload = AuditVerified(ok=ok, checked=checked, first_bad_seq=first_bad_seq, reason=reason)
    return _append(AUDIT_VERIFIED, tenant, reader, payload)


def audit_raw_text_read(*, tenant: Tenant, reader: Any, session: str, messages: int) -> AppendedEvent:
    return _append(AUDIT_RAW_TEXT_READ, tenant, reader, AuditRawTextRead(session=session, messages=messages))
