"""The owner overview in a real browser (Debian's Chromium against the live server), in Chinese on
a 360 px phone: reached from the home page, its six charts drawn by the vendored Chart.js under
the enforced Content-Security-Policy, nothing asked of another host, no console error, and each
chart's table alternative opened by keyboard."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from conftest import TenantWorld

pytestmark = pytest.mark.browser

from test_metrics import SHANGHAI, opened, rated, turn  # noqa: E402
from test_requests_browser import Watched, shoot  # noqa: E402

NARROW = {"width": 360, "height": 740}


def seed(world: TenantWorld) -> None:
    world.tenant.time_zone = SHANGHAI
    world.tenant.save(update_fields=["time_zone"])
    today = dt.datetime.now(ZoneInfo(SHANGHAI)).date()
    for back, stars in ((2, 4), (3, 5), (9, 3)):
        at = dt.datetime.combine(today - dt.timedelta(days=back), dt.time(10), tzinfo=ZoneInfo(SHANGHAI))
        session = opened(world, at)
        turn(session, at, cited=True)
        turn(session, at + dt.timedelta(minutes=1), guard="price" if back == 3 else "")
        rated(session, stars, at + dt.timedelta(minutes=2))


def test_the_overview_draws_its_charts_in_chinese_on_a_phone(browser: Any, site: str, world: TenantWorld) -> None:
    seed(world)
    watched = Watched(browser, site, viewport=NARROW, is_mobile=True, has_touch=True)
    errors: list[str] = []
    watched.context.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        page = watched.context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{site}/accounts/login/")
        page.get_by_label("Email").fill("owner@alpha.test")
        page.get_by_label("Password").fill("pw-alpha")
        page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(f"{site}/")
        page.locator("#language").select_option("zh-hans")
        expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
        page.get_by_role("link", name="概览和指标").click()
        expect(page).to_have_url(f"{site}/owner/{world.agent.slug}/")
        expect(page.get_by_role("heading", level=1)).to_have_text("Alpha Agent 概览")
        expect(page.get_by_role("heading", name="周环比")).to_be_visible()

        # Six charts, each a Chart.js chart on a canvas that was actually drawn.
        canvases = page.locator("canvas[data-metric]")
        expect(canvases).to_have_count(7)
        drawn = page.evaluate(
            """() => [...document.querySelectorAll('canvas[data-metric]')].map(c => {
                 const chart = window.Chart && window.Chart.getChart(c);
                 const pixels = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                 let inked = 0;
                 for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) inked++;
                 return {chart: !!chart, width: c.clientWidth, inked: inked,
                         points: chart ? chart.data.datasets[0].data.filter(v => v !== null).length : 0};
               })"""
        )
        assert all(c["chart"] and c["inked"] > 100 and 0 < c["width"] <= 360 for c in drawn), drawn
        by_metric = dict(
            zip(
                page.locator("canvas[data-metric]").evaluate_all("cs => cs.map(c => c.dataset.metric)"),
                drawn,
                strict=True,
            )
        )
        assert by_metric["satisfaction"]["points"] == 3 and by_metric["knowledge_hit"]["points"] == 3
        assert by_metric["review_adoption"]["points"] == 0  # no decided review proposal: no data, not 0
        expect(canvases.first).to_have_attribute(
            "aria-label", "最近 30 天每日的复盘采纳率；整个期间：—。下方表格列出每天的数字。"
        )

        # The table alternative: opened by keyboard, the same figures day by day.
        figure = page.locator("#metric-satisfaction")
        figure.locator("summary").focus()
        page.keyboard.press("Enter")
        table = figure.get_by_role("table")
        expect(table).to_be_visible()
        expect(table.locator("tbody tr")).to_have_count(30)
        expect(table.get_by_role("columnheader", name="日期")).to_be_visible()
        expect(table.locator("tbody tr").filter(has_text="4.00")).to_have_count(1)
        expect(figure.locator(".total")).to_have_text("4.00")
        # The page fits the phone: nothing wider than the screen.
        assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
        shoot(page, "owner-overview-zh-360")
        assert errors == [], errors
    finally:
        watched.close()
