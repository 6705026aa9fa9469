"""An owner's reply and a request's move reach the customer's open chat WebSocket at once
(through the Redis channel layer), and the reply is in the history on the next connection."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.http import HttpResponse
from django.test import Client
from django.urls import reverse

from conftest import TenantWorld
from facade.asgi import application
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


def test_the_customers_open_chat_sees_the_move_and_the_reply(world_a: TenantWorld) -> None:
    customer = customer_create(tenant=world_a.tenant)
    session = session_open(agent=world_a.agent, audience=Audience.CUSTOMER, customer=customer)
    request = request_submit(
        session=session, summary="a cake", details={"need": "a cake", "when": "Friday", "contact": "ana@example.com"}
    )
    response = HttpResponse()
    set_customer_cookie(response, world_a.tenant, customer)
    name = customer_cookie_name(world_a.tenant)
    headers = [(b"origin", b"http://localhost"), (b"cookie", f"{name}={response.cookies[name].value}".encode())]
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
    response = HttpResponse()
    set_customer_cookie(response, world_a.tenant, mine)
    name = customer_cookie_name(world_a.tenant)
    headers = [(b"origin", b"http://localhost"), (b"cookie", f"{name}={response.cookies[name].value}".encode())]
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
