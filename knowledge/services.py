"""Writes of the knowledge app.  Each is one transaction with its ledger events inside it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from decimal import Decimal
from typing import Any

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from facade.errors import ApplicationError
from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor
from ledger.schemas import AppendedEvent

from . import events, rules, signals
from .models import (
    LESSON_KINDS,
    EntryVersion,
    Kind,
    KnowledgeEntry,
    KnowledgeHit,
    KnowledgeMiss,
    RegulatedTerm,
    SourceType,
    Status,
)
from .schemas import SourceIn
from .text import EMPTY_TOPIC, search_text, subject_key, topic_key, topic_label, topic_words


class KnowledgeError(ApplicationError):
    """A refusal of the knowledge services (400 unless the raiser says otherwise)."""


# Set while a model's tool call runs (facade/dialogue/runtime/tools.py wraps every tool in
# `model_writing`): what is written then was written by a model, whoever's chat it came from.
_MODEL_WRITING: ContextVar[bool] = ContextVar("knowledge_model_writing", default=False)


@contextmanager
def model_writing() -> Iterator[None]:
    """Knowledge written inside this block was written by a model (issue 28 §1): every version
    waits for the owner's decision on its proposal, and nothing inside may approve, restore or
    release a version — the services refuse (fail closed), whatever the tool meant to do."""
    token = _MODEL_WRITING.set(True)
    try:
        yield
    finally:
        _MODEL_WRITING.reset(token)


def written_by_model() -> bool:
    """Whether the current write runs inside a model's tool call (`model_writing`)."""
    return _MODEL_WRITING.get()


def _not_by_model(what: str) -> None:
    if _MODEL_WRITING.get():
        raise KnowledgeError("owner_decides", f"a model cannot {what}: only the owner's decision does", 403)


ORIGIN_OF_SOURCE = {
    SourceType.OWNER_DIALOGUE: rules.Origin.OWNER,
    SourceType.UPLOAD: rules.Origin.OWNER,
    SourceType.URL: rules.Origin.OWNER,
    SourceType.REVIEW: rules.Origin.REVIEW,
    SourceType.OBSERVE: rules.Origin.OBSERVE,
    SourceType.CUSTOMER: rules.Origin.CUSTOMER,
}
MAX_TITLE = 300
MAX_BODY = 20_000
MAX_QUESTIONS = 20
MAX_QUESTION = 200


def questions_clean(questions: list[str]) -> list[str]:
    """An entry's alternative questions: stripped, blank ones and repeats left out, in order."""
    seen: dict[str, None] = {}
    for question in questions:
        text = " ".join(str(question).split())
        if text and text.casefold() not in {q.casefold() for q in seen}:
            seen.setdefault(text, None)
    cleaned = list(seen)
    if len(cleaned) > MAX_QUESTIONS or any(len(q) > MAX_QUESTION for q in cleaned):
        raise KnowledgeError(
            "invalid_input", f"an entry may have {MAX_QUESTIONS} questions of at most {MAX_QUESTION} characters"
        )
    return cleaned


# The languages an entry may hold its answer in (the site's languages): its title and body in
# one, and at most one translation per other language in `translations`.
LANGUAGES = ("en", "zh-hans")


def translations_clean(translations: dict[str, Any] | None) -> dict[str, dict[str, str]]:
    """An entry's answer in the site's other language(s): `{language: {title, body}}` with both
    stripped; a language with neither is left out, one with only a body takes no title."""
    cleaned: dict[str, dict[str, str]] = {}
    for language, value in (translations or {}).items():
        if language not in LANGUAGES or not isinstance(value, dict):
            raise KnowledgeError("invalid_input", f"a translation is in one of {', '.join(LANGUAGES)}")
        title = " ".join(str(value.get("title") or "").split())
        body = str(value.get("body") or value.get("text") or "").strip()
        if not title and not body:
            continue
        if not body:
            raise KnowledgeError("invalid_input", "a translation needs the text customers are told")
        if len(title) > MAX_TITLE or len(body) > MAX_BODY:
            raise KnowledgeError("invalid_input", f"a title may have {MAX_TITLE} characters and a body {MAX_BODY}")
        cleaned[language] = {"title": title, "body": body}
    return cleaned


def _translated_parts(translations: dict[str, dict[str, str]]) -> list[str]:
    return [part for value in translations.values() for part in (value["title"], value["body"])]


def _refresh_current(entry: KnowledgeEntry) -> None:
    """Point the entry at its latest approved version (or none), and mark that version — and only
    that one — as served, so searches can filter on one column inside the index scan."""
    latest = entry.versions.filter(status=Status.APPROVED).order_by("-number").first()
    if entry.current_version_id != (latest.pk if latest else None):
        entry.current_version = latest
        entry.save(update_fields=["current_version"])
    stale = entry.versions.filter(served=True)
    if latest is not None:
        stale = stale.exclude(pk=latest.pk)
    stale.update(served=False)
    if latest is not None and not latest.served:
        EntryVersion.objects.filter(pk=latest.pk).update(served=True)


def _contradicts(agent: AgentProfile, subject: str, body: str, entry: KnowledgeEntry | None) -> bool:
    """An approved entry on the same subject saying something else."""
    if not subject:
        return False
    others = KnowledgeEntry.objects.filter(agent=agent, subject=subject, current_version__isnull=False)
    if entry is not None:
        others = others.exclude(pk=entry.pk)
    normalised = " ".join(body.split())
    return any(
        other.current_version is not None and " ".join(other.current_version.body.split()) != normalised
        for other in others.select_related("current_version")
    )


@transaction.atomic
def entry_propose(
    *,
    agent: AgentProfile,
    title: str,
    body: str,
    source: SourceIn | None,
    actor: Actor,
    kind: Kind | str = Kind.FACT,
    confidence: Decimal | float | str | None = None,
    valid_from: dt.datetime | None = None,
    valid_until: dt.datetime | None = None,
    origin_key: str = "",
    entry: KnowledgeEntry | None = None,
    questions: list[str] | None = None,
    taboo_phrase: str = "",
    translations: dict[str, Any] | None = None,
) -> EntryVersion:
    """Add knowledge, or a new version of an entry, and let the L1 rule decide whether it takes
    effect now (approved) or waits for the owner (pending).  Material without a source is
    refused outright.

    `questions` are other ways customers ask what the entry answers; search matches them as it
    matches the title and body.  None keeps the questions of the entry's latest version (a
    re-uploaded section keeps the questions the owner attached to it).

    `taboo_phrase`: what a taboo forbids the agent to say; when the writer does not name it, the
    title tells (rules.taboo_phrase), else the entry's latest version's is kept.  Only a taboo
    entry's versions carry one."""
    if source is None:
        raise KnowledgeError("source_required", "knowledge needs a source (type, reference and version)")
    title, body = title.strip(), body.strip()
    if not title or not body:
        raise KnowledgeError("invalid_input", "knowledge needs a title and a body")
    if len(title) > MAX_TITLE or len(body) > MAX_BODY:
        raise KnowledgeError("invalid_input", f"a title may have {MAX_TITLE} characters and a body {MAX_BODY}")
    if valid_from and valid_until and valid_until <= valid_from:
        raise KnowledgeError("invalid_input", "valid_until must be after valid_from")
    kind = Kind(kind)
    origin = ORIGIN_OF_SOURCE[SourceType(source.type)]
    if confidence is None:
        confidence = Decimal("1") if origin is rules.Origin.OWNER else Decimal("0.5")
    confidence = Decimal(str(confidence)).quantize(Decimal("0.001"))
    if not Decimal("0") <= confidence <= Decimal("1"):
        raise KnowledgeError("invalid_input", "confidence is between 0 and 1")

    subject = subject_key(title)
    if entry is None and origin_key:
        entry = KnowledgeEntry.objects.select_for_update().filter(agent=agent, origin_key=origin_key).first()
    if entry is None:
        entry = KnowledgeEntry.objects.create(
            tenant_id=agent.tenant_id, agent=agent, kind=kind, subject=subject, origin_key=origin_key
        )
    else:
        entry = KnowledgeEntry.objects.select_for_update().get(pk=entry.pk)
        if entry.agent_id != agent.pk:
            raise KnowledgeError("not_found", "no such entry", 404)
    phrase = rules.taboo_phrase(taboo_phrase, title) if entry.kind == Kind.TABOO else ""
    latest = None
    if questions is None or translations is None or (entry.kind == Kind.TABOO and not phrase):
        latest = entry.versions.order_by("-number").first()
    if questions is None:
        questions = list(latest.questions) if latest is not None else []
    questions = questions_clean(questions)
    if translations is None:
        # Kept only with the text it translates: a new title or body (a re-uploaded section, an
        # edit) would otherwise leave customers who ask in the other language the old answer.
        same = latest is not None and (latest.title, latest.body) == (title, body)
        translations = dict(latest.translations) if latest is not None and same else {}
    translated = translations_clean(translations)
    if not phrase and latest is not None and entry.kind == Kind.TABOO:
        phrase = latest.taboo_phrase

    extra_terms = list(RegulatedTerm.objects.filter(agent=agent).values_list("term", "category"))
    categories = rules.regulated_categories("\n".join([title, body, *_translated_parts(translated)]), extra_terms)
    decision = rules.l1_decide(
        rules.EntryFacts(
            origin=origin,
            has_source=bool(source.ref),
            has_source_version=bool(source.version),
            confidence=confidence,
            threshold=agent.knowledge_threshold,
            regulated=bool(categories),
            contradicts_approved=_contradicts(agent, subject, body, entry),
            # the entry's own kind: a new version of a lesson is a lesson, whatever `kind` says
            lesson=entry.kind in LESSON_KINDS,
            model_written=_MODEL_WRITING.get(),
        )
    )
    entry.latest_number += 1
    entry.subject = subject
    entry.save(update_fields=["latest_number", "subject"])
    version = EntryVersion.objects.create(
        entry=entry,
        agent=agent,
        number=entry.latest_number,
        title=title,
        body=body,
        source_type=source.type,
        source_ref=source.ref,
        source_version=source.version,
        confidence=confidence,
        regulated=bool(categories),
        regulated_categories=categories,
        valid_from=valid_from,
        valid_until=valid_until,
        status=Status.APPROVED if decision.result is rules.L1Result.APPROVE else Status.PENDING,
        decision_reasons=list(decision.reasons) or ["l1_auto_approved"],
        actor_type=actor.type,
        actor_id=actor.id,
        questions=questions,
        taboo_phrase=phrase,
        translations=translated,
        search_text=search_text(title, body, *questions, *_translated_parts(translated)),
    )
    version.caused_by_seq = events.knowledge_version_created(version=version, actor=actor).seq
    version.save(update_fields=["caused_by_seq"])
    if version.status == Status.APPROVED:
        _refresh_current(entry)
    else:
        signals.version_pending.send(sender=EntryVersion, version=version)
    return version


def _locked(version: EntryVersion) -> EntryVersion:
    # The version and its entry locked, the agent read along unlocked: a FOR UPDATE on the agent
    # row would make every new row of the agent wait at its commit (its deferred FK check) while
    # this transaction waits for the ledger head that row's transaction holds — the lock order of
    # approvals.services._locked (issue 28 §4).
    return (
        EntryVersion.objects.select_for_update(of=("self", "entry")).select_related("entry", "agent").get(pk=version.pk)
    )


@transaction.atomic
def entry_approve(*, version: EntryVersion, actor: Actor) -> EntryVersion:
    """An owner approves a pending version; it takes effect at once.  Called only by the
    decision on the version's L1 change proposal (approvals/services.py): no page, endpoint or
    tool approves knowledge any other way (tests/test_knowledge_approval_paths.py walks them)."""
    _not_by_model("approve knowledge")
    version = _locked(version)
    if version.status != Status.PENDING:
        raise KnowledgeError("not_pending", f"version {version.number} is {version.status}, not pending", 409)
    version.status = Status.APPROVED
    version.save(update_fields=["status"])
    events.knowledge_version_approved(version=version, actor=actor)
    _refresh_current(KnowledgeEntry.objects.select_for_update().get(pk=version.entry_id))
    return version


@transaction.atomic
def entry_reject(*, version: EntryVersion, actor: Actor, reason: str = "") -> EntryVersion:
    """A pending version is turned down (the owner rejected its proposal, or replaced it with an
    edited text); it is never served and stays in the history."""
    version = _locked(version)
    if version.status != Status.PENDING:
        raise KnowledgeError("not_pending", f"version {version.number} is {version.status}, not pending", 409)
    version.status = Status.REJECTED
    version.save(update_fields=["status"])
    events.knowledge_version_rejected(version=version, actor=actor, reason=reason)
    return version


@transaction.atomic
def entry_restore(*, entry: KnowledgeEntry, number: int, actor: Actor) -> EntryVersion:
    """Restore an earlier version as a new one.  Only content that was approved once can come
    back this way; the versions after it are marked rolled back."""
    _not_by_model("restore knowledge")
    entry = KnowledgeEntry.objects.select_for_update(of=("self",)).select_related("agent").get(pk=entry.pk)
    target = entry.versions.filter(number=number).first()
    if target is None:
        raise KnowledgeError("not_found", f"entry {entry.pk} has no version {number}", 404)
    was_approved = target.status in (Status.APPROVED, Status.ROLLED_BACK, Status.EXPIRED)
    if not was_approved:
        raise KnowledgeError("not_restorable", f"version {number} was never approved ({target.status})", 409)
    for later in entry.versions.filter(number__gt=number, status=Status.APPROVED).order_by("number"):
        later.status = Status.ROLLED_BACK
        later.save(update_fields=["status"])
        events.knowledge_version_rolled_back(version=later, actor=actor, restored=number)
    entry.latest_number += 1
    entry.save(update_fields=["latest_number"])
    restored = EntryVersion.objects.create(
        entry=entry,
        agent=entry.agent,
        number=entry.latest_number,
        title=target.title,
        body=target.body,
        source_type=target.source_type,
        source_ref=target.source_ref,
        source_version=target.source_version,
        confidence=target.confidence,
        regulated=target.regulated,
        regulated_categories=target.regulated_categories,
        valid_from=target.valid_from,
        valid_until=target.valid_until,
        status=Status.APPROVED,
        decision_reasons=[f"restored_from_v{number}"],
        actor_type=actor.type,
        actor_id=actor.id,
        restored_from=target,
        questions=target.questions,
        translations=target.translations,
        search_text=target.search_text,
    )
    restored.caused_by_seq = events.knowledge_version_restored(version=restored, actor=actor, restored=number).seq
    restored.save(update_fields=["caused_by_seq"])
    _refresh_current(entry)
    return restored


def _batch_filter(
    agent: AgentProfile,
    source_type: str | None,
    source_ref: str | None,
    source_version: str | None,
    since: dt.datetime | None,
    until: dt.datetime | None,
) -> Q:
    if not any((source_type, source_ref, source_version, since, until)):
        raise KnowledgeError("invalid_input", "name a source type, reference, version or a time window")
    query = Q(agent=agent)
    if source_type:
        query &= Q(source_type=source_type)
    if source_ref:
        query &= Q(source_ref=source_ref)
    if source_version:
        query &= Q(source_version=source_version)
    if since:
        query &= Q(created_at__gte=since)
    if until:
        query &= Q(created_at__lt=until)
    return query


def _transition(
    versions: Any, actor: Actor, event: Callable[..., AppendedEvent], change: Callable[[EntryVersion], None]
) -> list[EntryVersion]:
    """Lock the versions, change each one, record an event per version, then re-point their
    entries at what now takes effect.  The batch writes of this module all go through here."""
    locked = list(versions.select_for_update(of=("self", "entry")).select_related("entry", "agent").order_by("pk"))
    for version in locked:
        change(version)
        version.save(update_fields=["status", "decision_reasons"])
        event(version=version, actor=actor)
    for entry_id in sorted({v.entry_id for v in locked}):
        _refresh_current(KnowledgeEntry.objects.select_for_update().get(pk=entry_id))
    return locked


def _quarantine(version: EntryVersion) -> None:
    version.decision_reasons = [*version.decision_reasons, f"quarantined_from_{version.status}"]
    version.status = Status.QUARANTINED


def _release(version: EntryVersion) -> None:
    before = next(
        (
            r.removeprefix("quarantined_from_")
            for r in reversed(version.decision_reasons)
            if r.startswith("quarantined_from_")
        ),
        Status.PENDING,
    )
    version.status = Status.APPROVED if before == Status.APPROVED else Status.PENDING
    version.decision_reasons = [*version.decision_reasons, "released_from_quarantine"]


def _expire(version: EntryVersion) -> None:
    version.status = Status.EXPIRED


@transaction.atomic
def knowledge_quarantine(
    *,
    agent: AgentProfile,
    actor: Actor,
    source_type: str | None = None,
    source_ref: str | None = None,
    source_version: str | None = None,
    since: dt.datetime | None = None,
    until: dt.datetime | None = None,
) -> int:
    """Take every approved or pending version from a source (or a time window) out of service
    at once — the response to bad material or poisoned content."""
    query = _batch_filter(agent, source_type, source_ref, source_version, since, until)
    versions = EntryVersion.objects.filter(query, status__in=[Status.APPROVED, Status.PENDING])
    return len(_transition(versions, actor, events.knowledge_version_quarantined, _quarantine))


@transaction.atomic
def knowledge_unquarantine(
    *,
    agent: AgentProfile,
    actor: Actor,
    source_type: str | None = None,
    source_ref: str | None = None,
    source_version: str | None = None,
    since: dt.datetime | None = None,
    until: dt.datetime | None = None,
) -> int:
    """Put quarantined versions back into the status they had."""
    _not_by_model("release knowledge from quarantine")
    query = _batch_filter(agent, source_type, source_ref, source_version, since, until)
    versions = EntryVersion.objects.filter(query, status=Status.QUARANTINED)
    released = _transition(versions, actor, events.knowledge_version_released, _release)
    for version in released:
        # Back to waiting: it needs a decidable proposal again (its old one may have been
        # rejected or expired while the version was out of service).
        if version.status == Status.PENDING:
            signals.version_pending.send(sender=EntryVersion, version=version)
    return len(released)


@transaction.atomic
def knowledge_expire(*, now: dt.datetime | None = None) -> int:
    """Mark versions past `valid_until` expired (search never serves them anyway)."""
    versions = EntryVersion.objects.filter(status=Status.APPROVED, valid_until__lte=now or timezone.now())
    return len(_transition(versions, Actor.platform("knowledge_expire"), events.knowledge_version_expired, _expire))


@transaction.atomic
def regulated_term_add(*, agent: AgentProfile, term: str, category: str, actor: Actor) -> RegulatedTerm:
    term = term.strip()
    if not term or len(term) > 100 or not category.strip():
        raise KnowledgeError("invalid_input", "a regulated term needs 1 to 100 characters and a category")
    row, _ = RegulatedTerm.objects.update_or_create(agent=agent, term=term, defaults={"category": category.strip()})
    events.knowledge_regulated_term_set(agent=agent, term=row, actor=actor)
    return row


def knowledge_hits_record(
    *,
    agent: AgentProfile | None = None,
    agent_id: int | None = None,
    session_id: Any,
    versions: list[EntryVersion] | None = None,
    version_ids: list[int] | None = None,
) -> int:
    """Record the versions a customer reply used (for the knowledge-hit rate): versions, or the
    ids of versions of this agent (only those count; others are ignored).  One statement: the
    rows are inserted from the agent's own versions, so a foreign id is dropped by the same
    query that records the rest.  Returns how many were recorded."""
    owner = agent.pk if agent is not None else agent_id
    if owner is None:
        raise ValueError("knowledge_hits_record needs the agent or its id")
    ids = sorted({v.pk for v in versions or []} | set(version_ids or []))
    if not ids:
        return 0
    marks = ", ".join(["%s"] * len(ids))
    # Raw SQL gets the values as the ORM would store them (SQLite keeps UUIDs as hex, times as text).
    session_value = KnowledgeHit._meta.get_field("session_id").get_db_prep_value(session_id, connection)
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO knowledge_knowledgehit (agent_id, session_id, version_id, created_at) "
            f"SELECT agent_id, %s, id, %s FROM knowledge_entryversion WHERE agent_id = %s AND id IN ({marks})",
            [session_value, now, owner, *ids],
        )
        return int(cursor.rowcount)


def knowledge_miss_record(*, agent: AgentProfile, session_id: Any, query: str, asker: str = "") -> KnowledgeMiss:
    """Record that nothing approved answered; only the topic key of the question is stored, with
    who asked (a customer's or peer's id; the session when not given) so that topics can be
    counted by distinct askers."""
    asker = str(asker or session_id or "")[:64]
    # Both are made from the question with its personal data removed first (knowledge.personal):
    # what must never reach an owner is gone before the topic exists.
    return KnowledgeMiss.objects.create(
        agent=agent,
        session_id=session_id,
        asker=asker,
        topic_key=topic_key(query)[:200],
        label=topic_words(query)[:200],
    )


# Where the owner's page writes come from: the source of the versions they create.
PAGE_SOURCE_NEW = "owner_page:new"
PAGE_SOURCE_ATTACH = "owner_page:attach"


def _page_source(ref: str) -> SourceIn:
    return SourceIn(type=SourceType.OWNER_DIALOGUE, ref=ref, version=timezone.now().isoformat(timespec="seconds"))


def _topics_resolve(*, agent: AgentProfile, topic: str, version: EntryVersion, how: str, actor: Actor) -> int:
    """Mark the open misses of a topic resolved by `version` (kept, not deleted)."""
    misses = KnowledgeMiss.objects.filter(agent=agent, topic_key=topic, resolved_at__isnull=True)
    count = misses.update(resolved_at=timezone.now(), resolved_version=version)
    events.knowledge_topic_resolved(version=version, topic=topic, misses=count, how=how, actor=actor)
    return count


def _open_topic(agent: AgentProfile, topic: str) -> str:
    topic = " ".join(topic.split())
    if not topic or topic == EMPTY_TOPIC:
        raise KnowledgeError("invalid_input", "name the topic to answer")
    if not KnowledgeMiss.objects.filter(agent=agent, topic_key=topic, resolved_at__isnull=True).exists():
        raise KnowledgeError("not_found", "no unanswered question has this topic", 404)
    return topic


@transaction.atomic
def topic_answer(
    *,
    agent: AgentProfile,
    topic: str,
    title: str,
    body: str,
    questions: list[str],
    actor: Actor,
    translations: dict[str, Any] | None = None,
) -> EntryVersion:
    """The owner answers an unanswered topic with a new entry (written on the owner's pages):
    an L1 change like any other, and the topic's misses are resolved by it."""
    topic = _open_topic(agent, topic)
    version = entry_propose(
        agent=agent,
        title=title,
        body=body,
        questions=questions,
        translations=translations or {},
        actor=actor,
        source=_page_source(PAGE_SOURCE_NEW),
    )
    _topics_resolve(agent=agent, topic=topic, version=version, how="answered", actor=actor)
    return version


@transaction.atomic
def topic_attach(*, agent: AgentProfile, topic: str, entry: KnowledgeEntry, actor: Actor) -> EntryVersion:
    """The owner says an existing entry answers an unanswered topic: a new version of the entry's
    served version with the topic among its questions (the same title and body), so that search
    finds the entry for that question from now on; the topic's misses are resolved by it."""
    topic = _open_topic(agent, topic)
    if entry.agent_id != agent.pk:
        raise KnowledgeError("not_found", "no such entry", 404)
    # The version customers are served: never a pending one, whose content (a customer candidate,
    # say) nobody approved — a new version from the owner's page would approve it unseen.
    latest = entry.current_version
    if latest is None:
        raise KnowledgeError("not_served", "only an entry customers are served can take a question", 409)
    version = entry_propose(
        agent=agent,
        entry=entry,
        title=latest.title,
        body=latest.body,
        kind=entry.kind,
        confidence=latest.confidence,
        valid_from=latest.valid_from,
        valid_until=latest.valid_until,
        questions=[*latest.questions, topic_asked(agent, topic)],
        translations=latest.translations,
        actor=actor,
        source=_page_source(PAGE_SOURCE_ATTACH),
    )
    _topics_resolve(agent=agent, topic=topic, version=version, how="attached", actor=actor)
    return version


def topic_asked(agent: AgentProfile, topic: str) -> str:
    """A topic as its customers asked it (the words of its latest miss, personal data removed),
    or the key's own label for misses recorded before labels were kept."""
    label = (
        KnowledgeMiss.objects.filter(agent=agent, topic_key=topic)
        .exclude(label="")
        .order_by("-created_at", "-pk")
        .values_list("label", flat=True)
        .first()
    )
    return label or topic_label(topic)


def topics_resolve_published(*, agent: AgentProfile, refs: list[str], version: EntryVersion, actor: Actor) -> int:
    """An answer was published for the topics `refs` name (`rules.topic_ref`: the hash the
    daily review and its proposals know a topic by, never its words): their open misses are
    resolved by `version` from now on; a topic asked again after this counts anew.  Called inside
    the transaction that approves the answer (approvals' decision on the review's draft)."""
    wanted = set(refs)
    if not wanted:
        return 0
    keys = (
        KnowledgeMiss.objects.filter(agent=agent, resolved_at__isnull=True)
        .values_list("topic_key", flat=True)
        .distinct()
    )
    resolved = 0
    for key in sorted({key for key in keys if rules.topic_ref(key) in wanted}):
        resolved += _topics_resolve(agent=agent, topic=key, version=version, how="published", actor=actor)
    return resolved
