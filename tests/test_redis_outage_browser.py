"""Redis away while a customer's page is open, in a real browser (Chromium through Playwright)
against Daphne on a redis-server of the test's own, which the test stops and starts again.

A message typed during the outage is kept and shown as waiting, with a note in the visitor's
language; once Redis is back the page sends it again by its client_message_id and it is
answered exactly once — on the page and in the database.  An owner's pages carry a banner while
Redis is away and none once it is back, in English and in Chinese."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from redis_support import OwnRedis, own_redis, turns_of
from test_chat_browser import ENGLISH, agent_replies, ask, daphne, demo_seeded, open_chat

RECOVERY_MS = 90_000  # a bound on a hang: the page's next try comes at most 30 s after the last
WAITING = "Waiting to be sent again…"
BANNER = "Redis cannot be reached right now"
BANNER_ZH = "目前无法连接 Redis"


@pytest.fixture
def outage_site(transactional_db: Any, _async_unsafe_allowed: None, tmp_path: Path) -> Any:
    password = demo_seeded()
    with own_redis(tmp_path) as redis, daphne(tmp_path, REDIS_URL=redis.url) as site:
        yield site, redis, password


def test_a_message_typed_while_redis_is_down_waits_and_is_answered_once_when_it_is_back(
    page: Any, outage_site: tuple[str, OwnRedis, str]
) -> None:
    site, redis, _password = outage_site
    open_chat(page, site)
    ask(page, ENGLISH["textbox"], ENGLISH["question"])  # the session and its WebSocket are up

    redis.stop()
    textbox = page.get_by_role("textbox", name=ENGLISH["textbox"])
    textbox.fill("Do you deliver on Sundays?")
    textbox.press("Enter")
    waiting = page.locator("#log li.mine[data-waiting]")
    expect(waiting).to_have_count(1)
    expect(waiting).to_contain_text("Do you deliver on Sundays?")
    expect(waiting.locator(".note")).to_have_text(WAITING)
    expect(page.locator("#error")).to_contain_text("briefly unavailable")
    expect(textbox).to_have_value("")  # kept as a message, not handed back to retype
    expect(agent_replies(page)).to_have_count(1)
    page.wait_for_timeout(3000)  # still waiting, not dropped, while Redis stays away
    expect(waiting).to_have_count(1)

    redis.start()
    expect(agent_replies(page)).to_have_count(2, timeout=RECOVERY_MS)
    expect(page.locator("#log li.mine[data-waiting]")).to_have_count(0)
    expect(page.locator("#error")).to_be_hidden()
    mine = page.locator("#log li.mine")
    expect(mine).to_have_count(2)
    expect(mine.last).to_contain_text("Do you deliver on Sundays?")
    expect(mine.last.locator(".note")).to_have_count(0)
    page.wait_for_timeout(2000)  # a late second delivery would show a second reply here
    expect(agent_replies(page)).to_have_count(2)

    session_id = page.evaluate("JSON.parse(localStorage.getItem('facade.chat.customer.demo-shop')).id")
    principal, replies = turns_of(session_id)
    assert len(principal) == 2 and {status for _cid, status in principal} == {"completed"}
    assert replies == 2  # exactly one reply to each message typed

    # Reloaded, the page shows the same conversation once.
    page.reload()
    expect(agent_replies(page)).to_have_count(2)
    expect(page.locator("#log li.mine")).to_have_count(2)


def test_owners_see_a_banner_while_redis_is_down(page: Any, outage_site: tuple[str, OwnRedis, str]) -> None:
    site, redis, password = outage_site
    page.goto(f"{site}/accounts/login/")
    page.get_by_label("Email").fill("owner@demo.test")
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    start = f"{site}/"
    expect(page).to_have_url(start)
    expect(page.get_by_role("status").filter(has_text=BANNER)).to_have_count(0)

    redis.stop()
    page.wait_for_timeout(6000)  # the process probes Redis at most every few seconds
    page.goto(start)
    expect(page.get_by_role("status").filter(has_text=BANNER)).to_be_visible()
    page.locator("#language").select_option("zh-hans")
    expect(page.get_by_role("status").filter(has_text=BANNER_ZH)).to_be_visible()

    redis.start()
    page.wait_for_timeout(6000)  # the process probes Redis again after a few seconds
    page.goto(start)
    expect(page.get_by_role("status").filter(has_text=BANNER_ZH)).to_have_count(0)
