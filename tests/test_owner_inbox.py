"""The owner's inbox of change proposals (issue 12, "The owner inbox"), the same card in the owner
chat, and the demo outbox: who may open them, what a card shows (never a customer's words), and
that showing a card in chat decides nothing."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone

from approvals.models import ChangeProposal
from approvals.services import proposal_create
from facade.dialogue.models import Message
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.offline import OfflineProvider
from facade.dialogue.services import session_open
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from facade.tenancy.services import customer_create

pytestmark = pytest.mark.django_db

PRICING = {"currency": "EUR", "items": [{"name": "Repair", "amount": "35.00"}, {"name": "Cleaning", "amount": "9.50"}]}
CUSTOMER_WORDS = "CUSTOMER-SECRET-WORDS my phone is 0170 1234567"


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def propose(world: Any, kind: str, payload: Any, summary: str, *, origin: str = "owner_dialogue", **extra: Any) -> Any:
    return proposal_create(
        agent=world.agent,
        kind=kind,
        payload=payload,
        summary=summary,
        origin=origin,
        actor=Actor.platform("tests"),
        **extra,
    )


def test_the_inbox_is_its_owners_only(world_a: Any, world_b: Any) -> None:
    proposal = propose(world_a, "pricing", PRICING, "New repair price")
    url, card = f"/owner/{world_a.agent.slug}/inbox", f"/owner/{world_a.agent.slug}/inbox/{proposal.pk}/card"
    assert signed_in(world_a.owner).get(url).status_code == 200
    for outsider in (world_b.owner, world_a.auditor, world_a.member):
        client = signed_in(outsider)
        assert client.get(url).status_code == 404
        assert client.get(card).status_code == 404
    anonymous = Client().get(url)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    # Another agent's proposal through this agent's URL: 404 too.
    other = propose(world_b, "pricing", PRICING, "Theirs")
    assert signed_in(world_a.owner).get(f"/owner/{world_a.agent.slug}/inbox/{other.pk}/card").status_code == 404


def test_a_card_shows_level_diff_origin_evidence_and_buttons_without_customer_words(world_a: Any) -> None:
    customer = session_open(
        agent=world_a.agent, audience=Audience.CUSTOMER, customer=customer_create(tenant=world_a.tenant)
    )
    Message.objects.create(session=customer, role="principal", text=CUSTOMER_WORDS)
    pricing = propose(
        world_a, "pricing", PRICING, "New repair price", evidence=[{"type": "session", "id": str(customer.pk)}]
    )
    wording = propose(
        world_a, "boundary_wording", {"language": "en", "text": "Ana sets every price herself."}, "Say who sets prices"
    )
    page = signed_in(world_a.owner).get(f"/owner/{world_a.agent.slug}/inbox")
    html = page.content.decode()
    assert CUSTOMER_WORDS not in html and "0170" not in html
    for proposal in (pricing, wording):
        assert f'id="{proposal.pk}"' in html
    # The pricing card: level 3 in words, a table of prices, the code field, the evidence summary.
    card = re.search(rf'<article[^>]*id="{pricing.pk}".*?</article>', html, re.S)
    assert card is not None
    text = card.group(0)
    assert "Level 3" in text and "contract" in text
    assert "<table" in text and "Repair" in text and "35.00 EUR" in text and "9.50 EUR" in text
    assert 'autocomplete="one-time-code"' in text and 'inputmode="numeric"' in text
    assert "Proposed by your agent in your chat with it" in text
    assert "Conversation with a customer" in text and "Messages from them: 1" in text
    assert 'data-action="approve"' in text and 'data-action="reject"' in text
    assert f'data-version="{pricing.version}"' in text
    # The wording card: level 2, the before and after texts, no code field.
    card = re.search(rf'<article[^>]*id="{wording.pk}".*?</article>', html, re.S)
    assert card is not None
    assert "Level 2" in card.group(0) and "Ana sets every price herself." in card.group(0)
    assert "one-time-code" not in card.group(0)
    assert "How it would be rolled back" in card.group(0) and "What is uncertain" in card.group(0)


def test_pending_come_first_then_the_decided(world_a: Any) -> None:
    decided = propose(world_a, "pricing", PRICING, "DECIDED-ONE")
    ChangeProposal.objects.filter(pk=decided.pk).update(status="rejected")
    pending = propose(world_a, "pricing", PRICING, "PENDING-ONE")
    html = signed_in(world_a.owner).get(f"/owner/{world_a.agent.slug}/inbox").content.decode()
    assert html.index(pending.pk) < html.index(decided.pk)
    decided_card = re.search(rf'<article[^>]*id="{decided.pk}".*?</article>', html, re.S)
    assert decided_card is not None and 'data-action="approve"' not in decided_card.group(0)


def test_the_inbox_in_chinese(world_a: Any) -> None:
    propose(world_a, "pricing", PRICING, "New repair price")
    client = signed_in(world_a.owner)
    html = client.get(f"/owner/{world_a.agent.slug}/inbox", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert 'lang="zh-hans"' in html
    assert "批准" in html and "拒绝" in html and "等待您决定" in html


def test_home_counts_changes_waiting_and_links_the_inbox(world_a: Any) -> None:
    propose(world_a, "pricing", PRICING, "One")
    propose(world_a, "pricing", PRICING, "Two")
    html = signed_in(world_a.owner).get("/").content.decode()
    assert f'href="/owner/{world_a.agent.slug}/inbox"' in html
    assert "Changes waiting for your decision: 2" in html


def test_propose_change_puts_its_card_into_the_reply_and_history(world_a: Any) -> None:
    from facade.dialogue.runtime.providers.base import ModelReply, ToolCall
    from facade.dialogue.runtime.providers.scripted import ScriptedProvider
    from facade.dialogue.selectors import session_history

    provider = ScriptedProvider.of(
        ModelReply(
            tool_calls=[
                ToolCall(
                    id="c1",
                    name="propose_change",
                    arguments='{"kind": "pricing", "payload": {"currency": "EUR", "items": [{"name": "Repair", '
                    '"amount": "35.00"}]}, "summary": "Repair costs 35 euros"}',
                )
            ],
            prompt_tokens=10,
            completion_tokens=5,
        ),
        ModelReply(text="Here is the proposal.", prompt_tokens=10, completion_tokens=5),
    )
    session = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    result = turn_handle(session=session, text="set the repair price to 35 euros", provider=provider)
    [proposal] = ChangeProposal.objects.all()
    assert result.reply is not None
    [card] = result.reply.metadata["cards"]
    assert (card["id"], card["level"], card["status"], card["version"]) == (proposal.pk, 3, "pending", 1)
    result.reply.refresh_from_db()
    assert result.reply.metadata["cards"][0]["id"] == proposal.pk  # stored, not only returned
    [_, reply] = session_history(session)["messages"]
    assert reply["cards"][0]["id"] == proposal.pk


@pytest.mark.parametrize("words", ["approve {id}", "reject {id}", "批准 {id}"])
def test_typing_approve_in_chat_shows_the_card_and_decides_nothing(world_a: Any, words: str) -> None:
    proposal = propose(world_a, "pricing", PRICING, "New repair price")
    session = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    result = turn_handle(session=session, text=words.format(id=proposal.pk), provider=OfflineProvider(world_a.agent))
    assert result.reply is not None
    assert [c["id"] for c in result.reply.metadata["cards"]] == [proposal.pk]
    assert proposal.pk in result.reply.text
    proposal.refresh_from_db()
    assert (proposal.status, proposal.version, proposal.authorization_id) == ("pending", 1, "")


def test_a_customer_typing_approve_gets_no_card(world_a: Any) -> None:
    proposal = propose(world_a, "pricing", PRICING, "New repair price")
    session = session_open(
        agent=world_a.agent, audience=Audience.CUSTOMER, customer=customer_create(tenant=world_a.tenant)
    )
    result = turn_handle(session=session, text=f"approve {proposal.pk}", provider=OfflineProvider(world_a.agent))
    assert result.reply is not None and result.reply.metadata == {}


def test_the_owner_chats_inbox_lists_pending_changes_with_cards(world_a: Any) -> None:
    proposal = propose(world_a, "pricing", PRICING, "New repair price")
    session = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    result = turn_handle(session=session, text="inbox", provider=OfflineProvider(world_a.agent))
    assert result.reply is not None
    assert proposal.pk in result.reply.text and "New repair price" in result.reply.text
    assert [c["id"] for c in result.reply.metadata["cards"]] == [proposal.pk]


def test_the_owner_chat_page_loads_the_cards_script(world_a: Any) -> None:
    html = signed_in(world_a.owner).get(f"/owner/{world_a.agent.slug}/chat").content.decode()
    assert "js/approvals.js" in html and 'id="approvals-text"' in html
    assert f"/owner/{world_a.agent.slug}/inbox/__id__/card" in html


# --- the demo outbox ------------------------------------------------------------------------


@pytest.fixture
def file_mail(settings: Any, tmp_path: Any) -> Any:
    settings.EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
    settings.EMAIL_FILE_PATH = str(tmp_path)
    return tmp_path


def test_the_outbox_is_off_unless_debug_or_the_demo_flag(world_a: Any, file_mail: Any, settings: Any) -> None:
    settings.DEBUG, settings.FACADE_DEMO_OUTBOX = False, False
    client = signed_in(world_a.owner)
    url = f"/owner/{world_a.agent.slug}/outbox"
    assert client.get(url).status_code == 404
    settings.FACADE_DEMO_OUTBOX = True
    assert client.get(url).status_code == 200
    # Never with SMTP: there is nothing on disk to show.
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    assert client.get(url).status_code == 404


def test_the_outbox_shows_the_signed_in_owners_mail_only(
    world_a: Any, world_b: Any, file_mail: Any, settings: Any
) -> None:
    settings.FACADE_DEMO_OUTBOX = True
    mail.send_mail("For alpha", "Your code: 123456", "shop@example.test", [world_a.owner.email])
    mail.send_mail("For bravo", "Your code: 654321", "shop@example.test", [world_b.owner.email])
    html = signed_in(world_a.owner).get(f"/owner/{world_a.agent.slug}/outbox").content.decode()
    assert "For alpha" in html and "123456" in html
    assert "For bravo" not in html and "654321" not in html
    # Someone else's agent: 404, as every owner page.
    assert signed_in(world_b.owner).get(f"/owner/{world_a.agent.slug}/outbox").status_code == 404


def test_every_assurance_a_decision_can_carry_is_said_in_words() -> None:
    from approvals.authority_models import Assurance
    from approvals.cards import ASSURANCE_WORDS
    from approvals.services import DIRECT

    assert set(Assurance.values) | {DIRECT} <= set(ASSURANCE_WORDS)


def test_an_l3_card_asks_for_the_authenticator_code_where_the_business_requires_it(world_a: Any) -> None:
    from facade.tenancy.services import tenant_l3_policy_set

    change = propose(world_a, "pricing", PRICING, "New prices", origin="owner_direct")
    url = f"/owner/{world_a.agent.slug}/inbox/{change.pk}/card"
    owner = signed_in(world_a.owner)
    assert 'name="totp"' not in owner.get(url).content.decode()
    tenant_l3_policy_set(tenant=world_a.tenant, requires_totp=True, actor=Actor.platform("tests"))
    page = owner.get(url).content.decode()
    assert 'name="totp"' in page and "Code from your authenticator app" in page
    knowledge = propose(world_a, "lesson", {"kind": "taboo", "title": "No slang", "text": "Never."}, "A lesson")
    assert 'name="totp"' not in owner.get(f"/owner/{world_a.agent.slug}/inbox/{knowledge.pk}/card").content.decode()


def test_under_the_two_owner_rule_a_card_counts_the_approvals_so_far(world_a: Any) -> None:
    from approvals.authority_models import DecisionSignature
    from facade.tenancy.services import tenant_l3_policy_set

    tenant_l3_policy_set(tenant=world_a.tenant, requires_two_owners=True, actor=Actor.platform("tests"))
    change = propose(world_a, "pricing", PRICING, "New prices", origin="owner_direct")
    url = f"/owner/{world_a.agent.slug}/inbox/{change.pk}/card"
    owner = signed_in(world_a.owner)
    assert "Approvals so far: 0 of 2 owners." in owner.get(url).content.decode()
    # A first owner's approval recorded (what step_up.decide_gate writes) is counted:
    DecisionSignature.objects.create(
        proposal=change,
        version=change.version,
        owner=world_a.owner,
        authorization_id="auth_test",
        assurance="email_otp",
        created_at=timezone.now(),
    )
    assert "Approvals so far: 1 of 2 owners." in owner.get(url).content.decode()
    chinese = owner.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "目前的批准" in chinese
