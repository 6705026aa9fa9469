"""Point-in-time replay of an agent (issue 14, the auditor console): the agent as it was at a
moment — its published contract version and its approved knowledge — and, optionally, the same
state with one change left out.

Which versions were in effect is decided from the ledger alone, through its indexes, never by
folding the chain from event 1:

* the cut: the last event of the tenant's chain stamped at or before the moment (the
  `(chain, created_at)` index, read backwards, one row);
* the contract: the agent's last `contract.published`/`contract.rolled_back` event up to the cut
  (the `(chain, entity_type, entity_id, seq)` index, read backwards, one row);
* the knowledge: for every version of the agent's entries, the last `knowledge.version_*` event
  about it up to the cut (the `(chain, payload.agent, seq)` index, then one row per version by a
  window); an entry's version in effect is its highest-numbered version whose last status was
  `approved` — what `KnowledgeEntry.current_version` points at while it is live.

The content is read from the version tables (`AgentContract`, `EntryVersion`, by their unique
`(agent, version)` and `(entry, number)` indexes) and checked against the hash the ledger
recorded for it; a row that no longer matches is flagged, never silently shown as the truth.

Leaving a change out (`without=<event seq>`):

* a contract change (`contract.published`, `contract.rolled_back`, or the `proposal.published`
  of a change): every place it changed — a whole field, except boundary wording per language and
  wording per language and situation, the places an owner's change writes — goes back to the
  value before it, unless a later version up to the cut changed that place again;
* a knowledge change: the events of that change are left out and the entry's version in effect
  is decided again from the rest.  A change is the event named and the events that belong with
  it: a version's creation takes the version's whole history with it (it never existed); a
  restore is its `rolled_back` events and its `restored` event (and the restored version's
  history); a quarantine, release or expiry is every event of that batch about the same entry
  (one batch is one run of consecutive events of the chain); a `proposal.applied` is the
  knowledge events its decision wrote about the entry (after its `proposal.decided`).
"""

from __future__ import annotations

import copy
import datetime as dt
import re
import zoneinfo
from collections.abc import Iterable
from typing import Any, Literal

from django.db.models import F, Max, Q, Window
from django.db.models.functions import RowNumber
from django.utils import timezone
from django.utils.translation import gettext
from pydantic import BaseModel

from approvals.contract_events import CONTRACT_PUBLISHED, CONTRACT_ROLLED_BACK
from approvals.contract_models import AgentContract
from approvals.contract_rules import FIELDS, content_hash
from approvals.events import PROPOSAL_APPLIED, PROPOSAL_DECIDED, PROPOSAL_PUBLISHED
from facade.errors import ApplicationError
from facade.tenancy.models import AgentProfile, Tenant
from knowledge.events import (
    VERSION_APPROVED,
    VERSION_CREATED,
    VERSION_EXPIRED,
    VERSION_QUARANTINED,
    VERSION_REJECTED,
    VERSION_RELEASED,
    VERSION_RESTORED,
    VERSION_ROLLED_BACK,
    content_sha256,
)
from knowledge.models import EntryVersion, Status
from ledger.canonical import utc_text
from ledger.expressions import CanonicalField
from ledger.models import LedgerEvent

CONTRACT_EVENTS = (CONTRACT_PUBLISHED.name, CONTRACT_ROLLED_BACK.name)
VERSION_EVENTS = tuple(
    t.name
    for t in (
        VERSION_CREATED,
        VERSION_APPROVED,
        VERSION_REJECTED,
        VERSION_ROLLED_BACK,
        VERSION_RESTORED,
        VERSION_QUARANTINED,
        VERSION_RELEASED,
        VERSION_EXPIRED,
    )
)
RESTORE_EVENTS = (VERSION_ROLLED_BACK.name, VERSION_RESTORED.name)
BATCH_EVENTS = (VERSION_QUARANTINED.name, VERSION_RELEASED.name, VERSION_EXPIRED.name)
# How far around a left-out event its batch is looked for (a batch larger than this is cut).
BATCH_REACH = 500
# The places an owner's change writes inside a field (approvals/targets.py): boundary wording per
# language, wording per language and situation; every other field is replaced whole.
PLACE_DEPTH = {"boundary_wording": 1, "wording": 2}
CHOICES_MAX = 200

Path = tuple[str, ...]  # a place in a contract: a field, then keys inside it
EntryNumber = tuple[str, str]  # a knowledge version: (entry id, version number), as the ledger writes them


class ReplayError(ApplicationError):
    """A replay that cannot be answered as asked (400 unless said otherwise)."""


# --- what a replay answers ---------------------------------------------------------------------


class ContractAt(BaseModel):
    version: int | None  # None: no published version — the live one with a change left out
    event_seq: int  # the event that made it live
    published_at: dt.datetime
    rolled_back_to: int | None
    content: dict[str, Any]
    hash: str  # as the ledger recorded it (for a version left out of: of the content shown)
    hash_ok: bool  # the version row still holds what the ledger recorded


class KnowledgeAt(BaseModel):
    entry: int
    kind: str  # fact, faq, policy, preference, wording, taboo (the last three are lessons)
    version: int
    title: str
    content_sha256: str  # as the ledger recorded it
    hash_ok: bool
    event_seq: int  # the last event about this version up to the cut
    event_type: str


class AgentState(BaseModel):
    agent: str
    at: dt.datetime
    seq: int  # the last event of the tenant's chain at or before `at` (the cut)
    contract: ContractAt
    knowledge: list[KnowledgeAt]

    def mismatches(self) -> list[str]:
        """What no longer matches the hash the ledger recorded."""
        found = [] if self.contract.hash_ok else [f"contract v{self.contract.version}"]
        return found + [f"entry {k.entry} v{k.version}" for k in self.knowledge if not k.hash_ok]


class LeftOut(BaseModel):
    seq: int  # the event named
    event_type: str
    kind: Literal["contract", "knowledge"]
    contract_version: int | None = None
    entry: int | None = None
    events: list[int]  # the ledger events left out


class ContractDiff(BaseModel):
    path: list[str]
    live: Any
    without: Any


class KnowledgeDiff(BaseModel):
    entry: int
    kind: str
    live: KnowledgeAt | None
    without: KnowledgeAt | None


class ReplayDiff(BaseModel):
    contract: list[ContractDiff]
    knowledge: list[KnowledgeDiff]


class AgentReplay(BaseModel):
    live: AgentState
    left_out: LeftOut | None = None
    without: AgentState | None = None
    diff: ReplayDiff | None = None


# --- input -------------------------------------------------------------------------------------


_SPACED_OFFSET = re.compile(r" (\d\d:?\d\d)$")


def at_parse(value: str | dt.datetime, tenant: Tenant) -> dt.datetime:
    """The moment asked for, in UTC.  Text is ISO 8601; a time without an offset is read in the
    tenant's time zone.  An unreadable time and one in the future are refused."""
    if isinstance(value, dt.datetime):
        moment = value
    else:
        # A `+01:00` offset sent unencoded in a query string arrives as ` 01:00`.
        text = _SPACED_OFFSET.sub(r"+\1", str(value).strip())
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError:
            raise ReplayError(
                "invalid_at", gettext("The time must be an ISO 8601 date and time, e.g. 2026-03-01T14:30.")
            ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tenant_zone(tenant))
    moment = moment.astimezone(dt.timezone.utc)
    if moment > timezone.now():
        raise ReplayError("at_in_future", gettext("That time is in the future: the ledger cannot tell it yet."))
    return moment


def tenant_zone(tenant: Tenant) -> dt.tzinfo:
    try:
        return zoneinfo.ZoneInfo(tenant.time_zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return dt.timezone.utc


def without_parse(value: str | int | None) -> int | None:
    if value is None or value == "":
        return None
    try:
        seq = int(value)
    except (TypeError, ValueError):
        seq = 0
    if seq < 1:
        raise ReplayError("invalid_without", gettext("“without” must be the sequence number of a ledger event."))
    return seq


# --- the ledger, through its indexes -----------------------------------------------------------


def seq_at(chain_id: int, moment: dt.datetime) -> int | None:
    """The cut: the last event of the chain stamped at or before `moment` (None before the
    first).  Two reads of the (chain, created_at) index: the latest stamp at or before the moment
    (read backwards, one entry), then the last event with that stamp (several events of one
    transaction may share it).  The stamps are fixed-width UTC text, so text order is time order."""
    events = LedgerEvent.objects.filter(chain_id=chain_id)
    stamp = (
        events.annotate(_created=CanonicalField("created_at"))
        .filter(_created__lte=utc_text(moment))
        .order_by(F("_created").desc())
        .values_list("_created", flat=True)
        .first()
    )
    if stamp is None:
        return None
    found = events.alias(_created=CanonicalField("created_at")).filter(_created=stamp).aggregate(last=Max("seq"))
    return int(found["last"])


def _contract_events(chain_id: int, slug: str) -> Any:
    return (
        LedgerEvent.objects.for_entity(chain_id, "contract", slug)
        .alias(_type=CanonicalField("event_type"))
        .filter(_type__in=CONTRACT_EVENTS)
    )


def _contract_event_at(chain_id: int, slug: str, cut: int) -> LedgerEvent | None:
    return _contract_events(chain_id, slug).filter(seq__lte=cut).order_by("-seq").first()


def _published_event(chain_id: int, slug: str, version: int) -> LedgerEvent | None:
    return (
        _contract_events(chain_id, slug)
        .alias(_version=CanonicalField("entity_version", "bigint"))
        .filter(_version=version, _type=CONTRACT_PUBLISHED.name)
        .order_by("seq")
        .first()
    )


def _version_events(agent: AgentProfile, cut: int, left_out: Iterable[int]) -> list[LedgerEvent]:
    """The last `knowledge.version_*` event up to the cut about each version of the agent's
    entries (the agent index, then a window keeping one row per entry and version)."""
    found = (
        LedgerEvent.objects.filter(chain_id=agent.tenant_id, seq__lte=cut)
        .alias(_agent=CanonicalField("payload", subkey="agent"), _type=CanonicalField("event_type"))
        .filter(_agent=agent.slug, _type__in=VERSION_EVENTS)
    )
    left_out = sorted(left_out)
    if left_out:
        found = found.exclude(seq__in=left_out)
    ranked = found.annotate(
        _rank=Window(
            RowNumber(),
            partition_by=[CanonicalField("entity_id"), CanonicalField("entity_version", "bigint")],
            order_by=F("seq").desc(),
        )
    ).filter(_rank=1)
    return list(ranked.only("seq", "canonical").order_by("seq"))


# --- the state ---------------------------------------------------------------------------------


def _contract_at(agent: AgentProfile, event: LedgerEvent) -> ContractAt:
    version = int(event.entity_version)
    row = AgentContract.objects.filter(agent_id=agent.pk, version=version).first()
    recorded = str(event.payload.get("hash", ""))
    content = row.content() if row is not None else {}
    ok = row is not None and row.content_hash == recorded and content_hash(content) == recorded
    return ContractAt(
        version=version,
        event_seq=event.seq,
        published_at=event.created_at,
        rolled_back_to=row.rolled_back_to if row is not None else None,
        content=content,
        hash=recorded,
        hash_ok=ok,
    )


def _knowledge_at(
    agent: AgentProfile, cut: int, left_out: Iterable[int] = (), gone: set[EntryNumber] | None = None
) -> list[KnowledgeAt]:
    gone = gone or set()
    in_effect: dict[int, LedgerEvent] = {}
    for event in _version_events(agent, cut, left_out):
        entry, number = int(event.entity_id), int(event.entity_version)
        if (str(entry), str(number)) in gone or event.payload.get("status") != Status.APPROVED:
            continue
        if entry not in in_effect or int(in_effect[entry].entity_version) < number:
            in_effect[entry] = event
    if not in_effect:
        return []
    wanted = Q()
    for entry, event in in_effect.items():
        wanted |= Q(entry_id=entry, number=int(event.entity_version))
    rows = {
        (v.entry_id, v.number): v
        for v in EntryVersion.objects.filter(wanted, agent_id=agent.pk).only(
            "entry_id", "number", "title", "body", "questions"
        )
    }
    found = []
    for entry in sorted(in_effect):
        event = in_effect[entry]
        number = int(event.entity_version)
        row = rows.get((entry, number))
        recorded = str(event.payload.get("content_sha256", ""))
        found.append(
            KnowledgeAt(
                entry=entry,
                kind=str(event.payload.get("kind", "")),
                version=number,
                title=row.title if row is not None else "",
                content_sha256=recorded,
                hash_ok=row is not None and content_sha256(row) == recorded,
                event_seq=event.seq,
                event_type=event.event_type,
            )
        )
    return found


def _cut_and_contract(agent: AgentProfile, moment: dt.datetime) -> tuple[int, LedgerEvent]:
    cut = seq_at(agent.tenant_id, moment)
    event = _contract_event_at(agent.tenant_id, agent.slug, cut) if cut is not None else None
    if cut is None or event is None:
        raise ReplayError("agent_not_yet", gettext("The agent did not exist yet at that time."))
    return cut, event


def agent_state_at(*, agent: AgentProfile, at: str | dt.datetime, without: str | int | None = None) -> AgentReplay:
    """The agent as it was at `at` (see the module's docstring); with `without`, also the same
    state with that change left out and what differs from what was live."""
    moment = at_parse(at, agent.tenant)
    left_out_seq = without_parse(without)
    cut, contract_event = _cut_and_contract(agent, moment)
    live = AgentState(
        agent=agent.slug,
        at=moment,
        seq=cut,
        contract=_contract_at(agent, contract_event),
        knowledge=_knowledge_at(agent, cut),
    )
    if left_out_seq is None:
        return AgentReplay(live=live)
    change, gone = change_of(agent=agent, seq=left_out_seq, cut=cut)
    if change.kind == "contract":
        without_state = live.model_copy(update={"contract": _contract_without(agent, live.contract, change)})
    else:
        without_state = live.model_copy(update={"knowledge": _knowledge_at(agent, cut, change.events, gone)})
    return AgentReplay(live=live, left_out=change, without=without_state, diff=state_diff(live, without_state))


# --- leaving a change out ----------------------------------------------------------------------


def _neighbours(chain_id: int, seq: int) -> dict[int, LedgerEvent]:
    rows = LedgerEvent.objects.filter(
        chain_id=chain_id, seq__gte=max(1, seq - BATCH_REACH), seq__lte=seq + BATCH_REACH
    ).only("seq", "canonical")
    return {e.seq: e for e in rows}


def _run(around: dict[int, LedgerEvent], seq: int, belongs: Any) -> list[int]:
    """The consecutive events around `seq` that `belongs` accepts (`seq` itself included)."""
    run = [seq]
    for step in (-1, 1):
        at = seq + step
        while at in around and belongs(around[at]):
            run.append(at)
            at += step
    return sorted(run)


def _history(chain_id: int, entry: str, numbers: set[str], cut: int) -> list[int]:
    """Every version event up to the cut about these versions of one entry (the entity index)."""
    if not numbers:
        return []
    rows = (
        LedgerEvent.objects.for_entity(chain_id, "knowledge_entry", entry)
        .alias(_type=CanonicalField("event_type"))
        .filter(_type__in=VERSION_EVENTS, seq__lte=cut)
        .only("seq", "canonical")
    )
    return [e.seq for e in rows if str(e.entity_version) in numbers]


def change_of(*, agent: AgentProfile, seq: int, cut: int) -> tuple[LeftOut, set[EntryNumber]]:
    """The change event `seq` names, as the events to leave out (and, for knowledge, the
    versions that would never have existed)."""
    chain = agent.tenant_id
    event = LedgerEvent.objects.filter(chain_id=chain, seq=seq).only("seq", "canonical").first()
    if event is None:
        raise ReplayError("without_unknown", gettext("No event of this ledger has that sequence number."))
    if seq > cut:
        raise ReplayError("without_after_at", gettext("That change was made after the chosen time."))
    kind, payload = event.event_type, event.payload
    if kind not in (*CONTRACT_EVENTS, *VERSION_EVENTS, PROPOSAL_PUBLISHED.name, PROPOSAL_APPLIED.name):
        raise ReplayError(
            "without_not_a_change",
            gettext("Only a contract change or a knowledge change can be left out (a publish, a rollback, a version)."),
        )
    if str(payload.get("agent", "")) != agent.slug:
        raise ReplayError("without_other_agent", gettext("That event is not about this agent's contract or knowledge."))
    if kind in CONTRACT_EVENTS or kind == PROPOSAL_PUBLISHED.name:
        version = int(payload["contract_version" if kind == PROPOSAL_PUBLISHED.name else "version"])
        published = event if kind == CONTRACT_PUBLISHED.name else _published_event(chain, agent.slug, version)
        if published is None or published.seq > cut:
            raise ReplayError("without_after_at", gettext("That change was made after the chosen time."))
        if published.payload.get("previous_version") is None:
            raise ReplayError(
                "without_first_version", gettext("The agent's first contract version cannot be left out.")
            )
        events = sorted({published.seq, event.seq} if kind == CONTRACT_ROLLED_BACK.name else {published.seq})
        return LeftOut(seq=seq, event_type=kind, kind="contract", contract_version=version, events=events), set()
    if kind == PROPOSAL_APPLIED.name:
        entry = str(payload["knowledge_entry"])
        decided = (
            LedgerEvent.objects.for_entity(chain, "change_proposal", str(payload["proposal"]))
            .alias(_type=CanonicalField("event_type"))
            .filter(_type=PROPOSAL_DECIDED.name, seq__lt=seq)
            .order_by("-seq")
            .values_list("seq", flat=True)
            .first()
        ) or 0
        written = list(
            LedgerEvent.objects.for_entity(chain, "knowledge_entry", entry)
            .alias(_type=CanonicalField("event_type"))
            .filter(_type__in=VERSION_EVENTS, seq__gt=decided, seq__lt=seq)
            .only("seq", "canonical")
            .order_by("seq")
        )
        if not written:
            raise ReplayError("without_not_a_change", gettext("That event changed no knowledge of this agent."))
        gone = {(entry, str(e.entity_version)) for e in written if e.event_type == VERSION_CREATED.name}
        history = _history(chain, entry, {n for _, n in gone}, cut)
        change = LeftOut(
            seq=seq,
            event_type=kind,
            kind="knowledge",
            entry=int(entry),
            events=sorted({e.seq for e in written} | set(history)),
        )
        return change, gone
    return _knowledge_batch(agent, event, cut)


def _knowledge_batch(agent: AgentProfile, event: LedgerEvent, cut: int) -> tuple[LeftOut, set[EntryNumber]]:
    entry = str(event.entity_id)
    kind = event.event_type
    if kind in RESTORE_EVENTS:
        around = _neighbours(agent.tenant_id, event.seq)
        restored = event.payload.get("restored")

        def belongs(other: LedgerEvent) -> bool:
            return (
                other.event_type in RESTORE_EVENTS
                and str(other.entity_id) == entry
                and other.payload.get("restored") == restored
            )

        run = _run(around, event.seq, belongs)
        members = [around[s] for s in run]
    elif kind in BATCH_EVENTS:
        around = _neighbours(agent.tenant_id, event.seq)
        run = _run(around, event.seq, lambda other: other.event_type == kind)
        members = [around[s] for s in run if str(around[s].entity_id) == entry]
    else:
        members = [event]
    gone = {
        (entry, str(e.entity_version)) for e in members if e.event_type in (VERSION_CREATED.name, VERSION_RESTORED.name)
    }
    history = _history(agent.tenant_id, entry, {n for _, n in gone}, cut)
    change = LeftOut(
        seq=event.seq,
        event_type=kind,
        kind="knowledge",
        entry=int(entry),
        events=sorted({e.seq for e in members} | set(history)),
    )
    return change, gone


# --- contract places ---------------------------------------------------------------------------


def places(content: dict[str, Any]) -> dict[Path, Any]:
    """A contract's content as {place: value}: a whole field, or one language (and situation)
    of the fields an owner words per language."""
    found: dict[Path, Any] = {}
    for field in FIELDS:
        depth = PLACE_DEPTH.get(field, 0)
        level: list[tuple[Path, Any]] = [((field,), content.get(field))]
        for _ in range(depth):
            deeper: list[tuple[Path, Any]] = []
            for path, value in level:
                if isinstance(value, dict):
                    deeper.extend(((*path, str(k)), v) for k, v in value.items())
                else:
                    deeper.append((path, value))
            level = deeper
        found.update(level)
    return found


def changed_places(before: dict[str, Any], after: dict[str, Any]) -> set[Path]:
    old, new = places(before), places(after)
    return {p for p in old.keys() | new.keys() if old.get(p) != new.get(p)}


def _overlaps(one: Path, other: Path) -> bool:
    shorter = min(len(one), len(other))
    return one[:shorter] == other[:shorter]


def content_with(content: dict[str, Any], path: Path, value: Any, present: bool) -> dict[str, Any]:
    """`content` with `value` at `path` (or the key removed when absent; a language left
    without sentences goes too)."""
    result = copy.deepcopy(content)
    if len(path) == 1:
        result[path[0]] = copy.deepcopy(value)
        return result
    node = result.setdefault(path[0], {})
    parents = [node]
    for key in path[1:-1]:
        node = node.setdefault(key, {})
        parents.append(node)
    if present:
        node[path[-1]] = copy.deepcopy(value)
    else:
        node.pop(path[-1], None)
        for depth in range(len(parents) - 1, 0, -1):
            if parents[depth] == {}:
                parents[depth - 1].pop(path[depth], None)
    return result


def _contract_without(agent: AgentProfile, live: ContractAt, change: LeftOut) -> ContractAt:
    version = int(change.contract_version or 0)
    rows = {
        row.version: row
        for row in AgentContract.objects.filter(
            agent_id=agent.pk, version__gte=version - 1, version__lte=live.version or version
        )
    }
    if version - 1 not in rows or version not in rows:
        raise ReplayError("without_unknown", gettext("The contract versions of that change are missing."))
    touched = changed_places(rows[version - 1].content(), rows[version].content())
    later: set[Path] = set()
    for number in range(version + 1, (live.version or version) + 1):
        if number in rows and number - 1 in rows:
            later |= changed_places(rows[number - 1].content(), rows[number].content())
    before = places(rows[version - 1].content())
    content = copy.deepcopy(live.content)
    for path in sorted(touched):
        if any(_overlaps(path, other) for other in later):
            continue
        content = content_with(content, path, before.get(path), path in before)
    return ContractAt(
        version=None,
        event_seq=live.event_seq,
        published_at=live.published_at,
        rolled_back_to=None,
        content=content,
        hash=content_hash(content),
        # The live version was checked against the ledger; the versions this reads besides it
        # are checked against their own recorded hash column.
        hash_ok=live.hash_ok and all(content_hash(row.content()) == row.content_hash for row in rows.values()),
    )


# --- the difference ----------------------------------------------------------------------------


def state_diff(live: AgentState, without: AgentState) -> ReplayDiff:
    old, new = places(live.contract.content), places(without.contract.content)
    contract = [
        ContractDiff(path=list(p), live=old.get(p), without=new.get(p))
        for p in sorted(old.keys() | new.keys())
        if old.get(p) != new.get(p)
    ]
    before = {k.entry: k for k in live.knowledge}
    after = {k.entry: k for k in without.knowledge}
    knowledge = []
    for entry in sorted(before.keys() | after.keys()):
        one, other = before.get(entry), after.get(entry)
        if one is None or other is None or (one.version, one.content_sha256) != (other.version, other.content_sha256):
            kind = (one or other).kind  # type: ignore[union-attr]
            knowledge.append(KnowledgeDiff(entry=entry, kind=kind, live=one, without=other))
    return ReplayDiff(contract=contract, knowledge=knowledge)


# --- for the page: what may be chosen ----------------------------------------------------------


class ChangeChoice(BaseModel):
    seq: int
    at: dt.datetime
    event_type: str
    about: str  # "contract v3", "entry 12 v2"


def change_choices(*, agent: AgentProfile, cut: int) -> list[ChangeChoice]:
    """The agent's contract and knowledge changes up to the cut, newest first (the agent index,
    read backwards)."""
    rows = (
        LedgerEvent.objects.filter(chain_id=agent.tenant_id, seq__lte=cut)
        .alias(_agent=CanonicalField("payload", subkey="agent"), _type=CanonicalField("event_type"))
        .filter(_agent=agent.slug, _type__in=(CONTRACT_PUBLISHED.name, *VERSION_EVENTS))
        .order_by("-seq")
        .only("seq", "canonical")[:CHOICES_MAX]
    )
    found = []
    for event in rows:
        if event.event_type == CONTRACT_PUBLISHED.name:
            if event.payload.get("previous_version") is None:
                continue
            about = f"contract v{event.payload.get('version')}"
        else:
            about = f"entry {event.entity_id} v{event.entity_version}"
        found.append(ChangeChoice(seq=event.seq, at=event.created_at, event_type=event.event_type, about=about))
    return found
