"""Uploads go to a real Celery worker; the owner polls progress.  Bad input is refused before
anything is queued."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.cache import cache

from knowledge.jobs import ingest_job_execute
from knowledge.models import EntryVersion, IngestJob

ROOT = Path(__file__).resolve().parents[1]


def upload(api: Any, agent: Any, name: str, data: bytes) -> Any:
    handle = io.BytesIO(data)
    handle.name = name
    return api.post(f"/api/agents/{agent.slug}/knowledge/uploads", {"file": handle}, format="multipart")


MARKDOWN = (
    "# Delivery\nWe deliver within 3 days in Germany.\n\n"
    "# Pickup\nPickup in Hamburg on weekdays.\n\n"
    "# 包装\n所有包裹都使用可回收材料。"
).encode()


@pytest.mark.django_db
def test_upload_queues_after_commit_and_reports_progress(
    api: Any, world_a: Any, django_capture_on_commit_callbacks: Any
) -> None:
    api.force_login(world_a.owner)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = upload(api, world_a.agent, "shop.md", MARKDOWN)
    assert response.status_code == 202, response.content
    job = response.json()
    # The worker reads the file, so the number of sections is known only once it has (issue 10).
    assert (job["state"], job["total"], job["done"]) == ("queued", 0, 0)
    assert len(callbacks) == 1 and not EntryVersion.objects.exists()

    seen: list[dict[str, int]] = []
    original = cache.set
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cache, "set", lambda key, value, *a, **k: (seen.append(value), original(key, value, *a, **k)))
        assert ingest_job_execute(job["id"]) == "done"
        assert ingest_job_execute(job["id"]) == "skipped"  # a second delivery is harmless
    assert seen[0] == {"done": 0, "total": 3} and seen[-1] == {"done": 3, "total": 3}
    status = api.get(f"/api/agents/{world_a.agent.slug}/knowledge/jobs/{job['id']}").json()
    assert (status["state"], status["done"], status["created"], status["error"]) == ("done", 3, 3, None)
    assert EntryVersion.objects.filter(source_ref__startswith="shop.md#").count() == 3
    assert bytes(IngestJob.objects.get(pk=job["id"]).data) == b""  # the file is not kept once stored


@pytest.mark.django_db
@pytest.mark.parametrize(
    "name, data, status_code, code",
    [
        ("a.exe", b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00", 415, "unsupported_type"),
        ("empty.txt", b"   \n", 422, "no_content"),
        ("broken.pdf", b"%PDF-1.4\n garbage", 422, "corrupt_file"),
        ("broken.docx", b"PK\x03\x04 not really a zip", 422, "corrupt_file"),
    ],
)
def test_bad_uploads_are_refused_and_queue_nothing(
    api: Any, world_a: Any, name: str, data: bytes, status_code: int, code: str
) -> None:
    api.force_login(world_a.owner)
    response = upload(api, world_a.agent, name, data)
    assert response.status_code == status_code and response.json()["error"] == code
    assert not IngestJob.objects.exists() and not EntryVersion.objects.exists()


@pytest.mark.django_db
def test_too_large_upload_is_413(api: Any, world_a: Any) -> None:
    api.force_login(world_a.owner)
    response = upload(api, world_a.agent, "big.txt", b"a" * (10 * 1024 * 1024 + 1))
    assert response.status_code == 413 and response.json()["error"] == "too_large"
    assert not IngestJob.objects.exists()


@pytest.mark.django_db
def test_jobs_of_another_tenant_answer_404(api: Any, world_a: Any, world_b: Any) -> None:
    api.force_login(world_b.owner)
    job = upload(api, world_b.agent, "b.md", MARKDOWN).json()["id"]
    api.force_login(world_a.owner)
    assert api.get(f"/api/agents/{world_b.agent.slug}/knowledge/jobs/{job}").status_code == 404
    assert api.get(f"/api/agents/{world_a.agent.slug}/knowledge/jobs/{job}").status_code == 404


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_ingests_the_upload(api: Any, world_a: Any) -> None:
    db = settings.DATABASES["default"]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "facade.test_settings"}
    env["DATABASE_URL"] = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "facade",
            "worker",
            "--pool",
            "solo",
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
            "--hostname",
            f"test-{os.getpid()}@%h",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        api.force_login(world_a.owner)
        job = upload(api, world_a.agent, "shop.md", MARKDOWN).json()
        deadline = time.monotonic() + 60
        status = job
        while time.monotonic() < deadline and status["state"] not in ("done", "failed"):
            time.sleep(0.3)
            status = api.get(f"/api/agents/{world_a.agent.slug}/knowledge/jobs/{job['id']}").json()
        assert (status["state"], status["created"], status["done"], status["total"]) == ("done", 3, 3, 3)
        results = api.get(f"/api/agents/{world_a.agent.slug}/knowledge/search", {"q": "包裹"}).json()["results"]
        assert [r["title"] for r in results] == ["包装"]
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
