"""Issue 33 §3: the owner sets each peer key's trust — ask only, requests, or paused — through
the peer-key API; every change is a ledger event, and only the agent's owners may make it."""

from __future__ import annotations

from typing import Any

import pytest

from facade.tenancy.rules import skills_for_trust
from facade.tenancy.schemas import Actor

CONTRACT = ["knowledge_answers", "request_intake", "handoff", "request_status"]


@pytest.mark.parametrize(
    ("trust", "skills"),
    [
        ("ask", ["knowledge_answers"]),
        ("requests", CONTRACT),
        ("paused", []),
        ("anything else", []),  # fails closed
    ],
)
def test_skills_for_trust(trust: str, skills: list[str]) -> None:
    assert skills_for_trust(trust, CONTRACT) == skills


@pytest.mark.django_db
def test_the_owner_sets_a_keys_trust_and_the_ledger_records_it(make_api: Any, world_a: Any, world_b: Any) -> None:
    from facade.tenancy.models import PeerCredential
    from facade.tenancy.services import peer_key_create, peer_key_revoke
    from ledger.models import LedgerEvent

    issued = peer_key_create(agent=world_a.agent, name="supplier", actor=Actor.human(world_a.owner.pk))
    url = f"/api/agents/{world_a.agent.slug}/peer-keys/{issued.credential_id}"
    owner = make_api()
    owner.force_authenticate(world_a.owner)
    assert owner.get(f"/api/agents/{world_a.agent.slug}/peer-keys").json()[0]["trust"] == "requests"
    answer = owner.patch(url, {"trust": "ask"}, format="json")
    assert answer.status_code == 200 and answer.json()["trust"] == "ask"
    assert PeerCredential.objects.get(pk=issued.credential_id).trust == "ask"
    [event] = [e.document for e in LedgerEvent.objects.all() if e.document["event_type"] == "peer_key.trust_changed"]
    assert event["payload"] == {
        "agent": world_a.agent.slug,
        "key_prefix": issued.key.split("_")[1],
        "trust": "ask",
        "previous": "requests",
    }
    assert event["actor_id"] == f"user:{world_a.owner.pk}"
    assert owner.patch(url, {"trust": "owner"}, format="json").status_code == 400
    # Another tenant's owner, and the key's own peer, cannot touch it.
    stranger = make_api()
    stranger.force_authenticate(world_b.owner)
    assert stranger.patch(url, {"trust": "requests"}, format="json").status_code == 404
    peer = make_api()
    peer.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.key}")
    assert peer.patch(url, {"trust": "requests"}, format="json").status_code in (401, 403)
    # A revoked key stays revoked.
    peer_key_revoke(credential=PeerCredential.objects.get(pk=issued.credential_id), actor=Actor.human(world_a.owner.pk))
    refused = owner.patch(url, {"trust": "requests"}, format="json")
    assert refused.status_code == 400 and refused.json()["error"] == "key_revoked"
    assert PeerCredential.objects.get(pk=issued.credential_id).trust == "ask"
