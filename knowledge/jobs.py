"""Uploads processed by a Celery worker, with progress the owner's page can poll."""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor
from ledger.models import ActorType

from .extract import ExtractError
from .ingest import ingest_material_in_batches
from .isolate import extract_isolated
from .limits import upload_batch, upload_budget, upload_limits
from .models import IngestJob
from .services import KnowledgeError

PROGRESS_TTL = 3600
LOST_AFTER = dt.timedelta(minutes=2)


def _progress_key(job: IngestJob) -> str:
    # The creation time keeps a reused id (a fresh database) from reading an old job's progress.
    return f"knowledge:ingest:{job.pk}:{job.created_at.timestamp():.6f}"


@transaction.atomic
def ingest_job_create(*, agent: AgentProfile, filename: str, media_type: str, data: bytes, actor: Actor) -> IngestJob:
    """Queue a checked upload (see :func:`knowledge.extract.precheck`); the worker is asked after
    the commit and does the extraction, so the request never parses the document."""
    from .tasks import ingest_job_run

    job = IngestJob.objects.create(
        agent=agent,
        filename=filename[:200],
        media_type=media_type,
        sha256=hashlib.sha256(data).hexdigest(),
        data=data,
        requested_by=actor.id,
    )
    transaction.on_commit(lambda: ingest_job_run.delay(job.pk))
    return job


def _fail(job_id: int, exc: KnowledgeError | ExtractError) -> str:
    IngestJob.objects.filter(pk=job_id).update(
        state=IngestJob.State.FAILED,
        error_code=exc.code,
        error_detail=exc.detail[:300],
        data=b"",
        finished_at=timezone.now(),
    )
    return "failed"


def ingest_job_execute(job_id: int) -> str:
    """Run one queued job: claim it (so running twice is harmless), extract the file in a child
    process held to the upload limits, store its sections in bounded batches, then record the
    outcome.  A document over a limit fails with the error naming it."""
    claimed = IngestJob.objects.filter(pk=job_id, state=IngestJob.State.QUEUED).update(state=IngestJob.State.RUNNING)
    if not claimed:
        return "skipped"
    job = IngestJob.objects.select_related("agent__tenant").get(pk=job_id)

    def report(done: int, total: int) -> None:
        cache.set(_progress_key(job), {"done": done, "total": total}, PROGRESS_TTL)

    try:
        extracted = extract_isolated(
            job.filename,
            bytes(job.data),
            declared_type=job.media_type,
            limits=upload_limits(),
            budget=upload_budget(),
        )
        IngestJob.objects.filter(pk=job_id).update(total=len(extracted.sections))
        outcome = ingest_material_in_batches(
            agent=job.agent,
            extracted=extracted,
            document=job.filename,
            actor=Actor(ActorType.HUMAN, job.requested_by),
            progress=report,
            batch=upload_batch(),
        )
    except (KnowledgeError, ExtractError) as exc:
        return _fail(job_id, exc)
    IngestJob.objects.filter(pk=job_id).update(
        state=IngestJob.State.DONE,
        created=len(outcome.created),
        unchanged=outcome.unchanged,
        data=b"",
        finished_at=timezone.now(),
    )
    return "done"


def ingest_job_status(job: IngestJob) -> dict[str, Any]:
    try:
        live = cache.get(_progress_key(job)) or {}
    except Exception:  # noqa: BLE001 - progress is shown, never needed (the cache may be away)
        live = {}
    done = job.total if job.state in (IngestJob.State.DONE,) else int(live.get("done", 0))
    # The worker knows the number of sections once it has read the file; until then, 0.
    return {
        "id": job.pk,
        "filename": job.filename,
        "state": job.state,
        "done": done,
        "total": job.total,
        "created": job.created,
        "unchanged": job.unchanged,
        "error": {"error": job.error_code, "detail": job.error_detail} if job.error_code else None,
    }


def lost_jobs() -> list[int]:
    """Queued jobs whose dispatch seems lost (e.g. the broker was down at commit time)."""
    cutoff = timezone.now() - LOST_AFTER
    return list(
        IngestJob.objects.filter(state=IngestJob.State.QUEUED, created_at__lt=cutoff).values_list("pk", flat=True)
    )
