"""The timeline of one tenant's ledger and the detail of one event, for the console's pages and
its JSON (`/audit/<tenant>/`, `/api/audit/events`).

Paging is keyset by `seq`, never OFFSET: a page is "the `limit` matching events below `before`"
(older) or "above `after`" (newer), newest first.  Every filter is written with exactly the
expression of one of the ledger's indexes (`ledger.models.LedgerEvent.Meta.indexes`), each of
which leads with the chain and ends with `seq`, so that PostgreSQL walks the index backwards
from the bound and stops after `limit` rows, however deep the page: type, entity, actor and
agent.  A time range is turned into a seq range first, through the `created_at` index.

Each listed event is checked on the way: its stored hash against SHA-256 of the hash prefix, its
prev_hash and its canonical bytes, and its prev_hash against the stored hash of the event before
it.  An event that fails either is marked tampered, with its seq, wherever it is shown.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import F, QuerySet, Window
from django.db.models.functions import RowNumber
from django.utils.translation import gettext

from facade.errors import ApplicationError
from ledger.canonical import chain_hash, utc_text
from ledger.catalogue import EventType, catalogue
from ledger.expressions import CanonicalField
from ledger.models import GENESIS_HASH, ActorType, LedgerEvent

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
# How many of the events an event caused are listed beside it; the rest are one link away
# (the timeline filtered on `caused_by`).
CAUSED_SHOWN = 3
# The most an event's own page lists of what it caused.
CAUSED_ON_DETAIL = 50
# The ledger stores at most this many characters in a type, an entity or an actor.
FIELD_CHARS = 64
# Payload keys whose value names another entity of the chain: shown as a link to that entity's
# timeline.  A session is named by its id (`session`), or several by a list (`sessions`).
POINTERS = {"session": "session", "sessions": "session"}
# Entity types whose history audit/lineage rebuilds (linked from an event's page).
LINEAGE_TYPES = frozenset({"knowledge_entry", "contract", "change_proposal"})
SHORT_HASH = 12

# The query parameters the timeline reads (the form, the links and the API).
PARAMS = ("type", "entity_type", "entity_id", "actor", "actor_type", "agent", "from", "to", "caused_by", "reads")


READS_PREFIX = "audit."  # the console's own events (audit/events.py)
READER_ENTITY = "auditor"


@dataclass(frozen=True)
class TimelineFilters:
    event_type: str = ""
    entity_type: str = ""
    entity_id: str = ""
    actor: str = ""
    actor_type: str = ""
    agent: str = ""
    time_from: dt.datetime | None = None
    time_to: dt.datetime | None = None
    caused_by: int | None = None
    # The console's own records of who read what (`audit.*`) are left out unless asked for (or
    # filtered on): otherwise every page an auditor opens tops the timeline with itself.
    reads: bool = False

    @property
    def shows_reads(self) -> bool:
        return self.reads or self.event_type.startswith(READS_PREFIX) or self.entity_type == READER_ENTITY

    def as_params(self) -> dict[str, str]:
        """The filters as query parameters (the links of a page keep them)."""
        values = {
            "type": self.event_type,
            "entity_type": self.entity_type,
            "entity_id": self.entity_id,
            "actor": self.actor,
            "actor_type": self.actor_type,
            "agent": self.agent,
            "from": utc_text(self.time_from) if self.time_from else "",
            "to": utc_text(self.time_to) if self.time_to else "",
            "caused_by": "" if self.caused_by is None else str(self.caused_by),
            "reads": "1" if self.reads else "",
        }
        return {key: value for key, value in values.items() if value}

    @property
    def any(self) -> bool:
        return bool(self.as_params())


def _invalid(code: str, detail: str) -> ApplicationError:
    return ApplicationError(code, detail)


def _text(params: Mapping[str, str], key: str) -> str:
    value = (params.get(key) or "").strip()
    if len(value) > FIELD_CHARS:
        raise _invalid("too_long", gettext("%(name)s holds at most 64 characters.") % {"name": key})
    return value


def _positive(params: Mapping[str, str], key: str) -> int | None:
    raw = (params.get(key) or "").strip()
    if not raw:
        return None
    if not (raw.isascii() and raw.isdigit()) or int(raw) < 1 or len(raw) > 18:
        raise _invalid("invalid_seq", gettext("%(name)s must be a sequence number (1 or more).") % {"name": key})
    return int(raw)


def _moment(params: Mapping[str, str], key: str, *, end_of_day: bool) -> dt.datetime | None:
    """An ISO date or datetime in UTC (a naive one is taken as UTC).  A date alone means the
    start of that day for `from` and its last microsecond for `to`."""
    raw = (params.get(key) or "").strip()
    if not raw:
        return None
    try:
        if len(raw) == 10:
            day = dt.date.fromisoformat(raw)
            moment = dt.datetime.combine(day, dt.time.max if end_of_day else dt.time.min)
        else:
            moment = dt.datetime.fromisoformat(raw)
    except ValueError as exc:
        raise _invalid(
            "invalid_time",
            gettext("%(name)s must be an ISO date or date and time, e.g. 2026-01-05 or 2026-01-05T09:30Z.")
            % {"name": key},
        ) from exc
    if moment.tzinfo is None:
        return moment.replace(tzinfo=dt.timezone.utc)
    return moment.astimezone(dt.timezone.utc)


def parse_filters(params: Mapping[str, str]) -> TimelineFilters:
    """The filters a page or an API call asked for; bad input raises ApplicationError (400)
    with a code saying what was wrong."""
    event_type = _text(params, "type")
    if event_type and event_type not in catalogue:
        raise _invalid(
            "unknown_event_type",
            gettext("%(type)s is not an event type of the catalogue.") % {"type": event_type},
        )
    entity_type, entity_id = _text(params, "entity_type"), _text(params, "entity_id")
    if entity_id and not entity_type:
        raise _invalid("entity_type_required", gettext("Name the entity type with the entity id."))
    actor_type = _text(params, "actor_type")
    if actor_type and actor_type not in ActorType.values:
        raise _invalid(
            "unknown_actor_type",
            gettext("The actor type is one of: %(types)s.") % {"types": ", ".join(ActorType.values)},
        )
    time_from = _moment(params, "from", end_of_day=False)
    time_to = _moment(params, "to", end_of_day=True)
    if time_from and time_to and time_from > time_to:
        raise _invalid("invalid_range", gettext("The time range ends before it starts."))
    return TimelineFilters(
        event_type=event_type,
        entity_type=entity_type,
        entity_id=entity_id,
        actor=_text(params, "actor"),
        actor_type=actor_type,
        agent=_text(params, "agent"),
        time_from=time_from,
        time_to=time_to,
        caused_by=_positive(params, "caused_by"),
        reads=_text(params, "reads") in ("1", "true", "on"),
    )


def parse_limit(raw: str | None) -> int:
    raw = (raw or "").strip()
    if not raw:
        return DEFAULT_LIMIT
    if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= MAX_LIMIT:
        raise _invalid("invalid_limit", gettext("limit must be a whole number from 1 to %(max)s.") % {"max": MAX_LIMIT})
    return int(raw)


def parse_paging(params: Mapping[str, str]) -> tuple[int | None, int | None]:
    before, after = _positive(params, "before"), _positive(params, "after")
    if before is not None and after is not None:
        raise _invalid("invalid_paging", gettext("Page with before or after, not both."))
    return before, after


# --- the query ------------------------------------------------------------------------------


def _seq_at(chain_id: int, moment: dt.datetime, *, first: bool) -> int | None:
    """The seq of the first event stamped at or after `moment` (`first`), or of the last one
    stamped at or before it, found through the (chain, created_at) index.  Events are stamped
    when they are appended, so a time range is the seq range between the two.  (An event stamped
    out of order — `rsi_simulate` backdates a demo day's events — can fall outside that range:
    the ledger orders by seq and refuses no past timestamp.)"""
    stamped = LedgerEvent.objects.filter(chain_id=chain_id).alias(_created_at=CanonicalField("created_at"))
    text = utc_text(moment)
    if first:
        stamped = stamped.filter(_created_at__gte=text).order_by("_created_at", "seq")
    else:
        stamped = stamped.filter(_created_at__lte=text).order_by("-_created_at", "-seq")
    return stamped.values_list("seq", flat=True).first()


def matching(chain_id: int, filters: TimelineFilters) -> QuerySet[LedgerEvent] | None:
    """The chain's events that pass `filters`, unordered; None when the time range holds no
    event at all.  Each filter uses its index's exact expression."""
    events: QuerySet[LedgerEvent] = LedgerEvent.objects.filter(chain_id=chain_id)
    if filters.event_type:
        events = events.alias(_event_type=CanonicalField("event_type")).filter(_event_type=filters.event_type)
    if filters.entity_type:
        events = events.alias(_entity_type=CanonicalField("entity_type")).filter(_entity_type=filters.entity_type)
    if filters.entity_id:
        events = events.alias(_entity_id=CanonicalField("entity_id")).filter(_entity_id=filters.entity_id)
    if filters.actor:
        events = events.alias(_actor_id=CanonicalField("actor_id")).filter(_actor_id=filters.actor)
    if filters.actor_type:
        events = events.alias(_actor_type=CanonicalField("actor_type")).filter(_actor_type=filters.actor_type)
    if filters.agent:
        events = events.alias(_agent=CanonicalField("payload", subkey="agent")).filter(_agent=filters.agent)
    if filters.caused_by is not None:
        events = events.alias(_caused_by=CanonicalField("caused_by", "bigint")).filter(_caused_by=filters.caused_by)
    if not filters.shows_reads:
        events = events.alias(_kind=CanonicalField("event_type")).exclude(_kind__startswith=READS_PREFIX)
    # A time range: the seq range bounds the walk; the stamps themselves are checked too, so that
    # an event stamped out of order (a backdated demo day, see README "rsi_simulate") inside the
    # range is not taken for one of its time.
    if filters.time_from is not None:
        low = _seq_at(chain_id, filters.time_from, first=True)
        if low is None:
            return None
        events = events.alias(_created_from=CanonicalField("created_at")).filter(
            seq__gte=low, _created_from__gte=utc_text(filters.time_from)
        )
    if filters.time_to is not None:
        high = _seq_at(chain_id, filters.time_to, first=False)
        if high is None:
            return None
        events = events.alias(_created_to=CanonicalField("created_at")).filter(
            seq__lte=high, _created_to__lte=utc_text(filters.time_to)
        )
    return events


# --- rows -----------------------------------------------------------------------------------


@dataclass
class PayloadItem:
    key: str
    text: str
    # (entity_type, entity_id) of the entities this value names, for links.
    pointers: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class TimelineRow:
    seq: int
    document: dict[str, Any]
    canonical: str
    prev_hash: bytes
    hash: bytes
    tampered: bool
    tamper_reason: str | None
    caused: list[int] = field(default_factory=list)
    caused_more: bool = False

    @property
    def event_type(self) -> str:
        return str(self.document.get("event_type", ""))

    @property
    def catalogued(self) -> EventType | None:
        return catalogue.get(self.event_type)

    @property
    def label(self) -> str:
        known = self.catalogued
        return known.description if known is not None else ""

    @property
    def app(self) -> str:
        known = self.catalogued
        return known.app if known is not None else ""

    @property
    def entity_type(self) -> str:
        return str(self.document.get("entity_type", ""))

    @property
    def entity_id(self) -> str:
        return str(self.document.get("entity_id", ""))

    @property
    def entity_version(self) -> int | None:
        return self.document.get("entity_version")

    @property
    def actor_type(self) -> str:
        return str(self.document.get("actor_type", ""))

    @property
    def actor_id(self) -> str:
        return str(self.document.get("actor_id", ""))

    @property
    def caused_by(self) -> int | None:
        value = self.document.get("caused_by")
        return value if isinstance(value, int) else None

    @property
    def created_at(self) -> str:
        return str(self.document.get("created_at", ""))

    @property
    def payload(self) -> dict[str, Any]:
        value = self.document.get("payload")
        return value if isinstance(value, dict) else {}

    @property
    def hash_hex(self) -> str:
        return self.hash.hex()

    @property
    def prev_hash_hex(self) -> str:
        return self.prev_hash.hex()

    @property
    def hash_short(self) -> str:
        return self.hash_hex[:SHORT_HASH]

    @property
    def prev_hash_short(self) -> str:
        return self.prev_hash_hex[:SHORT_HASH]

    @property
    def lineage(self) -> bool:
        return self.entity_type in LINEAGE_TYPES

    @property
    def pretty(self) -> str:
        """The canonical text, pretty-printed (what was hashed is `canonical`, byte for byte)."""
        try:
            return json.dumps(json.loads(self.canonical), indent=2, ensure_ascii=False)
        except ValueError:
            return self.canonical

    def payload_items(self) -> list[PayloadItem]:
        """The payload as key: value, in the order of the catalogue's field list (keys the
        catalogue does not list, from an older shape of the type, follow in stored order)."""
        payload = self.payload
        known = self.catalogued
        keys = [key for key, _kind in known.fields()] if known is not None else []
        order = [key for key in keys if key in payload] + [key for key in payload if key not in keys]
        items = []
        for key in order:
            value = payload[key]
            items.append(PayloadItem(key, value_text(value), _pointers(key, value)))
        return items

    def as_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "event_type": self.event_type,
            "label": self.label,
            "entity_type": self.entity_type,
            "entity_id": self.entity_id,
            "entity_version": self.entity_version,
            "actor_type": self.actor_type,
            "actor_id": self.actor_id,
            "created_at": self.created_at,
            "prev_hash": self.prev_hash_hex,
            "hash": self.hash_hex,
            "payload": self.payload,
            "caused_by": self.caused_by,
            "caused": self.caused,
            "caused_more": self.caused_more,
            "tampered": self.tampered,
            "tamper_reason": self.tamper_reason,
        }


def value_text(value: Any) -> str:
    """One payload value as text: strings as they are, everything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _pointers(key: str, value: Any) -> list[tuple[str, str]]:
    entity_type = POINTERS.get(key)
    if entity_type is None:
        return []
    values = value if isinstance(value, list) else [value]
    return [(entity_type, item) for item in values if isinstance(item, str) and 0 < len(item) <= FIELD_CHARS]


def _document(canonical: str) -> dict[str, Any]:
    try:
        document = json.loads(canonical)
    except ValueError:
        return {}
    return document if isinstance(document, dict) else {}


def rows_for(chain_id: int, fetched: Iterable[tuple[int, str, Any, Any]]) -> list[TimelineRow]:
    """Rows for (seq, canonical, prev_hash, hash) tuples: each checked against its own hash and
    against the event before it, and given the first events it caused."""
    fetched = [(seq, canonical, bytes(prev), bytes(digest)) for seq, canonical, prev, digest in fetched]
    seqs = [seq for seq, *_ in fetched]
    previous = dict(
        LedgerEvent.objects.filter(chain_id=chain_id, seq__in=[seq - 1 for seq in seqs if seq > 1]).values_list(
            "seq", "hash"
        )
    )
    rows = []
    for seq, canonical, prev, digest in fetched:
        # In the order ledger_verify checks them, so both name the same reason.
        reason = None
        before = GENESIS_HASH if seq == 1 else previous.get(seq - 1)
        if before is None or bytes(before) != prev:
            reason = "broken_link"
        elif chain_hash(prev, canonical.encode("utf-8")) != digest:
            reason = "hash_mismatch"
        rows.append(TimelineRow(seq, _document(canonical), canonical, prev, digest, reason is not None, reason))
    caused = caused_by_many(chain_id, seqs, CAUSED_SHOWN + 1)
    for row in rows:
        found = caused.get(row.seq, [])
        row.caused, row.caused_more = found[:CAUSED_SHOWN], len(found) > CAUSED_SHOWN
    return rows


def caused_by_many(chain_id: int, seqs: list[int], each: int) -> dict[int, list[int]]:
    """The first `each` events caused by each of `seqs` (through the caused_by index)."""
    if not seqs:
        return {}
    cause = CanonicalField("caused_by", "bigint")
    found = (
        LedgerEvent.objects.filter(chain_id=chain_id)
        .alias(_caused_by=CanonicalField("caused_by", "bigint"))
        .filter(_caused_by__in=seqs)
        .annotate(
            _cause=CanonicalField("caused_by", "bigint"),
            _rank=Window(RowNumber(), partition_by=[cause], order_by=F("seq").asc()),
        )
        .filter(_rank__lte=each)
        .order_by("_cause", "seq")
        .values_list("_cause", "seq")
    )
    by_cause: dict[int, list[int]] = {}
    for cause_seq, seq in found:
        by_cause.setdefault(int(cause_seq), []).append(int(seq))
    return by_cause


_COLUMNS = ("seq", "canonical", "prev_hash", "hash")


@dataclass
class TimelinePage:
    rows: list[TimelineRow]
    next_before: int | None  # older events exist: the link's `before`
    prev_after: int | None  # newer events exist: the link's `after`
    filters: TimelineFilters
    limit: int

    def as_json(self) -> dict[str, Any]:
        return {
            "events": [row.as_json() for row in self.rows],
            "next_before": self.next_before,
            "prev_after": self.prev_after,
        }


def _next_seq(events: QuerySet[LedgerEvent], order: str) -> int | None:
    """The nearest event's seq in that direction.  Ordered, so PostgreSQL walks the chain's seq
    index from the page outwards; an unordered EXISTS may be planned as a scan of the table,
    which in a shared table reads other chains' rows first (it grew with the table)."""
    seq: int | None = events.order_by(order).values_list("seq", flat=True).first()
    return seq


def timeline_page(
    *,
    chain_id: int,
    filters: TimelineFilters,
    before: int | None = None,
    after: int | None = None,
    limit: int = DEFAULT_LIMIT,
) -> TimelinePage:
    """One page of the chain's events passing `filters`, newest first: the newest `limit` ones,
    or those just below `before` (older), or just above `after` (newer)."""
    if before is not None and after is not None:
        raise _invalid("invalid_paging", gettext("Page with before or after, not both."))
    limit = max(1, min(MAX_LIMIT, limit))
    events = matching(chain_id, filters)
    if events is None:
        return TimelinePage([], None, None, filters, limit)
    if after is not None:
        fetched = list(events.filter(seq__gt=after).order_by("seq").values_list(*_COLUMNS)[: limit + 1])
        more_newer = len(fetched) > limit
        fetched = fetched[:limit][::-1]
        more_older = bool(fetched) and _next_seq(events.filter(seq__lt=fetched[-1][0]), "-seq") is not None
    else:
        older = events if before is None else events.filter(seq__lt=before)
        fetched = list(older.order_by("-seq").values_list(*_COLUMNS)[: limit + 1])
        more_older = len(fetched) > limit
        fetched = fetched[:limit]
        more_newer = bool(fetched) and _next_seq(events.filter(seq__gt=fetched[0][0]), "seq") is not None
    rows = rows_for(chain_id, fetched)
    return TimelinePage(
        rows,
        next_before=rows[-1].seq if rows and more_older else None,
        prev_after=rows[0].seq if rows and more_newer else None,
        filters=filters,
        limit=limit,
    )


def event_detail(*, chain_id: int, seq: int) -> tuple[TimelineRow, TimelineRow | None, list[TimelineRow], bool] | None:
    """One event, the event that caused it, the first events it caused (and whether there are
    more); None when the chain holds no such seq."""
    fetched = list(LedgerEvent.objects.filter(chain_id=chain_id, seq=seq).values_list(*_COLUMNS))
    if not fetched:
        return None
    (row,) = rows_for(chain_id, fetched)
    cause = None
    if row.caused_by is not None:
        found = rows_for(
            chain_id, LedgerEvent.objects.filter(chain_id=chain_id, seq=row.caused_by).values_list(*_COLUMNS)
        )
        cause = found[0] if found else None
    caused_seqs = caused_by_many(chain_id, [seq], CAUSED_ON_DETAIL + 1).get(seq, [])
    caused = rows_for(
        chain_id,
        LedgerEvent.objects.filter(chain_id=chain_id, seq__in=caused_seqs[:CAUSED_ON_DETAIL])
        .order_by("seq")
        .values_list(*_COLUMNS),
    )
    return row, cause, caused, len(caused_seqs) > CAUSED_ON_DETAIL
