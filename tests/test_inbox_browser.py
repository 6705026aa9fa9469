"""Issue 12's browser test, on Daphne + Debian's Chromium against the seeded demo shop, with a real
SMTP server (aiosmtpd) receiving the server's e-mail: the owner signs in, approves an L2 boundary
wording change from the inbox — the customer's next turn uses the new wording — and approves an
L3 pricing change by typing the code that arrived at the SMTP server (a wrong code first shows the
remaining attempts), and sees the contract version go up; the reason typed into the card goes with
the decision (a preference signal) and the decided card shows it.  Then the inbox at 360 px, in
Chinese and by keyboard alone (with a reason in Chinese); and the same card in the owner chat,
brought up by typing "approve chg_…"."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from django.core.management import call_command
from playwright.sync_api import expect
from smtp_support import Inbox
from test_chat_browser import ANSWER_MS, ENGLISH, agent_replies, ask, daphne, open_chat
from test_requests_browser import Watched, shoot, sign_in

NARROW = {"width": 360, "height": 740}
WORDING = {
    "en": "Ana prices every cake herself and writes back the same day.",
    "zh-hans": "每个蛋糕的价格由安娜亲自确定。",
}
PRICING = {
    "currency": "EUR",
    "items": [{"name": "Birthday cake", "amount": "42.00"}, {"name": "Cupcake", "amount": "3.50"}],
}


@pytest.fixture(scope="module")
def mailbox() -> Iterator[tuple[Inbox, int]]:
    """A real SMTP server for the whole module: Daphne, started once, sends the codes to it."""
    import socket

    inbox = Inbox()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


@pytest.fixture(scope="module")
def server(django_db_setup: Any, tmp_path_factory: Any, mailbox: tuple[Inbox, int]) -> Iterator[str]:
    with daphne(tmp_path_factory.mktemp("daphne"), EMAIL_HOST="127.0.0.1", EMAIL_PORT=str(mailbox[1])) as url:
        yield url


@pytest.fixture
def shop(server: str, transactional_db: Any, _async_unsafe_allowed: None, mailbox: tuple[Inbox, int]) -> dict[str, Any]:
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    password = re.search(r"owner\s+owner@demo\.test\s+password: (\S+)", out.getvalue())
    assert password, out.getvalue()
    mailbox[0].received.clear()
    return {"site": server, "owner_password": password.group(1), "mail": mailbox[0]}


def propose(kind: str, payload: Any, summary: str, evidence: Any = None) -> Any:
    """A change the agent proposed in the owner's chat: it waits for the owner, whatever its level."""
    from approvals.services import proposal_create
    from facade.tenancy.models import AgentProfile
    from facade.tenancy.schemas import Actor

    agent = AgentProfile.objects.get(slug="demo-shop")
    return proposal_create(
        agent=agent,
        kind=kind,
        payload=payload,
        summary=summary,
        origin="owner_dialogue",
        actor=Actor.platform("tests"),
        evidence=evidence,
    )


CUSTOMER_SAID = "顾客说的话 NEVER-ON-THE-OWNER-PAGE"


def a_customer_conversation() -> str:
    """A customer's conversation of the demo shop, with words the owner's pages must never show."""
    from facade.dialogue.models import Message
    from facade.dialogue.services import session_open
    from facade.tenancy.models import AgentProfile
    from facade.tenancy.rules import Audience
    from facade.tenancy.services import customer_create

    agent = AgentProfile.objects.get(slug="demo-shop")
    session = session_open(agent=agent, audience=Audience.CUSTOMER, customer=customer_create(tenant=agent.tenant))
    Message.objects.create(session=session, role="principal", text=CUSTOMER_SAID)
    return str(session.pk)


def live_version() -> int:
    from approvals.models import AgentContract

    return int(AgentContract.objects.get(agent__slug="demo-shop", is_live=True).version)


def card_of(page: Any, proposal: Any) -> Any:
    return page.locator(f'article.change-card[id="{proposal.pk}"]')


def code_in(mail: Inbox) -> str:
    [(to, message)] = mail.received
    assert to == ["owner@demo.test"]
    body = message.get_payload(decode=True).decode(message.get_content_charset() or "utf-8")
    found = re.search(r"\b(\d{6})\b", body)
    assert found, body
    return found.group(1)


@pytest.mark.browser
def test_the_owner_approves_wording_and_prices_from_the_inbox(browser: Any, shop: dict[str, Any]) -> None:
    from approvals.models import ChangeProposal, PreferenceSignal

    site = shop["site"]
    wording = propose("boundary_wording", {"language": "en", "text": WORDING["en"]}, "Say that Ana sets the prices")
    pricing = propose("pricing", PRICING, "New cake prices")
    before = live_version()
    owner_ctx, customer_ctx = Watched(browser, site), Watched(browser, site)
    try:
        owner = owner_ctx.context.new_page()
        sign_in(owner, site, shop["owner_password"])
        owner.get_by_role("link", name="Changes waiting for your decision: 2").click()
        expect(owner).to_have_url(f"{site}/owner/demo-shop/inbox")
        expect(owner.locator(".contract")).to_have_text(f"Live contract: version {before}")
        shoot(owner, "inbox-en-desktop")

        # L2: a click decides it (a one-time token), and it is applied.
        card = card_of(owner, wording)
        expect(card).to_contain_text("Level 2")
        expect(card).to_contain_text(WORDING["en"])
        card.get_by_role("button", name="Approve").click()
        card = card_of(owner, wording)
        expect(card.locator(".card-status")).to_have_text(re.compile(r"^Approved and (applied|published)"))
        expect(card.locator(".badge-applied")).to_be_visible()
        assert ChangeProposal.objects.get(pk=wording.pk).status == "applied"

        # The customer's next turn speaks the new wording.
        customer = customer_ctx.context.new_page()
        open_chat(customer, site)
        reply = ask(customer, ENGLISH["textbox"], ENGLISH["price"])
        expect(reply.locator(".text")).to_contain_text(WORDING["en"])
        middle = live_version()

        # L3: Approve sends a code to the owner's address; the card asks for it.
        card = card_of(owner, pricing)
        expect(card).to_contain_text("Level 3")
        expect(card.locator("table.rows")).to_contain_text("42.00 EUR")
        # The owner's reason, typed before the click, travels through the code step to the decide.
        reason_box = card.get_by_label(re.compile(r"^Your reason \(optional"))
        expect(reason_box).to_have_attribute("maxlength", "200")
        reason_box.fill("Butter costs more this year")
        card.get_by_role("button", name="Approve").click()
        code_box = card.get_by_label("Code from the e-mail")
        expect(code_box).to_be_focused()
        expect(code_box).to_have_attribute("autocomplete", "one-time-code")
        expect(code_box).to_have_attribute("inputmode", "numeric")
        expect(card.locator(".sent-to")).to_contain_text("o***@demo.test")
        code = code_in(shop["mail"])  # sent inside the authorize request, before the card asked
        assert code not in owner.content()  # the code travels mail → person → browser only

        wrong = "000000" if code != "000000" else "111111"
        code_box.fill(wrong)
        card.get_by_role("button", name="Confirm").click()
        expect(card.locator(".card-error")).to_have_text("That code is not right. Tries left: 4.")
        expect(code_box).to_be_focused()
        assert ChangeProposal.objects.get(pk=pricing.pk).status == "pending"
        shoot(owner, "inbox-en-wrong-code")

        code_box.fill(code)
        code_box.press("Enter")
        card = card_of(owner, pricing)
        expect(card.locator(".card-status")).to_have_text(
            f"Approved and published as contract version {middle + 1}.", timeout=ANSWER_MS
        )
        expect(card.locator(".outcome.published")).to_have_text(f"Published as contract version {middle + 1}.")
        expect(owner.locator(".contract")).to_have_text(f"Live contract: version {middle + 1}")
        assert live_version() == middle + 1 > middle > before  # the wording published one, the prices another
        expect(card.locator(".decision-reason")).to_have_text("Butter costs more this year")
        expect(card.locator("dt", has_text="Reason given")).to_be_visible()
        expect(card.get_by_label(re.compile(r"^Your reason"))).to_have_count(0)  # decided: no field
        signal = PreferenceSignal.objects.get(proposal_id=pricing.pk)
        assert (signal.decision, signal.reason, signal.origin) == (
            "approve",
            "Butter costs more this year",
            "owner_dialogue",
        )
        # The wording was approved without a reason: its signal has none.
        assert PreferenceSignal.objects.get(proposal_id=wording.pk).reason == ""
        shoot(owner, "inbox-en-published")

        # An applied change offers its roll-back: a new change, waiting like the one it undoes.
        card_of(owner, wording).get_by_role("button", name="Roll back").click()
        undo = owner.locator("article.change-card", has_text="Roll-back: Boundary wording")
        expect(undo).to_have_count(1)
        expect(undo.locator(".card-status")).to_contain_text("The roll-back is change chg_")
        [rollback] = ChangeProposal.objects.filter(rollback_of=wording.pk)
        assert rollback.status == "pending"
        expect(undo).to_contain_text(WORDING["en"])  # what is said now, and goes
        undo.get_by_role("button", name="Approve").click()
        expect(card_of(owner, rollback).locator(".card-status")).to_have_text(
            f"Approved and published as contract version {middle + 2}."
        )
        # … and the change it undid says so.
        expect(card_of(owner, wording).locator(".badge-rolled_back")).to_be_visible()
        expect(card_of(owner, wording).get_by_role("button", name="Roll back")).to_have_count(0)
        shoot(owner, "inbox-en-rolled-back")

        owner.reload()
        expect(owner.locator(".contract")).to_have_text(f"Live contract: version {middle + 2}")
        # Decided cards move below the pending ones, and offer to roll back.
        expect(owner.locator(".pending-list")).to_have_count(0)
        expect(card_of(owner, pricing).get_by_role("button", name="Roll back")).to_be_visible()
    finally:
        owner_ctx.close()
        customer_ctx.close()


@pytest.mark.browser
def test_the_inbox_at_360px_in_chinese_by_keyboard(browser: Any, shop: dict[str, Any]) -> None:
    from approvals.models import ChangeProposal, PreferenceSignal

    site = shop["site"]
    evidence = [{"type": "session", "id": a_customer_conversation()}]
    wording = propose(
        "boundary_wording", {"language": "zh-hans", "text": WORDING["zh-hans"]}, "说明价格由安娜确定", evidence
    )
    propose("pricing", PRICING, "新的蛋糕价格")
    watched = Watched(browser, site, phone=True, viewport=NARROW)
    try:
        page = watched.context.new_page()
        sign_in(page, site, shop["owner_password"])
        page.locator("#language").select_option("zh-hans")
        expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
        page.goto(f"{site}/owner/demo-shop/inbox")
        expect(page.get_by_role("heading", level=2).first).to_contain_text("等待您决定（2）")
        assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
        shoot(page, "inbox-zh-360")

        card = card_of(page, wording)
        expect(card).to_contain_text("级别 2")
        expect(card.get_by_role("button", name="批准")).to_be_visible()
        # The evidence opens by keyboard: the conversation's summary, never the customer's words.
        pointer = card.locator(".evidence summary")
        expect(pointer).to_contain_text("与一位客户的对话")
        pointer.focus()
        page.keyboard.press("Enter")
        expect(card.locator(".evidence details")).to_have_attribute("open", "")
        expect(card.locator(".evidence details")).to_contain_text("对方的消息：1 条")
        assert CUSTOMER_SAID not in page.content()
        # A reason in Chinese, typed by keyboard into the card's field.
        reason_box = card.get_by_label(re.compile(r"^您的理由（可选"))
        reason_box.focus()
        page.keyboard.type("这样说更清楚")
        assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
        shoot(page, "inbox-zh-360-reason")
        # By keyboard: Tab from the top of the page reaches the card's Approve button; Enter decides.
        page.locator("body").focus()
        approve = card.get_by_role("button", name="批准")
        for _ in range(80):
            page.keyboard.press("Tab")
            if approve.evaluate("b => b === document.activeElement"):
                break
        else:
            pytest.fail("Tab never reached the Approve button")
        page.keyboard.press("Enter")
        card = card_of(page, wording)
        expect(card.locator(".card-status")).to_have_text(re.compile(r"^已批准"))
        expect(card.locator("h3")).to_be_focused()  # the focus stays on the card it was in
        assert ChangeProposal.objects.get(pk=wording.pk).status == "applied"
        expect(card.locator("dt", has_text="给出的理由")).to_be_visible()
        expect(card.locator(".decision-reason")).to_have_text("这样说更清楚")
        assert PreferenceSignal.objects.get(proposal_id=wording.pk).reason == "这样说更清楚"
        assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
        shoot(page, "inbox-zh-360-decided")
    finally:
        watched.close()


@pytest.mark.browser
def test_typing_approve_in_the_owner_chat_shows_the_card_with_its_buttons(browser: Any, shop: dict[str, Any]) -> None:
    from approvals.models import ChangeProposal

    site = shop["site"]
    wording = propose("boundary_wording", {"language": "en", "text": WORDING["en"]}, "Say that Ana sets the prices")
    watched = Watched(browser, site)
    try:
        page = watched.context.new_page()
        sign_in(page, site, shop["owner_password"])
        page.goto(f"{site}/owner/demo-shop/chat")
        reply = ask(page, "Your message", f"approve {wording.pk}")
        card = reply.locator(f'article.change-card[id="{wording.pk}"]')
        expect(card).to_be_visible()
        expect(card).to_contain_text("Level 2")
        # The words alone decided nothing.
        assert ChangeProposal.objects.get(pk=wording.pk).status == "pending"
        shoot(page, "owner-chat-card")
        card.get_by_role("button", name="Approve").click()
        card = page.locator(f'article.change-card[id="{wording.pk}"]')
        expect(card.locator(".card-status")).to_have_text(re.compile(r"^Approved"), timeout=ANSWER_MS)
        assert ChangeProposal.objects.get(pk=wording.pk).status == "applied"
        # Reloaded, the history shows the card again, as it stands now.
        page.reload()
        expect(agent_replies(page).last.locator(".change-card .badge-applied")).to_be_visible()
    finally:
        watched.close()


@pytest.mark.browser
def test_a_stale_change_is_re_based_and_a_contract_that_does_not_compile_shows_why(
    browser: Any, shop: dict[str, Any]
) -> None:
    from approvals.models import ChangeProposal

    site = shop["site"]
    first = propose("boundary_wording", {"language": "en", "text": "Ana confirms every price."}, "First wording")
    second = propose("boundary_wording", {"language": "en", "text": "Ana sets the prices."}, "Second wording")
    orphan = {
        "initial": "submitted",
        "states": {
            "submitted": {"next_actor": "owner", "to": ["done"]},
            "done": {"next_actor": "nobody", "to": []},
            "forgotten": {"next_actor": "owner", "to": ["done"]},
        },
    }
    broken = propose("state_contract", orphan, "A state nobody can reach")
    before = live_version()
    watched = Watched(browser, site)
    try:
        page = watched.context.new_page()
        sign_in(page, site, shop["owner_password"], "/owner/demo-shop/inbox")
        card_of(page, first).get_by_role("button", name="Approve").click()
        expect(card_of(page, first).locator(".badge-applied")).to_be_visible()

        # The second was made against the wording the first replaced: deciding it is refused.
        card = card_of(page, second)
        card.get_by_role("button", name="Approve").click()
        expect(card.locator(".card-error")).to_contain_text("Re-base it")
        rebase = card.get_by_role("button", name="Re-base")
        expect(rebase).to_be_focused()
        assert ChangeProposal.objects.get(pk=second.pk).status == "pending"
        page.keyboard.press("Enter")
        card = card_of(page, second)
        expect(card.locator(".card-status")).to_have_text("Re-based on what is live now. Compare again, then decide.")
        expect(card.locator(".compare .diff").first).to_have_text("Ana confirms every price.")  # what is live now
        card.get_by_role("button", name="Approve").click()
        expect(card_of(page, second).locator(".badge-applied")).to_be_visible()
        assert live_version() == before + 2

        # A state machine with a state nobody can reach: approved with the code, but nothing is
        # published, and the card says why.
        card = card_of(page, broken)
        expect(card.locator("table.rows")).to_contain_text("forgotten")
        card.get_by_role("button", name="Approve").click()
        expect(card.get_by_label("Code from the e-mail")).to_be_focused()
        card.get_by_label("Code from the e-mail").fill(code_in(shop["mail"]))
        card.get_by_role("button", name="Confirm").click()
        card = card_of(page, broken)
        expect(card.locator(".card-status")).to_have_text("Approved, but it could not be applied.")
        expect(card.locator(".outcome.failed")).to_contain_text("forgotten cannot be reached")
        assert ChangeProposal.objects.get(pk=broken.pk).status == "failed"
        assert live_version() == before + 2
        shoot(page, "inbox-en-stale-and-failed")
    finally:
        watched.close()


@pytest.mark.browser
def test_the_review_says_proposing_is_paused_and_what_the_owner_keeps_rejecting(
    browser: Any, shop: dict[str, Any]
) -> None:
    """Issue 13's governance by exception in the inbox's review section, in English and in Chinese
    at 360 px: three rejected drafts hold back the same kind of gap, and an agent with no token
    left says its proposing is paused."""
    from types import SimpleNamespace

    from django.contrib.auth import get_user_model
    from django.utils import timezone
    from test_review import customer_turn

    from approvals.services import proposal_authorize, proposal_decide
    from facade.tenancy.models import AgentProfile
    from rsi.governance_models import EscalationBudget
    from rsi.review import review_run
    from rsi.review_input import local_today

    agent = AgentProfile.objects.select_related("tenant").get(slug="demo-shop")
    owner = get_user_model().objects.get(email="owner@demo.test")
    for title in ("Gift wrapping", "Parking", "Opening hours"):
        draft = proposal_create_for_review(agent, title)
        granted = proposal_authorize(agent=agent, proposal_id=draft.pk, owner=owner, decision="reject")
        proposal_decide(
            agent=agent,
            proposal_id=draft.pk,
            owner=owner,
            token=granted.token,  # type: ignore[union-attr]  # L1: a token, never a challenge
            decision="reject",
            expected_version=1,
            reason="We answer these by phone",
        )
    EscalationBudget.objects.create(agent=agent, tenant=agent.tenant, tokens=0.0, refilled_at=timezone.now())
    world = SimpleNamespace(tenant=agent.tenant, agent=agent)
    for words, askers in (("gift wrapping for parcels", 3), ("repair warranty terms", 15)):
        for _ in range(askers):
            customer_turn(world, words, miss=True)
    report = review_run(agent_id=agent.pk, day=local_today(agent.tenant))
    assert report.paused and report.held_back_reasons == {"daily_cap": 0, "owner_preference": 1, "paused": 1}

    site = shop["site"]
    watched = Watched(browser, site)
    try:
        page = watched.context.new_page()
        sign_in(page, site, shop["owner_password"], "/owner/demo-shop/inbox")
        review = page.locator("section.review")
        expect(review.locator(".review-paused")).to_contain_text("Proposing is paused")
        expect(review.locator(".review-paused")).to_contain_text("Held back for that: 1.")
        expect(review.locator(".review-preference")).to_have_text(
            "Held back: 1 (Knowledge entry) because you rejected this kind of proposal 3 times (and approved it 0 "
            "times) lately."
        )
        assert "We answer these by phone" not in review.inner_text()  # the owner's reasons stay on their cards
        shoot(page, "inbox-en-review-paused")
    finally:
        watched.close()
    narrow = Watched(browser, site, phone=True, viewport=NARROW)
    try:
        page = narrow.context.new_page()
        sign_in(page, site, shop["owner_password"])
        page.locator("#language").select_option("zh-hans")
        expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
        page.goto(f"{site}/owner/demo-shop/inbox")
        review = page.locator("section.review")
        expect(review.locator(".review-paused")).to_contain_text("提议已暂停")
        expect(review.locator(".review-preference")).to_contain_text("因为您最近拒绝了这类提议 3 次")
        assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
        shoot(page, "inbox-zh-360-review-paused")
    finally:
        narrow.close()


def proposal_create_for_review(agent: Any, title: str) -> Any:
    """A draft the daily review proposed (its answer written, so it could be approved too)."""
    from approvals.services import proposal_create
    from facade.tenancy.schemas import Actor

    return proposal_create(
        agent=agent,
        kind="knowledge_draft",
        payload={"title": title, "text": "An answer."},
        summary=f"Answer “{title}”",
        origin="review_report",
        actor=Actor.platform("rsi_review"),
    )


ABROAD = "Do you deliver parcels abroad? ZQXNEVERSHOWN7731"


def customer_asks(text: str) -> None:
    """A real customer turn of the demo shop through the run loop (the offline model)."""
    from facade.dialogue.runtime.loop import turn_handle
    from facade.dialogue.services import session_open
    from facade.tenancy.models import AgentProfile
    from facade.tenancy.rules import Audience
    from facade.tenancy.services import customer_create

    agent = AgentProfile.objects.get(slug="demo-shop")
    session = session_open(agent=agent, audience=Audience.CUSTOMER, customer=customer_create(tenant=agent.tenant))
    turn_handle(session=session, text=text)


@pytest.mark.browser
def test_the_replay_preview_on_the_cards_at_360px_in_english_and_chinese(browser: Any, shop: dict[str, Any]) -> None:
    """Issue 13's replay preview: a draft that answers a repeatedly missed question, replayed while
    the owner looks at it ("replaying…", then the counts), and a draft that would take other
    answers' citations, whose card warns — counts and ids only, never the customer's words."""
    from approvals.replay import proposal_replay_run
    from facade.tenancy.models import AgentProfile
    from facade.tenancy.schemas import Actor
    from knowledge.schemas import SourceIn
    from knowledge.services import entry_propose

    site = shop["site"]
    agent = AgentProfile.objects.get(slug="demo-shop")
    for title, body in (
        ("Chocolate cake", "Our chocolate cake is baked fresh every morning."),
        ("Lemon cake", "Our lemon cake is baked fresh every morning."),
        ("Cake flavours", "We bake chocolate and lemon cake."),
    ):
        entry_propose(
            agent=agent,
            title=title,
            body=body,
            actor=Actor.platform("tests"),
            source=SourceIn(type="owner_dialogue", ref=f"test:{title}", version="1"),
        )
    for text in (ABROAD, ABROAD, "What cake do you bake?", "What cake do you bake?"):
        customer_asks(text)
    answering = propose(
        "knowledge_draft",
        {"title": "Deliver parcels abroad", "text": "We deliver parcels to every country of the EU."},
        "Answer: parcels abroad",
    )
    stealing = propose(
        "knowledge_draft", {"title": "Cake bake", "text": "Cake: we bake every cake to order."}, "Cakes to order"
    )
    replayed = proposal_replay_run(proposal_id=stealing.pk)
    assert replayed is not None and replayed.counts["elsewhere_lost_citation"] >= 1
    watched = Watched(browser, site, phone=True, viewport=NARROW)
    try:
        page = watched.context.new_page()
        sign_in(page, site, shop["owner_password"], "/owner/demo-shop/inbox")
        waiting = card_of(page, answering).locator(".replay")
        expect(waiting).to_have_attribute("data-state", "running")
        expect(waiting).to_contain_text("Replaying this change on the past conversations it concerns…")
        warned = card_of(page, stealing)
        expect(warned.locator(".replay-warning")).to_have_text(
            re.compile(r"^⚠ \d+ answers? elsewhere would lose (its|their) citation\.$")
        )
        expect(warned.get_by_role("button", name="Approve")).to_be_visible()  # the owner still decides
        shoot(page, "inbox-replay-en-360")

        # The replay finishes while the page is open: the card's replay section follows by itself.
        done = proposal_replay_run(proposal_id=answering.pk)
        assert done is not None and done.counts["affected_cited_after"] == 2
        section = card_of(page, answering).locator(".replay")
        expect(section).to_have_attribute("data-state", "done", timeout=15_000)
        expect(section).to_contain_text("Questions it concerns: 2. Answered with a citation: 0 before, 2 after.")
        expect(section.locator(".replay-fine")).to_have_text("No answer elsewhere gets worse.")
        section.locator(".replay-pointers summary").click()
        expect(section.locator(".replay-pointers")).to_contain_text("message #")
        card_of(page, answering).scroll_into_view_if_needed()
        assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
        assert "zqxnevershown7731" not in page.content().lower()
        shoot(page, "inbox-replay-en-360-done")

        page.locator("#language").select_option("zh-hans")
        expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
        page.goto(f"{site}/owner/demo-shop/inbox")
        expect(card_of(page, answering).locator(".replay")).to_contain_text(
            "相关问题：2 个。带引用作答：之前 0 个，之后 2 个。"
        )
        expect(card_of(page, stealing).locator(".replay-warning")).to_contain_text("个其他问题的回答将失去其引用。")
        assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
        assert "zqxnevershown7731" not in page.content().lower()
        card_of(page, stealing).scroll_into_view_if_needed()
        shoot(page, "inbox-replay-zh-360")
    finally:
        watched.close()
