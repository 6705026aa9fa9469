"""The audience of a session is derived by the server, fixed at opening, and bound to its principal.

Every test here goes through the HTTP API (DRF's APIClient) and checks both the answer and the
database, so a refusal that still wrote something fails.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.core import signing

from facade.dialogue.models import DialogueSession, Message
from facade.tenancy.models import Customer, PeerCredential, Role
from facade.tenancy.schemas import Actor
from facade.tenancy.services import (
    agent_owner_add,
    agent_owner_remove,
    membership_grant,
    membership_revoke,
    peer_key_create,
    peer_key_revoke,
    user_ensure,
)
from ledger.models import LedgerEvent

pytestmark = pytest.mark.django_db

ACTOR = Actor.platform("t")


# --------------------------------------------------------------------------- helpers


def sessions_url(slug: str) -> str:
    return f"/api/agents/{slug}/sessions"


def session_url(session_id: Any) -> str:
    return f"/api/sessions/{session_id}"


def messages_url(session_id: Any) -> str:
    return f"/api/sessions/{session_id}/messages"


def open_session(client: Any, slug: str, **extra: Any) -> Any:
    return client.post(sessions_url(slug), {}, format="json", **extra)


def open_ok(client: Any, slug: str, **extra: Any) -> dict[str, Any]:
    response = open_session(client, slug, **extra)
    assert response.status_code == 201, response.content
    return response.json()


def new_key(agent: Any, name: str = "peer") -> Any:
    return peer_key_create(agent=agent, name=name, actor=ACTOR)


def bearer(issued: Any) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {issued.key}"}


def snapshot() -> tuple[int, int, int, int]:
    return (
        DialogueSession.objects.count(),
        Customer.objects.count(),
        Message.objects.count(),
        LedgerEvent.objects.count(),
    )


def error_of(response: Any) -> str:
    assert response["Content-Type"].startswith("application/json"), response.content
    return response.json()["error"]


# --------------------------------------------------------------------------- 1. spoofing

JSON_VALUES = ["owner", "customer", "peer", "", None, 1, {}, []]
SAME_SITE = "http://testserver"  # the origin the test client's requests are addressed to


def _json(body: Any) -> Callable[[Any, str], Any]:
    return lambda client, url: client.post(url, body, format="json")


SPOOFS: list[Any] = [
    *[pytest.param(_json({"audience": value}), id=f"json-audience={json.dumps(value)}") for value in JSON_VALUES],
    pytest.param(_json({"Audience": "owner"}), id="json-Audience"),
    pytest.param(_json({"AUDIENCE": "owner"}), id="json-AUDIENCE"),
    pytest.param(_json({"aUdIeNcE": "owner"}), id="json-aUdIeNcE"),
    pytest.param(_json({"meta": {"audience": "owner"}}), id="json-nested"),
    pytest.param(_json({"items": [{"x": 1}, {"Audience": "owner"}]}), id="json-in-list"),
    # Forms come from the site's own page (a form from anywhere else is refused as cross-site
    # before the audience is looked at; tests/test_cross_site.py).
    pytest.param(
        lambda client, url: client.post(url, data={"audience": "owner"}, HTTP_ORIGIN=SAME_SITE), id="multipart-default"
    ),
    pytest.param(
        lambda client, url: client.post(
            url, data="audience=owner", content_type="application/x-www-form-urlencoded", HTTP_ORIGIN=SAME_SITE
        ),
        id="form-urlencoded",
    ),
    pytest.param(lambda client, url: client.post(url + "?audience=owner", {}, format="json"), id="query-audience"),
    pytest.param(lambda client, url: client.post(url + "?Audience=peer", {}, format="json"), id="query-Audience"),
    pytest.param(lambda client, url: client.post(url, {}, format="json", HTTP_AUDIENCE="owner"), id="header-Audience"),
    pytest.param(
        lambda client, url: client.post(url, {}, format="json", HTTP_X_AUDIENCE="owner"), id="header-X-Audience"
    ),
    pytest.param(
        lambda client, url: client.post(url, {}, format="json", HTTP_X_FACADE_AUDIENCE="owner"),
        id="header-X-Facade-Audience",
    ),
]


@pytest.mark.parametrize("caller", ["anonymous", "owner", "peer"])
@pytest.mark.parametrize("spoof", SPOOFS)
def test_naming_the_audience_is_refused_and_creates_nothing(world_a: Any, api: Any, caller: str, spoof: Any) -> None:
    if caller == "owner":
        api.force_login(world_a.owner)
    elif caller == "peer":
        api.credentials(**bearer(new_key(world_a.agent)))
    before = snapshot()

    response = spoof(api, sessions_url(world_a.agent.slug))

    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"] == "audience_is_server_derived"
    assert body["detail"]
    assert snapshot() == before  # no session, no customer, no ledger event
    assert not any(key.startswith("facade_customer_") for key in response.cookies)


@pytest.mark.parametrize("caller", ["anonymous", "owner", "peer"])
def test_the_same_request_without_the_audience_opens_a_session(world_a: Any, api: Any, caller: str) -> None:
    """Control for the spoofing test: the refusal is due to the audience key alone."""
    if caller == "owner":
        api.force_login(world_a.owner)
    elif caller == "peer":
        api.credentials(**bearer(new_key(world_a.agent)))
    before = DialogueSession.objects.count()

    response = api.post(sessions_url(world_a.agent.slug), {"meta": {"topic": "hello"}}, format="json")

    assert response.status_code == 201, response.content
    assert response.json()["audience"] == {"anonymous": "customer", "owner": "owner", "peer": "peer"}[caller]
    assert DialogueSession.objects.count() == before + 1


# --------------------------------------------------------------------------- 2. derivation


def test_anonymous_caller_is_a_customer_with_a_signed_cookie(world_a: Any, api: Any) -> None:
    response = open_session(api, world_a.agent.slug)

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["audience"] == "customer"
    assert body["agent"] == world_a.agent.slug
    assert body["principal"]["type"] == "customer"
    cookie_name = f"facade_customer_{world_a.tenant.pk}"
    assert cookie_name in response.cookies
    morsel = response.cookies[cookie_name]
    assert morsel["httponly"]
    # The cookie is signed for this tenant and names the session's customer.
    signed = signing.loads(morsel.value, salt=f"facade.customer.{world_a.tenant.pk}")
    assert signed == body["principal"]["id"]
    assert morsel.value != body["principal"]["id"]
    customer = Customer.objects.get(pk=body["principal"]["id"])
    assert customer.tenant_id == world_a.tenant.pk
    row = DialogueSession.objects.get(pk=body["id"])
    assert (row.audience, row.principal_type, row.customer_id) == ("customer", "customer", customer.pk)


def test_customer_keeps_its_principal_across_sessions(world_a: Any, api: Any) -> None:
    first = open_ok(api, world_a.agent.slug)
    customers = Customer.objects.count()

    second_response = open_session(api, world_a.agent.slug)
    assert second_response.status_code == 201
    second = second_response.json()

    assert second["id"] != first["id"]
    assert second["audience"] == "customer"
    assert second["principal"] == first["principal"]
    assert Customer.objects.count() == customers  # no second customer
    # A known customer is not issued a new cookie.
    assert f"facade_customer_{world_a.tenant.pk}" not in second_response.cookies


def test_a_tampered_customer_cookie_is_ignored(world_a: Any, api: Any) -> None:
    first = open_ok(api, world_a.agent.slug)
    name = f"facade_customer_{world_a.tenant.pk}"
    # An unsigned customer id (what a forger would try) is not accepted.
    api.cookies[name] = first["principal"]["id"]

    second = open_ok(api, world_a.agent.slug)

    assert second["audience"] == "customer"
    assert second["principal"]["id"] != first["principal"]["id"]


def test_signed_in_owner_is_owner(world_a: Any, api: Any) -> None:
    api.force_login(world_a.owner)

    body = open_ok(api, world_a.agent.slug)

    assert body["audience"] == "owner"
    assert body["principal"] == {"type": "user", "id": str(world_a.owner.pk)}
    row = DialogueSession.objects.get(pk=body["id"])
    assert (row.audience, row.user_id, row.customer_id, row.peer_id) == ("owner", world_a.owner.pk, None, None)


def test_tenant_members_who_do_not_own_the_agent_are_customers(world_a: Any, api: Any) -> None:
    # (A signed-in auditor opens nothing: auditors change nothing, tests/test_audit_access.py.)
    api.force_login(world_a.member)

    body = open_ok(api, world_a.agent.slug)

    assert body["audience"] == "customer"
    assert body["principal"]["type"] == "customer"
    assert Customer.objects.filter(pk=body["principal"]["id"], tenant=world_a.tenant).exists()


def test_tenant_owner_who_does_not_own_this_agent_is_a_customer(world_a: Any, api: Any) -> None:
    other, _ = user_ensure(email="second-owner@alpha.test", password="pw")
    membership_grant(tenant=world_a.tenant, user=other, role=Role.OWNER, actor=ACTOR)
    api.force_login(other)

    assert open_ok(api, world_a.agent.slug)["audience"] == "customer"


def test_owner_of_another_tenant_is_a_customer(world_a: Any, world_b: Any, api: Any) -> None:
    api.force_login(world_b.owner)

    assert open_ok(api, world_a.agent.slug)["audience"] == "customer"


def test_staff_user_without_membership_is_owner(world_a: Any, api: Any) -> None:
    staff, _ = user_ensure(email="ops@platform.test", password="pw", is_staff=True)
    assert not staff.memberships.exists()
    api.force_login(staff)

    body = open_ok(api, world_a.agent.slug)

    assert body["audience"] == "owner"
    assert body["principal"] == {"type": "user", "id": str(staff.pk)}


def test_valid_peer_key_is_peer(world_a: Any, api: Any) -> None:
    issued = new_key(world_a.agent)

    response = open_session(api, world_a.agent.slug, **bearer(issued))

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["audience"] == "peer"
    assert body["principal"] == {"type": "peer", "id": issued.credential_id}
    assert not any(key.startswith("facade_customer_") for key in response.cookies)
    assert DialogueSession.objects.get(pk=body["id"]).peer_id == uuid.UUID(issued.credential_id)


def test_peer_key_wins_over_an_owner_login(world_a: Any, api: Any) -> None:
    issued = new_key(world_a.agent)
    api.force_login(world_a.owner)

    body = open_ok(api, world_a.agent.slug, **bearer(issued))

    assert body["audience"] == "peer"
    assert body["principal"] == {"type": "peer", "id": issued.credential_id}
    assert DialogueSession.objects.get(pk=body["id"]).user_id is None


def _bad_authorization(kind: str, world_a: Any, world_b: Any) -> str:
    if kind == "malformed":
        return "Bearer not-a-peer-key"
    if kind == "malformed-empty-secret":
        return "Bearer fpk_abcdef012345_"
    if kind == "unknown":
        return "Bearer fpk_000000000000_" + "A" * 43
    if kind == "wrong-secret":
        issued = new_key(world_a.agent)
        prefix = issued.key.split("_")[1]
        return f"Bearer fpk_{prefix}_{'B' * 43}"
    if kind == "revoked":
        issued = new_key(world_a.agent)
        peer_key_revoke(credential=PeerCredential.objects.get(pk=issued.credential_id), actor=ACTOR)
        return f"Bearer {issued.key}"
    if kind == "other-agent":
        return f"Bearer {new_key(world_b.agent).key}"
    raise AssertionError(kind)


@pytest.mark.parametrize(
    "kind", ["malformed", "malformed-empty-secret", "unknown", "wrong-secret", "revoked", "other-agent"]
)
@pytest.mark.parametrize("also_owner", [False, True], ids=["anonymous", "with-owner-login"])
def test_a_key_that_does_not_work_is_401_and_opens_nothing(
    world_a: Any, world_b: Any, api: Any, kind: str, also_owner: bool
) -> None:
    authorization = _bad_authorization(kind, world_a, world_b)
    if also_owner:
        # A bad key never falls back to the login: it is refused outright.
        api.force_login(world_a.owner)
    before = snapshot()

    response = open_session(api, world_a.agent.slug, HTTP_AUTHORIZATION=authorization)

    assert response.status_code == 401, response.content
    assert error_of(response) == "invalid_peer_key"
    assert snapshot() == before


def test_revocation_takes_effect_at_once(world_a: Any, api: Any) -> None:
    issued = new_key(world_a.agent)
    api.credentials(**bearer(issued))
    worked = open_ok(api, world_a.agent.slug)
    assert worked["audience"] == "peer"
    assert api.get(session_url(worked["id"])).status_code == 200

    peer_key_revoke(credential=PeerCredential.objects.get(pk=issued.credential_id), actor=ACTOR)
    before = snapshot()

    refused = open_session(api, world_a.agent.slug)
    assert refused.status_code == 401
    assert error_of(refused) == "invalid_peer_key"
    read = api.get(session_url(worked["id"]))
    assert read.status_code == 401
    assert error_of(read) == "invalid_peer_key"
    posted = api.post(messages_url(worked["id"]), {"text": "hi"}, format="json")
    assert posted.status_code == 401
    assert error_of(posted) == "invalid_peer_key"
    assert snapshot() == before


def test_revocation_through_the_api_takes_effect_at_once(world_a: Any, api: Any, make_api: Any) -> None:
    issued = new_key(world_a.agent)
    peer = make_api()
    peer.credentials(**bearer(issued))
    assert open_ok(peer, world_a.agent.slug)["audience"] == "peer"

    api.force_login(world_a.owner)
    deleted = api.delete(f"/api/agents/{world_a.agent.slug}/peer-keys/{issued.credential_id}")
    assert deleted.status_code == 204

    refused = open_session(peer, world_a.agent.slug)
    assert refused.status_code == 401
    assert error_of(refused) == "invalid_peer_key"


# --------------------------------------------------------------------------- 3. stability


def _remove_by_agent_owner_remove(world: Any) -> None:
    agent_owner_remove(agent=world.agent, user=world.owner, actor=ACTOR)


def _remove_by_membership_revoke(world: Any) -> None:
    # The tenant keeps an owner: its last one cannot be removed (issue 32).
    keeper, _ = user_ensure(email=f"keeper@{world.tenant.slug}.test", password=None)
    membership_grant(tenant=world.tenant, user=keeper, role=Role.OWNER, actor=ACTOR)
    membership_revoke(tenant=world.tenant, user=world.owner, actor=ACTOR)


@pytest.mark.parametrize(
    "remove",
    [
        pytest.param(_remove_by_agent_owner_remove, id="agent_owner_remove"),
        pytest.param(_remove_by_membership_revoke, id="membership_revoke"),
    ],
)
def test_an_owner_session_stays_owner_after_the_owner_is_removed(world_a: Any, api: Any, remove: Any) -> None:
    api.force_login(world_a.owner)
    opened = open_ok(api, world_a.agent.slug)
    assert opened["audience"] == "owner"
    first = api.post(messages_url(opened["id"]), {"text": "before"}, format="json")
    assert first.status_code == 201

    remove(world_a)
    messages = Message.objects.count()

    read = api.get(session_url(opened["id"]))
    assert read.status_code == 200, read.content
    assert read.json()["audience"] == "owner"
    assert read.json()["principal"] == {"type": "user", "id": str(world_a.owner.pk)}

    posted = api.post(messages_url(opened["id"]), {"text": "hi"}, format="json")
    assert posted.status_code == 403, posted.content
    assert error_of(posted) == "no_longer_owner"
    assert Message.objects.count() == messages

    again = open_ok(api, world_a.agent.slug)
    assert again["audience"] == "customer"
    assert again["principal"]["type"] == "customer"

    row = DialogueSession.objects.get(pk=opened["id"])
    assert (row.audience, row.principal_type, row.user_id) == ("owner", "user", world_a.owner.pk)


# --------------------------------------------------------------------------- 4. principal binding


def assert_not_found(response: Any) -> None:
    assert response.status_code == 404, (response.status_code, response.content)
    assert error_of(response) == "not_found"


@pytest.fixture
def customer_session(world_a: Any, make_api: Any) -> dict[str, Any]:
    client = make_api()
    body = open_ok(client, world_a.agent.slug)
    assert body["audience"] == "customer"
    assert client.get(session_url(body["id"])).status_code == 200  # its principal reads it
    return body


def _other_customer(world_a: Any, make_api: Any) -> Any:
    client = make_api()
    assert open_ok(client, world_a.agent.slug)["audience"] == "customer"  # customer B, with its own cookie
    return client


def _owner(world_a: Any, make_api: Any) -> Any:
    client = make_api()
    client.force_login(world_a.owner)
    return client


def _peer(world_a: Any, make_api: Any) -> Any:
    client = make_api()
    client.credentials(**bearer(new_key(world_a.agent)))
    return client


@pytest.mark.parametrize(
    "intruder",
    [pytest.param(_other_customer, id="customer-B"), pytest.param(_owner, id="owner"), pytest.param(_peer, id="peer")],
)
def test_a_customer_session_is_not_found_for_anyone_else(
    world_a: Any, make_api: Any, customer_session: dict[str, Any], intruder: Any
) -> None:
    client = intruder(world_a, make_api)
    messages = Message.objects.count()

    assert_not_found(client.get(session_url(customer_session["id"])))
    assert_not_found(client.post(messages_url(customer_session["id"]), {"text": "hi"}, format="json"))
    assert Message.objects.count() == messages


def test_a_peer_request_is_matched_by_its_key_not_by_the_customer_cookie(world_a: Any, make_api: Any) -> None:
    """The same client holding a customer cookie, once it sends a peer key, is the peer only."""
    client = make_api()
    mine = open_ok(client, world_a.agent.slug)
    assert client.get(session_url(mine["id"])).status_code == 200
    client.credentials(**bearer(new_key(world_a.agent)))

    assert_not_found(client.get(session_url(mine["id"])))


def test_an_owner_session_is_not_found_for_another_owner_of_the_same_agent(
    world_a: Any, api: Any, make_api: Any
) -> None:
    second, _ = user_ensure(email="second-owner@alpha.test", password="pw")
    membership_grant(tenant=world_a.tenant, user=second, role=Role.OWNER, actor=ACTOR)
    agent_owner_add(agent=world_a.agent, user=second, actor=ACTOR)
    api.force_login(world_a.owner)
    opened = open_ok(api, world_a.agent.slug)
    assert opened["audience"] == "owner"

    other = make_api()
    other.force_login(second)
    assert open_ok(other, world_a.agent.slug)["audience"] == "owner"  # really an owner
    messages = Message.objects.count()

    assert_not_found(other.get(session_url(opened["id"])))
    assert_not_found(other.post(messages_url(opened["id"]), {"text": "hi"}, format="json"))
    assert Message.objects.count() == messages


def test_a_peer_session_is_not_found_with_another_key_of_the_same_agent(world_a: Any, api: Any, make_api: Any) -> None:
    api.credentials(**bearer(new_key(world_a.agent, "first")))
    opened = open_ok(api, world_a.agent.slug)
    assert opened["audience"] == "peer"

    other = make_api()
    other.credentials(**bearer(new_key(world_a.agent, "second")))
    messages = Message.objects.count()

    assert_not_found(other.get(session_url(opened["id"])))
    assert_not_found(other.post(messages_url(opened["id"]), {"text": "hi"}, format="json"))
    assert Message.objects.count() == messages
    assert api.get(session_url(opened["id"])).status_code == 200  # the first key still reads it


def test_a_random_session_id_is_not_found(world_a: Any, api: Any) -> None:
    open_ok(api, world_a.agent.slug)

    assert_not_found(api.get(session_url(uuid.uuid4())))
    assert_not_found(api.post(messages_url(uuid.uuid4()), {"text": "hi"}, format="json"))


# --------------------------------------------------------------------------- 5. messages


@pytest.fixture(params=["customer", "owner", "peer"])
def own_session(request: Any, world_a: Any, api: Any) -> tuple[Any, dict[str, Any]]:
    if request.param == "owner":
        api.force_login(world_a.owner)
    elif request.param == "peer":
        api.credentials(**bearer(new_key(world_a.agent)))
    body = open_ok(api, world_a.agent.slug)
    assert body["audience"] == request.param
    return api, body


def test_the_principal_posts_a_message(own_session: Any) -> None:
    client, session = own_session

    response = client.post(
        messages_url(session["id"]), {"text": "hello there", "client_message_id": "c-1"}, format="json"
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["duplicate"] is False
    assert body["message"]["text"] == "hello there"
    assert body["message"]["client_message_id"] == "c-1"
    assert body["message"]["role"] == "principal"
    stored = Message.objects.get(pk=body["message"]["id"])
    assert (str(stored.session_id), stored.text) == (session["id"], "hello there")


def test_a_repeated_client_message_id_is_stored_once(own_session: Any) -> None:
    client, session = own_session
    first = client.post(messages_url(session["id"]), {"text": "once", "client_message_id": "dup-1"}, format="json")
    assert first.status_code == 201
    events = LedgerEvent.objects.of_type("message.posted").count()

    again = client.post(messages_url(session["id"]), {"text": "once", "client_message_id": "dup-1"}, format="json")

    assert again.status_code == 200, again.content
    assert again.json()["duplicate"] is True
    assert again.json()["message"]["id"] == first.json()["message"]["id"]
    assert again.json()["reply"] == first.json()["reply"] and first.json()["reply"]["text"]
    assert Message.objects.filter(session_id=session["id"], role="principal").count() == 1
    assert Message.objects.filter(session_id=session["id"], role="agent").count() == 1
    assert LedgerEvent.objects.of_type("message.posted").count() == events


def test_messages_without_a_client_id_are_all_stored(own_session: Any) -> None:
    client, session = own_session
    for _ in range(2):
        response = client.post(messages_url(session["id"]), {"text": "same"}, format="json")
        assert response.status_code == 201
        assert response.json()["duplicate"] is False
    assert Message.objects.filter(session_id=session["id"], role="principal").count() == 2


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        pytest.param({"text": ""}, "empty_message", id="empty"),
        pytest.param({"text": "   \n\t"}, "empty_message", id="whitespace"),
        pytest.param({"text": "x" * 4001}, "message_too_long", id="4001-chars"),
    ],
)
def test_invalid_messages_are_refused(own_session: Any, payload: dict[str, str], code: str) -> None:
    client, session = own_session
    before = snapshot()

    response = client.post(messages_url(session["id"]), payload, format="json")

    assert response.status_code == 400, response.content
    assert error_of(response) == code
    assert snapshot() == before


def test_a_message_of_exactly_4000_characters_is_accepted(own_session: Any) -> None:
    client, session = own_session

    response = client.post(messages_url(session["id"]), {"text": "y" * 4000}, format="json")

    assert response.status_code == 201, response.content
    assert len(response.json()["message"]["text"]) == 4000


def test_a_malformed_body_is_refused(own_session: Any) -> None:
    client, session = own_session
    before = snapshot()

    response = client.post(messages_url(session["id"]), data="{nope", content_type="application/json")

    assert response.status_code == 400, response.content
    assert error_of(response) == "malformed_body"
    assert snapshot() == before


def test_a_malformed_body_opens_no_session(world_a: Any, api: Any) -> None:
    before = snapshot()

    response = api.post(sessions_url(world_a.agent.slug), data="{nope", content_type="application/json")

    assert response.status_code == 400, response.content
    assert error_of(response) == "malformed_body"
    assert snapshot() == before


def test_a_pathologically_nested_body_is_a_clean_400(world_a: Any, api: Any) -> None:
    api.raise_request_exception = False  # see the answer a real client would get
    # Deep, yet small enough for the endpoint's body limit (a larger one is refused as too large).
    depth = 300
    body = '{"a":' * depth + '{"audience":"owner"}' + "}" * depth
    before = snapshot()

    response = api.post(sessions_url(world_a.agent.slug), data=body, content_type="application/json")

    assert snapshot() == before
    assert response.status_code == 400, (response.status_code, response.content[:80])
    assert error_of(response) in ("malformed_body", "audience_is_server_derived")


# --------------------------------------------------------------------------- 6. ledger


def events(tenant: Any, event_type: str) -> list[LedgerEvent]:
    return list(LedgerEvent.objects.filter(chain_id=tenant.pk).of_type(event_type).order_by("seq"))


def canonical_document(event: LedgerEvent) -> dict[str, Any]:
    return json.loads(event.canonical)


@pytest.mark.parametrize("caller", ["customer", "owner", "peer"])
def test_opening_a_session_is_recorded_in_the_ledger(world_a: Any, api: Any, caller: str) -> None:
    if caller == "owner":
        api.force_login(world_a.owner)
    elif caller == "peer":
        api.credentials(**bearer(new_key(world_a.agent)))
    assert events(world_a.tenant, "session.opened") == []

    opened = open_ok(api, world_a.agent.slug)

    [event] = events(world_a.tenant, "session.opened")
    assert event.entity_type == "session"
    assert event.entity_id == opened["id"]
    assert event.payload["audience"] == caller
    assert event.payload["agent"] == world_a.agent.slug
    assert "text" not in event.payload
    assert canonical_document(event)["payload"] == event.payload


def test_posting_a_message_records_its_size_not_its_text(world_a: Any, api: Any) -> None:
    opened = open_ok(api, world_a.agent.slug)
    text = "my secret order number is 8675309"

    posted = api.post(messages_url(opened["id"]), {"text": text}, format="json")
    assert posted.status_code == 201

    [event] = events(world_a.tenant, "message.posted")
    assert event.entity_id == opened["id"]
    assert event.payload["chars"] == len(text)
    assert event.payload["message_id"] == posted.json()["message"]["id"]
    assert "text" not in event.payload
    assert text not in json.dumps(event.payload)
    assert text not in event.canonical
    assert "8675309" not in event.canonical
    # The message text appears in no event of the chain at all.
    for any_event in LedgerEvent.objects.filter(chain_id=world_a.tenant.pk):
        assert text not in any_event.canonical
