"""Whether a tenant's chain holds, as the console's verification page shows it (reads only).

Walking a chain hashes every event: on a chain of a million events that takes seconds, so the
page does not verify on every view.  It shows the last verification a reader ran from the
console (the newest `audit.verified` event, found through the event-type index) and the newest
signed checkpoint — which the nightly task or any run signs only over a chain that verified, so
it says "sound up to this size at this time" — and verifies only when a reader presses
"Verify now" (`audit.services.verification_run`).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext_lazy as _

from facade.tenancy.models import Tenant
from ledger.keys import ledger_keys
from ledger.models import LedgerEvent
from ledger.schemas import Checkpoint
from ledger.services import LedgerError, checkpoint_signature_ok, load_checkpoints

from .events import AUDIT_VERIFIED

# What each of the ledger's verification reasons means, for a reader (ledger.selectors).
REASONS: dict[str, Any] = {
    "hash_mismatch": _("the event's bytes do not hash to its stored hash (changed)"),
    "broken_link": _("the event does not link to the hash of the one before it"),
    "missing_seq": _("an event is missing (a gap in the sequence)"),
    "duplicate_seq": _("an event appears twice"),
    "bad_tag": _("the event does not carry this ledger's keyed tag (written or rewritten without the key)"),
    "truncated": _("the chain is shorter than a signed checkpoint (events were cut off)"),
    "rewritten": _("the chain differs from a signed checkpoint at this point"),
    "checkpoint_signature_invalid": _("a held checkpoint is not validly signed by this ledger's key"),
    "checkpoint_file_invalid": _("the checkpoint file holds a line that is no checkpoint"),
    "checkpoint_refused": _("the chain verified but no checkpoint could be signed"),
}


def reason_text(reason: str | None) -> Any:
    return REASONS.get(reason or "", reason or "")


@dataclass(frozen=True)
class LastRun:
    ok: bool
    checked: int
    first_bad_seq: int | None
    reason: str | None
    reason_text: Any
    at: Any  # datetime
    seq: int  # the audit.verified event's own seq
    reader_id: str


@dataclass(frozen=True)
class CheckpointStatus:
    checkpoint: Checkpoint | None
    signature_ok: bool
    held: int  # how many checkpoints the file holds
    error: str | None  # the file could not be read


def last_run(tenant: Tenant) -> LastRun | None:
    event = LedgerEvent.objects.filter(chain_id=tenant.pk).of_type(AUDIT_VERIFIED.name).order_by("-seq").first()
    if event is None:
        return None
    payload = event.payload
    return LastRun(
        ok=bool(payload.get("ok")),
        checked=int(payload.get("checked") or 0),
        first_bad_seq=payload.get("first_bad_seq"),
        reason=payload.get("reason"),
        reason_text=reason_text(payload.get("reason")),
        at=event.created_at,
        seq=event.seq,
        reader_id=str(event.entity_id),
    )


def latest_checkpoint(tenant: Tenant) -> CheckpointStatus:
    """The newest checkpoint held for the tenant's chain and whether it checks against this
    ledger's public key (a line nobody with the key signed must not read as sound)."""
    try:
        held = load_checkpoints(tenant.pk)
    except LedgerError as exc:
        return CheckpointStatus(None, False, 0, str(exc))
    if not held:
        return CheckpointStatus(None, False, 0, None)
    newest = max(held, key=lambda c: (c.size, c.issued_at))
    ok = newest.chain == tenant.pk and checkpoint_signature_ok(newest, ledger_keys().public_raw)
    return CheckpointStatus(newest, ok, len(held), None)


def public_key() -> dict[str, str]:
    """This ledger's checkpoint key as a reader compares it with the copy they got out of band."""
    keys = ledger_keys()
    return {"base64": base64.b64encode(keys.public_raw).decode(), "key_id": keys.key_id}
