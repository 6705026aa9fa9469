"""A verifiable export of a range of a tenant's ledger, as JSON Lines (format in README,
"Auditor console").

Line 1 is a header: the range asked for (UTC), the seq range it maps to and the **covering
checkpoint** — the earliest signed checkpoint whose size reaches the range's last event.  Then one
line per event: `seq`, `prev_hash`, `hash` (hex) and `canonical`, the exact text that was hashed
(a JSON string: the ledger stores valid UTF-8 only, so the string's UTF-8 encoding gives back the
hashed bytes exactly, and a reader can read the events with any JSON tool).  The events after the
range up to the checkpoint's size follow with `in_range: false`, so that a verifier can hash its
way from the range to the signed head.  The keyed tag (`mac`) is left out: it can only be checked
with the ledger's secret key.

The header's `range` is the export's **signed range statement** (issue 28): the chain's id and
label, the range asked for (`from`, `to`; "" for an open end), its `first_seq` and `last_seq` (0
and 0 for an empty range), `first_prev_hash` (the link the first event must carry: the hash of the
event before it, or 32 zero bytes from seq 1), and `through` / `head_hash` (the covering
checkpoint's size and head), signed by the ledger's key under its own prefix.  The other header
fields are a convenience for readers; the verifier trusts only the statement and the checkpoint,
so an export cut at either end, or relabelled, no longer verifies.  No statement is signed for a
range that no signed checkpoint covers (the chain did not verify): such an export never verifies.

The lines are produced a window of seqs at a time, so memory stays flat however long the range:
keyset windows over the unique (chain, seq) index rather than one server-side cursor, which
Django declares WITH HOLD outside a transaction (the server would then materialise the whole
result before sending the first row) and which would hold a connection state between requests.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import Any

from django.db import connection
from django.utils.translation import gettext

from facade.errors import ApplicationError
from facade.tenancy.models import Tenant
from ledger.audit import chain_verify_and_checkpoint
from ledger.canonical import utc_text
from ledger.chains import NamedChain
from ledger.expressions import CanonicalField
from ledger.models import LedgerEvent
from ledger.schemas import Checkpoint
from ledger.services import LedgerError, range_statement_sign, signed_checkpoints

KIND = "facade-ledger-export"
VERSION = 1
# Events read per query (a window of seqs; duplicated seqs, which only tampering makes, come along).
WINDOW = 5000
# The created_at index orders by time, the chain by seq: appenders take their timestamp before
# they queue for the chain's lock, so neighbours may be out of time order by microseconds.  The
# range's ends look at this many events around each bound and take the extreme seq.
EDGE_PROBE = 32


@dataclass
class ExportPlan:
    tenant: Tenant
    start: str | None  # canonical UTC text of `from` (inclusive), None = the chain's start
    end: str | None  # canonical UTC text of `to` (exclusive), None = now
    first_seq: int | None
    last_seq: int | None
    checkpoint: Checkpoint | None
    chain_ok: bool | None  # None: not verified for this export (a held checkpoint covered it)
    verification: dict[str, Any] | None = field(default=None)
    statement: dict[str, str | int] | None = field(default=None)

    @property
    def events(self) -> int:
        if self.first_seq is None or self.last_seq is None:
            return 0
        return self.last_seq - self.first_seq + 1

    @property
    def through(self) -> int | None:
        """The last seq exported: the checkpoint's size when one covers the range."""
        if self.last_seq is None:
            return None
        return self.checkpoint.size if self.checkpoint is not None else self.last_seq

    def header(self) -> dict[str, Any]:
        return {
            "kind": KIND,
            "version": VERSION,
            "chain": self.tenant.pk,
            "label": self.tenant.slug,
            "from": self.start,
            "to": self.end,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "events": self.events,
            "checkpoint": None if self.checkpoint is None else self.checkpoint.model_dump(),
            "chain_ok": self.chain_ok,
            "verification": self.verification,
            "range": self.statement,
            "exported_at": utc_text(dt.datetime.now(dt.timezone.utc)),
        }


def parse_bound(text: str | None, *, name: str, end: bool) -> str | None:
    """`from`/`to` as canonical UTC text.  A date (YYYY-MM-DD) is its midnight, except a `to`
    date, which includes that whole day; a datetime without an offset is UTC."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        if len(text) == 10:
            day = dt.date.fromisoformat(text)
            moment = dt.datetime.combine(day, dt.time(), dt.timezone.utc) + dt.timedelta(days=1 if end else 0)
        else:
            moment = dt.datetime.fromisoformat(text)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=dt.timezone.utc)
    except (ValueError, OverflowError) as exc:
        raise ApplicationError(
            "invalid_range",
            gettext("%(name)s must be a date (YYYY-MM-DD) or a date and time (YYYY-MM-DDTHH:MM[:SS], UTC).")
            % {"name": name},
        ) from exc
    return utc_text(moment)


def _created_at() -> CanonicalField:
    # Exactly the expression of the index ledger_event_created_at (chain_id, created_at).
    return CanonicalField("created_at")


def seq_range(chain_id: int, start: str | None, end: str | None) -> tuple[int | None, int | None]:
    """The contiguous seq range of the events from `start` (inclusive) to `end` (exclusive),
    found through the created_at index (ISO text sorts chronologically)."""
    events = LedgerEvent.objects.filter(chain_id=chain_id)
    if start is None:
        first = events.order_by("seq").values_list("seq", flat=True).first()
    else:
        probe = (
            events.alias(at=_created_at()).filter(at__gte=start).order_by(_created_at()).values_list("seq", flat=True)
        )
        first = min(probe[:EDGE_PROBE], default=None)
    if end is None:
        last = events.order_by("-seq").values_list("seq", flat=True).first()
    else:
        probe = (
            events.alias(at=_created_at())
            .filter(at__lt=end)
            .order_by(_created_at().desc())
            .values_list("seq", flat=True)
        )
        last = max(probe[:EDGE_PROBE], default=None)
    if first is None or last is None or first > last:
        return None, None
    return int(first), int(last)


def export_plan(*, tenant: Tenant, start: str | None, end: str | None) -> ExportPlan:
    """What an export of [start, end) holds, with its covering checkpoint.  When no held
    checkpoint covers the range, the chain is verified and, if sound, checkpointed now; a chain
    that is not sound is exported anyway, with no checkpoint and the verification's finding."""
    if start is not None and end is not None and start >= end:
        raise ApplicationError("invalid_range", gettext("from must be earlier than to."))
    first, last = seq_range(tenant.pk, start, end)
    plan = ExportPlan(tenant, start, end, first, last, None, None)
    if last is None:
        plan.statement = _statement(plan, first_prev_hash="", head_hash="")
        return plan
    try:
        held = signed_checkpoints(tenant.pk)
    except LedgerError:  # a forged or unreadable line: the verification below reports it
        held = []
    covering = [c for c in held if c.size >= last]
    if covering:
        plan.checkpoint = min(covering, key=lambda c: c.size)
        return _signed(plan)
    result, checkpoint = chain_verify_and_checkpoint(chain=NamedChain(id=tenant.pk, label=tenant.slug))
    plan.chain_ok = result.ok and checkpoint is not None
    plan.checkpoint = checkpoint if checkpoint is not None and checkpoint.size >= last else None
    plan.verification = {
        "ok": result.ok,
        "checked": result.checked,
        "first_bad_seq": result.first_bad_seq,
        "reason": result.reason,
    }
    return _signed(plan)


def _statement(plan: ExportPlan, *, first_prev_hash: str, head_hash: str) -> dict[str, str | int]:
    return range_statement_sign(
        {
            "chain": plan.tenant.pk,
            "label": plan.tenant.slug,
            "from": plan.start or "",
            "to": plan.end or "",
            "first_seq": plan.first_seq or 0,
            "last_seq": plan.last_seq or 0,
            "first_prev_hash": first_prev_hash,
            "through": plan.through or 0,
            "head_hash": head_hash,
        }
    )


def _signed(plan: ExportPlan) -> ExportPlan:
    """Sign the range statement of a plan that a signed checkpoint covers (no statement for one
    that none covers: that export does not verify).  The first event's link is the one stored
    with it — the hash chain from it to the checkpoint's signed head fixes it anyway; stating it
    lets the verifier check the range's first event against a signed value."""
    if plan.checkpoint is None or plan.first_seq is None:
        return plan
    stored = (
        LedgerEvent.objects.filter(chain_id=plan.tenant.pk, seq=plan.first_seq)
        .order_by("id")
        .values_list("prev_hash", flat=True)
        .first()
    )
    if stored is None:
        return plan
    plan.statement = _statement(plan, first_prev_hash=bytes(stored).hex(), head_hash=plan.checkpoint.head_hash)
    return plan


def _line(document: dict[str, Any]) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


# One window's rows, in seq order (a duplicated seq, which only tampering makes, comes along and
# is reported by the verifier).  Plain SQL through the (chain, seq) index: the export is as fast
# as the database reads the rows only if nothing per row is done that need not be.
_WINDOW_SQL = (
    "SELECT seq, prev_hash, hash, canonical FROM ledger_event "
    "WHERE chain_id = %s AND seq > %s AND seq <= %s ORDER BY seq, id"
)


def _event_line(seq: int, prev: bytes, digest: bytes, canonical: str, in_range: bool) -> str:
    """The line `_line` makes of the event's dict, written out directly: `encode_basestring` is
    the function `json.dumps(..., ensure_ascii=False)` quotes strings with (C-accelerated), so
    the bytes are the same (tests/test_audit_export.py holds the two together)."""
    flag = "true" if in_range else "false"
    return (
        f'{{"seq":{seq},"prev_hash":"{prev.hex()}","hash":"{digest.hex()}",'
        f'"canonical":{encode_basestring(canonical)},"in_range":{flag}}}\n'
    )


def export_lines(plan: ExportPlan) -> Iterator[bytes]:
    """The export, a window of events per chunk (never the whole range in memory)."""
    yield _line(plan.header())
    if plan.first_seq is None or plan.last_seq is None or plan.through is None:
        return
    chain, after, through, last = plan.tenant.pk, plan.first_seq - 1, plan.through, plan.last_seq
    while after < through:
        upto = min(after + WINDOW, through)
        with connection.cursor() as cursor:
            cursor.execute(_WINDOW_SQL, [chain, after, upto])
            rows = cursor.fetchall()
        yield "".join(_event_line(seq, prev, digest, text, seq <= last) for seq, prev, digest, text in rows).encode()
        after = upto
