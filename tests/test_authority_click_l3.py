"""An L3 decision never stands on a click token (issue 28 §6, DESIGN §5): whatever the tenant's
L3 policy — authenticator code required or not, two owners required or not — and whether the
owner approves or rejects, a token without the e-mailed code (`click`), or without the
authenticator code where the tenant requires one (`email_otp`), is refused at decide with
`403 assurance_required`, the token spent, the refusal recorded, and nothing about the change
moves: no decision, no version, no approval counted towards the two-owner rule, no contract."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import mail
from django.core.cache import cache
from test_approvals_decide import strict_client
from test_authority_step_up import PLATFORM, change, decide, enrol, l3_token, refused, second_owner, totp_now

from approvals.authority import token_issue
from approvals.authority_models import DecisionSignature, DecisionToken
from approvals.contract_models import AgentContract
from conftest import TenantWorld
from facade.tenancy.services import tenant_l3_policy_set
from ledger.models import LedgerEvent

pytestmark = pytest.mark.django_db

POLICIES = [
    pytest.param(False, False, id="email-only"),
    pytest.param(True, False, id="authenticator"),
    pytest.param(False, True, id="two-owners"),
    pytest.param(True, True, id="authenticator+two-owners"),
]


@pytest.fixture(autouse=True)
def _fresh_counters(settings: Any) -> None:
    cache.clear()
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    mail.outbox = []


def too_weak(totp: bool) -> list[str]:
    """The assurances that must not decide L3 under this policy."""
    return ["click", "email_otp"] if totp else ["click"]


def refused_at_decide(world: TenantWorld, client: Any, user: Any, proposal: Any, decision: str, assurance: str) -> None:
    issued = token_issue(
        agent=world.agent,
        change_id=proposal.pk,
        version=proposal.version,
        owner=user,
        decision=decision,
        assurance=assurance,
    )
    answer = decide(client, world, proposal, issued.token, decision)
    assert (answer.status_code, answer.json()["error"]) == (403, "assurance_required"), answer.content
    # The token is spent: the same token cannot be tried again with anything else.
    assert DecisionToken.objects.get(authorization_id=issued.authorization_id).used_at is not None


@pytest.mark.parametrize("decision", ["approve", "reject"])
@pytest.mark.parametrize(("totp", "two_owners"), POLICIES)
def test_a_weak_token_decides_no_l3_change_under_any_policy(
    world_a: TenantWorld, totp: bool, two_owners: bool, decision: str
) -> None:
    tenant_l3_policy_set(tenant=world_a.tenant, requires_totp=totp, requires_two_owners=two_owners, actor=PLATFORM)
    client = strict_client(world_a.owner)
    if totp:
        enrol(world_a.owner, client)  # so that nothing but the token's assurance is missing
    live = AgentContract.objects.filter(agent=world_a.agent).count()
    for assurance in too_weak(totp):
        proposal = change(world_a)
        refused_at_decide(world_a, client, world_a.owner, proposal, decision, assurance)
        proposal.refresh_from_db()
        assert (proposal.status, proposal.version, proposal.decided_by, proposal.authorization_id) == (
            "pending",
            1,
            None,
            "",
        )
    assert not DecisionSignature.objects.exists()
    assert not LedgerEvent.objects.of_type("proposal.decided").exists()
    assert not LedgerEvent.objects.of_type("authority.signature_recorded").exists()
    assert AgentContract.objects.filter(agent=world_a.agent).count() == live
    assert refused(world_a.tenant) == [("decide", "assurance_required")] * len(too_weak(totp))


@pytest.mark.parametrize("decision", ["approve", "reject"])
@pytest.mark.parametrize("totp", [False, True], ids=["email-only", "authenticator"])
def test_a_weak_token_is_not_the_second_owners_decision(world_a: TenantWorld, totp: bool, decision: str) -> None:
    """Under the two-owner rule, after a first owner's proper approval: the second owner's weak
    token neither completes the approval nor rejects the change."""
    tenant_l3_policy_set(tenant=world_a.tenant, requires_totp=totp, requires_two_owners=True, actor=PLATFORM)
    other = second_owner(world_a)
    first, second = strict_client(world_a.owner), strict_client(other)
    device = enrol(world_a.owner, first) if totp else None
    if totp:
        enrol(other, second)
    proposal = change(world_a)
    verified = l3_token(first, world_a, proposal, totp=(lambda: totp_now(device)) if device else None)
    assert verified.status_code == 200, verified.content
    assert decide(first, world_a, proposal, verified.json()["token"]).json()["approvals"] == 1
    for assurance in too_weak(totp):
        refused_at_decide(world_a, second, other, proposal, decision, assurance)
        proposal.refresh_from_db()
        assert (proposal.status, proposal.version, proposal.decided_by) == ("pending", 1, None)
    assert [s.owner for s in DecisionSignature.objects.all()] == [world_a.owner]
    assert not LedgerEvent.objects.of_type("proposal.decided").exists()
    assert refused(world_a.tenant) == [("decide", "assurance_required")] * len(too_weak(totp))
