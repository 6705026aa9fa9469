"""The auditor's lineage on the embedded default (SQLite, what `make run` serves): the knowledge
a simulated night's review proposed and the owner approved with a click shows the review, the
proposal and the decision (issue 26 §6) — not "the owner's direct edit".  SQLite's
`json_extract` gave the payload's numbers as numbers, which never equalled the text the lineage
looked for, so the proposal that made the version was not found there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from embedded import manage, shell_result

pytestmark = pytest.mark.slow

APPROVE = """
import json
from rest_framework.test import APIClient
from approvals.models import ChangeProposal
from audit.lineage import entity_lineage
from django.contrib.auth import get_user_model
from knowledge.models import EntryVersion
draft = ChangeProposal.objects.get(origin="review_report", kind="knowledge_draft")
owner = APIClient(SERVER_NAME="127.0.0.1")
owner.force_login(get_user_model().objects.get(email="owner@demo.test"))
base = f"/api/agents/{draft.agent.slug}/changes/{draft.pk}"
written = {"title": draft.payload["title"], "text": "Yes: wrapping is free."}
version = owner.patch(base, {"payload": written, "expected_version": draft.version}, format="json").json()["version"]
token = owner.post(f"{base}/authorize", {"decision": "approve"}, format="json").json()["token"]
decision = {"token": token, "decision": "approve", "expected_version": version}
decided = owner.post(f"{base}/decide", decision, format="json")
entry = EntryVersion.objects.get(body=written["text"]).entry_id
found = entity_lineage(tenant=draft.tenant, entity_type="knowledge_entry", entity_id=str(entry))["versions"][0]
print("RESULT" + json.dumps({
    "status": decided.json()["status"],
    "draft": draft.pk,
    "proposal": (found["proposal"] or {}).get("id"),
    "started": found["started"]["type"],
    "decision": (found["decision"] or {}).get("assurance"),
}))
"""


def test_the_lineage_of_approved_review_knowledge_on_sqlite(tmp_path: Path) -> None:
    manage(tmp_path, "migrate", "--noinput")
    manage(tmp_path, "seed_demo")
    manage(tmp_path, "rsi_simulate", "--agent", "demo-shop", "--days", "1")
    result = json.loads(shell_result(tmp_path, APPROVE))
    assert result["status"] == "applied"
    assert (result["proposal"], result["started"], result["decision"]) == (result["draft"], "review_report", "click")
