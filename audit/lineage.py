"""Lineage: "who changed this wording, when, and because of which review?" for one entity.

`entity_lineage` answers, for an agent's contract (optionally one of its fields), a knowledge
entry or a change proposal, its versions in order; each with the diff against the version before
(owner-authored content only: contract fields and knowledge the owner approved, never a customer
message), when and by whom it was published, the decision that authorised it (who, when, the
authorization id and its assurance: a click or an e-mailed code), the proposal it came from
(kind, level, origin, evidence pointers) and what started that proposal — a daily review's claim
with its evidence pointers, the owner's dialogue (a session pointer) or the owner's direct edit.
Each version's content is hashed again and compared with the hash the ledger recorded when it was
written; a row changed behind the ledger's back is flagged.

Every ledger read goes through an index: the entity index (`LedgerEvent.objects.for_entity`), the
event-type index, the (chain, seq) key and the caused-by index; the chain is never walked.
`lineage_search` finds which published contract fields and knowledge versions of a tenant's
agents contain a sentence (owner-authored content only: customer messages are never searched).
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from django.db.models import Q
from django.utils.translation import gettext

from approvals.contract_models import AgentContract
from approvals.contract_rules import FIELDS, content_hash
from approvals.models import ChangeProposal
from facade.errors import ApplicationError
from facade.tenancy.models import AgentProfile, Tenant
from facade.tenancy.policy import NotFound
from knowledge.events import content_sha256
from knowledge.models import EntryVersion, KnowledgeEntry
from ledger.expressions import CanonicalField
from ledger.models import LedgerEvent
from rsi.review_models import ReviewAggregate, ReviewReport

ENTITY_TYPES = ("contract", "knowledge_entry", "change_proposal")
CONTRACT_FIELDS = tuple(FIELDS)
MAX_CAUSE_STEPS = 8  # how far back the caused-by links are followed to find what started a change
MAX_DIFF_LINES = 400
# Knowledge whose words came from a customer (a candidate the owner has not written): its text is
# not shown, only its fingerprint.
CUSTOMER_SOURCES = frozenset({"customer_candidate"})
# Knowledge versions no customer was ever told (the search looks for what a chat could have said).
NEVER_SERVED = frozenset({"pending", "rejected"})


class UnknownEntityType(ApplicationError):
    def __init__(self, entity_type: str) -> None:
        super().__init__(
            "unknown_entity_type",
            gettext("Lineage is kept for contract, knowledge_entry and change_proposal, not %(type)s.")
            % {"type": entity_type[:40]},
        )


class UnknownField(ApplicationError):
    def __init__(self, field: str) -> None:
        super().__init__(
            "unknown_field",
            gettext("A contract has no field %(field)s.") % {"field": field[:40]},
        )


# --- the ledger, through its indexes ----------------------------------------------------------


def _entity_events(tenant: Tenant, entity_type: str, entity_id: str) -> list[LedgerEvent]:
    return list(LedgerEvent.objects.for_entity(tenant.pk, entity_type, entity_id).order_by("seq"))


def _event_at(tenant: Tenant, seq: int | None) -> LedgerEvent | None:
    if seq is None:
        return None
    return LedgerEvent.objects.filter(chain_id=tenant.pk, seq=seq).first()


def _events_caused_by(tenant: Tenant, seq: int) -> list[LedgerEvent]:
    """The events that name `seq` as their cause (the caused-by index)."""
    found = LedgerEvent.objects.alias(_caused_by=CanonicalField("caused_by", "bigint")).filter(
        chain_id=tenant.pk, _caused_by=seq
    )
    return sorted(found, key=lambda e: e.seq)


def _typed_with_payload(tenant: Tenant, event_type: str, key: str, value: object) -> list[LedgerEvent]:
    """Events of one type (the event-type index) whose payload's `key` is `value`."""
    found = (
        LedgerEvent.objects.filter(chain_id=tenant.pk)
        .of_type(event_type)
        .alias(_value=CanonicalField("payload", subkey=key))
        .filter(_value=str(value))
        .order_by("seq")
    )
    return list(found)


def _when(event: LedgerEvent | None) -> str | None:
    return event.document["created_at"] if event is not None else None


def _event_ref(event: LedgerEvent) -> dict[str, Any]:
    return {
        "seq": event.seq,
        "event_type": event.event_type,
        "at": _when(event),
        "actor": {"type": event.actor_type, "id": event.actor_id},
    }


# --- content and diffs ------------------------------------------------------------------------


def _lines(value: Any) -> list[str]:
    if isinstance(value, str):
        return value.splitlines()
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()


def _diff(before: Any, after: Any, *, before_name: str, after_name: str) -> list[str]:
    lines = list(
        difflib.unified_diff(
            _lines(before) if before is not None else [],
            _lines(after),
            fromfile=before_name,
            tofile=after_name,
            lineterm="",
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        lines = lines[:MAX_DIFF_LINES] + ["…"]
    return lines


# --- proposals, decisions and what started them -----------------------------------------------


def _review_start(tenant: Tenant, event: LedgerEvent, change_id: str) -> dict[str, Any]:
    report = ReviewReport.objects.filter(tenant=tenant, pk=event.entity_id).first()
    start: dict[str, Any] = {"type": "review_report", "report": event.entity_id, "event": _event_ref(event)}
    if report is None:
        return start
    start["day"] = report.day.isoformat()
    start["claim"] = None
    for claim in [*report.gaps, *report.misses, *report.wins]:
        if isinstance(claim, dict) and claim.get("change_id") == change_id:
            start["claim"] = {
                "kind": claim.get("kind", ""),
                "figure": claim.get("figure"),
                "evidence": evidence_pointers(report, claim.get("evidence") or []),
            }
            break
    return start


def evidence_pointers(report: ReviewReport, pointers: list[Any]) -> list[dict[str, Any]]:
    """A claim's evidence as pointers: session ids, and aggregate keys with the figure the report
    stored for them (never a label made from what customers wrote, never their words)."""
    keys = [str(p.get("key")) for p in pointers if isinstance(p, dict) and p.get("type") == "aggregate"]
    values = dict(ReviewAggregate.objects.filter(report=report, key__in=keys).values_list("key", "value"))
    shown: list[dict[str, Any]] = []
    for pointer in pointers:
        if not isinstance(pointer, dict):
            continue
        if pointer.get("type") == "session":
            shown.append({"type": "session", "id": str(pointer.get("id"))})
        elif pointer.get("type") == "aggregate":
            key = str(pointer.get("key"))
            shown.append({"type": "aggregate", "key": key, "value": values.get(key)})
        elif pointer.get("type") == "knowledge_version":
            shown.append({"type": "knowledge_version", "id": pointer.get("id")})
    return shown


def _started(tenant: Tenant, created: LedgerEvent | None, proposal: ChangeProposal | None) -> dict[str, Any]:
    """What started a change: follow the caused-by links back from its `proposal.created`."""
    change_id = proposal.pk if proposal is not None else ""
    seq = created.caused_by if created is not None else None
    for _ in range(MAX_CAUSE_STEPS):
        event = _event_at(tenant, seq)
        if event is None:
            break
        if event.entity_type == "review_report":
            return _review_start(tenant, event, change_id)
        if event.entity_type == "session":
            return {"type": "owner_dialogue", "session": event.entity_id, "event": _event_ref(event)}
        if event.entity_type == "change_proposal" and event.entity_id != change_id:
            return {"type": "rollback", "of": event.entity_id, "event": _event_ref(event)}
        if event.entity_type == "observe_digest" or event.event_type.startswith("observe."):
            return {"type": "observe_digest", "event": _event_ref(event)}
        seq = event.caused_by
    origin = proposal.origin if proposal is not None else ""
    if proposal is not None and proposal.rollback_of_id:
        return {"type": "rollback", "of": proposal.rollback_of_id, "event": None}
    if origin == "owner_direct" or (created is not None and created.actor_type == "human"):
        return {"type": "owner_direct", "actor": created.actor_id if created else "", "event": None}
    return {"type": origin or "unknown", "event": None}


def _decisions(events: list[LedgerEvent]) -> list[dict[str, Any]]:
    decided = []
    for event in events:
        if event.event_type == "proposal.decided":
            kind = "decision"
        elif event.event_type == "authority.signature_recorded":
            kind = "signature"
        else:
            continue
        payload = event.payload
        decided.append(
            {
                **_event_ref(event),
                "kind": kind,
                "decision": payload.get("decision", "approve"),
                "assurance": payload.get("assurance", ""),
                "authorization_id": payload.get("authorization_id", ""),
                "version": payload.get("version"),
            }
        )
    return decided


def proposal_summary(tenant: Tenant, change_id: str) -> dict[str, Any] | None:
    """A change proposal as the lineage shows it: who proposed what (kind, level, origin,
    evidence pointers), the decisions, the authority's events and what started it."""
    if not change_id.startswith("chg_"):
        return None
    events = _entity_events(tenant, "change_proposal", change_id)
    proposal = ChangeProposal.objects.filter(tenant=tenant, pk=change_id).first()
    created = next((e for e in events if e.event_type == "proposal.created"), None)
    if proposal is None and created is None:
        return None
    described = created.payload if created is not None else {}
    return {
        "id": change_id,
        "kind": described.get("kind", proposal.kind if proposal else ""),
        "level": described.get("level", proposal.level if proposal else None),
        "origin": described.get("origin", proposal.origin if proposal else ""),
        "requires": described.get("requires", proposal.requires if proposal else ""),
        "status": proposal.status if proposal is not None else "",
        "evidence": list(described.get("evidence") or []),
        "rollback_of": proposal.rollback_of_id if proposal is not None else None,
        "target": (proposal.target or {}).get("field", "") if proposal is not None else "",
        "created": _event_ref(created) if created is not None else None,
        "decisions": _decisions(events),
        "authority": [_event_ref(e) for e in events if e.event_type.startswith("authority.")],
        "started": _started(tenant, created, proposal),
    }


def _decision_of(proposal: dict[str, Any] | None) -> dict[str, Any] | None:
    """The approval that authorised a version: the proposal's last approving decision."""
    if proposal is None:
        return None
    approving = [d for d in proposal["decisions"] if d["kind"] == "decision" and d["decision"] == "approve"]
    return approving[-1] if approving else None


# --- contracts --------------------------------------------------------------------------------


def _contract_lineage(tenant: Tenant, slug: str, field: str) -> dict[str, Any]:
    if field and field not in CONTRACT_FIELDS:
        raise UnknownField(field)
    agent = AgentProfile.objects.filter(tenant=tenant, slug=slug).first()
    if agent is None:
        raise NotFound(slug)
    published: dict[int, LedgerEvent] = {}
    rolled_back: dict[int, LedgerEvent] = {}
    for found in _entity_events(tenant, "contract", slug):
        if found.event_type == "contract.published":
            published[int(found.payload["version"])] = found
        elif found.event_type == "contract.rolled_back":
            rolled_back[int(found.payload["version"])] = found
    versions: list[dict[str, Any]] = []
    previous: AgentContract | None = None
    for row in AgentContract.objects.filter(agent=agent).order_by("version"):
        content = row.content()
        before = previous.content() if previous is not None else None
        if field and before is not None and before.get(field) == content.get(field):
            previous = row
            continue
        event = published.get(row.version)
        recorded = event.payload.get("hash") if event is not None else None
        computed = content_hash(content)
        cause = str(event.payload.get("caused_by", "")) if event is not None else row.caused_by
        if event is not None and not cause.startswith("chg_"):
            # The ledger's own link: a proposal's `proposal.published` names this publish as its cause.
            linked = [e for e in _events_caused_by(tenant, event.seq) if e.event_type == "proposal.published"]
            cause = str(linked[0].entity_id) if linked else cause
        proposal = proposal_summary(tenant, cause)
        rollback = rolled_back.get(row.version)
        shown_before = (before or {}).get(field) if field else before
        shown_after = content.get(field) if field else content
        name = f"{field}" if field else "contract"
        versions.append(
            {
                "version": row.version,
                "live": row.is_live,
                "published": _event_ref(event) if event is not None else None,
                "published_at": row.published_at.isoformat(),
                "published_by": row.published_by,
                "changed": list(event.payload.get("changed", [])) if event is not None else [],
                "caused_by": cause,
                "diff": _diff(
                    shown_before if previous is not None else None,
                    shown_after,
                    before_name=f"{name} v{previous.version}" if previous is not None else "",
                    after_name=f"{name} v{row.version}",
                ),
                "content_hash": computed,
                "recorded_hash": recorded,
                "hash_ok": recorded is not None and recorded == computed,
                "rollback": (
                    {
                        "to_version": row.rolled_back_to,
                        "event": _event_ref(rollback) if rollback is not None else None,
                        "of_change": proposal["rollback_of"] if proposal else None,
                    }
                    if row.rolled_back_to is not None or (proposal is not None and proposal["rollback_of"])
                    else None
                ),
                "proposal": proposal,
                "decision": _decision_of(proposal),
                "started": _version_start(proposal, row.published_by, cause),
            }
        )
        previous = row
    return {"agent": agent.slug, "versions": versions}


def _version_start(proposal: dict[str, Any] | None, actor: str, cause: str) -> dict[str, Any]:
    if proposal is not None:
        return dict(proposal["started"])
    if actor.startswith("user:"):
        return {"type": "owner_direct", "actor": actor, "event": None}
    return {"type": "platform", "actor": actor, "cause": cause, "event": None}


# --- knowledge --------------------------------------------------------------------------------


def _knowledge_text(version: EntryVersion) -> str:
    text = f"{version.title}\n{version.body}"
    if version.questions:
        text += "\n" + "\n".join(str(q) for q in version.questions)
    return text


def _knowledge_lineage(tenant: Tenant, entity_id: str) -> dict[str, Any]:
    if not entity_id.isdigit():
        raise NotFound(entity_id)
    entry = KnowledgeEntry.objects.filter(tenant=tenant, pk=int(entity_id)).select_related("agent").first()
    if entry is None:
        raise NotFound(entity_id)
    by_number: dict[int, list[LedgerEvent]] = {}
    for event in _entity_events(tenant, "knowledge_entry", str(entry.pk)):
        by_number.setdefault(int(event.entity_version or 0), []).append(event)
    applied = {
        int(e.payload["knowledge_version"]): e
        for e in _typed_with_payload(tenant, "proposal.applied", "knowledge_entry", entry.pk)
    }
    lessons = {
        int(e.payload["version"]): e for e in _typed_with_payload(tenant, "lesson.recorded", "entry_id", entry.pk)
    }
    versions: list[dict[str, Any]] = []
    previous: EntryVersion | None = None
    for row in EntryVersion.objects.filter(entry=entry).order_by("number"):
        events = by_number.get(row.number, [])
        first = events[0] if events else None
        recorded = first.payload.get("content_sha256") if first is not None else None
        computed = content_sha256(row)
        approved = next((e for e in events if e.event_type == "knowledge.version_approved"), None)
        if approved is None and first is not None and first.payload.get("status") == "approved":
            approved = first  # approved as it was written (the L1 rule, or a restore)
        withdrawn = next((e for e in events if e.event_type == "knowledge.version_rolled_back"), None)
        restored = next((e for e in events if e.event_type == "knowledge.version_restored"), None)
        change = applied.get(row.pk) or lessons.get(row.number)
        proposal = proposal_summary(tenant, str(change.entity_id)) if change is not None else None
        hidden = row.source_type in CUSTOMER_SOURCES
        versions.append(
            {
                "version": row.number,
                "status": row.status,
                "live": entry.current_version_id == row.pk,
                "source_type": row.source_type,
                "created": _event_ref(first) if first is not None else None,
                "published": _event_ref(approved) if approved is not None else None,
                "published_at": _when(approved),
                "published_by": approved.actor_id if approved is not None else "",
                "diff": []
                if hidden
                else _diff(
                    _knowledge_text(previous) if previous is not None else None,
                    _knowledge_text(row),
                    before_name=f"v{previous.number}" if previous is not None else "",
                    after_name=f"v{row.number}",
                ),
                "diff_withheld": hidden,
                "content_hash": computed,
                "recorded_hash": recorded,
                "hash_ok": recorded is not None and recorded == computed,
                "rollback": (
                    {
                        "restored_from": restored.payload.get("restored") if restored is not None else None,
                        "withdrawn_by": _event_ref(withdrawn) if withdrawn is not None else None,
                        "event": _event_ref(restored or withdrawn),  # type: ignore[arg-type]
                    }
                    if restored is not None or withdrawn is not None
                    else None
                ),
                "proposal": proposal,
                "decision": _decision_of(proposal),
                "started": _version_start(proposal, row.actor_id, "")
                if proposal is not None or row.actor_type == "human"
                else {"type": "source", "source": row.source_type, "actor": row.actor_id, "event": None},
            }
        )
        previous = row
    return {"agent": entry.agent.slug, "versions": versions}


# --- change proposals -------------------------------------------------------------------------

_PROPOSAL_STEPS = {
    "proposal.created",
    "proposal.edited",
    "proposal.rebased",
    "proposal.decided",
    "proposal.applied",
    "proposal.published",
    "proposal.failed",
    "proposal.rolled_back",
    "proposal.expired",
}
_CONTENT_STEPS = {"proposal.created", "proposal.edited", "proposal.rebased"}


def _proposal_lineage(tenant: Tenant, entity_id: str) -> dict[str, Any]:
    proposal = ChangeProposal.objects.filter(tenant=tenant, pk=entity_id).select_related("agent").first()
    if proposal is None:
        raise NotFound(entity_id)
    from approvals.events import payload_sha256

    summary = proposal_summary(tenant, proposal.pk)
    events = [e for e in _entity_events(tenant, "change_proposal", proposal.pk) if e.event_type in _PROPOSAL_STEPS]
    computed = payload_sha256(proposal.payload)
    latest_content = max((e.seq for e in events if e.event_type in _CONTENT_STEPS), default=None)
    versions: list[dict[str, Any]] = []
    for event in events:
        payload = event.payload
        current = event.seq == latest_content
        recorded = payload.get("payload_sha256")
        step: dict[str, Any] = {
            "version": payload.get("version"),
            "step": event.event_type,
            "published": _event_ref(event),
            "published_at": _when(event),
            "published_by": event.actor_id,
            "status": payload.get("status", ""),
            "diff": _diff(
                proposal.diff.get("before"), proposal.diff.get("after"), before_name="before", after_name="after"
            )
            if current and proposal.diff
            else [],
            "content_hash": computed if current else None,
            "recorded_hash": recorded,
            "hash_ok": (recorded == computed) if current else None,
            "rollback": {"by": payload.get("rolled_back_by"), "contract_version": payload.get("contract_version")}
            if event.event_type == "proposal.rolled_back"
            else None,
            "proposal": summary if event.event_type == "proposal.created" else None,
            "decision": next((d for d in (summary or {}).get("decisions", []) if d["seq"] == event.seq), None),
            "started": (summary or {}).get("started") if event.event_type == "proposal.created" else None,
        }
        if event.event_type == "proposal.published":
            step["contract_version"] = payload.get("contract_version")
        if event.event_type == "proposal.applied":
            step["knowledge_entry"] = payload.get("knowledge_entry")
        versions.append(step)
    return {"agent": proposal.agent.slug, "versions": versions, "proposal": summary}


# --- the entry point --------------------------------------------------------------------------


def entity_lineage(*, tenant: Tenant, entity_type: str, entity_id: str, field: str = "") -> dict[str, Any]:
    """The versions of one entity of `tenant`, oldest first (see the module's docstring).
    UnknownEntityType (400) for a type that has no lineage; NotFound (404) for an entity the
    tenant does not have."""
    entity_id = str(entity_id or "")[:64]
    if entity_type == "contract":
        found = _contract_lineage(tenant, entity_id, field)
    elif entity_type == "knowledge_entry":
        found = _knowledge_lineage(tenant, entity_id)
    elif entity_type == "change_proposal":
        found = _proposal_lineage(tenant, entity_id)
    else:
        raise UnknownEntityType(str(entity_type))
    versions = found["versions"]
    return {
        "entity_type": entity_type,
        "entity_id": entity_id,
        "field": field if entity_type == "contract" else "",
        "mismatches": [v["version"] for v in versions if v.get("hash_ok") is False],
        **found,
    }


# --- finding a sentence -----------------------------------------------------------------------

_SPACE = re.compile(r"\s+")
MIN_QUERY = 6
MAX_RESULTS = 50


def normalised(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def lineage_search(*, tenant: Tenant, q: str) -> list[dict[str, Any]]:
    """The published contract fields and knowledge entries of `tenant`'s agents whose words
    contain the sentence `q` (whitespace and case aside; knowledge versions that were never
    approved are left out).  Only what owners wrote and published
    is searched, never a conversation.  Each hit: entity type and id, the field, the versions
    that contain it."""
    wanted = _trimmed(normalised(q))
    if len(wanted) < MIN_QUERY:
        return []
    hits = _search(tenant, wanted)
    if not hits:
        # A line copied whole from a chat carries what the agent put round the owner's words
        # ("Here is what I found: [1] <title>: <text>"): look for each of its sentences.
        for part in _FRAGMENT_BREAK.split(wanted):
            part = _trimmed(part)
            if len(part) >= MIN_QUERY and part != wanted:
                for key, hit in _search(tenant, part).items():
                    hits.setdefault(key, hit)
    return list(hits.values())[:MAX_RESULTS]


# Where a line from a chat breaks into the sentences it quotes: after a sentence's end, at a
# colon, at a citation mark such as "[1]".
_FRAGMENT_BREAK = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])|[:：]\s*|\[\d+\]\s*")


def _trimmed(text: str) -> str:
    return text.strip(" \"'“”‘’「」")


def _search(tenant: Tenant, wanted: str) -> dict[tuple[str, str, str], dict[str, Any]]:
    hits: dict[tuple[str, str, str], dict[str, Any]] = {}
    contracts = (
        AgentContract.objects.filter(agent__tenant=tenant).select_related("agent").order_by("agent_id", "version")
    )
    for contract in contracts:
        content = contract.content()
        for name in CONTRACT_FIELDS:
            if any(wanted in normalised(text) for text in _strings(content[name])):
                key = ("contract", contract.agent.slug, name)
                hit = hits.setdefault(
                    key,
                    {"entity_type": "contract", "entity_id": contract.agent.slug, "field": name, "versions": []},
                )
                hit["versions"].append(contract.version)
    # The database narrows on the first words (case-insensitive); the exact test is done here.
    probe = max(wanted.split(" "), key=len)
    candidates = (
        EntryVersion.objects.filter(entry__tenant=tenant)
        .exclude(source_type__in=CUSTOMER_SOURCES)
        .exclude(status__in=NEVER_SERVED)
        .filter(Q(body__icontains=probe) | Q(title__icontains=probe))
        .order_by("entry_id", "number")[:2000]
    )
    for version in candidates:
        if wanted in normalised(f"{version.title}\n{version.body}"):
            key = ("knowledge_entry", str(version.entry_id), "")
            hit = hits.setdefault(
                key,
                {"entity_type": "knowledge_entry", "entity_id": str(version.entry_id), "field": "", "versions": []},
            )
            hit["versions"].append(version.number)
    return hits


def lineage_choices(tenant: Tenant) -> list[dict[str, Any]]:
    """What the lineage page offers without a query: each agent's contract fields and its
    knowledge entries (the current version's title, which the owner wrote or approved)."""
    agents = []
    for agent in AgentProfile.objects.filter(tenant=tenant).order_by("slug"):
        entries = KnowledgeEntry.objects.filter(agent=agent).select_related("current_version").order_by("-pk")[:200]
        agents.append(
            {
                "agent": agent,
                "fields": CONTRACT_FIELDS,
                "entries": [
                    {
                        "id": entry.pk,
                        "kind": entry.kind,
                        "title": entry.current_version.title
                        if entry.current_version is not None
                        and entry.current_version.source_type not in CUSTOMER_SOURCES
                        else "",
                        "latest": entry.latest_number,
                    }
                    for entry in entries
                ],
            }
        )
    return agents
