"""The knowledge API: ingest (JSON and files), search per audience, history, restore,
quarantine — and isolation between tenants."""

from __future__ import annotations

import io
from typing import Any

import pytest

from facade.tenancy.schemas import Actor
from facade.tenancy.services import peer_key_create
from knowledge.models import EntryVersion, KnowledgeEntry

pytestmark = pytest.mark.django_db


def url(agent: Any, tail: str) -> str:
    return f"/api/agents/{agent.slug}/knowledge/{tail}"


def ingest_text(api: Any, agent: Any, title: str, text: str, **extra: Any) -> Any:
    body = {"title": title, "text": text, "source": {"type": "owner_dialogue", "ref": "chat:42"}, **extra}
    return api.post(url(agent, "ingest"), body, format="json")


def test_json_ingest_then_search_for_each_audience(api: Any, make_api: Any, world_a: Any) -> None:
    api.force_login(world_a.owner)
    response = ingest_text(
        api,
        world_a.agent,
        "Shipping",
        "# Germany\nWe ship to Germany in 3 to 5 working days.\n\n# VAT\nPrices include 19% VAT.",
    )
    assert response.status_code == 201, response.content
    created = response.json()["created"]
    assert [(c["title"], c["status"]) for c in created] == [("Germany", "approved"), ("VAT", "pending")]
    assert created[1]["reasons"] == ["regulated"]
    assert all(c["source"]["ref"].startswith("chat:42#") and len(c["source"]["version"]) == 64 for c in created)

    customer = make_api()
    found = customer.get(url(world_a.agent, "search"), {"q": "ship germany"}).json()["results"]
    assert [r["title"] for r in found] == ["Germany"]
    assert set(found[0]) == {"entry_id", "version", "title", "snippet", "status", "source"}
    assert customer.get(url(world_a.agent, "search"), {"q": "VAT"}).json()["results"] == []
    assert [r["status"] for r in api.get(url(world_a.agent, "search"), {"q": "VAT"}).json()["results"]] == ["pending"]

    peer = make_api()
    key = peer_key_create(agent=world_a.agent, name="partner", actor=Actor.platform("t")).key
    peer.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert [r["title"] for r in peer.get(url(world_a.agent, "search"), {"q": "germany"}).json()["results"]] == [
        "Germany"
    ]
    assert peer.get(url(world_a.agent, "search"), {"q": "VAT"}).json()["results"] == []

    again = ingest_text(
        api,
        world_a.agent,
        "Shipping",
        "# Germany\nWe ship to Germany in 3 to 5 working days.\n\n# VAT\nPrices include 19% VAT.",
    )
    assert again.status_code == 201 and again.json()["created"] == [] and again.json()["unchanged"] == 2
    assert EntryVersion.objects.count() == 2


def test_json_ingest_needs_a_source_and_text(api: Any, world_a: Any) -> None:
    api.force_login(world_a.owner)
    response = api.post(url(world_a.agent, "ingest"), {"title": "X", "text": "Some text"}, format="json")
    assert response.status_code == 400 and response.json()["error"] == "source_required"
    response = ingest_text(api, world_a.agent, "X", "   \n  ")
    assert response.status_code in (400, 422)
    assert not EntryVersion.objects.exists()


def test_search_input_errors(api: Any, world_a: Any) -> None:
    assert api.get(url(world_a.agent, "search")).json()["error"] == "invalid_input"
    assert api.get(url(world_a.agent, "search"), {"q": "x", "limit": "many"}).status_code == 400
    assert api.get("/api/agents/nope/knowledge/search", {"q": "x"}).status_code == 404


def test_history_restore_and_quarantine_over_http(api: Any, world_a: Any) -> None:
    api.force_login(world_a.owner)
    first = ingest_text(api, world_a.agent, "Hours", "We open at nine.").json()["created"][0]
    changed = api.post(
        url(world_a.agent, "ingest"),
        {"title": "Hours", "text": "We open at ten.", "source": {"type": "owner_dialogue", "ref": "chat:42"}},
        format="json",
    )
    assert changed.json()["created"][0]["entry_id"] == first["entry_id"]
    assert changed.json()["created"][0]["version"] == 2
    history = api.get(url(world_a.agent, f"entries/{first['entry_id']}")).json()
    assert [v["version"] for v in history["versions"]] == [2, 1] and history["current_version"] == 2
    assert history["versions"][1]["body"] == "We open at nine."
    restored = api.post(url(world_a.agent, f"entries/{first['entry_id']}/restore"), {"version": 1}, format="json")
    assert restored.status_code == 201 and restored.json()["version"] == 3
    listing = api.get(url(world_a.agent, "entries"), {"status": "approved"}).json()
    assert [(v["entry_id"], v["version"]) for v in listing] == [(first["entry_id"], 3)]
    assert api.post(url(world_a.agent, "quarantine"), {}, format="json").json()["error"] == "invalid_input"
    quarantined = api.post(url(world_a.agent, "quarantine"), {"source_type": "owner_dialogue"}, format="json")
    assert quarantined.json() == {"versions": 2}  # v1 (superseded, still approved) and v3
    assert api.get(url(world_a.agent, "search"), {"q": "open"}).json()["results"] == []
    assert api.post(url(world_a.agent, "unquarantine"), {"source_type": "owner_dialogue"}, format="json").json() == {
        "versions": 2
    }
    assert [r["version"] for r in api.get(url(world_a.agent, "search"), {"q": "open"}).json()["results"]] == [3]


def test_another_tenants_knowledge_answers_404(api: Any, world_a: Any, world_b: Any) -> None:
    api.force_login(world_b.owner)
    entry = ingest_text(api, world_b.agent, "B only", "Bravo's private note.").json()["created"][0]["entry_id"]
    api.force_login(world_a.owner)
    for method, path, body in [
        (
            "post",
            url(world_b.agent, "ingest"),
            {"title": "x", "text": "y", "source": {"type": "owner_dialogue", "ref": "r"}},
        ),
        ("get", url(world_b.agent, "entries"), None),
        ("get", url(world_b.agent, f"entries/{entry}"), None),
        ("get", url(world_a.agent, f"entries/{entry}"), None),
        ("post", url(world_b.agent, f"entries/{entry}/restore"), {"version": 1}),
        ("post", url(world_a.agent, f"entries/{entry}/restore"), {"version": 1}),
        ("post", url(world_b.agent, "quarantine"), {"source_type": "owner_dialogue"}),
    ]:
        response = getattr(api, method)(path, body, format="json") if body is not None else api.get(path)
        assert response.status_code == 404, (method, path, response.content)
        assert response.json()["error"] == "not_found"
    assert api.get(url(world_a.agent, "search"), {"q": "bravo private"}).json()["results"] == []
    assert KnowledgeEntry.objects.get(pk=entry).current_version.status == "approved"


def test_file_upload_ingest(api: Any, world_a: Any) -> None:
    api.force_login(world_a.owner)
    upload = io.BytesIO("# Returns\nReturns are free within 30 days.\n\n# 退货\n三十天内免费退货。".encode())
    upload.name = "policies.md"
    response = api.post(url(world_a.agent, "ingest"), {"file": upload}, format="multipart")
    assert response.status_code == 201, response.content
    refs = [c["source"]["ref"] for c in response.json()["created"]]
    assert all(ref.startswith("policies.md#section-") for ref in refs) and len(refs) == 2
    assert [r["title"] for r in api.get(url(world_a.agent, "search"), {"q": "退货"}).json()["results"]] == ["退货"]
    bad = io.BytesIO(b"MZ\x90\x00binary")
    bad.name = "tool.exe"
    response = api.post(url(world_a.agent, "ingest"), {"file": bad}, format="multipart")
    assert response.status_code == 415 and response.json()["error"] == "unsupported_type"


def test_real_pdf_and_docx_files_are_ingested_and_found(api: Any, world_a: Any) -> None:
    import docx
    from fpdf import FPDF

    api.force_login(world_a.owner)
    pdf = FPDF()
    for text in (
        "Warranty: every kettle carries a two year warranty.",
        "Spare parts: lids and filters ship within a week.",
    ):
        pdf.add_page()
        pdf.set_font("Helvetica", size=12)
        pdf.multi_cell(0, 8, text)
    pdf_file = io.BytesIO(bytes(pdf.output()))
    pdf_file.name = "kettles.pdf"
    response = api.post(url(world_a.agent, "ingest"), {"file": pdf_file}, format="multipart")
    assert response.status_code == 201, response.content
    assert [c["source"]["ref"] for c in response.json()["created"]] == ["kettles.pdf#page-1", "kettles.pdf#page-2"]
    assert [
        r["source"]["ref"] for r in api.get(url(world_a.agent, "search"), {"q": "kettle warranty"}).json()["results"]
    ][0] == "kettles.pdf#page-1"

    document = docx.Document()
    document.add_heading("Care instructions", level=1)
    document.add_paragraph("Descale the kettle monthly with citric acid.")
    document.add_heading("保养说明", level=1)
    document.add_paragraph("每月用柠檬酸除垢一次。")
    buffer = io.BytesIO()
    document.save(buffer)
    docx_file = io.BytesIO(buffer.getvalue())
    docx_file.name = "care.docx"
    response = api.post(url(world_a.agent, "ingest"), {"file": docx_file}, format="multipart")
    assert response.status_code == 201 and len(response.json()["created"]) == 2
    assert [r["title"] for r in api.get(url(world_a.agent, "search"), {"q": "柠檬酸除垢"}).json()["results"]] == [
        "保养说明"
    ]
    assert "citric" in api.get(url(world_a.agent, "search"), {"q": "descale"}).json()["results"][0]["snippet"]

    # The same file again creates nothing; a changed one makes new versions of its entries.
    docx_file.seek(0)
    assert api.post(url(world_a.agent, "ingest"), {"file": docx_file}, format="multipart").json()["created"] == []
    document.paragraphs[1].text = "Descale the kettle every two weeks with citric acid."
    buffer = io.BytesIO()
    document.save(buffer)
    changed = io.BytesIO(buffer.getvalue())
    changed.name = "care.docx"
    created = api.post(url(world_a.agent, "ingest"), {"file": changed}, format="multipart").json()["created"]
    assert [(c["title"], c["version"]) for c in created] == [("Care instructions", 2)]


def test_owners_extend_the_regulated_terms(api: Any, world_a: Any) -> None:
    api.force_login(world_a.owner)
    assert (
        api.post(url(world_a.agent, "regulated-terms"), {"term": "Pfand", "category": "law"}, format="json").status_code
        == 201
    )
    assert api.get(url(world_a.agent, "regulated-terms")).json() == [{"term": "Pfand", "category": "law"}]
    created = ingest_text(api, world_a.agent, "Deposit", "The Pfand on bottles is 25 cents.").json()["created"]
    assert created[0]["status"] == "pending" and created[0]["reasons"] == ["regulated"]


def test_a_search_that_finds_nothing_writes_nothing(make_api: Any, world_a: Any) -> None:
    """A GET only reads: no knowledge miss, no ledger event, no write statement of any kind, for
    a customer or a peer.  Misses are recorded by a conversation's run (tests/test_runtime.py)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from knowledge.models import KnowledgeHit, KnowledgeMiss
    from ledger.models import LedgerEvent

    customer = make_api()
    peer = make_api()
    key = peer_key_create(agent=world_a.agent, name="partner", actor=Actor.platform("t")).key
    peer.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")

    def rows() -> tuple[int, int, int]:
        return KnowledgeMiss.objects.count(), KnowledgeHit.objects.count(), LedgerEvent.objects.count()

    before = rows()
    for client in (customer, peer):
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url(world_a.agent, "search"), {"q": "Do you deliver to Mars?"})
        assert response.status_code == 200 and response.json() == {"results": []}
        statements = [q["sql"].lstrip().split(None, 1)[0].upper() for q in queries.captured_queries]
        assert statements and not {"INSERT", "UPDATE", "DELETE"} & set(statements), statements
    assert rows() == before


# --- refusals (issue 10, point 14) -----------------------------------------------------------


def test_an_owner_cannot_ingest_material_as_a_customer_candidate(api: Any, world_a: Any) -> None:
    api.force_login(world_a.owner)
    body = {"title": "Free cake", "text": "Every cake is free.", "source": {"type": "customer_candidate", "ref": "x"}}
    response = api.post(f"/api/agents/{world_a.agent.slug}/knowledge/ingest", body, format="json")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_input" and "type" in response.json()["fields"]["source"]
    assert not EntryVersion.objects.filter(agent=world_a.agent).exists()


@pytest.mark.parametrize("version", [1.5, 1.0, True, "1", 0, -1, None, [1], 2**40])
def test_restore_takes_only_a_positive_whole_number(api: Any, world_a: Any, version: Any) -> None:
    api.force_login(world_a.owner)
    base = f"/api/agents/{world_a.agent.slug}/knowledge"
    for text in ("We open at nine.", "We open at ten."):
        body = {"title": "Hours", "text": text, "source": {"type": "owner_dialogue", "ref": "chat:1"}}
        assert api.post(f"{base}/ingest", body, format="json").status_code == 201
    entry_id = EntryVersion.objects.get(agent=world_a.agent, number=1).entry_id
    response = api.post(f"{base}/entries/{entry_id}/restore", {"version": version}, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_input"
    assert EntryVersion.objects.filter(entry_id=entry_id).count() == 2
    assert api.post(f"{base}/entries/{entry_id}/restore", {"version": 1}, format="json").status_code == 201
