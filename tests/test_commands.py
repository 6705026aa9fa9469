"""Management commands: seed_demo, peer_key and ledger_verify."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection

from facade.dialogue.models import DialogueSession
from facade.tenancy.models import AgentProfile, Membership, PeerCredential, Tenant
from ledger.services import load_checkpoints

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_seed_demo_is_idempotent_and_prints_passwords_once() -> None:
    first = run("seed_demo")
    assert re.search(r"owner\s+owner@demo\.test\s+password: \S{8,}", first)
    assert re.search(r"auditor\s+auditor@demo\.test\s+password: \S{8,}", first)
    assert re.search(r"operator\s+operator@demo\.test\s+password: \S{8,}", first)
    assert "/admin/" in first
    assert "/c/demo-shop/" in first
    counts = (
        Tenant.objects.count(),
        AgentProfile.objects.count(),
        get_user_model().objects.count(),
        Membership.objects.count(),
    )
    second = run("seed_demo")
    assert "password:" not in second and "exists" in second
    assert re.search(r"operator\s+operator@demo\.test\s+\(exists", second)
    assert (
        counts
        == (
            Tenant.objects.count(),
            AgentProfile.objects.count(),
            get_user_model().objects.count(),
            Membership.objects.count(),
        )
        == (1, 1, 3, 2)  # the operator belongs to the platform, not to the tenant
    )
    agent = AgentProfile.objects.get(slug="demo-shop")
    owner = get_user_model().objects.get(username="owner@demo.test")
    assert list(agent.owners.all()) == [owner]
    assert Membership.objects.get(user=owner).role == "owner"
    operator = get_user_model().objects.get(username="operator@demo.test")
    assert operator.is_active and operator.is_staff and operator.is_superuser
    assert not Membership.objects.filter(user=operator).exists()
    assert not get_user_model().objects.filter(is_staff=True).exclude(pk=operator.pk).exists()


def test_seed_demo_leaves_an_existing_account_named_as_operator_as_it_is() -> None:
    """Naming an existing account never raises its rights: that is what the admin is for."""
    run("seed_demo")
    out = run(
        "seed_demo",
        "--tenant",
        "acme",
        "--agent",
        "acme-desk",
        "--owner-email",
        "boss@acme.test",
        "--operator-email",
        "boss@acme.test",
    )
    assert "not staff" in out
    boss = get_user_model().objects.get(username="boss@acme.test")
    assert not boss.is_staff and not boss.is_superuser


def test_seed_demo_seeds_further_tenants_and_refuses_to_steal_an_agent() -> None:
    run("seed_demo")
    out = run("seed_demo", "--tenant", "acme", "--agent", "acme-desk", "--owner-email", "boss@acme.test")
    assert "boss@acme.test" in out and "auditor@acme.test" in out and "/c/acme-desk/" in out
    assert AgentProfile.objects.get(slug="acme-desk").tenant.slug == "acme"
    with pytest.raises(CommandError, match="already belongs"):
        run("seed_demo", "--tenant", "acme", "--agent", "demo-shop")


def test_peer_key_create_list_revoke(api: Any) -> None:
    run("seed_demo")
    out = run("peer_key", "create", "demo-shop", "partner bot")
    key = re.search(r"key: (fpk_\S+)", out).group(1)
    key_id = re.search(r"id:\s+(\S+)", out).group(1)
    credential = PeerCredential.objects.get(pk=key_id)
    assert key.split("_")[2] not in credential.key_hash and len(credential.key_hash) == 64
    listing = run("peer_key", "list", "demo-shop")
    assert key_id in listing and "active" in listing and key not in listing

    response = api.post("/api/agents/demo-shop/sessions", {}, format="json", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert response.status_code == 201 and response.json()["audience"] == "peer"

    run("peer_key", "revoke", "demo-shop", key_id)
    assert "revoked" in run("peer_key", "list", "demo-shop")
    response = api.post("/api/agents/demo-shop/sessions", {}, format="json", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert response.status_code == 401 and response.json()["error"] == "invalid_peer_key"
    assert DialogueSession.objects.count() == 1
    with pytest.raises(CommandError, match="no key"):
        run("peer_key", "revoke", "demo-shop", "not-a-uuid")
    with pytest.raises(CommandError, match="no agent"):
        run("peer_key", "list", "nope")


def test_ledger_verify_signs_a_checkpoint_and_fails_loudly_on_tampering(tmp_path: Any) -> None:
    run("seed_demo")
    tenant = Tenant.objects.get(slug="demo")
    report = json.loads(run("ledger_verify", "--tenant", "demo"))
    assert report["ok"] is True and report["checked"] >= 5 and report["checkpoint"]["size"] == report["checked"]
    assert [c.size for c in load_checkpoints(tenant.pk)] == [report["checked"]]
    held = tmp_path / "held.jsonl"
    held.write_text(json.dumps(report["checkpoint"]) + "\n")

    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE ledger_event DISABLE TRIGGER ledger_event_append_only")
        cursor.execute("DELETE FROM ledger_event WHERE chain_id = %s AND seq = %s", [tenant.pk, report["checked"]])
    with pytest.raises(SystemExit) as exit_info:
        out = io.StringIO()
        call_command("ledger_verify", "--tenant", "demo", "--checkpoint", str(held), stdout=out)
    assert exit_info.value.code == 1
    failed = json.loads(out.getvalue())
    assert (failed["ok"], failed["first_bad_seq"], failed["reason"], failed["checkpoint"]) == (
        False,
        report["checked"],
        "truncated",
        None,
    )
    assert len(load_checkpoints(tenant.pk)) == 1  # nothing new was signed
    with pytest.raises(CommandError, match="no tenant"):
        run("ledger_verify", "--tenant", "nope")


def test_no_model_change_lacks_a_migration() -> None:
    out = io.StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()
