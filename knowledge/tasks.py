from __future__ import annotations

from celery import shared_task

from .jobs import ingest_job_execute, lost_jobs
from .services import knowledge_expire


@shared_task(name="knowledge.tasks.ingest_job_run")
def ingest_job_run(job_id: int) -> str:
    return ingest_job_execute(job_id)


@shared_task(name="knowledge.tasks.sweep")
def sweep() -> dict[str, int]:
    """Re-dispatch lost ingest jobs and mark expired knowledge.  Harmless to run twice."""
    lost = lost_jobs()
    for job_id in lost:
        ingest_job_run.delay(job_id)
    return {"redispatched": len(lost), "expired": knowledge_expire()}
