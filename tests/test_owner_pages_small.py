"""The owner's and the auditor's pages as a person meets them (issue 26 §6): a proposed change's
outcome and card where the owner is on the contract page; the L3 card's code step saying where
the code went and, in the demo, where to read it; `/` leading a visitor to the shop's chat; the
sign-in refusal naming the e-mail field; the export page serving the very verifier the project
runs; the decision line of an owner's own change with no dangling separator; empty metrics on
one line each."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from approvals.models import ChangeProposal, ProposalStatus
from conftest import TenantWorld
from ledger.keys import ledger_keys

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[1]
PRICES = {
    "kind": "pricing",
    "currency": "EUR",
    "summary": "Cake prices",
    "name": ["Birthday cake (8 people)", ""],
    "amount": ["35.00", ""],
}


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def section(html: str, kind: str) -> str:
    """The contract page's section of one form, from its heading to the next section."""
    start = html.index(f'<section aria-labelledby="{kind}-h"')
    return html[start : html.index("</section>", html.index('<form method="post" action="', start))]


def test_a_proposed_price_list_comes_back_with_its_outcome_and_card_in_its_section(world_a: TenantWorld) -> None:
    client = signed_in(world_a.owner)
    response = client.post(f"/owner/{world_a.agent.slug}/contract/change", PRICES)
    proposal = ChangeProposal.objects.get(agent=world_a.agent, kind="pricing")
    assert proposal.status == ProposalStatus.PENDING and proposal.level == 3
    # Back to the sentence that says what became of it, not to the top nor to the bare form.
    assert response.status_code == 302
    assert response["Location"] == f"/owner/{world_a.agent.slug}/contract?change={proposal.pk}#pricing-outcome"
    html = client.get(response["Location"].split("#")[0]).content.decode()
    prices = section(html, "pricing")
    outcome = prices[prices.index('id="pricing-outcome"') : prices.index("<form")]
    assert "Proposed. It waits for your decision" in outcome
    assert f'<article class="change-card status-pending" id="{proposal.pk}"' in outcome
    assert "Birthday cake (8 people)" in outcome and "35.00 EUR" in outcome
    # Decided with the inbox's own script and texts; the page's top carries no copy of it.
    assert 'id="approvals-text"' in html and "/static/js/approvals.js" in html
    assert html.count("Proposed. It waits for your decision") == 1
    # Another kind's section shows neither.
    assert "change-card" not in section(html, "delivery")


def test_the_l3_code_step_links_the_demo_outbox_only_when_it_is_on(world_a: TenantWorld, settings: Any) -> None:
    client = signed_in(world_a.owner)
    client.post(f"/owner/{world_a.agent.slug}/contract/change", PRICES)
    proposal = ChangeProposal.objects.get(agent=world_a.agent, kind="pricing")
    card_url = f"/owner/{world_a.agent.slug}/inbox/{proposal.pk}/card"
    settings.EMAIL_BACKEND, settings.FACADE_DEMO_OUTBOX = "django.core.mail.backends.filebased.EmailBackend", True
    demo = client.get(card_url).content.decode()
    form = demo[demo.index('<form class="code-form"') : demo.index("</form>", demo.index('<form class="code-form"'))]
    assert f'href="/owner/{world_a.agent.slug}/outbox" target="_blank"' in form
    assert "This demo sends no e-mail" in form
    settings.FACADE_DEMO_OUTBOX, settings.DEBUG = False, False
    assert "/outbox" not in client.get(card_url).content.decode()
    # The script says, while it waits for the owner, that it waits for the code (not "Working…").
    texts = client.get(f"/owner/{world_a.agent.slug}/inbox").content.decode()
    assert '"waiting_code": "Waiting for the code from the e-mail."' in texts
    script = (ROOT / "static" / "js" / "approvals.js").read_text(encoding="utf-8")
    assert "say(card, T.waiting_code)" in script


def test_signed_out_home_links_each_agents_chat(world_a: TenantWorld, world_b: TenantWorld) -> None:
    html = Client().get("/").content.decode()
    for world in (world_a, world_b):
        assert f'href="/c/{world.agent.slug}/">Chat with {world.agent.name}</a>' in html
    zh = Client().get("/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert f"与 {world_a.agent.name} 对话" in zh


def test_a_wrong_password_names_the_email_field(world_a: TenantWorld) -> None:
    response = Client().post("/accounts/login/", {"username": world_a.owner.email, "password": "wrong"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "That e-mail address and password do not match an account." in html
    assert "username" not in re.sub(r"<[^>]*>", " ", html).lower()
    zh = Client().post(
        "/accounts/login/", {"username": world_a.owner.email, "password": "wrong"}, HTTP_ACCEPT_LANGUAGE="zh-hans"
    )
    assert "该电子邮件地址与密码不匹配任何账户" in zh.content.decode()


def test_the_export_page_serves_the_verifier_that_checks_a_real_export(
    world_a: TenantWorld, api: Any, tmp_path: Path
) -> None:
    auditor = signed_in(world_a.auditor)
    page = auditor.get("/audit/alpha/export").content.decode()
    link = re.search(r'<a class="button" id="verifier" href="([^"]+)"', page)
    assert link is not None
    download = auditor.get(link.group(1))
    assert download.status_code == 200 and "attachment" in download["Content-Disposition"]
    served = download.content
    assert served == (ROOT / "tools" / "verify_export.py").read_bytes()  # the project's own verifier
    (tmp_path / "verify_export.py").write_bytes(served)
    api.force_login(world_a.auditor)
    lines = b"".join(api.get("/api/audit/export?tenant=alpha").streaming_content).decode().splitlines()
    size = json.loads(lines[0])["checkpoint"]["size"]

    def run(text: str) -> str:
        (tmp_path / "export.jsonl").write_text(text, encoding="utf-8")
        key = base64.b64encode(ledger_keys().public_raw).decode()
        args = [sys.executable, "-I", "verify_export.py", "--public-key", key, "export.jsonl"]
        done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, env={})
        return (done.stdout + done.stderr).strip()

    assert run("\n".join(lines) + "\n").startswith(f"OK: {size} events")
    event = json.loads(lines[3])
    event["canonical"] = event["canonical"].replace('"seq":3', '"seq":3 ')
    assert run("\n".join([*lines[:3], json.dumps(event), *lines[4:]]) + "\n").startswith("FAIL: seq 3")
    # Owners and members who may not read the ledger get no page and no file.
    assert signed_in(world_a.member).get(link.group(1)).status_code == 404


def test_the_decision_line_of_an_owners_own_change_ends_in_what_it_says(world_a: TenantWorld) -> None:
    owner = signed_in(world_a.owner)
    greeting = {"kind": "wording", "language": "en", "situation": "greeting", "text": "Hello!", "summary": "Hi"}
    owner.post(f"/owner/{world_a.agent.slug}/contract/change", greeting)
    assert ChangeProposal.objects.get(agent=world_a.agent, kind="wording").status == ProposalStatus.APPLIED
    html = (
        signed_in(world_a.auditor)
        .get("/audit/alpha/lineage", {"entity_type": "contract", "entity_id": world_a.agent.slug})
        .content.decode()
    )
    lines = re.findall(r"<dt>Authorised by</dt>\s*<dd>(.*?)</dd>", html, re.S)
    assert lines, "the lineage shows no decision"
    for line in lines:
        text = " ".join(re.sub(r"<[^>]*>", " ", line).split())
        assert not text.endswith("·"), text
        assert "owner_session" not in text
    assert any("the owner's own change, proposed while signed in" in line for line in lines)


def test_the_metrics_of_an_agent_with_no_data_take_a_line_each(world_a: TenantWorld) -> None:
    html = signed_in(world_a.owner).get(f"/owner/{world_a.agent.slug}/").content.decode()
    # One sentence naming the seven metrics, not seven empty 30-day charts with empty tables.
    assert html.count('class="metric-empty charts-empty"') == 1
    assert "<canvas" not in html and '<figure class="metric"' not in html
    assert html.count('<span id="metric-') == 7
