"""The owner runs today's review from the overview and watches it, in a real browser (Debian's
Chromium against the live server) with a real Celery worker (issue 13): queued, then — without
reloading the page — finished with its counts and a link to the report; a second tab's click joins
the same run.  English and Chinese, on a phone, under the Content-Security-Policy, nothing asked of
another host.  Without JavaScript the page refreshes itself until the review is done.

To see "queued" for certain, the test holds a row lock on the agent that the worker's claim of the
run (`SELECT … FOR UPDATE` with the agent joined) must wait for, while the click's own writes do
not: the run stays queued until the test lets go."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from django.conf import settings
from playwright.sync_api import expect
from test_requests_browser import SHOTS, Watched, shoot
from test_review import customer_turn
from worker_support import celery_workers

from conftest import TenantWorld
from ledger.models import LedgerEvent
from rsi.review_input import local_today
from rsi.schedule_models import RsiRun, RunStatus

pytestmark = pytest.mark.browser

WORKER_TIMEOUT_MS = 90_000

WORDS = {
    "en": {
        "run": "Run today's review",
        "queued": "Queued at",
        "joined": "This review is already under way: you are watching it.",
        "finished": "Finished. Wins: 0, misses: 0, gaps: 1; proposals waiting for your decision: 1.",
        "partial": "The day is not over",
        "gaps": "Gaps",
        "report": "Read the report in your inbox",
        "heading": "Daily review of {day}",
        "step": "Filing proposals for your decision",
    },
    "zh-hans": {
        "run": "运行今天的复盘",
        "queued": "已于",
        "joined": "这次复盘已经在进行中：您正在查看它的进度。",
        "finished": "已完成。做得好的：0，不足：0，知识缺口：1；等待您决定的提议：1。这一天还没有结束",
        "partial": "这一天还没有结束",
        "gaps": "知识缺口",
        "report": "在收件箱中查看报告",
        "heading": "{day} 的每日复盘",
        "step": "提交待您决定的提议",
    },
}


@contextlib.contextmanager
def worker_held(agent_id: int) -> Iterator[None]:
    """Hold the agent's row so that a worker's claim of a run waits (see the module docstring)."""
    db = settings.DATABASES["default"]
    with psycopg.connect(dbname=db["NAME"], user=db["USER"], host=db["HOST"], port=db["PORT"]) as conn:
        conn.execute("SELECT id FROM tenancy_agentprofile WHERE id = %s FOR NO KEY UPDATE", [agent_id])
        try:
            yield
        finally:
            conn.rollback()


def seed(world: TenantWorld) -> None:
    for _ in range(3):
        customer_turn(world, "do you sell gift cards?", miss=True)


def sign_in(page: Any, site: str, language: str) -> None:
    page.goto(f"{site}/accounts/login/")
    page.get_by_label("Email").fill("owner@alpha.test")
    page.get_by_label("Password").fill("pw-alpha")
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{site}/")
    if language != "en":
        page.locator("#language").select_option(language)
        expect(page.locator("html")).to_have_attribute("lang", language)


@pytest.mark.slow
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_owner_runs_todays_review_and_watches_it_finish(
    browser: Any, site: str, world: TenantWorld, language: str
) -> None:
    seed(world)
    words = WORDS[language]
    slug = world.agent.slug
    today = local_today(world.tenant).isoformat()
    watched = Watched(browser, site, phone=True)
    errors: list[str] = []
    watched.context.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        page = watched.context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        sign_in(page, site, language)
        page.goto(f"{site}/owner/{slug}/")
        date = page.locator("#review-date")
        expect(date).to_have_attribute("max", today)
        expect(date).to_have_attribute("type", "date")
        page.locator("#review").scroll_into_view_if_needed()
        page.locator("#review").screenshot(path=str(SHOTS / f"review-overview-{language}-375.png"))
        with celery_workers(["rsi.tasks.run"]):
            with worker_held(world.agent.pk):
                page.get_by_role("button", name=words["run"]).click()
                expect(page).to_have_url(f"{site}/owner/{slug}/reviews/{today}")
                expect(page.get_by_role("heading", level=1)).to_have_text(words["heading"].format(day=today))
                message = page.locator("[data-role=message]")
                expect(message).to_contain_text(words["queued"])
                expect(page.locator("[aria-live=polite]")).to_contain_text(words["queued"])
                expect(page.locator("[data-role=steps]")).to_be_hidden()
                shoot(page, f"review-queued-{language}-375")

                # A second tab: the same click joins the run that waits.
                second = watched.context.new_page()
                second.goto(f"{site}/owner/{slug}/")
                second.get_by_role("button", name=words["run"]).click()
                expect(second).to_have_url(f"{site}/owner/{slug}/reviews/{today}")
                expect(second.locator(".flash")).to_have_text(words["joined"])
                assert RsiRun.objects.filter(agent=world.agent).count() == 1
                page.evaluate("window.__notReloaded = true")
            # Let go: the worker runs the review; the page follows it without reloading.
            expect(message).to_contain_text(words["finished"], timeout=WORKER_TIMEOUT_MS)
            expect(message).to_contain_text(words["partial"])
            assert page.evaluate("window.__notReloaded === true")
            expect(second.locator("[data-role=message]")).to_contain_text(words["finished"], timeout=WORKER_TIMEOUT_MS)
        steps = page.locator("[data-role=steps] li")
        expect(steps).to_have_count(4)
        expect(steps.last).to_have_text(words["step"])
        assert page.locator("[data-role=steps] li.step-done").count() == 4
        gaps = page.locator("[data-role=counts] div").filter(has=page.locator("dt", has_text=words["gaps"]))
        expect(gaps.first.locator("dd")).to_have_text("1")
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        shoot(page, f"review-finished-{language}-375")

        run = RsiRun.objects.get(agent=world.agent)
        assert (run.status, run.attempts) == (RunStatus.DONE, 1)
        assert LedgerEvent.objects.of_type("review.requested").count() == 1
        assert LedgerEvent.objects.of_type("review.started").count() == 1

        page.get_by_role("link", name=words["report"]).click()
        expect(page).to_have_url(f"{site}/owner/{slug}/inbox?review={today}#review-h")
        expect(page.locator("#review-h")).to_contain_text(today)
        assert errors == [], errors
    finally:
        watched.close()


@pytest.mark.slow
def test_without_javascript_the_page_refreshes_itself_until_the_review_is_done(
    browser: Any, site: str, world: TenantWorld
) -> None:
    seed(world)
    slug = world.agent.slug
    today = local_today(world.tenant).isoformat()
    watched = Watched(browser, site, phone=True, java_script_enabled=False)
    try:
        page = watched.context.new_page()
        sign_in(page, site, "en")
        page.goto(f"{site}/owner/{slug}/")
        with celery_workers(["rsi.tasks.run"]):
            with worker_held(world.agent.pk):
                page.get_by_role("button", name=WORDS["en"]["run"]).click()
                expect(page).to_have_url(f"{site}/owner/{slug}/reviews/{today}")
                expect(page.locator("[data-role=message]")).to_contain_text("Queued at")
                expect(page.get_by_role("link", name="Check again")).to_be_visible()
            expect(page.locator("[data-role=message]")).to_contain_text(
                WORDS["en"]["finished"], timeout=WORKER_TIMEOUT_MS
            )
        expect(page.get_by_role("link", name=WORDS["en"]["report"])).to_be_visible()
        expect(page.get_by_role("link", name="Check again")).to_have_count(0)
        shoot(page, "review-finished-nojs-en-375")
    finally:
        watched.close()


def test_mondays_week_over_week_reads_on_a_phone_in_chinese(browser: Any, site: str, world: TenantWorld) -> None:
    from test_weekly import MONDAY_MORNING, SUNDAY, two_weeks

    from rsi.review import review_run

    two_weeks(world)
    review_run(agent_id=world.agent.pk, day=SUNDAY, now=MONDAY_MORNING)
    watched = Watched(browser, site, phone=True)
    try:
        page = watched.context.new_page()
        sign_in(page, site, "zh-hans")
        page.goto(f"{site}/owner/{world.agent.slug}/inbox?review={SUNDAY.isoformat()}")
        expect(page.locator("#review-h")).to_contain_text(SUNDAY.isoformat())
        table = page.get_by_role("table", name="周环比")
        expect(table).to_be_visible()
        expect(table.locator("tbody tr")).to_have_count(7)
        expect(table.get_by_role("row").filter(has_text="满意度")).to_contain_text("上升 · 变好")
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        table.scroll_into_view_if_needed()
        shoot(page, "review-weekly-zh-hans-375")
    finally:
        watched.close()
