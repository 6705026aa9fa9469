"""Issue 10, point 5: one upload must not stall every tenant.  Documents have limits (sections,
characters, extraction time and memory), each refused with an error naming it; the synchronous
ingest takes small documents only and points larger ones at the upload endpoint; uploads are
extracted by the worker, not the request, and stored in bounded batches."""

from __future__ import annotations

import io
import threading
import time
from typing import Any

import pytest
from django.core.cache import cache

from knowledge import isolate
from knowledge.extract import ExtractError, Limits
from knowledge.isolate import Budget, extract_isolated
from knowledge.jobs import ingest_job_execute
from knowledge.models import EntryVersion, IngestJob


def markdown(headings: int) -> bytes:
    return "".join(f"# Topic {n}\nWhat we say about topic {n}.\n\n" for n in range(headings)).encode()


def post_file(api: Any, agent: Any, endpoint: str, name: str, data: bytes) -> Any:
    handle = io.BytesIO(data)
    handle.name = name
    return api.post(f"/api/agents/{agent.slug}/knowledge/{endpoint}", {"file": handle}, format="multipart")


def uploads_url(agent: Any) -> str:
    return f"/api/agents/{agent.slug}/knowledge/uploads"


# --- the synchronous ingest takes small documents only ----------------------------------------


@pytest.mark.django_db
def test_sync_ingest_refuses_too_many_sections_and_points_to_uploads(api: Any, world_a: Any, settings: Any) -> None:
    settings.FACADE_INGEST_MAX_SECTIONS = 5
    api.force_login(world_a.owner)
    response = post_file(api, world_a.agent, "ingest", "big.md", markdown(6))
    assert response.status_code == 422, response.content
    body = response.json()
    assert body["error"] == "too_many_sections"
    assert "big.md has 6 headings; the limit is 5 sections per document" in body["detail"]
    assert uploads_url(world_a.agent) in body["detail"]
    assert not EntryVersion.objects.exists()
    assert post_file(api, world_a.agent, "ingest", "small.md", markdown(5)).status_code == 201


@pytest.mark.django_db
def test_sync_json_ingest_refuses_too_many_sections(api: Any, world_a: Any, settings: Any) -> None:
    settings.FACADE_INGEST_MAX_SECTIONS = 5
    api.force_login(world_a.owner)
    payload = {"title": "Notes", "text": markdown(6).decode(), "source": {"type": "upload", "ref": "notes"}}
    response = api.post(f"/api/agents/{world_a.agent.slug}/knowledge/ingest", payload, format="json")
    assert response.status_code == 422 and response.json()["error"] == "too_many_sections"
    assert "the limit is 5 sections" in response.json()["detail"]
    assert not EntryVersion.objects.exists()


@pytest.mark.django_db
def test_sync_ingest_refuses_more_bytes_than_its_limit_and_points_to_uploads(
    api: Any, world_a: Any, settings: Any
) -> None:
    settings.FACADE_INGEST_MAX_BYTES = 1000
    api.force_login(world_a.owner)
    response = post_file(api, world_a.agent, "ingest", "long.txt", b"word " * 201)
    assert response.status_code == 413, response.content
    assert response.json()["error"] == "too_large"
    assert "the limit is 1,000 bytes" in response.json()["detail"]
    assert uploads_url(world_a.agent) in response.json()["detail"]
    # The same file is welcome at the upload endpoint.
    assert post_file(api, world_a.agent, "uploads", "long.txt", b"word " * 201).status_code == 202


# --- uploads: checked in the request, extracted by the worker ---------------------------------


@pytest.mark.django_db
def test_the_upload_request_does_not_extract_the_document(
    api: Any, world_a: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_parsing(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the request parsed the document")

    monkeypatch.setattr("knowledge.extract._split_on_headings", no_parsing)
    monkeypatch.setattr("knowledge.extract._markdown_tokens", no_parsing)
    api.force_login(world_a.owner)
    response = post_file(api, world_a.agent, "uploads", "shop.md", markdown(3))
    assert response.status_code == 202, response.content
    assert IngestJob.objects.get().state == "queued"


def run_upload(api: Any, world: Any, name: str, data: bytes) -> dict[str, Any]:
    api.force_login(world.owner)
    job = post_file(api, world.agent, "uploads", name, data).json()
    ingest_job_execute(job["id"])
    status: dict[str, Any] = api.get(f"/api/agents/{world.agent.slug}/knowledge/jobs/{job['id']}").json()
    return status


@pytest.mark.django_db
def test_an_upload_over_the_section_limit_fails_naming_the_limit(api: Any, world_a: Any, settings: Any) -> None:
    settings.FACADE_UPLOAD_MAX_SECTIONS = 10
    status = run_upload(api, world_a, "faq.md", markdown(11))
    assert status["state"] == "failed"
    assert status["error"] == {
        "error": "too_many_sections",
        "detail": "faq.md has 11 headings; the limit is 10 sections per document. "
        "Split it into smaller files and upload them separately.",
    }
    assert not EntryVersion.objects.exists()
    assert bytes(IngestJob.objects.get().data) == b""


@pytest.mark.django_db
def test_an_upload_over_the_character_limit_fails_naming_the_limit(api: Any, world_a: Any, settings: Any) -> None:
    settings.FACADE_UPLOAD_MAX_CHARS = 1000
    status = run_upload(api, world_a, "notes.txt", ("Plenty of words here. " * 30 + "\n\n").encode() * 3)
    assert status["state"] == "failed" and status["error"]["error"] == "too_many_characters"
    assert "the limit is 1,000 characters per document" in status["error"]["detail"]
    assert not EntryVersion.objects.exists()


def _forever(*args: Any, **kwargs: Any) -> Any:
    while True:
        time.sleep(60)


def _greedy(*args: Any, **kwargs: Any) -> Any:
    return bytearray(8 * 1024 * 1024 * 1024)  # 8 GiB, far past any budget


@pytest.mark.django_db
def test_an_upload_that_reads_too_long_fails_naming_the_time_limit(
    api: Any, world_a: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.FACADE_UPLOAD_MAX_SECONDS = 1
    monkeypatch.setattr(isolate, "extract", _forever)  # a parser that never finishes
    status = run_upload(api, world_a, "slow.md", markdown(3))
    assert status["state"] == "failed" and status["error"]["error"] == "extraction_timeout"
    assert "the limit of 1 seconds per document" in status["error"]["detail"]
    assert not EntryVersion.objects.exists()


@pytest.mark.django_db
def test_an_upload_that_needs_too_much_memory_fails_naming_the_memory_limit(
    api: Any, world_a: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.FACADE_UPLOAD_MAX_MEMORY_MB = 64
    monkeypatch.setattr(isolate, "extract", _greedy)
    status = run_upload(api, world_a, "huge.md", markdown(3))
    assert status["state"] == "failed" and status["error"]["error"] == "extraction_out_of_memory"
    assert "the limit of 64 MB of memory per document" in status["error"]["detail"]


def test_extraction_in_the_child_returns_the_sections_and_its_refusals() -> None:
    budget = Budget(seconds=60, memory_bytes=512 * 1024 * 1024)
    extracted = extract_isolated("a.md", markdown(3), declared_type=None, limits=Limits(), budget=budget)
    assert [s.title for s in extracted.sections] == ["Topic 0", "Topic 1", "Topic 2"]
    with pytest.raises(ExtractError) as refused:
        extract_isolated("a.md", markdown(3), declared_type=None, limits=Limits(max_sections=2), budget=budget)
    assert (refused.value.code, refused.value.http_status) == ("too_many_sections", 422)


def test_many_html_headings_are_refused_before_sections_are_built() -> None:
    html = ("<html><body>" + "".join(f"<h2>H {n}</h2><p>text {n}</p>" for n in range(2000)) + "</body></html>").encode()
    budget = Budget(seconds=60, memory_bytes=512 * 1024 * 1024)
    with pytest.raises(ExtractError) as refused:
        extract_isolated("page.html", html, declared_type=None, limits=Limits(max_sections=1000), budget=budget)
    assert refused.value.code == "too_many_sections" and "2,000 headings" in refused.value.detail


# --- bounded batches --------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_big_upload_commits_in_bounded_batches_and_reports_progress(
    api: Any, world_a: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the worker stores an upload, what it has stored so far is committed batch by batch:
    another connection sees it, so nobody waits for the whole document."""
    settings.FACADE_UPLOAD_BATCH_SECTIONS = 4
    api.force_login(world_a.owner)
    job = post_file(api, world_a.agent, "uploads", "big.md", markdown(10)).json()

    visible: list[tuple[int, int]] = []  # (sections done, versions another connection can see)
    reported: list[dict[str, int]] = []
    original = cache.set

    def watch(key: str, value: Any, *args: Any, **kwargs: Any) -> Any:
        if key.startswith("knowledge:ingest:"):
            reported.append(value)

            def look() -> None:
                from django.db import connection

                visible.append((value["done"], EntryVersion.objects.count()))
                connection.close()

            other = threading.Thread(target=look)  # its own database connection
            other.start()
            other.join()
        return original(key, value, *args, **kwargs)

    monkeypatch.setattr(cache, "set", watch)
    assert ingest_job_execute(job["id"]) == "done"
    assert visible == [(n, n // 4 * 4) for n in range(10)] + [(10, 10)]
    assert reported == [{"done": n, "total": 10} for n in range(11)]
    status = api.get(f"/api/agents/{world_a.agent.slug}/knowledge/jobs/{job['id']}").json()
    assert (status["state"], status["done"], status["total"], status["created"]) == ("done", 10, 10, 10)
