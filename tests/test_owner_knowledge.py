"""The owner's knowledge page (/owner/<slug>/knowledge): entries with filters, an entry's history
with diffs, pending versions with their reasons, uploads with progress and restores.

Fast tests use Django's test client; the `browser` ones drive Debian's Chromium through
Playwright against the live server, with a real Celery worker for uploads."""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from worker_support import celery_workers

from conftest import TenantWorld
from facade.tenancy.schemas import Actor
from knowledge.models import EntryVersion, KnowledgeEntry, Status
from knowledge.schemas import SourceIn
from knowledge.services import entry_propose

ROOT = Path(__file__).resolve().parents[1]
SHA = "9f2c4e1b7a6d5c3e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6"


def url(world: TenantWorld) -> str:
    return f"/owner/{world.agent.slug}/knowledge"


def propose(
    world: TenantWorld,
    title: str,
    body: str,
    *,
    entry: KnowledgeEntry | None = None,
    source_type: str = "owner_dialogue",
    ref: str = "chat:1",
    version: str = "1",
) -> EntryVersion:
    return entry_propose(
        agent=world.agent,
        title=title,
        body=body,
        source=SourceIn(type=source_type, ref=ref, version=version),
        actor=Actor.platform("t"),
        entry=entry,
    )


def table_titles(page: str) -> list[str]:
    """The titles in the entries table, top to bottom (each row's header cell)."""
    return [html.unescape(t) for t in re.findall(r'<th scope="row"[^>]*><a [^>]*>(.*?)</a>', page)]


def section(page: str, heading_id: str) -> str:
    """The HTML of the <section> labelled by the given heading."""
    match = re.search(rf'<section aria-labelledby="{heading_id}".*?</section>', page, re.S)
    assert match, f"no section {heading_id}"
    return match.group(0)


def version_item(page: str, number: int) -> str:
    match = re.search(rf'<li id="v{number}">.*?</li>\s*(?=<li id="v|</ol>)', page, re.S)
    assert match, f"no version {number} in the history"
    return match.group(0)


# --- access ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_anonymous_visitors_are_sent_to_sign_in(client: Any, world_a: TenantWorld) -> None:
    response = client.get(url(world_a))
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next=/owner/{world_a.agent.slug}/knowledge"


@pytest.mark.django_db
def test_only_owners_of_the_agent_see_the_page(client: Any, world_a: TenantWorld, world_b: TenantWorld) -> None:
    propose(world_a, "Secret opening hours", "Open 9 to 5.")
    for outsider in (world_b.owner, world_a.auditor, world_a.member):
        client.force_login(outsider)
        response = client.get(url(world_a))
        assert response.status_code == 404, outsider
        assert b"Secret opening hours" not in response.content
    client.force_login(world_a.owner)
    assert client.get(url(world_a)).status_code == 200
    assert client.get("/owner/no-such-agent/knowledge").status_code == 404


@pytest.mark.django_db
def test_another_agents_entry_is_not_found(client: Any, world_a: TenantWorld, world_b: TenantWorld) -> None:
    foreign = propose(world_b, "Bravo hours", "Open at night.")
    client.force_login(world_a.owner)
    assert client.get(url(world_a), {"entry": foreign.entry_id}).status_code == 404
    for nonsense in ("abc", "²", "9" * 30, ""):
        assert client.get(url(world_a), {"entry": nonsense}).status_code == 404, nonsense
    client.force_login(world_b.owner)
    assert "Open at night." in client.get(url(world_b), {"entry": foreign.entry_id}).content.decode()


# --- entries and filters --------------------------------------------------------------------


@pytest.mark.django_db
def test_the_owner_sees_the_latest_version_of_each_entry(client: Any, world_a: TenantWorld) -> None:
    first = propose(
        world_a, "Delivery", "We deliver in 3 days.", source_type="upload", ref="shop.md#delivery", version=SHA
    )
    propose(
        world_a,
        "Delivery",
        "We deliver in 2 days.",
        entry=first.entry,
        source_type="upload",
        ref="shop.md#delivery",
        version=SHA,
    )
    propose(world_a, "Prices", "Prices include VAT.")
    client.force_login(world_a.owner)
    page = client.get(url(world_a), HTTP_ACCEPT_LANGUAGE="en").content.decode()

    assert table_titles(page) == ["Prices", "Delivery"]  # newest first, one row per entry
    entries = section(page, "entries-h")
    delivery = re.search(r'<tr[^>]*>\s*<th scope="row"[^>]*><a [^>]*>Delivery</a>.*?</tr>', entries, re.S).group(0)
    assert f'href="?entry={first.entry_id}#history-h"' in delivery
    assert re.search(r'data-label="Version">2<', delivery)  # the latest version, not the first
    assert '<span class="badge badge-approved">Approved</span>' in delivery
    # Where it came from in words; the ids in the tooltip (issue 11, point 10).
    assert "Uploaded file shop.md, section Delivery" in delivery
    assert f'title="source: upload · reference: shop.md#delivery · source version: {SHA}"' in delivery
    assert "Fact" in delivery
    prices = re.search(r'<tr[^>]*>\s*<th scope="row"[^>]*><a [^>]*>Prices</a>.*?</tr>', entries, re.S).group(0)
    assert '<span class="badge badge-pending">Pending</span>' in prices
    assert 'data-label="Regulated">Tax<' in prices
    assert "Owner dialogue on" in prices and "reference: chat:1" in prices
    assert re.search(r'<time datetime="\d{4}-\d\d-\d\dT', prices)


@pytest.mark.django_db
def test_filters_by_status_and_source_type(client: Any, world_a: TenantWorld) -> None:
    propose(world_a, "Opening hours", "We open at nine.")  # approved, owner_dialogue
    propose(world_a, "Import duties", "Customs duty is paid by the buyer.")  # pending (regulated)
    propose(world_a, "Returns", "Returns within 30 days.", source_type="upload", ref="faq.md#returns", version=SHA)
    propose(world_a, "Gift wrap", "A customer asked for gift wrap.", source_type="customer_candidate", ref="session:9")
    client.force_login(world_a.owner)

    assert sorted(table_titles(client.get(url(world_a)).content.decode())) == [
        "Gift wrap",
        "Import duties",
        "Opening hours",
        "Returns",
    ]
    pending = client.get(url(world_a), {"status": "pending"}).content.decode()
    assert sorted(table_titles(pending)) == ["Gift wrap", "Import duties"]
    assert '<option value="pending" selected>' in pending
    assert table_titles(client.get(url(world_a), {"status": "approved", "source_type": "upload"}).content.decode()) == [
        "Returns"
    ]
    assert table_titles(client.get(url(world_a), {"source_type": "customer_candidate"}).content.decode()) == [
        "Gift wrap"
    ]
    empty = client.get(url(world_a), {"status": "quarantined"}).content.decode()
    assert table_titles(empty) == [] and "No entries match these filters." in empty
    # Nonsense filter values mean "any" rather than an error.
    assert len(table_titles(client.get(url(world_a), {"status": "bogus"}).content.decode())) == 4


# --- history --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_history_shows_versions_newest_first_with_a_diff(client: Any, world_a: TenantWorld) -> None:
    v1 = propose(world_a, "Delivery", "We deliver within 3 days in Germany.")
    propose(world_a, "Delivery times", "We deliver within 5 days in Germany and Austria.", entry=v1.entry)
    v3 = propose(
        world_a, "Delivery times", "We deliver within 5 days in Germany and Austria. VAT is included.", entry=v1.entry
    )
    assert v3.status == Status.PENDING
    client.force_login(world_a.owner)
    page = client.get(url(world_a), {"entry": v1.entry_id}, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    history = section(page, "history-h")

    assert re.findall(r'<li id="v(\d+)">', history) == ["3", "2", "1"]
    second = version_item(history, 2)
    assert "Changes since version 1" in second
    assert re.search(r"<del><span class=\"visually-hidden\">\[removed: </span>3<span", second)
    assert re.search(r"<ins><span class=\"visually-hidden\">\[added: </span>5<span", second)
    assert re.search(r"<ins><span class=\"visually-hidden\">\[added: </span> and Austria<span", second)
    assert re.search(r"<ins><span class=\"visually-hidden\">\[added: </span> times<span", second)  # the title
    third = version_item(history, 3)
    assert "Title unchanged." in third and "<del>" not in third
    assert re.search(r"<ins>.*?VAT is included\.<span", third)
    assert "Touches a regulated topic" in third and "Tax" in third
    assert "First version" in version_item(history, 1)

    # Version 2 is served: marked current, and it alone has no restore button besides pending v3.
    assert "Version 2 is current: it is what customers are served." in history
    assert "Current: served to customers" in second
    assert "Current: served to customers" not in version_item(history, 1) + third
    assert 'data-version="1"' in version_item(history, 1) and "Restore this version" in version_item(history, 1)
    assert "Restore this version" not in second + third
    assert f'action="/api/agents/{world_a.agent.slug}/knowledge/entries/{v1.entry_id}/restore"' in history
    assert 'aria-current="true"' in section(page, "entries-h")  # the selected row is marked


@pytest.mark.django_db
def test_history_diffs_chinese_text_character_by_character(client: Any, world_a: TenantWorld) -> None:
    v1 = propose(world_a, "包装", "所有包裹都使用纸箱。")
    propose(world_a, "包装", "所有包裹都使用可回收纸箱。", entry=v1.entry)
    client.force_login(world_a.owner)
    page = client.get(url(world_a), {"entry": v1.entry_id}).content.decode()
    assert re.search(r"使用<ins><span class=\"visually-hidden\">\[[^<]*</span>可回收<span", page)


# --- pending, in both languages ---------------------------------------------------------------


@pytest.mark.django_db
def test_pending_list_explains_why_in_english_and_chinese(client: Any, world_a: TenantWorld) -> None:
    propose(world_a, "Prices", "All prices include VAT.")
    propose(world_a, "Gift wrap", "Customers want gift wrap.", source_type="customer_candidate", ref="session:1")
    propose(world_a, "Opening hours", "We open at nine.")  # approved: not pending
    client.force_login(world_a.owner)

    en = section(client.get(url(world_a), HTTP_ACCEPT_LANGUAGE="en").content.decode(), "pending-h")
    assert "Waiting for your decision" in en and "(2)" in en
    assert "Prices" in en and "Gift wrap" in en and "Opening hours" not in en
    assert "<li>Touches a regulated topic</li>" in en
    assert "<li>Drawn from customer conversations</li>" in en
    assert "<li>Low confidence</li>" in en  # customer material comes with confidence 0.5
    assert "Regulated: Tax" in en

    zh_page = client.get(url(world_a), HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    zh = section(zh_page, "pending-h")
    assert 'lang="zh-hans"' in zh_page
    assert "等待您决定" in zh
    assert "<li>涉及受监管的话题</li>" in zh
    assert "<li>来自客户对话</li>" in zh
    assert "<li>置信度低</li>" in zh
    assert "Touches a regulated topic" not in zh
    assert "返回首页" in zh_page and "版本历史" not in zh_page  # no entry selected


@pytest.mark.django_db
def test_the_page_links_home_and_explains_the_upload_without_js(client: Any, world_a: TenantWorld) -> None:
    client.force_login(world_a.owner)
    response = client.get(url(world_a), HTTP_ACCEPT_LANGUAGE="en")
    page = response.content.decode()
    assert '<a href="/">← Back to home</a>' in page
    assert "Nothing waits for your decision." in page
    upload = section(page, "upload-h")
    assert 'accept=".txt,.md,.html,.pdf,.docx"' in upload
    assert f'action="/api/agents/{world_a.agent.slug}/knowledge/uploads"' in upload
    assert f'data-jobs="/api/agents/{world_a.agent.slug}/knowledge/jobs/"' in upload
    assert "<progress" in upload and 'role="alert"' in upload
    assert "<noscript>" in page and "need JavaScript" in page
    assert "csrftoken" in response.cookies  # the page's script sends it back


# --- real browser -----------------------------------------------------------------------------

from browser_support import PHONE, TIMEOUT_MS  # noqa: E402  (its fixtures are a plugin of the root conftest)

MARKDOWN = (
    b"# Delivery\nWe deliver within 3 days in Germany.\n\n"
    b"# Pickup\nPickup in Hamburg on weekdays.\n\n"
    b"# Returns\nReturns are free within 30 days.\n"
)


def celery_worker(**environ: str) -> Any:
    """A real Celery worker on the test database for the upload jobs (tests/worker_support.py)."""
    return celery_workers(["knowledge.tasks.ingest_job_run"], **environ)


@pytest.fixture
def worker(world: TenantWorld) -> Iterator[None]:
    with celery_worker():
        yield


@pytest.fixture
def strict_worker(world: TenantWorld) -> Iterator[None]:
    """A worker that takes documents of at most two sections."""
    with celery_worker(FACADE_UPLOAD_MAX_SECTIONS="2"):
        yield


def look(locator: Any, name: str) -> None:
    """With KNOWLEDGE_SCREENSHOT_DIR set, keep a screenshot to look at by hand."""
    if os.environ.get("KNOWLEDGE_SCREENSHOT_DIR"):
        locator.screenshot(path=str(Path(os.environ["KNOWLEDGE_SCREENSHOT_DIR"]) / f"{name}.png"))


def sign_in_and_open(page: Any, site: str, query: str = "") -> None:
    from playwright.sync_api import expect

    page.goto(f"{site}/accounts/login/?next=/owner/alpha-agent/knowledge{query}")
    page.get_by_label("Email").fill("owner@alpha.test")
    page.get_by_label("Password").fill("pw-alpha")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Knowledge of Alpha Agent")


@pytest.mark.browser
def test_owner_uploads_a_document_and_watches_it_become_entries(
    page: Any, site: str, world: TenantWorld, worker: None
) -> None:
    from playwright.sync_api import expect

    sign_in_and_open(page, site)
    expect(page.get_by_text("This agent knows nothing yet.")).to_be_visible()
    upload = page.get_by_role("region", name="Add a document")
    upload.get_by_label("Document", exact=True).set_input_files(
        files=[{"name": "shop.md", "mimeType": "text/markdown", "buffer": MARKDOWN}]
    )
    # Keep every text the live region shows, however briefly.
    page.evaluate("""() => { window.seen = [];
        new MutationObserver(() => window.seen.push(document.getElementById('upload-text').textContent))
            .observe(document.getElementById('upload-text'),
                     {childList: true, characterData: true, subtree: true}); }""")
    upload.get_by_role("button", name="Upload").click()

    progress = upload.locator("progress#upload-progress")
    expect(progress).to_be_visible()
    look(upload, "upload-running")
    expect(upload.locator("#upload-text")).to_have_text("3 new, 0 unchanged", timeout=60_000)
    assert progress.get_attribute("max") == "3" and progress.evaluate("el => el.value") == 3
    seen = page.evaluate("window.seen")
    assert seen[0] == "Sending the file…", seen
    # The worker counts the sections once it has read the file (issue 10): before that, the state alone.
    states = r"(waiting for a worker|working|done)"
    assert any(re.fullmatch(rf"([0-3] of 3 sections · )?{states}", t) for t in seen), seen
    assert upload.locator("#upload-text").get_attribute("aria-live") == "polite"
    expect(upload.get_by_role("alert")).to_be_hidden()
    look(upload, "upload-done")
    assert EntryVersion.objects.filter(agent=world.agent, source_ref__startswith="shop.md#").count() == 3

    upload.get_by_role("link", name="Show the updated list").click()
    table = page.get_by_role("table")
    expect(table.locator("tbody tr")).to_have_count(3)
    expect(table.locator("tbody th")).to_have_text(["Returns", "Pickup", "Delivery"])


@pytest.mark.browser
def test_an_upload_over_a_limit_shows_the_limit(page: Any, site: str, world: TenantWorld, strict_worker: None) -> None:
    """The worker refuses a document over a limit, and the page says which limit (issue 10)."""
    from playwright.sync_api import expect

    sign_in_and_open(page, site)
    upload = page.get_by_role("region", name="Add a document")
    upload.get_by_label("Document", exact=True).set_input_files(
        files=[{"name": "shop.md", "mimeType": "text/markdown", "buffer": MARKDOWN}]
    )
    upload.get_by_role("button", name="Upload").click()
    expect(upload.get_by_role("alert")).to_have_text(
        "The upload failed: shop.md has 3 headings; the limit is 2 sections per document. "
        "Split it into smaller files and upload them separately.",
        timeout=60_000,
    )
    assert not EntryVersion.objects.filter(agent=world.agent).exists()


@pytest.mark.browser
def test_an_unsupported_upload_shows_the_servers_reason(page: Any, site: str, world: TenantWorld) -> None:
    from playwright.sync_api import expect

    from knowledge.extract import ExtractError, extract

    data = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00" + b"\x00" * 64
    with pytest.raises(ExtractError) as refused:
        extract("tool.exe", data)
    assert refused.value.http_status == 415

    sign_in_and_open(page, site)
    upload = page.get_by_role("region", name="Add a document")
    upload.get_by_label("Document", exact=True).set_input_files(
        files=[{"name": "tool.exe", "mimeType": "application/octet-stream", "buffer": data}]
    )
    upload.get_by_role("button", name="Upload").click()
    alert = upload.get_by_role("alert")
    expect(alert).to_have_text(refused.value.detail)
    look(upload, "upload-refused")
    expect(upload.get_by_role("button", name="Upload")).to_be_enabled()  # ready for another try
    assert not EntryVersion.objects.filter(agent=world.agent).exists()


@pytest.mark.browser
def test_restoring_an_older_version_makes_a_new_current_version(page: Any, site: str, world: TenantWorld) -> None:
    from playwright.sync_api import expect

    v1 = propose(world, "Delivery", "We deliver within 3 days.")
    propose(world, "Delivery", "We deliver within 5 days.", entry=v1.entry)
    sign_in_and_open(page, site)
    page.get_by_role("link", name="Delivery", exact=True).first.click()
    history = page.get_by_role("region", name="Version history: Delivery")
    expect(history.get_by_text("Version 2 is current")).to_be_visible()
    expect(history.locator("#v2 del")).to_contain_text("3")
    expect(history.locator("#v2 ins")).to_contain_text("5")

    history.locator("#v1").get_by_role("button", name="Restore this version").click()
    expect(history.get_by_text("Version 3 is current")).to_be_visible()
    expect(history.locator("#v3 .badge-current")).to_be_visible()
    expect(history.locator("#v2 .badge")).to_have_text("Rolled back")
    expect(history.locator("#v3 del")).to_have_text("[removed: 5]")  # v3 is v1's text again
    expect(history.locator("#v3 ins")).to_have_text("[added: 3]")
    expect(history.locator("#v3")).to_contain_text("Restored from version 1")
    expect(history.get_by_role("alert")).to_be_hidden()

    entry = KnowledgeEntry.objects.select_related("current_version").get(pk=v1.entry_id)
    assert (entry.current_version.number, entry.current_version.body) == (3, "We deliver within 3 days.")
    assert entry.current_version.restored_from_id == v1.pk


@pytest.mark.browser
def test_a_failed_restore_is_announced(page: Any, site: str, world: TenantWorld) -> None:
    from playwright.sync_api import expect

    v1 = propose(world, "Delivery", "We deliver within 3 days.")
    propose(world, "Delivery", "We deliver within 5 days.", entry=v1.entry)
    sign_in_and_open(page, site, f"?entry={v1.entry_id}")
    # The version disappears from under the page (as if another tab changed it): the API refuses.
    EntryVersion.objects.filter(pk=v1.pk).update(status=Status.REJECTED)
    page.locator("#v1").get_by_role("button", name="Restore this version").click()
    alert = page.get_by_role("region", name=re.compile("Version history")).get_by_role("alert")
    expect(alert).to_have_text("version 1 was never approved (rejected)")
    assert KnowledgeEntry.objects.get(pk=v1.entry_id).latest_number == 2


@pytest.mark.browser
def test_the_page_fits_a_phone(browser: Any, site: str, world: TenantWorld, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    long_ref = "handbook-for-shipping-and-returns-2026-edition.md#section-" + "x" * 60
    v1 = propose(
        world, "Delivery", "We deliver within 3 days in Germany.", source_type="upload", ref=long_ref, version=SHA
    )
    propose(
        world,
        "Delivery",
        "We deliver within 5 days in Germany and Austria.",
        entry=v1.entry,
        source_type="upload",
        ref=long_ref,
        version=SHA,
    )
    propose(world, "Prices", "All prices include VAT and customs duty.")
    propose(
        world,
        "Gift wrap",
        "Customers keep asking for gift wrap at Christmas.",
        source_type="customer_candidate",
        ref="session:7",
    )

    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = context.new_page()
        sign_in_and_open(page, site, f"?entry={v1.entry_id}")
        expect(page.get_by_role("region", name="Version history: Delivery")).to_be_visible()
        expect(page.get_by_role("table").locator("tbody tr")).to_have_count(3)
        wide = page.evaluate("""() => [...document.querySelectorAll('body *')]
            .filter(el => el.getBoundingClientRect().right > 375.5)
            .map(el => el.tagName + '.' + el.className + '#' + el.id + ' '
                       + Math.round(el.getBoundingClientRect().right))""")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], wide
        for control in (
            page.get_by_label("Document", exact=True),
            page.get_by_role("button", name="Upload"),
            page.get_by_role("button", name="Filter"),
            page.get_by_label("Status", exact=True),
        ):
            box = control.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box

        # Keyboard: the first Tab reaches the skip link, which leads to the content.
        page.keyboard.press("Tab")
        expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
        page.keyboard.press("Enter")
        expect(page).to_have_url(re.compile(r"#main$"))

        screenshot = tmp_path / "owner-knowledge-phone.png"
        page.screenshot(path=str(screenshot), full_page=True)
        assert screenshot.stat().st_size > 10_000
        if os.environ.get("KNOWLEDGE_SCREENSHOT_DIR"):  # to look at it by hand
            target = Path(os.environ["KNOWLEDGE_SCREENSHOT_DIR"])
            target.mkdir(parents=True, exist_ok=True)
            (target / screenshot.name).write_bytes(screenshot.read_bytes())
            for name, width in (("phone", PHONE["width"]), ("desktop", 1280)):
                page.set_viewport_size({"width": width, "height": 900})
                height = page.evaluate("document.documentElement.scrollHeight")
                for n, top in enumerate(range(0, height, 900)):
                    clip = {"x": 0, "y": top, "width": width, "height": min(900, height - top)}
                    page.screenshot(path=str(target / f"{name}-{n}.png"), clip=clip, full_page=True)
    finally:
        context.close()
