"""Issue 33 §3 and §5: a flooding peer over A2A meets the per-key limits, as over the peer HTTP
API — in-process (Django's test client), each refusal a JSON-RPC error with HTTP 429 and
Retry-After, and nothing written for it."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.test import Client

from facade.tenancy.schemas import Actor


def _send(client: Client, slug: str, key: str, context: str = "") -> Any:
    message: dict[str, Any] = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "Hello?"}]}
    if context:
        message["contextId"] = context
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    return client.post(
        f"/a2a/{slug}/jsonrpc",
        json.dumps(body),
        content_type="application/json",
        HTTP_X_API_KEY=key,
        HTTP_A2A_VERSION="1.0",
    )


@pytest.mark.django_db
def test_a_flooding_peer_is_refused_per_key_and_nothing_is_written(world_a: Any, settings: Any) -> None:
    from facade.dialogue.models import Message
    from facade.peers.models import PeerTask
    from facade.tenancy.services import peer_key_create

    settings.FACADE_RATE_PEER = "2/3600"  # messages per key; an hour: no window turns over mid-test
    settings.FACADE_RATE_SESSION = "1000/3600"
    owner = Actor.human(world_a.owner.pk)
    flooder = peer_key_create(agent=world_a.agent, name="flooder", actor=owner).key
    other = peer_key_create(agent=world_a.agent, name="other", actor=owner).key
    client = Client()
    first = _send(client, world_a.agent.slug, flooder).json()["result"]["task"]
    assert _send(client, world_a.agent.slug, flooder, first["contextId"]).status_code == 200
    written = (Message.objects.count(), PeerTask.objects.count())
    refused = _send(client, world_a.agent.slug, flooder, first["contextId"])
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    error = refused.json()["error"]
    assert (error["code"], error["data"][0]["reason"]) == (-32603, "RATE_LIMITED")
    assert (Message.objects.count(), PeerTask.objects.count()) == written
    # Another key of the same agent is counted on its own.
    assert "result" in _send(client, world_a.agent.slug, other).json()
