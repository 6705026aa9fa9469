"""Turning extracted documents into knowledge versions (one transaction per document)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction

from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor

from .extract import Extracted
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
    """Create or update one entry per section of a document.

    Each section's source reference is `<document>#<anchor>` and its source version is the
    document's SHA-256.  A section whose current text is already stored is left alone, so
    re-ingesting an unchanged file creates nothing; a changed section gets a new version of the
    entry it produced before.  Any failure rolls the whole document back."""
    document = document.strip()[:200]
    if not document:
        raise KnowledgeError("invalid_input", "the material needs a name or title")
    if not extracted.sections:
        raise KnowledgeError("no_content", "no text could be extracted from this material", 422)
    if confidence is None:
        confidence = DOUBTFUL_CONFIDENCE if extracted.doubtful else Decimal("1")
    created: list[EntryVersion] = []
    unchanged = 0
    total = len(extracted.sections)
    for done, section in enumerate(extracted.sections):
        if progress is not None:
            progress(done, total)
        origin_key = f"{document}#{section.anchor}"[:300]
        entry = KnowledgeEntry.objects.select_for_update().filter(agent=agent, origin_key=origin_key).first()
        if entry is not None:
            latest = entry.versions.order_by("-number").first()
            if (
                latest is not None
                and latest.title == section.title.strip()[:300]
                and latest.body == section.body.strip()
            ):
                unchanged += 1
                continue
        created.append(
            entry_propose(
                agent=agent,
                title=section.title[:300],
                body=section.body,
                source=SourceIn(type=SourceType(source_type), ref=origin_key, version=extracted.sha256),
                actor=actor,
                kind=kind,
                confidence=confidence,
                origin_key=origin_key,
                entry=entry,
            )
        )
    if progress is not None:
        progress(total, total)
    return IngestOutcome(created=created, unchanged=unchanged, document=document, sha256=extracted.sha256)
