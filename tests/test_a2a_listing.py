"""Issue 33 §1: the platform lists the agents whose owners opted in — `/a2a/agents`, public, each
agent as its card names it and where its card is; nothing of an agent that did not opt in, and
nothing from customers or peers.  The owner puts the agent on the list and takes it off from the
Peers page (English and Chinese, at 390 px), recorded in the ledger."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from conftest import TenantWorld
from facade.peers.listing import agent_listing_set, is_listed
from facade.tenancy.schemas import Actor
from ledger.models import LedgerEvent


def _list(client: Client | None = None) -> dict[str, Any]:
    response = (client or Client()).get("/a2a/agents")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert response["Cache-Control"] == "public, max-age=300"
    return response.json()


@pytest.mark.django_db
def test_only_the_agents_that_opted_in_are_listed(world_a: TenantWorld, world_b: TenantWorld) -> None:
    assert _list() == {"agents": []}
    assert agent_listing_set(agent=world_a.agent, listed=True, actor=Actor.human(world_a.owner.pk)) is True
    assert agent_listing_set(agent=world_a.agent, listed=True, actor=Actor.human(world_a.owner.pk)) is False
    (listed,) = _list()["agents"]
    slug = world_a.agent.slug
    assert listed["name"] == world_a.agent.name
    assert listed["url"].endswith(f"/a2a/{slug}") and listed["cardUrl"].endswith(
        f"/a2a/{slug}/.well-known/agent-card.json"
    )
    assert set(listed) == {"name", "description", "provider", "version", "skills", "url", "cardUrl"}
    card = Client().get(f"/a2a/{slug}/.well-known/agent-card.json").json()
    assert listed["description"] == card["description"] and listed["skills"] == [s["id"] for s in card["skills"]]
    assert world_b.agent.slug not in str(_list())
    assert agent_listing_set(agent=world_a.agent, listed=False, actor=Actor.human(world_a.owner.pk)) is True
    assert _list() == {"agents": []}
    changes = [e.payload for e in LedgerEvent.objects.of_type("a2a_listing.changed").order_by("seq")]
    assert changes == [{"agent": slug, "listed": True}, {"agent": slug, "listed": False}]


@pytest.mark.django_db
def test_the_owner_lists_and_unlists_from_the_peers_page(world_a: TenantWorld, world_b: TenantWorld) -> None:
    client = Client()
    client.force_login(world_a.owner)
    page = reverse("owner-peers", args=[world_a.agent.slug])
    action = reverse("owner-peers-listing", args=[world_a.agent.slug])
    shown = client.get(page).content.decode()
    assert "Not listed." in shown and 'name="listed" value="1"' in shown and "/a2a/agents" in shown
    assert client.post(action, {"listed": "1"}).status_code == 302
    assert is_listed(world_a.agent)
    shown = client.get(page).content.decode()
    assert "Listed." in shown and 'name="listed" value="0"' in shown
    assert client.post(action, {"listed": "0"}).status_code == 302
    assert not is_listed(world_a.agent)
    # Another tenant's owner cannot list this agent: 404, nothing changed.
    other = Client()
    other.force_login(world_b.owner)
    assert other.post(action, {"listed": "1"}).status_code == 404
    assert not is_listed(world_a.agent)


# --- in Chromium ---------------------------------------------------------------------------------

PHONE_390 = {"width": 390, "height": 844}
WORDS = {
    "en": {"list": "List my agent", "listed": "Listed.", "off": "Take it off the list"},
    "zh-hans": {"list": "列出我的代理", "listed": "已列出。", "off": "从列表中移除"},
}


@pytest.mark.browser
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_owner_lists_the_agent_in_a_browser_at_phone_width(
    browser: Any, site: str, world: TenantWorld, language: str
) -> None:
    from playwright.sync_api import expect
    from test_requests_browser import Watched

    watched = Watched(browser, site, viewport=PHONE_390, is_mobile=True, has_touch=True)
    try:
        page = watched.context.new_page()
        page.goto(f"{site}/accounts/login/")
        page.get_by_label("Email").fill("owner@alpha.test")
        page.get_by_label("Password").fill("pw-alpha")
        page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(f"{site}/")
        if language != "en":
            page.locator("#language").select_option(language)
            expect(page.locator("html")).to_have_attribute("lang", language)
        page.goto(f"{site}/owner/{world.agent.slug}/peers")
        words = WORDS[language]
        page.get_by_role("button", name=words["list"]).click()
        expect(page.locator("#listing-state")).to_have_text(words["listed"])
        expect(page.get_by_role("button", name=words["off"])).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE_390["width"]
        if os.environ.get("PEER_SHOTS"):
            shots = Path(os.environ["PEER_SHOTS"])
            shots.mkdir(parents=True, exist_ok=True)
            page.locator("#listing-h").scroll_into_view_if_needed()
            page.screenshot(path=str(shots / f"peers-listing-{language}-phone.png"))
        listed = page.request.get(f"{site}/a2a/agents").json()
        assert [a["name"] for a in listed["agents"]] == [world.agent.name]
    finally:
        watched.close()
