"""The limits on documents, read from settings (see facade/settings/knowledge.py and README's
configuration table) at the moment they apply, so a test or a deployment can change them."""

from __future__ import annotations

from django.conf import settings

from .extract import MAX_BYTES, Limits
from .isolate import Budget

__all__ = ["ingest_limits", "ingest_max_bytes", "upload_batch", "upload_budget", "upload_limits"]


def upload_limits() -> Limits:
    return Limits(
        max_sections=settings.FACADE_UPLOAD_MAX_SECTIONS,
        max_chars=settings.FACADE_UPLOAD_MAX_CHARS,
        advice="Split it into smaller files and upload them separately.",
    )


def upload_budget() -> Budget:
    return Budget(
        seconds=float(settings.FACADE_UPLOAD_MAX_SECONDS),
        memory_bytes=settings.FACADE_UPLOAD_MAX_MEMORY_MB * 1024 * 1024,
    )


def upload_batch() -> int:
    return max(int(settings.FACADE_UPLOAD_BATCH_SECTIONS), 1)


def ingest_max_bytes() -> int:
    return min(int(settings.FACADE_INGEST_MAX_BYTES), MAX_BYTES)


def ingest_limits(uploads_url: str) -> Limits:
    """The synchronous ingest's limits: a request and one transaction can afford only a small
    document, so a refusal points at the upload endpoint, which takes the rest."""
    upload = upload_limits()
    return Limits(
        max_sections=min(settings.FACADE_INGEST_MAX_SECTIONS, settings.FACADE_UPLOAD_MAX_SECTIONS),
        max_chars=upload.max_chars,
        advice=(
            f"Send it to POST {uploads_url} instead: a worker ingests documents of up to "
            f"{upload.max_sections:,} sections and {MAX_BYTES // (1024 * 1024)} MB, with progress."
        ),
    )
