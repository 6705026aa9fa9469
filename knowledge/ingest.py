"""Turning extracted documents into knowledge versions (one transaction per document)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction

from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor

from .extract import Extracted, Section
from .models import EntryVersion, Kind, KnowledgeEntry, SourceType
from .schemas import SourceIn
from .services import KnowledgeError, entry_propose

# Material the owner supplies counts as certain unless extraction was doubtful.
DOUBTFUL_CONFIDENCE = Decimal("0.5")


@dataclass(frozen=True)
class IngestOutcome:
    created: list[EntryVersion]
    unchanged: int
    document: str
    sha256: str


@transaction.atomic
def ingest_material(
    *,
    agent: AgentProfile,
    extracted: Extracted,
    document: str,
    actor: Actor,
    source_type: SourceType | str = SourceType.UPLOAD,
    kind: Kind | str = Kind.FACT,
    confidence: Decimal | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> IngestOutcome:
    """Create or update one entry per section of a document, in one transaction.

    Each section's source reference is `<document>#<anchor>` and its source version is the
    document's SHA-256.  A section whose current text is already stored is left alone, so
    re-ingesting an unchanged file creates nothing; a changed section gets a new version of the
    entry it produced before.  Any failure rolls the whole document back — which is why only
    small documents come this way (the synchronous ingest's limits); uploads use
    :func:`ingest_material_in_batches`."""
    return ingest_material_in_batches(
        agent=agent,
        extracted=extracted,
        document=document,
        actor=actor,
        source_type=source_type,
        kind=kind,
        confidence=confidence,
        progress=progress,
        batch=max(len(extracted.sections), 1),
    )


def ingest_material_in_batches(
    *,
    agent: AgentProfile,
    extracted: Extracted,
    document: str,
    actor: Actor,
    batch: int,
    source_type: SourceType | str = SourceType.UPLOAD,
    kind: Kind | str = Kind.FACT,
    confidence: Decimal | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> IngestOutcome:
    """As :func:`ingest_material`, committing every ``batch`` sections.

    Each version is written with its ledger event, and appending to the tenant's chain holds the
    chain until the commit (on SQLite, the whole database): a large document in one transaction
    kept every other write of the tenant waiting for it.  Batches bound that wait.  A failure keeps
    the batches already committed; running the document again stores only what is missing, since
    unchanged sections are skipped."""
    if batch < 1:
        raise ValueError("batch must be positive")
    document = document.strip()[:200]
    if not document:
        raise KnowledgeError("invalid_input", "the material needs a name or title")
    if not extracted.sections:
        raise KnowledgeError("no_content", "no text could be extracted from this material", 422)
    if confidence is None:
        confidence = DOUBTFUL_CONFIDENCE if extracted.doubtful else Decimal("1")
    created: list[EntryVersion] = []
    unchanged = 0
    sections = extracted.sections
    total = len(sections)
    for start in range(0, total, batch):
        with transaction.atomic():
            for done, section in enumerate(sections[start : start + batch], start=start):
                if progress is not None:
                    progress(done, total)
                version = _ingest_section(
                    agent=agent,
                    section=section,
                    document=document,
                    sha256=extracted.sha256,
                    actor=actor,
                    source_type=source_type,
                    kind=kind,
                    confidence=confidence,
                )
                if version is None:
                    unchanged += 1
                else:
                    created.append(version)
    if progress is not None:
        progress(total, total)
    return IngestOutcome(created=created, unchanged=unchanged, document=document, sha256=extracted.sha256)


def _ingest_section(
    *,
    agent: AgentProfile,
    section: Section,
    document: str,
    sha256: str,
    actor: Actor,
    source_type: SourceType | str,
    kind: Kind | str,
    confidence: Decimal,
) -> EntryVersion | None:
    """A new version for one section, or None when its current text is stored already."""
    origin_key = f"{document}#{section.anchor}"[:300]
    entry = KnowledgeEntry.objects.select_for_update().filter(agent=agent, origin_key=origin_key).first()
    if entry is not None:
        latest = entry.versions.order_by("-number").first()
        if latest is not None and latest.title == section.title.strip()[:300] and latest.body == section.body.strip():
            return None
    return entry_propose(
        agent=agent,
        title=section.title[:300],
        body=section.body,
        source=SourceIn(type=SourceType(source_type), ref=origin_key, version=sha256),
        actor=actor,
        kind=kind,
        confidence=confidence,
        origin_key=origin_key,
        entry=entry,
    )
