from __future__ import annotations

from celery import shared_task

from .jobs import ingest_job_execute, ingest_jobs_lost, lost_jobs
from .services import knowledge_expire


@shared_task(name="knowledge.tasks.ingest_job_run")
def ingest_job_run(job_id: int) -> str:
    return ingest_job_execute(job_id)


@shared_task(name="knowledge.tasks.sweep")
def sweep() -> dict[str, int]:
    """Re-dispatch lost ingest jobs, run again (once) the jobs whose worker died, and mark expired
    knowledge.  Harmless to run twice."""
    lost = lost_jobs()  # first: a job queued again below is not sent twice
    again = ingest_jobs_lost()
    for job_id in [*lost, *again]:
        ingest_job_run.delay(job_id)
    return {"redispatched": len(lost), "retried": len(again), "expired": knowledge_expire()}
