"""One way a message is admitted: `message_admit` on its own, the owner check it asks of the
database, and the HTTP API and the chat WebSocket refusing the same messages with the same codes."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.http import HttpResponse
from django.utils import timezone
from rest_framework.test import APIClient
from test_consumer import Chat, run, signed_in

from conftest import TenantWorld
from facade.dialogue.models import DialogueSession, Message, TrustChange
from facade.dialogue.ratelimit import message_rate_check
from facade.dialogue.services import message_admit, session_open
from facade.errors import ApplicationError
from facade.tenancy.identity import Principal, customer_cookie_name, set_customer_cookie
from facade.tenancy.models import Customer, PeerCredential, Role
from facade.tenancy.policy import AgentPolicy, NotFound
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from facade.tenancy.services import (
    agent_owner_remove,
    customer_create,
    membership_grant,
    peer_key_create,
    user_ensure,
)

ACTOR = Actor.platform("tests")
UNKNOWN = "6f1c3c8e-1111-4222-8333-944455556666"


@pytest.fixture(autouse=True)
def _fresh_rate_windows(settings: Any) -> None:
    cache.clear()
    settings.FACADE_RATE_IP = "1000/3600"  # the tests below share 127.0.0.1; only the limits they set count
    settings.FACADE_PUBLIC_URL = "http://localhost"  # the Origin test_consumer.Chat sends


def customer_cookie(world: TenantWorld) -> tuple[Customer, str, str]:
    """A customer of the world's tenant, its cookie's name and the value the server would issue."""
    customer = customer_create(tenant=world.tenant)
    response = HttpResponse()
    set_customer_cookie(response, world.tenant, customer)
    name = customer_cookie_name(world.tenant)
    return customer, name, response.cookies[name].value


def customer_principal(world: TenantWorld) -> tuple[DialogueSession, Principal]:
    customer, name, value = customer_cookie(world)
    session = session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer)
    return session, Principal.of(cookies={name: value})


def owner_principal(world: TenantWorld) -> tuple[DialogueSession, Principal]:
    session = session_open(agent=world.agent, audience=Audience.OWNER, user=world.owner)
    return session, Principal.of(user=world.owner, cookies={})


def admit(session: DialogueSession, principal: Principal, text: str = "hello", cid: str = "") -> DialogueSession:
    return message_admit(principal=principal, session_id=session.pk, text=text, client_message_id=cid, ip="10.1.2.3")


def refusal(call: Callable[[], Any]) -> tuple[int, str]:
    with pytest.raises(ApplicationError) as caught:
        call()
    return caught.value.http_status, caught.value.code


# --- message_admit ------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_principal_is_admitted_with_the_session_as_it_reads_now(
    world_a: TenantWorld, django_assert_num_queries: Any
) -> None:
    session, principal = customer_principal(world_a)
    DialogueSession.objects.filter(pk=session.pk).update(last_activity_at=timezone.now() - dt.timedelta(minutes=5))
    with django_assert_num_queries(1):  # the session, and the limits live in the cache
        admitted = admit(session, principal)
        assert admitted.agent.tenant == admitted.tenant == world_a.tenant  # read with it: the turn needs no more
    assert admitted.pk == session.pk and admitted.last_activity_at < session.last_activity_at
    owned, owner = owner_principal(world_a)
    with django_assert_num_queries(2):  # and one ownership question for an owner session
        assert admit(owned, owner).pk == owned.pk
    assert not Message.objects.exists()  # admitting stores nothing: the turn does


@pytest.mark.django_db
def test_someone_elses_session_is_refused_exactly_like_an_unknown_one(
    world_a: TenantWorld, world_b: TenantWorld
) -> None:
    mine, me = customer_principal(world_a)
    owned, owner = owner_principal(world_a)
    _, stranger = customer_principal(world_a)
    _, foreign_owner = owner_principal(world_b)
    _, name, value = customer_cookie(world_b)
    issued = peer_key_create(agent=world_a.agent, name="partner", actor=ACTOR)
    peer = Principal.of(peer=PeerCredential.objects.get(pk=issued.credential_id), cookies=dict(me.customer_cookies))

    def answer(session_id: Any, principal: Principal) -> tuple[int, str, str]:
        with pytest.raises(NotFound) as caught:
            message_admit(principal=principal, session_id=session_id, text="hi", ip="10.1.2.3")
        return caught.value.http_status, caught.value.code, caught.value.detail

    unknown = answer(UNKNOWN, me)
    assert unknown[:2] == (HTTPStatus.NOT_FOUND, "not_found")
    for session, principal in (
        (mine, stranger),
        (mine, owner),  # the agent's owner is not its customers
        (mine, Principal.of(cookies={customer_cookie_name(world_a.tenant): value})),  # bravo's cookie, alpha's name
        (mine, peer),  # a key is the caller, whatever cookies come along
        (owned, me),
        (owned, foreign_owner),
        (owned, Principal.of(cookies={name: value})),
    ):
        assert answer(session.pk, principal) == unknown


@dataclass(frozen=True)
class Case:
    name: str
    status: int
    code: str
    text: str = "hello"
    cid: str = ""
    owner: bool = False
    prepare: Callable[[TenantWorld, DialogueSession], None] = lambda world, session: None


def _status(value: str) -> Callable[[TenantWorld, DialogueSession], None]:
    def prepare(world: TenantWorld, session: DialogueSession) -> None:
        DialogueSession.objects.filter(pk=session.pk).update(status=value)

    return prepare


def _idle(world: TenantWorld, session: DialogueSession) -> None:
    DialogueSession.objects.filter(pk=session.pk).update(last_activity_at=timezone.now() - dt.timedelta(hours=2))


def _removed(world: TenantWorld, session: DialogueSession) -> None:
    if world.agent.owners.filter(pk=world.owner.pk).exists():  # once, though two sessions are prepared
        agent_owner_remove(agent=world.agent, user=world.owner, actor=ACTOR)


def _another_owner(world: TenantWorld) -> None:
    """The tenant keeps an owner (its last one cannot lose the role) when `world.owner` loses it."""
    user, _ = user_ensure(email=f"keeper@{world.tenant.slug}.test", password=None)
    membership_grant(tenant=world.tenant, user=user, role=Role.OWNER, actor=ACTOR)


def _role_lost(world: TenantWorld, session: DialogueSession) -> None:
    if world.owner.memberships.get(tenant=world.tenant).role == Role.OWNER:  # once, though two sessions are prepared
        _another_owner(world)
        membership_grant(tenant=world.tenant, user=world.owner, role=Role.MEMBER, actor=ACTOR)


def _limit_spent(world: TenantWorld, session: DialogueSession) -> None:
    assert message_rate_check(customer_id=str(session.customer_id)) is None  # the one message of the window


# What message_admit refuses; over the two edges also an idle session, which storing the message expires.
ADMIT_CASES = [
    Case("closed", HTTPStatus.CONFLICT, "session_closed", prepare=_status("closed")),
    Case("expired", HTTPStatus.CONFLICT, "session_expired", prepare=_status("expired")),
    Case("judged before the text", HTTPStatus.CONFLICT, "session_closed", text="", prepare=_status("closed")),
    Case("owner removed", HTTPStatus.FORBIDDEN, "no_longer_owner", owner=True, prepare=_removed),
    Case("owner role lost", HTTPStatus.FORBIDDEN, "no_longer_owner", owner=True, prepare=_role_lost),
    Case("empty", HTTPStatus.BAD_REQUEST, "empty_message", text=""),
    Case("blank", HTTPStatus.BAD_REQUEST, "empty_message", text=" \n\t "),
    Case("too long", HTTPStatus.BAD_REQUEST, "message_too_long", text="x" * 4001),
    Case("client id too long", HTTPStatus.BAD_REQUEST, "invalid_client_message_id", cid="c" * 65),
    Case("rate limited", HTTPStatus.TOO_MANY_REQUESTS, "rate_limited", prepare=_limit_spent),
]
EDGE_CASES = [*ADMIT_CASES, Case("idle", HTTPStatus.CONFLICT, "session_expired", prepare=_idle)]


@pytest.mark.django_db
@pytest.mark.parametrize("case", ADMIT_CASES, ids=lambda case: case.name)
def test_message_admit_refuses_with_the_status_the_raiser_chose(
    case: Case, world_a: TenantWorld, settings: Any
) -> None:
    settings.FACADE_MESSAGE_MAX_CHARS = 4000
    settings.FACADE_RATE_CUSTOMER = "1/3600"
    session, principal = owner_principal(world_a) if case.owner else customer_principal(world_a)
    case.prepare(world_a, session)
    status, code = refusal(lambda: admit(session, principal, case.text, case.cid))
    assert (status, code) == (case.status, case.code)
    assert not Message.objects.exists()


@pytest.mark.django_db
def test_a_customer_over_a_limit_waits_and_keeps_its_trust(world_a: TenantWorld, settings: Any) -> None:
    settings.FACADE_RATE_CUSTOMER = "2/3600"
    session, principal = customer_principal(world_a)
    admit(session, principal)
    admit(session, principal)
    with pytest.raises(ApplicationError) as caught:
        admit(session, principal)
    assert caught.value.code == "rate_limited" and caught.value.retry_after is not None
    assert 1 <= caught.value.retry_after <= 3600 and str(caught.value.retry_after) in caught.value.detail
    # A refusal writes nothing but its counter (issue 10): the limit may be someone else's doing.
    assert not TrustChange.objects.exists()
    assert Customer.objects.get(pk=session.customer_id).trust == 50


@pytest.mark.django_db
def test_a_refused_message_does_not_use_up_the_limit(world_a: TenantWorld, settings: Any) -> None:
    settings.FACADE_RATE_CUSTOMER = "1/3600"
    session, principal = customer_principal(world_a)
    assert refusal(lambda: admit(session, principal, "   "))[1] == "empty_message"
    assert admit(session, principal).pk == session.pk  # the window's one message is still there


@pytest.mark.django_db
def test_a_peer_is_counted_by_its_key_not_where_it_calls_from(world_a: TenantWorld, settings: Any) -> None:
    settings.FACADE_RATE_IP = "1/3600"
    settings.FACADE_RATE_PEER = "2/3600"
    issued = peer_key_create(agent=world_a.agent, name="partner", actor=ACTOR)
    credential = PeerCredential.objects.get(pk=issued.credential_id)
    session = session_open(agent=world_a.agent, audience=Audience.PEER, peer=credential)
    peer = Principal.of(peer=credential, cookies={})
    admit(session, peer)
    admit(session, peer)  # the IP's limit of one does not apply
    assert refusal(lambda: admit(session, peer)) == (HTTPStatus.TOO_MANY_REQUESTS, "rate_limited")
    assert not TrustChange.objects.exists()  # trust is a customer's


# --- the owner check, asked by id --------------------------------------------------------


def _staff(world: TenantWorld) -> Any:
    return user_ensure(email="operator@platform.test", password=None, is_staff=True)[0]


def _inactive_staff(world: TenantWorld) -> Any:
    user = _staff(world)
    user.is_active = False
    user.save(update_fields=["is_active"])
    return user


def _owner_of_the_tenant_not_the_agent(world: TenantWorld) -> Any:
    user, _ = user_ensure(email="co-owner@alpha.test", password=None)
    membership_grant(tenant=world.tenant, user=user, role=Role.OWNER, actor=ACTOR)
    return user


def _listed_owner_without_the_role(world: TenantWorld) -> Any:
    _another_owner(world)
    membership_grant(tenant=world.tenant, user=world.owner, role=Role.MEMBER, actor=ACTOR)
    return world.owner


def _deactivated_owner(world: TenantWorld) -> Any:
    get_user_model().objects.filter(pk=world.owner.pk).update(is_active=False)
    return world.owner


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("who", "owns"),
    [
        (lambda world, other: world.owner, True),
        (lambda world, other: _staff(world), True),
        (lambda world, other: _inactive_staff(world), False),
        (lambda world, other: world.member, False),
        (lambda world, other: world.auditor, False),
        (lambda world, other: _owner_of_the_tenant_not_the_agent(world), False),
        (lambda world, other: _listed_owner_without_the_role(world), False),
        (lambda world, other: _deactivated_owner(world), False),
        (lambda world, other: other.owner, False),
    ],
    ids=[
        "owner",
        "staff",
        "inactive staff",
        "member",
        "auditor",
        "tenant owner, not the agent's",
        "listed, role lost",
        "deactivated owner",
        "another tenant's owner",
    ],
)
def test_still_owns_answers_as_is_owner_does(who: Any, owns: bool, world_a: TenantWorld, world_b: TenantWorld) -> None:
    user_id = who(world_a, world_b).pk
    assert AgentPolicy.still_owns(user_id=user_id, agent=world_a.agent) is owns
    fresh = get_user_model().objects.get(pk=user_id)
    signed_in_now = fresh if fresh.is_active else None  # an inactive user is never signed in
    assert (signed_in_now is not None and AgentPolicy.is_owner(signed_in_now, world_a.agent)) is owns


# --- the same refusals over both edges ----------------------------------------------------


@dataclass
class Caller:
    session: DialogueSession
    http: APIClient
    ws_cookie: str


def caller(world: TenantWorld, owner: bool) -> Caller:
    if owner:
        session = session_open(agent=world.agent, audience=Audience.OWNER, user=world.owner)
        http = APIClient()
        http.force_login(world.owner)
        return Caller(session, http, signed_in(world.owner))
    customer, name, value = customer_cookie(world)
    session = session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer)
    http = APIClient()
    http.cookies[name] = value
    return Caller(session, http, f"{name}={value}")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("case", EDGE_CASES, ids=lambda case: case.name)
def test_http_and_websocket_refuse_the_same_messages_with_the_same_codes(
    case: Case, world_a: TenantWorld, settings: Any
) -> None:
    settings.FACADE_MESSAGE_MAX_CHARS = 4000
    settings.FACADE_RATE_CUSTOMER = "1/3600"
    over_http, over_ws = caller(world_a, case.owner), caller(world_a, case.owner)
    for each in (over_http, over_ws):
        case.prepare(world_a, each.session)

    answer = over_http.http.post(
        f"/api/sessions/{over_http.session.pk}/messages",
        {"text": case.text, "client_message_id": case.cid},
        format="json",
    )
    assert answer.status_code == case.status, answer.content
    body = answer.json()
    assert body["error"] == case.code and body["detail"]
    if case.code == "rate_limited":
        assert body["retry_after"] == int(answer["Retry-After"]) >= 1
    else:
        assert "retry_after" not in body and "Retry-After" not in answer

    frames: list[dict[str, Any]] = []

    async def scenario() -> None:
        chat = Chat(over_ws.session.pk, over_ws.ws_cookie)
        assert (await chat.open())["type"] == "history"
        await chat.send({"type": "message", "text": case.text, "client_message_id": case.cid or "edge-1"})
        frames.append(await chat.next())
        await chat.close()

    run(scenario)
    [frame] = frames
    assert (frame["type"], frame["code"], frame["client_message_id"]) == ("error", case.code, case.cid or "edge-1")
    assert frame["detail"] and ("retry_after" in frame) == (case.code == "rate_limited")
    assert not Message.objects.exists()


@pytest.mark.django_db
def test_http_answers_an_unknown_session_and_someone_elses_alike(world_a: TenantWorld, world_b: TenantWorld) -> None:
    theirs = caller(world_b, owner=False)
    mine = caller(world_a, owner=False)
    for method, path, body in (
        ("get", "", None),
        ("get", "/messages", None),
        ("post", "/messages", {"text": "hi"}),
        ("post", "/messages", {"no": "text"}),  # a foreign session is 404 before its body is judged
        ("post", "/rating", {"stars": 5}),
        ("post", "/cancel", None),
    ):
        answers = [
            getattr(mine.http, method)(f"/api/sessions/{session_id}{path}", body, format="json")
            for session_id in (UNKNOWN, theirs.session.pk)
        ]
        assert [a.status_code for a in answers] == [404, 404], (method, path)
        assert answers[0].json() == answers[1].json() == {"error": "not_found", "detail": "Not found."}


def test_an_application_error_carries_what_both_edges_need() -> None:
    plain = ApplicationError("invalid_input", "say more")
    assert (plain.code, plain.detail, plain.http_status, plain.retry_after) == ("invalid_input", "say more", 400, None)
    waiting = ApplicationError("rate_limited", "later", HTTPStatus.TOO_MANY_REQUESTS, retry_after=7)
    assert (waiting.http_status, waiting.retry_after) == (429, 7)
    assert (NotFound("a-slug").http_status, NotFound("a-slug").code) == (404, "not_found")
    assert "a-slug" not in NotFound("a-slug").detail  # what was asked for is never echoed
