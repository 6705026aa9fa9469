"""Pending knowledge becomes an L1 change proposal (issue 12): whenever the knowledge step's L1
rule leaves a version waiting — an owner page, the knowledge API, an ingest job, owner-chat
teaching, a review or a feed — a pending `knowledge_draft` (facts, FAQs, policies) or `lesson`
(preferences, wording, taboos) proposal pointing at that version is filed in the same
transaction, and deciding that proposal is the only way the version becomes approved
(services._apply_knowledge; no page, endpoint or tool calls `entry_approve`).

Why a signal: the dependency direction is approvals → knowledge, and every writer of a pending
version goes through knowledge's services (`entry_propose`, `knowledge_unquarantine`).  Owning
every call site here would leave the next caller of `entry_propose` without a proposal; the
knowledge services instead send `knowledge.signals.version_pending` inside their transaction and
this module, connected in approvals/apps.py, files the proposal.  Knowledge never imports
approvals; a failure here rolls the knowledge write back.

Origin: material the owner supplies themselves (pages, API, uploads) is `owner_direct`; a version
made by a model or a job from other material is the matching model origin (review → review
report, industry feed → observe digest, customer conversations → customer candidate); what the
model wrote down in the owner's chat (teaching tools) is `owner_dialogue` — the tools say so with
`from_owner_chat`."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from facade.tenancy.schemas import Actor
from knowledge.models import LESSON_KINDS, EntryVersion, SourceType
from ledger.models import ActorType

from .models import ChangeProposal, ProposalStatus
from .rules import Origin
from .schemas import Kind, payload_parse

ORIGIN_OF_SOURCE: dict[str, Origin] = {
    SourceType.OWNER_DIALOGUE: Origin.OWNER_DIRECT,
    SourceType.UPLOAD: Origin.OWNER_DIRECT,
    SourceType.URL: Origin.OWNER_DIRECT,
    SourceType.REVIEW: Origin.REVIEW_REPORT,
    SourceType.OBSERVE: Origin.OBSERVE_DIGEST,
    SourceType.CUSTOMER: Origin.CUSTOMER_CANDIDATE,
}

# A customer candidate's words are customer text, which owner-facing pages never show: its
# proposal names it instead, and the owner who wants other words writes them into the draft.
CUSTOMER_TITLE = "Customer candidate (entry {entry})"
CUSTOMER_TEXT = (
    "Drawn from customer conversations; its words are not shown here. Approving serves version "
    "{number} as stored; write your own answer here to approve that instead."
)

_OWNER_CHAT: ContextVar[uuid.UUID | str | None] = ContextVar("approvals_owner_chat", default=None)


@contextmanager
def from_owner_chat(session_id: uuid.UUID | str) -> Iterator[None]:
    """Knowledge written inside this block was written by the model in the owner's chat (the
    teaching tools): its proposals' origin is `owner_dialogue`, with the conversation as evidence."""
    token = _OWNER_CHAT.set(session_id)
    try:
        yield
    finally:
        _OWNER_CHAT.reset(token)


def draft_of(version: EntryVersion) -> tuple[Kind, dict[str, Any]]:
    """The kind and the payload of the proposal that decides `version`, normalised as the
    proposal stores it (so that an owner's edit can be told from the version's own text)."""
    if version.source_type == SourceType.CUSTOMER:
        title = CUSTOMER_TITLE.format(entry=version.entry_id)
        text = CUSTOMER_TEXT.format(number=version.number)
    else:
        title, text = version.title, version.body
    entry_kind = str(version.entry.kind)
    if entry_kind in LESSON_KINDS:
        kind = Kind.LESSON
        raw: dict[str, Any] = {"kind": entry_kind, "version_id": version.pk, "title": title, "text": text}
    else:
        kind = Kind.KNOWLEDGE_DRAFT
        raw = {"entry_id": version.entry_id, "version_id": version.pk, "title": title, "text": text}
        if version.translations and version.source_type != SourceType.CUSTOMER:
            raw["translations"] = {
                language: {"title": value.get("title", ""), "text": value.get("body", "")}
                for language, value in version.translations.items()
            }
    return kind, payload_parse(kind, raw).model_dump(mode="json")


def _summary(version: EntryVersion, payload: dict[str, Any]) -> str:
    title = " ".join(str(payload["title"]).split())
    # "lesson" says no more than the card's kind does: every lesson waits; nor does
    # "written_by_model" for what the owner chat wrote down: all of it waits (issue 28 §1).
    reasons = ", ".join(
        r
        for r in version.decision_reasons
        if not r.startswith("quarantined_from_") and r not in ("lesson", "written_by_model")
    )
    text = f"{title} (version {version.number}) waits for your decision"
    if reasons:
        text += f": {reasons}"
    return text if len(text) <= 300 else text[:299] + "…"


def proposal_for_pending_version(sender: Any, version: EntryVersion, **_: Any) -> None:
    """Receiver of `knowledge.signals.version_pending`: file the version's pending proposal,
    unless it has one already (a quarantine was released) or it is itself the application of a
    decided proposal (an owner's edited draft, whose source reference is that proposal).  What the
    owner chat wrote is caused by the owner's message there; a lesson from it is also recorded as
    `lesson.recorded`."""
    from .events import latest_seq, lesson_recorded
    from .services import proposal_create  # services imports this module

    if version.source_ref.startswith("chg_") and ChangeProposal.objects.filter(pk=version.source_ref).exists():
        return
    if ChangeProposal.objects.filter(
        agent_id=version.agent_id, status=ProposalStatus.PENDING, payload__version_id=version.pk
    ).exists():
        return
    kind, payload = draft_of(version)
    session = _OWNER_CHAT.get()
    origin = Origin.OWNER_DIALOGUE if session is not None else ORIGIN_OF_SOURCE[version.source_type]
    evidence: list[dict[str, Any]] = [{"type": "knowledge_version", "id": version.pk}]
    if session is not None:
        evidence.append({"type": "session", "id": str(session)})
    actor = Actor(ActorType(version.actor_type), version.actor_id)
    proposal = proposal_create(
        agent=version.agent,
        kind=kind,
        payload=payload,
        summary=_summary(version, payload),
        origin=origin,
        actor=actor,
        evidence=evidence,
        caused_by=latest_seq(version.agent.tenant_id, "session", str(session)) if session is not None else None,
    )
    if session is not None and kind == Kind.LESSON:
        lesson_recorded(
            proposal=proposal,
            entry_id=version.entry_id,
            version=version.number,
            kind=str(version.entry.kind),
            session=str(session),
            actor=actor,
        )
