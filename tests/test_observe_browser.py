"""Observe's feeds page in a real browser (Debian's Chromium), in Chinese at 360 px and by
keyboard: the owner adds a feed served by a local HTTP server, runs observe, sees the candidate,
proposes it as knowledge and finds the pending proposal in the inbox."""

from __future__ import annotations

from typing import Any

import pytest
from feed_server import RSS_TYPE, Answer, FeedServer, rss
from playwright.sync_api import expect
from test_requests_browser import Watched, shoot

PHONE = {"width": 360, "height": 740}


@pytest.mark.browser
def test_the_owner_proposes_a_feed_item_as_knowledge(browser: Any, site: str, world: Any, settings: Any) -> None:
    from approvals.models import ChangeProposal

    settings.FACADE_OBSERVE_ALLOW_PRIVATE = True  # the live server runs in this process
    with FeedServer() as feeds:
        feeds.route(
            "/rss",
            Answer(200, RSS_TYPE, rss(("cn-1", "面粉价格本周上涨", "https://news.example/1", "烘焙行业的面粉涨价了"))),
        )
        watched = Watched(browser, site, phone=False, viewport=PHONE)
        try:
            page = watched.context.new_page()
            page.goto(f"{site}/accounts/login/?next=/")
            page.get_by_label("Email").fill(world.owner.email)
            page.get_by_label("Password").fill("pw-alpha")
            page.get_by_role("button", name="Sign in").click()
            expect(page).to_have_url(f"{site}/")
            page.locator("#language").select_option("zh-hans")
            expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
            page.get_by_role("link", name="行业资讯源").click()
            expect(page.get_by_role("heading", level=1)).to_have_text(f"{world.agent.name} 的行业资讯源")

            # By keyboard: the address, the keywords, then Enter submits the form.
            page.get_by_label("资讯源地址（http:// 或 https://）").focus()
            page.keyboard.type(feeds.url("/rss"))
            page.keyboard.press("Tab")
            page.keyboard.type("面粉, bakery")
            page.keyboard.press("Enter")
            expect(page.get_by_text("已添加资讯源。运行观察来获取它。")).to_be_visible()

            page.get_by_role("button", name="立即运行观察").focus()
            page.keyboard.press("Enter")
            expect(page.get_by_text("观察已运行：已获取 1 个资讯源，失败 0 个。")).to_be_visible()
            candidate = page.get_by_role("heading", name="面粉价格本周上涨")
            expect(candidate).to_be_visible()
            shoot(page, "observe-feeds-zh-hans-phone")
            assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

            propose = page.get_by_role("button", name="提议为知识")
            propose.focus()
            page.keyboard.press("Enter")
            expect(page.get_by_text("已提议为知识。它在收件箱中等待你的决定。")).to_be_visible()
            page.get_by_role("link", name="已提议为知识：在收件箱中等待").click()
            expect(page).to_have_url(f"{site}/owner/{world.agent.slug}/inbox#" + ChangeProposal.objects.get().pk)
            expect(page.get_by_text(f"From feed {feeds.url('/rss')}")).to_be_visible()
            proposal = ChangeProposal.objects.get()
            assert (proposal.status, proposal.origin, proposal.kind) == ("pending", "observe_digest", "knowledge_draft")
            assert watched.off_site == []
        finally:
            watched.close()
    assert feeds.paths() == ["/rss"]
