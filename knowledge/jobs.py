"""Uploads processed by a Celery worker, with progress the owner's page can poll."""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

from django.core.cache import cache
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone
from django.utils.translation import gettext

from facade.leases import WORKER_LOST, Leased, Verdict, lease_kept, lease_until, lease_verdict, leases_expired
from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor
from ledger.models import ActorType

from . import events
from .extract import ExtractError
from .ingest import ingest_material_in_batches
from .isolate import extract_isolated
from .limits import upload_batch, upload_budget, upload_limits
from .models import IngestJob
from .services import KnowledgeError

PROGRESS_TTL = 3600
LOST_AFTER = dt.timedelta(minutes=2)
LEASED = Leased(IngestJob, "state", IngestJob.State.RUNNING)
SWEEP_ACTOR = Actor.platform("knowledge_sweep")


def _progress_key(job: IngestJob) -> str:
    # The creation time keeps a reused id (a fresh database) from reading an old job's progress;
    # the attempt starts a retry's count at nothing.
    return f"knowledge:ingest:{job.pk}:{job.created_at.timestamp():.6f}:{job.attempts}"


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


def _fail(held: QuerySet[IngestJob], exc: KnowledgeError | ExtractError) -> str:
    held.update(
        state=IngestJob.State.FAILED,
        error_code=exc.code,
        error_detail=exc.detail[:300],
        data=b"",
        finished_at=timezone.now(),
        lease_expires_at=None,
    )
    return "failed"


def ingest_job_execute(job_id: int) -> str:
    """Run one queued job: claim it (so running twice is harmless) with a lease its worker renews
    while it works (facade/leases.py), extract the file in a child process held to the upload
    limits, store its sections in bounded batches, then record the outcome — only while this run
    still holds the job (a run the sweep gave up for dead writes nothing).  A document over a limit
    fails with the error naming it.  A retry starts from the start: the sections its lost run
    committed are found unchanged, so nothing is stored twice."""
    claimed = IngestJob.objects.filter(pk=job_id, state=IngestJob.State.QUEUED).update(
        state=IngestJob.State.RUNNING, attempts=F("attempts") + 1, lease_expires_at=lease_until()
    )
    if not claimed:
        return "skipped"
    job = IngestJob.objects.select_related("agent__tenant").get(pk=job_id)
    with lease_kept(LEASED, job.pk, job.attempts):
        return _run(job, LEASED.held(job.pk, job.attempts))


def _run(job: IngestJob, held: QuerySet[IngestJob]) -> str:
    """The job's work, writing through `held`: the job while this run still holds it."""

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
        held.update(total=len(extracted.sections))
        outcome = ingest_material_in_batches(
            agent=job.agent,
            extracted=extracted,
            document=job.filename,
            actor=Actor(ActorType.HUMAN, job.requested_by),
            progress=report,
            batch=upload_batch(),
        )
    except (KnowledgeError, ExtractError) as exc:
        return _fail(held, exc)
    finished = held.update(
        state=IngestJob.State.DONE,
        created=len(outcome.created),
        unchanged=outcome.unchanged,
        data=b"",
        finished_at=timezone.now(),
        lease_expires_at=None,
    )
    return "done" if finished else "superseded"


def ingest_job_status(job: IngestJob) -> dict[str, Any]:
    try:
        live = cache.get(_progress_key(job)) or {}
    except Exception:  # noqa: BLE001 - progress is shown, never needed (the cache may be away)
        live = {}
    done = job.total if job.state in (IngestJob.State.DONE,) else int(live.get("done", 0))
    # The worker knows the number of sections once it has read the file; until then, 0.
    return {
        **_retry_of(job),
        "id": job.pk,
        "filename": job.filename,
        "state": job.state,
        "done": done,
        "total": job.total,
        "created": job.created,
        "unchanged": job.unchanged,
        "error": {"error": job.error_code, "detail": _detail(job)} if job.error_code else None,
    }


def _retry_of(job: IngestJob) -> dict[str, Any]:
    """`attempt`: the run the job is at (0 before the first starts); `retry`: the job is waiting or
    running again because the worker of its first run died."""
    active = job.state in (IngestJob.State.QUEUED, IngestJob.State.RUNNING)
    retry = active and (job.attempts >= 2 or (job.attempts >= 1 and job.state == IngestJob.State.QUEUED))
    return {"attempt": job.attempts, "retry": retry}


def _detail(job: IngestJob) -> str:
    if job.error_code == WORKER_LOST:
        return gettext(
            "The worker processing this upload stopped twice (it was run again from the start once). "
            "Nothing was stored twice; please upload the document again."
        )
    return job.error_detail


def ingest_jobs_lost(*, now: dt.datetime | None = None) -> list[int]:
    """Judge the running jobs whose lease ran out (their worker died): each runs again from the
    start once — queued again, with `knowledge.ingest_job_retried` — and one whose retry's worker
    died too ends failed (`worker_lost`, with `knowledge.ingest_job_failed`).  Returns the jobs to
    send again (after this commits)."""
    again = []
    with transaction.atomic():
        for job in leases_expired(LEASED, now=now).select_related("agent"):
            if lease_verdict(job.attempts) == Verdict.RETRY:
                job.state, job.lease_expires_at = IngestJob.State.QUEUED, None
                job.save(update_fields=["state", "lease_expires_at"])
                events.knowledge_ingest_job_retried(job=job, actor=SWEEP_ACTOR, reason=WORKER_LOST)
                again.append(job.pk)
                continue
            job.state, job.lease_expires_at, job.finished_at = IngestJob.State.FAILED, None, timezone.now()
            job.error_code, job.data = WORKER_LOST, b""
            job.error_detail = "the worker running this upload died twice; nothing of it was stored twice"
            job.save(update_fields=["state", "lease_expires_at", "finished_at", "error_code", "data", "error_detail"])
            events.knowledge_ingest_job_failed(job=job, actor=SWEEP_ACTOR, reason=WORKER_LOST)
    return again


def lost_jobs() -> list[int]:
    """Queued jobs whose dispatch seems lost (e.g. the broker was down at commit time)."""
    cutoff = timezone.now() - LOST_AFTER
    return list(
        IngestJob.objects.filter(state=IngestJob.State.QUEUED, created_at__lt=cutoff).values_list("pk", flat=True)
    )
