"""The lineage and review pages of the auditor console at phone width (390 px): an auditor signs
in, opens a contract's lineage with an owner's published wording and a daily review, and nothing
runs wider than the screen."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from approvals.contract import contract_compile
from conftest import TenantWorld
from facade.tenancy.schemas import Actor
from rsi.review import review_run
from rsi.review_input import local_today
from tests.test_review import gap_day

pytestmark = pytest.mark.browser

from browser_support import TIMEOUT_MS, watch_csp  # noqa: E402

PHONE = {"width": 390, "height": 844}
WORDING = "Prices are confirmed by Alice in person, within one working day, always by e-mail to you."


def test_the_lineage_and_review_pages_fit_a_phone(browser: Any, site: str, world: TenantWorld) -> None:
    contract_compile(
        agent=world.agent, changes={"boundary_wording": {"en": WORDING}}, actor=Actor.human(world.owner.pk)
    )
    gap_day(world)
    report = review_run(agent_id=world.agent.pk, day=local_today(world.tenant))
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, locale="en-GB")
    context.set_default_timeout(TIMEOUT_MS)
    violations = watch_csp(context)
    try:
        page = context.new_page()
        page.goto(f"{site}/accounts/login/")
        page.locator("input[name=username]").fill("auditor@alpha.test")
        page.locator("input[name=password]").fill("pw-alpha")
        page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(f"{site}/")
        base = f"{site}/audit/{world.tenant.slug}"
        for path in (
            "/lineage",
            f"/lineage?entity_type=contract&entity_id={world.agent.slug}",
            f"/lineage?entity_type=contract&entity_id={world.agent.slug}&field=boundary_wording",
            f"/reviews/{report.pk}",
        ):
            response = page.goto(base + path)
            assert response is not None and response.status == 200, path
            page.wait_for_load_state("networkidle")
            for details in page.locator("details").all():
                details.evaluate("d => d.open = true")
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], (path, width)
        page.goto(base + f"/lineage?entity_type=contract&entity_id={world.agent.slug}")
        expect(page.get_by_role("heading", name="Version 2")).to_be_visible()
        # The search box finds the wording and opens its lineage.
        page.goto(base + "/lineage")
        page.get_by_label("A sentence you saw in a chat", exact=False).fill(WORDING[:40])
        page.get_by_role("button", name="Find where it comes from").click()
        page.wait_for_load_state("networkidle")
        assert "field=boundary_wording" in page.url
    finally:
        context.close()
    assert violations == []
