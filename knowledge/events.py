"""The knowledge app's ledger events: one payload model and one typed constructor per type.

Every event about a version carries the same description of it (agent, entry, number, status,
kind, source and a fingerprint of its content: the content itself stays in the version row),
plus what the particular change adds.  The services call these constructors inside their
transaction; nothing else in the app writes to the ledger.
"""

from __future__ import annotations

import hashlib
import json

from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor
from ledger.catalogue import EventPayload, EventType, register
from ledger.schemas import AppendedEvent
from ledger.services import ledger_append

from .models import EntryVersion, IngestJob, RegulatedTerm

APP = "knowledge"
ENTITY = "knowledge_entry"


class VersionChanged(EventPayload):
    agent: str
    entry: int
    version: int
    status: str
    kind: str
    source_type: str
    source_ref: str
    source_version: str
    content_sha256: str


class VersionCreated(VersionChanged):
    reasons: list[str]
    regulated: list[str]
    questions: int  # how many alternative questions the version has (their text is in the row)


class TopicResolved(EventPayload):
    agent: str
    entry: int
    version: int
    how: str  # "answered" (a new entry), "attached" (a question added to an entry), "published" (an approved draft)
    misses: int
    topic_sha256: str  # the topic key is made from customers' words: the row keeps it, not the ledger


class VersionRejected(VersionChanged):
    reason: str


class VersionReplaced(VersionChanged):
    restored: int


class RegulatedTermSet(EventPayload):
    term: str
    category: str


class IngestJobLost(EventPayload):
    """An upload's ingest job whose worker died while it ran (its lease ran out)."""

    agent: str
    job: int
    sha256: str  # the uploaded file's fingerprint (its name and content stay in the job's row)
    attempts: int  # runs started so far, the lost one included
    reason: str  # worker_lost


def _version_type(name: str, payload: type[VersionChanged], description: str) -> EventType:
    return register(name, app=APP, entity_type=ENTITY, payload=payload, description=description)


VERSION_CREATED = _version_type(
    "knowledge.version_created",
    VersionCreated,
    "A version of an entry was proposed; the L1 rule approved it or left it pending, with its reasons.",
)
VERSION_APPROVED = _version_type(
    "knowledge.version_approved",
    VersionChanged,
    "An owner approved a pending version by deciding its L1 proposal; it is served at once.",
)
VERSION_REJECTED = _version_type(
    "knowledge.version_rejected",
    VersionRejected,
    "An owner rejected a pending version by rejecting its L1 proposal, or replaced it with an edited "
    "text (the reason, cut to 200).",
)
VERSION_ROLLED_BACK = _version_type(
    "knowledge.version_rolled_back", VersionReplaced, "An approved version was withdrawn by restoring an earlier one."
)
VERSION_RESTORED = _version_type(
    "knowledge.version_restored", VersionReplaced, "The content of an earlier version came back as a new version."
)
VERSION_QUARANTINED = _version_type(
    "knowledge.version_quarantined",
    VersionChanged,
    "A version was taken out of service with everything else from its source or time window.",
)
VERSION_RELEASED = _version_type(
    "knowledge.version_released", VersionChanged, "A quarantined version went back to the status it had."
)
VERSION_EXPIRED = _version_type(
    "knowledge.version_expired", VersionChanged, "A version passed its valid_until and is no longer served."
)
TOPIC_RESOLVED = register(
    "knowledge.topic_resolved",
    app=APP,
    entity_type=ENTITY,
    payload=TopicResolved,
    description="An owner answered an unanswered topic with a new entry or attached it to an entry as a question; "
    "its misses are marked resolved by that version.",
)
JOB_ENTITY = "ingest_job"
INGEST_JOB_RETRIED = register(
    "knowledge.ingest_job_retried",
    app=APP,
    entity_type=JOB_ENTITY,
    payload=IngestJobLost,
    description="The worker running an upload's ingest job died (its lease ran out); the sweep queued the job "
    "to run again from the start, once.",
)
INGEST_JOB_FAILED = register(
    "knowledge.ingest_job_failed",
    app=APP,
    entity_type=JOB_ENTITY,
    payload=IngestJobLost,
    description="The worker running an upload's ingest job died on its retry too; the sweep marked the job "
    "failed (worker_lost) and dropped the kept file.",
)
REGULATED_TERM_SET = register(
    "knowledge.regulated_term_set",
    app=APP,
    entity_type="agent",
    payload=RegulatedTermSet,
    description="An owner added a term of their own that marks material as regulated, or changed its category.",
)


def _described(version: EntryVersion) -> dict[str, object]:
    return {
        "agent": version.agent.slug,
        "entry": version.entry_id,
        "version": version.number,
        "status": version.status,
        "kind": version.entry.kind,
        "source_type": version.source_type,
        "source_ref": version.source_ref,
        "source_version": version.source_version,
        "content_sha256": content_sha256(version),
    }


def content_sha256(version: EntryVersion) -> str:
    """The fingerprint of what a version says: title and body, and its questions and its text in
    the other language when it has any (so versions without them keep the fingerprint they
    always had): what Chinese customers are told is verified like what English ones are."""
    text = f"{version.title}\n{version.body}"
    if version.questions:
        text += "\n" + "\n".join(version.questions)
    if version.translations:
        text += "\n" + json.dumps(version.translations, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _append(event_type: EventType, version: EntryVersion, actor: Actor, payload: EventPayload) -> AppendedEvent:
    return ledger_append(
        chain_id=version.agent.tenant_id,
        event_type=event_type.name,
        entity_type=event_type.entity_type,
        entity_id=version.entry_id,
        entity_version=version.number,
        actor_type=actor.type,
        actor_id=actor.id,
        payload=payload.model_dump(),
    )


def knowledge_version_created(*, version: EntryVersion, actor: Actor) -> AppendedEvent:
    payload = VersionCreated.model_validate(
        {
            **_described(version),
            "reasons": version.decision_reasons,
            "regulated": version.regulated_categories,
            "questions": len(version.questions),
        }
    )
    return _append(VERSION_CREATED, version, actor, payload)


def knowledge_version_approved(*, version: EntryVersion, actor: Actor) -> AppendedEvent:
    return _append(VERSION_APPROVED, version, actor, VersionChanged.model_validate(_described(version)))


def knowledge_version_rejected(*, version: EntryVersion, actor: Actor, reason: str) -> AppendedEvent:
    payload = VersionRejected.model_validate({**_described(version), "reason": reason[:200]})
    return _append(VERSION_REJECTED, version, actor, payload)


def knowledge_version_rolled_back(*, version: EntryVersion, actor: Actor, restored: int) -> AppendedEvent:
    """`version` was withdrawn because version number `restored` came back."""
    payload = VersionReplaced.model_validate({**_described(version), "restored": restored})
    return _append(VERSION_ROLLED_BACK, version, actor, payload)


def knowledge_version_restored(*, version: EntryVersion, actor: Actor, restored: int) -> AppendedEvent:
    """`version` is the new version holding the content of version number `restored`."""
    payload = VersionReplaced.model_validate({**_described(version), "restored": restored})
    return _append(VERSION_RESTORED, version, actor, payload)


def knowledge_version_quarantined(*, version: EntryVersion, actor: Actor) -> AppendedEvent:
    return _append(VERSION_QUARANTINED, version, actor, VersionChanged.model_validate(_described(version)))


def knowledge_version_released(*, version: EntryVersion, actor: Actor) -> AppendedEvent:
    return _append(VERSION_RELEASED, version, actor, VersionChanged.model_validate(_described(version)))


def knowledge_version_expired(*, version: EntryVersion, actor: Actor) -> AppendedEvent:
    return _append(VERSION_EXPIRED, version, actor, VersionChanged.model_validate(_described(version)))


def knowledge_topic_resolved(
    *, version: EntryVersion, topic: str, misses: int, how: str, actor: Actor
) -> AppendedEvent:
    payload = TopicResolved(
        agent=version.agent.slug,
        entry=version.entry_id,
        version=version.number,
        how=how,
        misses=misses,
        topic_sha256=hashlib.sha256(topic.encode()).hexdigest(),
    )
    return _append(TOPIC_RESOLVED, version, actor, payload)


def knowledge_regulated_term_set(*, agent: AgentProfile, term: RegulatedTerm, actor: Actor) -> AppendedEvent:
    return ledger_append(
        chain_id=agent.tenant_id,
        event_type=REGULATED_TERM_SET.name,
        entity_type=REGULATED_TERM_SET.entity_type,
        entity_id=agent.pk,
        actor_type=actor.type,
        actor_id=actor.id,
        payload=RegulatedTermSet(term=term.term, category=term.category).model_dump(),
    )


def _job_event(event_type: EventType, job: IngestJob, actor: Actor, reason: str) -> AppendedEvent:
    payload = IngestJobLost(agent=job.agent.slug, job=job.pk, sha256=job.sha256, attempts=job.attempts, reason=reason)
    return ledger_append(
        chain_id=job.agent.tenant_id,
        event_type=event_type.name,
        entity_type=event_type.entity_type,
        entity_id=job.pk,
        entity_version=job.attempts,
        actor_type=actor.type,
        actor_id=actor.id,
        payload=payload.model_dump(),
    )


def knowledge_ingest_job_retried(*, job: IngestJob, actor: Actor, reason: str) -> AppendedEvent:
    return _job_event(INGEST_JOB_RETRIED, job, actor, reason)


def knowledge_ingest_job_failed(*, job: IngestJob, actor: Actor, reason: str) -> AppendedEvent:
    return _job_event(INGEST_JOB_FAILED, job, actor, reason)
