"""Tenant isolation: another tenant's objects answer 404 `not_found` (never 403), exactly like
objects that do not exist, and a refused request changes nothing."""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import pytest
from django.core import signing

from facade.dialogue.models import DialogueSession, Message
from facade.tenancy.models import Customer, PeerCredential
from facade.tenancy.schemas import Actor
from facade.tenancy.services import peer_key_create
from ledger.models import LedgerEvent
from ledger.services import checkpoint_path

pytestmark = pytest.mark.django_db

ACTOR = Actor.platform("t")
LEDGER_ENDPOINTS = [
    pytest.param("get", "/api/ledger/verify", id="verify"),
    pytest.param("post", "/api/ledger/checkpoints", id="checkpoints"),
    pytest.param("get", "/api/ledger/events", id="events"),
]


def snapshot() -> tuple[int, ...]:
    return (
        DialogueSession.objects.count(),
        Customer.objects.count(),
        Message.objects.count(),
        PeerCredential.objects.count(),
        PeerCredential.objects.filter(revoked_at__isnull=False).count(),
        LedgerEvent.objects.count(),
    )


def assert_not_found(response: Any) -> None:
    assert response.status_code == 404, (response.status_code, response.content)
    assert response.json()["error"] == "not_found"


def call(client: Any, method: str, url: str) -> Any:
    if method == "post":
        return client.post(url, {}, format="json")
    return getattr(client, method)(url)


@pytest.fixture
def b_key(world_b: Any) -> Any:
    return peer_key_create(agent=world_b.agent, name="bravo-peer", actor=ACTOR)


@pytest.fixture
def b_session(world_b: Any, make_api: Any) -> dict[str, Any]:
    """A customer session of tenant B, plus the client that owns it."""
    client = make_api()
    response = client.post(f"/api/agents/{world_b.agent.slug}/sessions", {}, format="json")
    assert response.status_code == 201
    return {"client": client, **response.json()}


@pytest.fixture
def a_owner(world_a: Any, make_api: Any) -> Any:
    client = make_api()
    client.force_login(world_a.owner)
    return client


def b_key_works(world_b: Any, b_key: Any, make_api: Any) -> bool:
    peer = make_api()
    response = peer.post(
        f"/api/agents/{world_b.agent.slug}/sessions", {}, format="json", HTTP_AUTHORIZATION=f"Bearer {b_key.key}"
    )
    return response.status_code == 201 and response.json()["audience"] == "peer"


# --------------------------------------------------------------------------- peer keys


def test_owner_of_a_cannot_list_b_keys(world_a: Any, world_b: Any, b_key: Any, a_owner: Any) -> None:
    response = a_owner.get(f"/api/agents/{world_b.agent.slug}/peer-keys")

    assert_not_found(response)
    assert b_key.key.split("_")[1] not in response.content.decode()
    # Control: the same owner lists their own agent's keys.
    own = a_owner.get(f"/api/agents/{world_a.agent.slug}/peer-keys")
    assert own.status_code == 200
    assert own.json() == []


def test_owner_of_a_cannot_issue_a_key_for_b(world_a: Any, world_b: Any, a_owner: Any) -> None:
    before = snapshot()

    response = a_owner.post(f"/api/agents/{world_b.agent.slug}/peer-keys", {"name": "sneaky"}, format="json")

    assert_not_found(response)
    assert "key" not in response.json()
    assert snapshot() == before
    assert not PeerCredential.objects.filter(agent=world_b.agent).exists()
    # Control: the same request on A's own agent works.
    own = a_owner.post(f"/api/agents/{world_a.agent.slug}/peer-keys", {"name": "mine"}, format="json")
    assert own.status_code == 201
    assert own.json()["key"].startswith("fpk_")


@pytest.mark.parametrize("through", ["b-agent", "a-agent"])
def test_owner_of_a_cannot_revoke_b_key(
    world_a: Any, world_b: Any, b_key: Any, a_owner: Any, make_api: Any, through: str
) -> None:
    slug = world_b.agent.slug if through == "b-agent" else world_a.agent.slug
    before = snapshot()

    response = a_owner.delete(f"/api/agents/{slug}/peer-keys/{b_key.credential_id}")

    assert_not_found(response)
    assert snapshot() == before
    assert PeerCredential.objects.get(pk=b_key.credential_id).revoked_at is None
    assert b_key_works(world_b, b_key, make_api)


def test_peer_key_endpoints_need_a_login(world_b: Any, b_key: Any, api: Any) -> None:
    for response in (
        api.get(f"/api/agents/{world_b.agent.slug}/peer-keys"),
        api.post(f"/api/agents/{world_b.agent.slug}/peer-keys", {"name": "x"}, format="json"),
        api.delete(f"/api/agents/{world_b.agent.slug}/peer-keys/{b_key.credential_id}"),
    ):
        assert response.status_code == 401, response.content
        assert response.json()["error"] == "not_authenticated"
    assert PeerCredential.objects.get(pk=b_key.credential_id).revoked_at is None


def test_a_peer_key_cannot_manage_peer_keys(world_b: Any, b_key: Any, api: Any) -> None:
    """A peer is never a user: its own agent's key endpoints are closed to it."""
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {b_key.key}")
    before = snapshot()
    for response in (
        api.get(f"/api/agents/{world_b.agent.slug}/peer-keys"),
        api.post(f"/api/agents/{world_b.agent.slug}/peer-keys", {"name": "x"}, format="json"),
        api.delete(f"/api/agents/{world_b.agent.slug}/peer-keys/{b_key.credential_id}"),
    ):
        # The peer is authenticated (as a peer) but is no user: DRF answers 403 `forbidden`.
        assert response.status_code == 403, response.content
        assert response.json()["error"] == "forbidden"
    assert snapshot() == before
    assert PeerCredential.objects.get(pk=b_key.credential_id).revoked_at is None


# --------------------------------------------------------------------------- sessions


def test_owner_of_a_cannot_read_or_post_in_a_b_session(a_owner: Any, b_session: dict[str, Any]) -> None:
    before = snapshot()

    assert_not_found(a_owner.get(f"/api/sessions/{b_session['id']}"))
    assert_not_found(a_owner.post(f"/api/sessions/{b_session['id']}/messages", {"text": "hi"}, format="json"))

    assert snapshot() == before
    # Control: B's customer still reads it.
    assert b_session["client"].get(f"/api/sessions/{b_session['id']}").status_code == 200


def test_owner_of_b_cannot_read_b_customer_sessions_either(
    world_b: Any, make_api: Any, b_session: dict[str, Any]
) -> None:
    """Sessions are bound to their principal, not to the tenant's staff."""
    client = make_api()
    client.force_login(world_b.owner)

    assert_not_found(client.get(f"/api/sessions/{b_session['id']}"))


def test_peer_key_of_b_on_a_agent_is_invalid(world_a: Any, b_key: Any, api: Any) -> None:
    before = snapshot()

    response = api.post(
        f"/api/agents/{world_a.agent.slug}/sessions", {}, format="json", HTTP_AUTHORIZATION=f"Bearer {b_key.key}"
    )

    assert response.status_code == 401, response.content
    assert response.json()["error"] == "invalid_peer_key"
    assert snapshot() == before


def test_peer_key_of_b_on_an_a_session_is_not_found(world_a: Any, b_key: Any, make_api: Any) -> None:
    customer = make_api()
    opened = customer.post(f"/api/agents/{world_a.agent.slug}/sessions", {}, format="json").json()
    peer = make_api()
    peer.credentials(HTTP_AUTHORIZATION=f"Bearer {b_key.key}")
    before = snapshot()

    assert_not_found(peer.get(f"/api/sessions/{opened['id']}"))
    assert_not_found(peer.post(f"/api/sessions/{opened['id']}/messages", {"text": "hi"}, format="json"))
    assert snapshot() == before


def test_a_customer_cookie_is_not_valid_across_tenants(world_a: Any, world_b: Any, api: Any) -> None:
    in_a = api.post(f"/api/agents/{world_a.agent.slug}/sessions", {}, format="json")
    assert in_a.status_code == 201
    a_principal = in_a.json()["principal"]
    a_cookie = in_a.cookies[f"facade_customer_{world_a.tenant.pk}"].value

    # The client, still holding A's cookie, opens a session with B's agent.
    in_b = api.post(f"/api/agents/{world_b.agent.slug}/sessions", {}, format="json")
    assert in_b.status_code == 201
    b_principal = in_b.json()["principal"]
    assert b_principal["type"] == "customer"
    assert b_principal["id"] != a_principal["id"]
    assert Customer.objects.get(pk=b_principal["id"]).tenant_id == world_b.tenant.pk
    assert f"facade_customer_{world_b.tenant.pk}" in in_b.cookies

    # Even A's signed value placed under B's cookie name is garbage to B.
    forger = type(api)()
    forger.cookies[f"facade_customer_{world_b.tenant.pk}"] = a_cookie
    forged = forger.post(f"/api/agents/{world_b.agent.slug}/sessions", {}, format="json")
    assert forged.status_code == 201
    assert forged.json()["principal"]["id"] not in (a_principal["id"], b_principal["id"])
    with pytest.raises(signing.BadSignature):
        signing.loads(a_cookie, salt=f"facade.customer.{world_b.tenant.pk}")

    # And A's customer cannot read its A session through B's cookie.
    stranger = type(api)()
    stranger.cookies[f"facade_customer_{world_a.tenant.pk}"] = in_b.cookies[
        f"facade_customer_{world_b.tenant.pk}"
    ].value
    assert_not_found(stranger.get(f"/api/sessions/{in_a.json()['id']}"))


# --------------------------------------------------------------------------- ledger


@pytest.mark.parametrize("who", ["owner", "auditor"])
@pytest.mark.parametrize(("method", "url"), LEDGER_ENDPOINTS)
def test_ledger_of_another_tenant_is_not_found(
    world_a: Any, world_b: Any, make_api: Any, who: str, method: str, url: str
) -> None:
    client = make_api()
    client.force_login(getattr(world_a, who))
    before = snapshot()

    foreign = call(client, method, f"{url}?tenant=bravo")

    assert_not_found(foreign)
    assert snapshot() == before
    assert not checkpoint_path(world_b.tenant.pk).exists()  # nothing was signed for B

    own = call(client, method, f"{url}?tenant=alpha")
    assert own.status_code == (201 if method == "post" else 200), own.content
    body = own.json()
    if url.endswith("verify"):
        assert body["ok"] is True
        assert body["checked"] == LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).count()
    elif url.endswith("checkpoints"):
        assert body["chain"] == world_a.tenant.pk
        assert checkpoint_path(world_a.tenant.pk).exists()
    else:
        assert len(body["events"]) == LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).count()


@pytest.mark.parametrize(("method", "url"), LEDGER_ENDPOINTS)
def test_a_plain_member_cannot_read_their_own_tenants_ledger(
    world_a: Any, world_b: Any, make_api: Any, method: str, url: str
) -> None:
    client = make_api()
    client.force_login(world_a.member)
    before = snapshot()

    assert_not_found(call(client, method, f"{url}?tenant=alpha"))
    assert_not_found(call(client, method, f"{url}?tenant=bravo"))
    assert_not_found(call(client, method, url))  # no tenant named: still nothing to read
    assert snapshot() == before


@pytest.mark.parametrize(("method", "url"), LEDGER_ENDPOINTS)
def test_the_ledger_needs_a_login(world_a: Any, api: Any, method: str, url: str) -> None:
    before = snapshot()

    for tenant in ("alpha", "bravo", "no-such-tenant"):
        response = call(api, method, f"{url}?tenant={tenant}")
        assert response.status_code == 401, response.content
        assert response.json()["error"] == "not_authenticated"
    assert snapshot() == before


@pytest.mark.parametrize(("method", "url"), LEDGER_ENDPOINTS)
def test_a_peer_key_does_not_open_the_ledger(world_a: Any, world_b: Any, api: Any, method: str, url: str) -> None:
    issued = peer_key_create(agent=world_a.agent, name="p", actor=ACTOR)
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.key}")

    before = snapshot()

    own = call(api, method, f"{url}?tenant=alpha")
    foreign = call(api, method, f"{url}?tenant=bravo")
    missing = call(api, method, f"{url}?tenant=no-such-tenant")

    # Refused before any tenant is looked at (a peer is no user), so the answer is the same for
    # the peer's own tenant, another tenant and none at all.
    assert own.status_code == 403, own.content
    assert own.json()["error"] == "forbidden"
    assert own.content == foreign.content == missing.content
    assert foreign.status_code == missing.status_code == 403
    assert snapshot() == before


def test_ledger_export_holds_only_the_tenants_own_chain(
    world_a: Any, world_b: Any, make_api: Any, b_session: Any
) -> None:
    # Give both chains some traffic so that a leak would show.
    customer = make_api()
    opened = customer.post(f"/api/agents/{world_a.agent.slug}/sessions", {}, format="json").json()
    assert customer.post(f"/api/sessions/{opened['id']}/messages", {"text": "hi"}, format="json").status_code == 201
    assert (
        b_session["client"].post(f"/api/sessions/{b_session['id']}/messages", {"text": "hi"}, format="json").status_code
        == 201
    )
    assert LedgerEvent.objects.filter(chain_id=world_b.tenant.pk).exists()

    client = make_api()
    client.force_login(world_a.auditor)
    response = client.get("/api/ledger/events?tenant=alpha")

    assert response.status_code == 200, response.content
    exported = response.json()["events"]
    own = list(LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).order_by("seq"))
    assert len(exported) == len(own) > 0
    documents = [json.loads(base64.b64decode(event["canonical"])) for event in exported]
    assert {doc["chain"] for doc in documents} == {world_a.tenant.pk}
    assert [doc["seq"] for doc in documents] == [event["seq"] for event in exported] == [e.seq for e in own]
    assert [event["hash"] for event in exported] == [bytes(e.hash).hex() for e in own]
    b_entities = {e.entity_id for e in LedgerEvent.objects.filter(chain_id=world_b.tenant.pk)}
    assert b_session["id"] in b_entities
    assert b_session["id"] not in {doc["entity_id"] for doc in documents}


# --------------------------------------------------------------------------- no hint that it exists


def _same_404(existing: Any, missing: Any) -> None:
    assert existing.status_code == missing.status_code == 404
    assert existing.content == missing.content
    assert existing["Content-Type"] == missing["Content-Type"]
    assert existing.json()["error"] == "not_found"


def test_foreign_session_looks_like_a_missing_one(a_owner: Any, b_session: dict[str, Any]) -> None:
    missing = uuid.uuid4()
    _same_404(a_owner.get(f"/api/sessions/{b_session['id']}"), a_owner.get(f"/api/sessions/{missing}"))
    _same_404(
        a_owner.post(f"/api/sessions/{b_session['id']}/messages", {"text": "hi"}, format="json"),
        a_owner.post(f"/api/sessions/{missing}/messages", {"text": "hi"}, format="json"),
    )


def test_foreign_agent_and_key_look_like_missing_ones(world_a: Any, world_b: Any, b_key: Any, a_owner: Any) -> None:
    b = world_b.agent.slug
    _same_404(a_owner.get(f"/api/agents/{b}/peer-keys"), a_owner.get("/api/agents/no-such-agent/peer-keys"))
    _same_404(
        a_owner.post(f"/api/agents/{b}/peer-keys", {"name": "x"}, format="json"),
        a_owner.post("/api/agents/no-such-agent/peer-keys", {"name": "x"}, format="json"),
    )
    _same_404(
        a_owner.delete(f"/api/agents/{b}/peer-keys/{b_key.credential_id}"),
        a_owner.delete(f"/api/agents/no-such-agent/peer-keys/{uuid.uuid4()}"),
    )
    _same_404(
        a_owner.delete(f"/api/agents/{world_a.agent.slug}/peer-keys/{b_key.credential_id}"),
        a_owner.delete(f"/api/agents/{world_a.agent.slug}/peer-keys/{uuid.uuid4()}"),
    )
    assert PeerCredential.objects.get(pk=b_key.credential_id).revoked_at is None


@pytest.mark.parametrize(("method", "url"), LEDGER_ENDPOINTS)
def test_foreign_ledger_looks_like_a_missing_tenant(
    world_a: Any, world_b: Any, a_owner: Any, method: str, url: str
) -> None:
    _same_404(call(a_owner, method, f"{url}?tenant=bravo"), call(a_owner, method, f"{url}?tenant=no-such-tenant"))


def test_session_of_a_missing_agent_is_not_found(world_a: Any, api: Any) -> None:
    before = snapshot()

    assert_not_found(api.post("/api/agents/no-such-agent/sessions", {}, format="json"))
    assert snapshot() == before
