"""The guard breaker (issue 15 §5): more than FACADE_GUARD_BREAKER_THRESHOLD blocked customer
and peer replies of one agent in a sliding hour open it once — strict mode for the customer face
(`breaker_open`), an event, an e-mail to the owners — and only an owner closes it."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.utils import timezone

from facade.dialogue.models import DialogueSession, Run, SessionStatus
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.base import ModelReply
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.services import session_open
from facade.tenancy.models import Customer
from facade.tenancy.rules import Audience
from guard.breaker import breaker_open, breaker_trip
from guard.models import GuardBreaker
from ledger.models import LedgerEvent

pytestmark = pytest.mark.django_db

PROMISE = "It costs only ¥99, order now!"
THRESHOLD = 3


@pytest.fixture(autouse=True)
def threshold(settings: Any) -> None:
    settings.FACADE_GUARD_BREAKER_THRESHOLD = THRESHOLD


def customer_session(world: Any, *, preview: bool = False) -> Any:
    if preview:
        return session_open(agent=world.agent, audience=Audience.CUSTOMER, user=world.owner, preview=True)
    customer = Customer.objects.create(tenant=world.tenant)
    return session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer)


def blocked_turn(session: Any) -> Any:
    """A turn whose reply (and its one rewrite) the guard blocks."""
    provider = ScriptedProvider.of(ModelReply(text=PROMISE, prompt_tokens=5, completion_tokens=5), repeat_last=True)
    result = turn_handle(session=session, text="how much?", provider=provider)
    assert result.reply is not None and result.reply.text.startswith(session.agent.boundary("en"))
    return result


def events(event_type: str) -> list[Any]:
    return list(LedgerEvent.objects.of_type(event_type))


def signed_in(user: Any) -> Client:
    client = Client(enforce_csrf_checks=False)
    client.force_login(user)
    return client


def open_breaker(world: Any, django_capture_on_commit_callbacks: Any) -> Any:
    session = customer_session(world)
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(THRESHOLD + 1):
            blocked_turn(session)
    return session


def test_more_blocks_than_the_threshold_within_an_hour_open_it_once_and_email_the_owner(
    world_a: Any, world_b: Any, smtp: Any, django_capture_on_commit_callbacks: Any
) -> None:
    session = customer_session(world_a)
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(THRESHOLD):
            blocked_turn(session)
    assert not breaker_open(world_a.agent) and events("guard.breaker_opened") == []
    with django_capture_on_commit_callbacks(execute=True):
        blocked_turn(session)  # one more than the threshold
    assert breaker_open(world_a.agent) and not breaker_open(world_b.agent)
    [opened] = events("guard.breaker_opened")
    assert opened.payload == {
        "agent": world_a.agent.slug,
        "blocks": THRESHOLD + 1,
        "threshold": THRESHOLD,
        "window_minutes": 60,
    }
    assert (opened.chain_id, opened.actor_type, opened.actor_id) == (world_a.tenant.pk, "platform", "guard")
    [(recipients, mail)] = smtp.received
    assert recipients == [world_a.owner.email]
    body = mail.get_payload(decode=True).decode()
    assert "strict mode" in mail["Subject"] and f"{THRESHOLD + 1} replies" in body
    assert f"https://shop.example/owner/{world_a.agent.slug}/#guard-breaker" in body
    assert "99" not in body  # counts and a link, never the reply
    # More blocks while it is open: no second opening, no second e-mail; customers still served.
    with django_capture_on_commit_callbacks(execute=True):
        later = blocked_turn(session)
    assert later.reply is not None and GuardBreaker.objects.count() == 1 and len(smtp.received) == 1
    assert DialogueSession.objects.get(pk=session.pk).status == SessionStatus.OPEN
    assert breaker_trip(agent=world_a.agent) is None


def test_only_one_open_breaker_per_agent_by_the_database(world_a: Any) -> None:
    now = timezone.now()
    GuardBreaker.objects.create(tenant=world_a.tenant, agent=world_a.agent, opened_at=now, blocks=4, threshold=3)
    with pytest.raises(IntegrityError), transaction.atomic():
        GuardBreaker.objects.create(tenant=world_a.tenant, agent=world_a.agent, opened_at=now, blocks=5, threshold=3)
    GuardBreaker.objects.update(closed_at=now)
    GuardBreaker.objects.create(tenant=world_a.tenant, agent=world_a.agent, opened_at=now, blocks=6, threshold=3)
    assert GuardBreaker.objects.filter(closed_at__isnull=True).count() == 1


def test_blocks_spread_over_more_than_an_hour_leave_it_closed(world_a: Any) -> None:
    session = customer_session(world_a)
    for _ in range(THRESHOLD):
        blocked_turn(session)
    Run.objects.update(started_at=timezone.now() - dt.timedelta(minutes=61))
    for _ in range(THRESHOLD):
        blocked_turn(session)
    assert Run.objects.exclude(guard_category="").count() == 2 * THRESHOLD
    assert not breaker_open(world_a.agent) and events("guard.breaker_opened") == []


def test_previews_and_owner_chats_do_not_count(world_a: Any) -> None:
    preview = customer_session(world_a, preview=True)
    for _ in range(THRESHOLD + 1):
        blocked_turn(preview)
    assert not breaker_open(world_a.agent)


def test_a_peers_blocked_replies_count(world_a: Any) -> None:
    from facade.tenancy.models import PeerCredential
    from facade.tenancy.schemas import Actor
    from facade.tenancy.services import peer_key_create

    issued = peer_key_create(agent=world_a.agent, name="partner", actor=Actor.human(world_a.owner.pk))
    peer = PeerCredential.objects.get(pk=issued.credential_id)
    session = session_open(agent=world_a.agent, audience=Audience.PEER, peer=peer)
    for _ in range(THRESHOLD + 1):
        blocked_turn(session)
    assert breaker_open(world_a.agent)


def test_the_owner_closes_it_and_the_close_is_recorded(world_a: Any, django_capture_on_commit_callbacks: Any) -> None:
    session = open_breaker(world_a, django_capture_on_commit_callbacks)
    client = signed_in(world_a.owner)
    state = client.get(f"/api/agents/{world_a.agent.slug}/guard-breaker")
    assert state.status_code == 200 and state.json()["open"] is True and state.json()["blocks"] == THRESHOLD + 1
    closed = client.post(f"/api/agents/{world_a.agent.slug}/guard-breaker/close")
    assert closed.status_code == 200 and closed.json()["open"] is False and closed.json()["closedAt"]
    assert not breaker_open(world_a.agent)
    [event] = events("guard.breaker_closed")
    assert (event.actor_type, event.actor_id) == ("human", f"user:{world_a.owner.pk}")
    assert event.payload["agent"] == world_a.agent.slug and event.payload["open_minutes"] == 0
    assert GuardBreaker.objects.get().closed_by_id == world_a.owner.pk
    again = client.post(f"/api/agents/{world_a.agent.slug}/guard-breaker/close")
    assert again.status_code == 409 and again.json()["error"] == "breaker_not_open"
    # The blocks of the hour that opened it do not open it again; new ones past the threshold do.
    blocked_turn(session)
    assert not breaker_open(world_a.agent)
    for _ in range(THRESHOLD):
        blocked_turn(session)
    assert breaker_open(world_a.agent) and len(events("guard.breaker_opened")) == 2


def test_a_customer_an_auditor_or_another_tenants_owner_cannot_close_it(
    world_a: Any, world_b: Any, django_capture_on_commit_callbacks: Any
) -> None:
    open_breaker(world_a, django_capture_on_commit_callbacks)
    path = f"/api/agents/{world_a.agent.slug}/guard-breaker/close"
    auditor = signed_in(world_a.auditor).post(path)
    assert auditor.status_code == 403 and auditor.json()["error"] == "read_only"
    assert signed_in(world_b.owner).post(path).status_code == 404
    assert signed_in(world_a.member).post(path).status_code == 404
    anonymous = Client().post(path, content_type="application/json")
    assert anonymous.status_code in (401, 403)
    customer = Client()
    opened = customer.post(
        f"/api/agents/{world_a.agent.slug}/sessions", {"language": "en"}, content_type="application/json"
    )
    assert opened.status_code == 201
    assert customer.post(path, content_type="application/json").status_code in (401, 403)
    page = signed_in(world_a.auditor).post(f"/owner/{world_a.agent.slug}/guard-breaker/close")
    assert page.status_code in (403, 404)
    assert breaker_open(world_a.agent) and events("guard.breaker_closed") == []


def test_the_overview_shows_the_notice_and_its_button_closes_it(
    world_a: Any, django_capture_on_commit_callbacks: Any
) -> None:
    client = signed_in(world_a.owner)
    overview = f"/owner/{world_a.agent.slug}/"
    assert 'id="guard-breaker"' not in client.get(overview).content.decode()
    open_breaker(world_a, django_capture_on_commit_callbacks)
    page = client.get(overview).content.decode()
    assert 'id="guard-breaker"' in page and "Close the breaker" in page
    answer = client.post(f"/owner/{world_a.agent.slug}/guard-breaker/close")
    assert answer.status_code == 303 and answer["Location"].endswith("#guard-breaker")
    assert not breaker_open(world_a.agent)
    assert 'id="guard-breaker"' not in client.get(overview).content.decode()


def test_a_failing_breaker_check_does_not_fail_the_turn(world_a: Any, monkeypatch: Any) -> None:
    import guard.breaker as breaker

    def broken(**kwargs: Any) -> None:
        raise RuntimeError("the breaker's query failed")

    monkeypatch.setattr(breaker, "breaker_trip", broken)
    result = blocked_turn(customer_session(world_a))
    assert result.run is not None and Run.objects.get(pk=result.run.pk).guard_category == "price"


def test_a_zero_threshold_turns_it_off(world_a: Any, settings: Any) -> None:
    settings.FACADE_GUARD_BREAKER_THRESHOLD = 0
    session = customer_session(world_a)
    for _ in range(3):
        blocked_turn(session)
    assert not breaker_open(world_a.agent)


def test_a_redelivered_notification_task_sends_no_second_email(world_a: Any, smtp: Any) -> None:
    from guard.tasks import breaker_notify_owners_task

    session = customer_session(world_a)
    for _ in range(THRESHOLD + 1):
        blocked_turn(session)  # the on-commit e-mail is not run: the task below is the delivery
    breaker = GuardBreaker.objects.get(agent=world_a.agent)
    assert smtp.received == []
    assert breaker_notify_owners_task(breaker.pk) == 1
    assert breaker_notify_owners_task(breaker.pk) == 0
    assert len(smtp.received) == 1


def test_a_strict_agents_refusals_do_not_trip_it(world_a: Any) -> None:
    """Strict mode is what the breaker switches to: its composer's refusals are not counted."""
    from approvals.contract import contract_compile
    from facade.tenancy.schemas import Actor

    contract_compile(agent=world_a.agent, changes={"composition_mode": "strict"}, actor=Actor.platform("t"))
    session = customer_session(world_a)
    for _ in range(THRESHOLD + 2):
        blocked_turn(session)  # free text in strict mode: refused, the boundary wording is sent
    assert set(Run.objects.filter(session=session).values_list("guard_category", flat=True)) == {"strict_refused"}
    assert not breaker_open(world_a.agent) and events("guard.breaker_opened") == []
