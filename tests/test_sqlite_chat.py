"""The embedded default answers: a whole turn on SQLite with the offline model and the file
cache — knowledge with its citation, the boundary on a price question, the daily budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from embedded import manage, shell_result

pytestmark = pytest.mark.slow

SCRIPT = r"""
import json
from django.db import connection
from facade.dialogue.models import DailyUsage, Run
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.services import session_open
from facade.tenancy.models import AgentProfile, Customer
from facade.tenancy.rules import Audience
from ledger.selectors import ledger_verify
agent = AgentProfile.objects.get(slug="demo-desk")
session = session_open(agent=agent, audience=Audience.CUSTOMER, customer=Customer.objects.create(tenant=agent.tenant))
texts = ("When is the shop open?", "How much is a cake?", "hello")
answers = [turn_handle(session=session, text=text) for text in texts]
print("RESULT" + json.dumps({
    "vendor": connection.vendor,
    "replies": [a.reply.text for a in answers],
    "citations": [a.reply.citations for a in answers],
    "statuses": [a.run.status for a in answers],
    "budget": DailyUsage.objects.get(tenant=agent.tenant).model_calls,
    "third": turn_handle(session=session, text="one more").run.stop_reason,
    "ledger_ok": ledger_verify(chain_id=agent.tenant_id).ok,
}, ensure_ascii=False))
"""


def test_a_turn_on_the_embedded_default(tmp_path: Path) -> None:
    manage(tmp_path, "migrate", "--noinput")
    manage(tmp_path, "seed_demo", "--tenant", "demo", "--agent", "demo-desk", "--owner-email", "o@demo.test")
    out = json.loads(shell_result(tmp_path, SCRIPT, FACADE_DAILY_MODEL_CALLS="5"))
    assert out["vendor"] == "sqlite"
    assert "Monday" in out["replies"][0] and out["citations"][0][0]["title"] == "Opening hours"
    assert out["replies"][1].startswith("I can't confirm prices")
    assert out["statuses"] == ["completed", "waiting_input", "completed"]
    assert out["budget"] == 5  # two calls for each question (a price question searches first), one for "hello"
    assert out["third"] == "daily_budget"
    assert out["ledger_ok"]
