"""An owner's reply and a request's move reach the customer's open chat WebSocket at once
(through the Redis channel layer), and the reply is in the history on the next connection."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.http import HttpResponse
from django.test import Client
from django.urls import reverse

from conftest import TenantWorld
from facade.asgi import application
from facade.dialogue import consumers
from facade.dialogue.push import PUSH_TYPE, session_group
from facade.dialogue.services import request_submit, session_open
from facade.tenancy.identity import customer_cookie_name, set_customer_cookie
from facade.tenancy.rules import Audience
from facade.tenancy.services import customer_create

pytestmark = pytest.mark.django_db(transaction=True)

WAIT = 10


@pytest.fixture(autouse=True)
def _site_origin(settings: Any) -> None:
    settings.FACADE_PUBLIC_URL = "http://localhost"
    settings.CSRF_TRUSTED_ORIGINS = []


def customer_headers(world: TenantWorld, customer: Any) -> list[tuple[bytes, bytes]]:
    """What the customer's browser sends with its WebSocket: the site's origin and its cookie."""
    response = HttpResponse()
    set_customer_cookie(response, world.tenant, customer)
    name = customer_cookie_name(world.tenant)
    return [(b"origin", b"http://localhost"), (b"cookie", f"{name}={response.cookies[name].value}".encode())]


def test_the_customers_open_chat_sees_the_move_and_the_reply(world_a: TenantWorld) -> None:
    customer = customer_create(tenant=world_a.tenant)
    session = session_open(agent=world_a.agent, audience=Audience.CUSTOMER, customer=customer)
    request = request_submit(
        session=session, summary="a cake", details={"need": "a cake", "when": "Friday", "contact": "ana@example.com"}
    )
    headers = customer_headers(world_a, customer)
    owner = Client()
    owner.force_login(world_a.owner)
    slug = world_a.agent.slug

    async def connect() -> WebsocketCommunicator:
        ws = WebsocketCommunicator(application, f"/ws/sessions/{session.pk}/", headers=headers)
        connected, _ = await ws.connect(timeout=WAIT)
        assert connected
        return ws

    async def scenario() -> None:
        ws = await connect()
        history = await ws.receive_json_from(timeout=WAIT)
        assert history["type"] == "history" and history["messages"] == []
        post = database_sync_to_async(owner.post)
        await post(reverse("owner-request-move", args=[slug, request.pk]), {"to": "accepted"})
        moved = await ws.receive_json_from(timeout=WAIT)
        assert moved["type"] == "request" and moved["request"]["state"] == "accepted"
        assert moved["request"]["next_actor"] == "owner"
        await post(reverse("owner-request-reply", args=[slug, request.pk]), {"text": "Friday works for us."})
        replied = await ws.receive_json_from(timeout=WAIT)
        assert replied["type"] == "owner_reply"
        assert replied["message"]["role"] == "owner" and replied["message"]["text"] == "Friday works for us."
        assert replied["request"]["id"] == request.pk
        await ws.disconnect()
        # Coming back: the reply is in the history.
        again = await connect()
        history = await again.receive_json_from(timeout=WAIT)
        assert [(m["role"], m["text"]) for m in history["messages"]] == [("owner", "Friday works for us.")]
        assert history["requests"][0]["state"] == "accepted"
        await again.disconnect()

    async_to_sync(scenario)()


def test_a_reply_to_another_session_reaches_no_one_else(world_a: TenantWorld) -> None:
    """Each chat hears its own session's group only."""
    mine = customer_create(tenant=world_a.tenant)
    my_session = session_open(agent=world_a.agent, audience=Audience.CUSTOMER, customer=mine)
    other = session_open(
        agent=world_a.agent, audience=Audience.CUSTOMER, customer=customer_create(tenant=world_a.tenant)
    )
    request = request_submit(
        session=other, summary="bread", details={"need": "bread", "when": "Friday", "contact": "bo@example.com"}
    )
    headers = customer_headers(world_a, mine)
    owner = Client()
    owner.force_login(world_a.owner)

    async def scenario() -> None:
        ws = WebsocketCommunicator(application, f"/ws/sessions/{my_session.pk}/", headers=headers)
        assert (await ws.connect(timeout=WAIT))[0]
        assert (await ws.receive_json_from(timeout=WAIT))["type"] == "history"
        url = reverse("owner-request-reply", args=[world_a.agent.slug, request.pk])
        await database_sync_to_async(owner.post)(url, {"text": "Not for you."})
        assert await ws.receive_nothing(timeout=0.5)
        await ws.disconnect()

    async_to_sync(scenario)()


def test_a_chat_whose_join_failed_at_connect_joins_once_the_layer_answers(
    world_a: TenantWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The layer refused the join while the connection opened (Redis away for a moment) but its
    receive answers: the connection joins by a task of its own and hears the next push."""
    customer = customer_create(tenant=world_a.tenant)
    session = session_open(agent=world_a.agent, audience=Audience.CUSTOMER, customer=customer)
    layer = get_channel_layer()
    assert layer is not None
    joins = {"refused": 0}
    group_add = layer.group_add

    async def flaky_group_add(group: str, channel: str) -> None:
        if joins["refused"] < 2:
            joins["refused"] += 1
            raise ConnectionError("the layer is away")
        await group_add(group, channel)

    monkeypatch.setattr(layer, "group_add", flaky_group_add)
    monkeypatch.setattr(consumers, "LAYER_RETRY_FIRST", 0.05)
    frame = {"type": "request", "request": None, "marker": "after-the-join"}

    async def scenario() -> None:
        ws = WebsocketCommunicator(
            application, f"/ws/sessions/{session.pk}/", headers=customer_headers(world_a, customer)
        )
        assert (await ws.connect(timeout=WAIT))[0]
        assert (await ws.receive_json_from(timeout=WAIT))["type"] == "history"
        for _ in range(int(WAIT / 0.2)):
            await layer.group_send(session_group(session.pk), {"type": PUSH_TYPE, "frame": frame})
            if not await ws.receive_nothing(timeout=0.2):
                break
        assert await ws.receive_json_from(timeout=WAIT) == frame
        await ws.disconnect()

    async_to_sync(scenario)()
    assert joins["refused"] == 2
