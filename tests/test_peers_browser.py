"""The owner's Peers page in a real browser (issue 33 §4: Daphne + Debian's Chromium, the seeded
demo shop), in English on a desktop and in Chinese at phone width: the owner issues a key and
sees it once, a peer uses it over A2A and its task is counted on the page, the owner narrows its
trust to questions only and revokes it; the page shows the agent's card as peers see it and a
request to copy.  Screenshots go to var/screenshots/."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect
from test_requests_browser import (  # noqa: F401  (the fixtures are used by name)
    Watched,
    server,
    shoot,
    shop,
    sign_in,
)

NAME = "Flour supplier"
WORDS = {
    "en": {
        "peers": "peers",
        "title": "Peers of Demo Shop",
        "name_label": "Name of the agent the new key is for",
        "issue": "Issue a key",
        "issued": f"Key “{NAME}” issued.",
        "tasks": "Tasks, last 30 days",
        "trust_for": f"Trust for {NAME}",
        "save": "Save trust",
        "ask": "Ask only: questions",
        "revoke": f"Revoke {NAME}",
        "revoked": "it no longer works",
        "badge": "Revoked",
    },
    "zh-hans": {
        "peers": "对等代理",
        "title": "Demo Shop 的对等代理",
        "name_label": "新密钥所属代理的名称",
        "issue": "签发密钥",
        "issued": f"已签发密钥“{NAME}”。",
        "tasks": "最近 30 天的任务",
        "trust_for": f"{NAME} 的信任",
        "save": "保存信任设置",
        "ask": "仅提问",
        "revoke": f"撤销 {NAME}",
        "revoked": "它不再可用",
        "badge": "已撤销",
    },
}


def _ask(site: str, key: str) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_USER",
                "parts": [{"text": "When is the shop open?"}],
            }
        },
    }
    headers = {"A2A-Version": "1.0", "X-API-Key": key}
    return dict(httpx.post(f"{site}/a2a/demo-shop/jsonrpc", json=body, headers=headers, timeout=60).json())


@pytest.mark.browser
@pytest.mark.parametrize(
    "language, phone", [("en", False), ("zh-hans", True)], ids=["english-desktop", "chinese-phone"]
)
def test_the_owner_issues_trusts_and_revokes_a_peer_key(
    browser: Any,
    shop: dict[str, str],  # noqa: F811  (the fixture imported above)
    language: str,
    phone: bool,
) -> None:
    from facade.tenancy.models import PeerCredential

    site, words = shop["site"], WORDS[language]
    watched = Watched(browser, site, phone=phone)
    try:
        page = watched.context.new_page()
        sign_in(page, site, shop["owner_password"])
        if language != "en":
            page.locator("#language").select_option(language)
            expect(page.locator("html")).to_have_attribute("lang", language)
        page.get_by_role("link", name=words["peers"], exact=True).first.click()
        expect(page).to_have_url(f"{site}/owner/demo-shop/peers")
        expect(page.get_by_role("heading", level=1)).to_have_text(words["title"])

        page.get_by_label(words["name_label"]).fill(NAME)
        page.get_by_role("button", name=words["issue"]).click()
        expect(page.locator(".flash")).to_contain_text(words["issued"])
        key = page.locator("#issued-key").inner_text().strip()
        assert key.startswith("fpk_")
        credential = PeerCredential.objects.get(agent__slug="demo-shop", name=NAME)
        assert key.split("_")[1] == credential.key_prefix and key not in page.content().replace(key, "", 1)

        # A peer uses the key; its task is counted on the page (states only, never its words).
        assert _ask(site, key)["result"]["task"]["status"]["state"].startswith("TASK_STATE_")
        page.goto(f"{site}/owner/demo-shop/peers")
        expect(page.locator("#issued-key")).to_have_count(0)  # shown once
        row = page.locator(f"#key-{credential.pk}")
        expect(row).to_contain_text(words["tasks"])
        expect(row).to_contain_text(": 1")
        expect(row).not_to_contain_text("When is the shop open?")
        expect(page.locator("pre.code").first).to_contain_text('"protocolBinding": "JSONRPC"')
        expect(page.locator("pre.code").nth(1)).to_contain_text(f"{site}/a2a/demo-shop/jsonrpc")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        shoot(page, f"owner-peers-{language}-{'phone' if phone else 'desktop'}")

        row.get_by_label(words["trust_for"]).select_option("ask")
        row.get_by_role("button", name=words["save"]).click()
        expect(page.locator(".flash")).to_contain_text(words["ask"])
        credential.refresh_from_db()
        assert credential.trust == "ask"

        page.locator(f"#key-{credential.pk}").get_by_role("button", name=words["revoke"]).click()
        expect(page.locator(".flash")).to_contain_text(words["revoked"])
        expect(page.locator(f"#key-{credential.pk}")).to_contain_text(words["badge"])
        credential.refresh_from_db()
        assert credential.revoked_at is not None
        assert "error" in _ask(site, key)  # the revoked key no longer works
    finally:
        watched.close()
