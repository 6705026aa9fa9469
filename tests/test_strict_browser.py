"""Strict composition (issue 15 §4) in a real browser: the seeded demo shop switched to strict
mode answers a customer in the chat page with an approved entry quoted with its citation, and
meets a price question with the boundary wording — with the offline model, and with a hosted
model (the fake OpenAI-compatible server) whose invented price is refused by the server."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from test_chat_browser import agent_replies, ask, daphne, hosted_model, open_chat

SCREENSHOTS = Path(__file__).resolve().parents[1] / "var" / "screenshots"
BOUNDARY = "I can't confirm prices, dates or outcomes here: the owner confirms those personally."
SOURCE = re.compile(r"^Opening hours \(entry \d+, version 1\)$")


@pytest.fixture(scope="module")
def asgi_server(django_db_setup: Any, tmp_path_factory: Any) -> Iterator[str]:
    with daphne(tmp_path_factory.mktemp("daphne")) as url:
        yield url


def strict_demo() -> None:
    """The seeded demo shop with its owner's switch to strict mode applied (committed, so that the
    server process sees it)."""
    from django.core.management import call_command

    from approvals.contract import live_terms
    from approvals.rules import Origin
    from approvals.services import proposal_create
    from facade.tenancy.models import AgentProfile
    from facade.tenancy.schemas import Actor

    call_command("seed_demo", stdout=io.StringIO())
    agent = AgentProfile.objects.get(slug="demo-shop")
    owner = agent.owners.get()
    proposal_create(
        agent=agent,
        kind="composition_mode",
        payload={"mode": "strict"},
        summary="Only what we published",
        origin=Origin.OWNER_DIRECT,
        actor=Actor.human(owner.pk),
        owner=owner,
    )
    assert live_terms(agent).composition_mode == "strict"


@pytest.mark.browser
def test_a_strict_agent_answers_with_a_citation_and_refuses_a_price(
    page: Any, asgi_server: str, transactional_db: Any, _async_unsafe_allowed: None
) -> None:
    from facade.dialogue.models import Run

    strict_demo()
    open_chat(page, asgi_server)
    hours = ask(page, "Your message", "What time do you open?")
    expect(hours.locator(".text")).to_contain_text("[1] Opening hours: The shop is open Monday to Saturday")
    expect(hours.locator(".sources li").filter(has_text=SOURCE)).to_have_count(1)
    price = ask(page, "Your message", "How much is a wedding cake?")
    expect(price.locator(".text")).to_contain_text(BOUNDARY)
    expect(price.locator(".text")).not_to_contain_text(re.compile(r"€|\d+ ?(?:euro|EUR)", re.I))
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "strict-en-offline.png"), full_page=True)
    # The offline model chose these parts itself: nothing was refused.
    assert set(Run.objects.values_list("guard_category", flat=True)) == {""}


@pytest.mark.browser
def test_a_hosted_models_invented_price_is_refused_in_strict_mode(
    page: Any, asgi_server: str, transactional_db: Any, _async_unsafe_allowed: None, tmp_path: Path
) -> None:
    from llm_server import LLMServer, text_reply, tool_call, tool_call_reply

    from ledger.models import LedgerEvent

    strict_demo()
    quoted = {"reply": [{"kind": "knowledge", "id": "1.1"}, {"kind": "template", "id": "offer"}]}
    priced = {"reply": [{"kind": "template", "id": "summary", "slots": {"need": "a wedding cake", "when": "€90"}}]}
    script = [
        tool_call_reply(tool_call("c1", "search_knowledge", {"query": "opening hours"})),
        text_reply(json.dumps(quoted)),
        text_reply(json.dumps(priced)),
    ]
    with (
        LLMServer(script) as model,
        daphne(tmp_path, **hosted_model(model.url)) as site,
    ):
        open_chat(page, site)
        hours = ask(page, "Your message", "What time do you open?")
        expect(hours.locator(".text")).to_have_text(
            "[1] Opening hours: The shop is open Monday to Saturday, from nine in the morning to six in the "
            "evening.\nShall I register a request so that the owner can confirm it with you?"
        )
        expect(hours.locator(".sources li").filter(has_text=SOURCE)).to_have_count(1)
        price = ask(page, "Your message", "I need a wedding cake, what does it cost?")
        expect(price.locator(".text")).to_contain_text(BOUNDARY)
        expect(price.locator(".text")).not_to_contain_text("€90")
        expect(price.locator(".sources")).to_have_count(0)
        expect(agent_replies(page)).to_have_count(2)
        assert all(r.json.get("response_format", {}).get("type") == "json_schema" for r in model.requests)
    blocked = [e.payload for e in LedgerEvent.objects.of_type("guard.blocked")]
    assert blocked == [
        {"category": "strict_refused", "audience": "customer", "entry_id": None, "rule": "", "reason": "slot_not_given"}
    ]
