"""Issue 26 §3 as a customer sees it on the demo shop (`seed_demo`) in Chromium, at phone width,
in Chinese and in English: the demo's loop — 可以礼品包装吗？ taken as a yes, then 给我打八折 and
我想订一个生日蛋糕 both refused as "not a date" — is gone; "Is my order confirmed?" reads the
request's state instead of starting an order; a field refused twice offers the way out."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_chat_browser as chat
from browser_support import TIMEOUT_MS, watch_csp  # (its fixtures are a plugin of the root conftest)
from playwright.sync_api import expect
from test_chat_browser import ask, open_chat

asgi_server = chat.asgi_server
demo = chat.demo
PHONE_390 = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def shots(tmp_path: Path) -> Path:
    """Where the screenshots go: FACADE_SHOTS when set (to look at them), else the test's tmp dir."""
    where = Path(os.environ.get("FACADE_SHOTS") or tmp_path)
    where.mkdir(parents=True, exist_ok=True)
    return where


@pytest.fixture(params=[PHONE_390, DESKTOP], ids=["390", "desktop"])
def page_of(request: Any, browser: Any, demo: dict[str, str]) -> Iterator[tuple[Any, str, dict[str, int]]]:
    viewport = request.param
    phone = viewport is PHONE_390
    context = browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone)
    context.set_default_timeout(TIMEOUT_MS)
    violations = watch_csp(context)
    try:
        yield context.new_page(), demo["site"], viewport
    finally:
        context.close()
    assert not violations, f"Content-Security-Policy violations: {violations}"


def fits(page: Any, viewport: dict[str, int]) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]


def said(page: Any, box: str, text: str, *expected: str, absent: tuple[str, ...] = ()) -> Any:
    reply = ask(page, box, text)
    for part in expected:
        expect(reply.locator(".text")).to_contain_text(part)
    for part in absent:
        expect(reply.locator(".text")).not_to_contain_text(part)
    return reply


@pytest.mark.browser
def test_the_demo_s_chinese_loop_is_gone(page_of: tuple[Any, str, dict[str, int]], tmp_path: Path) -> None:
    from facade.dialogue.models import CustomerRequest, Run
    from knowledge.models import KnowledgeMiss

    page, site, viewport = page_of
    open_chat(page, site)
    page.get_by_label("Language").select_option("zh-hans")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    box = "您的留言"
    said(page, box, "生日蛋糕多少钱？", "需要我登记一个请求")
    # 可以 is "OK", but this is a question: answered, and the offer made again — no flow.
    said(page, box, "可以礼品包装吗？", "还要我为您登记请求", absent=("您希望什么时候完成",))
    said(page, box, "我想订一个生日蛋糕", "您希望什么时候完成？")
    misses = KnowledgeMiss.objects.count()
    said(page, box, "给我打八折", "只有店主能决定", "要我把这个转给店主吗？", absent=("不像日期或时间",))
    assert KnowledgeMiss.objects.count() == misses  # a decision for the owner, not an unanswered question
    said(page, box, "我想订一个生日蛋糕", "您希望什么时候完成？", absent=("不像日期或时间",))
    said(page, box, "周五", "店主怎么联系您")
    said(page, box, "13800000000", "登记")
    said(page, box, "是的", "已为您登记请求 #")
    request = CustomerRequest.objects.get()
    status = said(page, box, "我的订单确认了吗？", f"请求 #{request.pk} 已登记", "目前还没有任何确认")
    expect(status.locator(".text")).not_to_contain_text("您希望什么时候完成")
    assert CustomerRequest.objects.count() == 1
    assert Run.objects.filter(stop_reason="owner_decision").count() == 1
    fits(page, viewport)
    page.screenshot(path=str(shots(tmp_path) / f"flow-zh-{viewport['width']}.png"), full_page=True)


@pytest.mark.browser
def test_a_field_refused_twice_offers_the_way_out_in_english(
    page_of: tuple[Any, str, dict[str, int]], tmp_path: Path
) -> None:
    from facade.dialogue.models import CustomerRequest

    page, site, viewport = page_of
    open_chat(page, site)
    box = "Your message"
    said(page, box, "I'd like to order a birthday cake", "By when would you like it?")
    said(page, box, "it depends on the oven", "That doesn't look like a date or time.")
    said(page, box, "it depends on my mum", "That still doesn't look like a date or time.", "Shall I pass it on?")
    said(page, box, "Give me 20% off", "a decision only the owner", "Shall I pass this on to the owner?")
    said(page, box, "yes", "I've asked a person to follow up with you (request #")
    request = CustomerRequest.objects.get()
    assert request.kind == "handoff" and request.details["need"] == "I'd like to order a birthday cake"
    card = page.get_by_role("region", name="Your requests").get_by_role("listitem")
    expect(card).to_contain_text(f"#{request.pk}")
    said(page, box, "Is my order confirmed?", f"Request #{request.pk} is registered", "nothing is confirmed yet")
    assert CustomerRequest.objects.count() == 1
    fits(page, viewport)
    page.screenshot(path=str(shots(tmp_path) / f"flow-en-{viewport['width']}.png"), full_page=True)
