"""Who counts as an approver (issue 28 §2): the two-owner rule means two of the tenant's own
owners.  A platform operator — staff, a member of no tenant, who acts for owners elsewhere — is
not an owner of a tenant's commitments and decides no L3 change; a person removed from the
tenant (or from the agent's owners, or whose owner role changed) loses their pending approvals,
unspent tokens and live codes at once, recorded; and a decision re-checks every approver's
membership at the moment it applies."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import mail
from django.core.cache import cache
from test_approvals_decide import post, strict_client
from test_authority_step_up import CODE, DRAFT, PLATFORM, change, decide, l3_token, refused, second_owner

from approvals.authority import token_issue
from approvals.authority_models import ChallengeStatus, DecisionChallenge, DecisionSignature
from approvals.services import proposal_decide
from conftest import TenantWorld
from facade.errors import ApplicationError
from facade.tenancy.models import Role
from facade.tenancy.services import (
    agent_owner_remove,
    membership_grant,
    membership_revoke,
    tenant_l3_policy_set,
    user_ensure,
)
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_counters(settings: Any) -> None:
    cache.clear()
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    mail.outbox = []


def operator() -> Any:
    user, _ = user_ensure(email="operator@platform.test", password="pw-operator", is_staff=True, is_superuser=True)
    return user


def l3_decide(world: TenantWorld, proposal: Any, user: Any, decision: str = "approve") -> Any:
    """The service call with an `email_otp` token of `user` (as verify would have issued)."""
    issued = token_issue(
        agent=world.agent,
        change_id=proposal.pk,
        version=proposal.version,
        owner=user,
        decision=decision,
        assurance="email_otp",
    )
    return proposal_decide(
        agent=world.agent,
        proposal_id=proposal.pk,
        owner=user,
        token=issued.token,
        decision=decision,
        expected_version=proposal.version,
    )


def voided(world: TenantWorld) -> list[dict[str, Any]]:
    rows = LedgerEvent.objects.filter(chain_id=world.tenant.pk).of_type("authority.approvals_voided").order_by("seq")
    return [{"change": row.entity_id, **row.payload} for row in rows]


# --- platform operators ------------------------------------------------------------------------


def test_an_operator_is_not_the_second_owner_of_a_two_owner_decision(world_a: TenantWorld) -> None:
    tenant_l3_policy_set(tenant=world_a.tenant, requires_two_owners=True, actor=PLATFORM)
    owner, staff = strict_client(world_a.owner), strict_client(operator())
    proposal = change(world_a)
    first = decide(owner, world_a, proposal, l3_token(owner, world_a, proposal).json()["token"])
    assert first.json()["status"] == "pending" and first.json()["approvals"] == 1

    # Through the API: refused before any code is sent.
    sent = len(mail.outbox)
    asked = post(staff, world_a, proposal.pk, "/authorize", {"decision": "approve"})
    assert (asked.status_code, asked.json()["error"]) == (403, "not_a_tenant_owner")
    assert len(mail.outbox) == sent
    # And at the decision itself, with a token of the right assurance.
    with pytest.raises(ApplicationError) as caught:
        l3_decide(world_a, proposal, operator())
    assert (caught.value.code, caught.value.http_status) == ("not_a_tenant_owner", 403)
    proposal.refresh_from_db()
    assert (proposal.status, proposal.version) == ("pending", 1)
    assert [s.owner for s in DecisionSignature.objects.all()] == [world_a.owner]
    assert refused(world_a.tenant) == [("authorize", "not_a_tenant_owner"), ("decide", "not_a_tenant_owner")]
    assert not LedgerEvent.objects.of_type("proposal.decided").exists()


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_an_operator_decides_no_l3_change_alone_but_still_acts_for_owners_below_it(
    world_a: TenantWorld, decision: str
) -> None:
    staff = operator()
    client = strict_client(staff)
    proposal = change(world_a)
    asked = post(client, world_a, proposal.pk, "/authorize", {"decision": decision})
    assert (asked.status_code, asked.json()["error"]) == (403, "not_a_tenant_owner")
    with pytest.raises(ApplicationError) as caught:
        l3_decide(world_a, proposal, staff, decision)
    assert caught.value.code == "not_a_tenant_owner"
    proposal.refresh_from_db()
    assert proposal.status == "pending"
    # An L1 change is not a commitment: the operator still decides it for the owners.
    l1 = change(world_a, "knowledge_draft", DRAFT)
    granted = post(client, world_a, l1.pk, "/authorize", {"decision": decision})
    assert granted.status_code == 200, granted.content
    body = {"token": granted.json()["token"], "decision": decision, "expected_version": 1}
    done = post(client, world_a, l1.pk, "/decide", body)
    assert done.status_code == 200, done.content


# --- removal voids, and the decision re-checks -------------------------------------------------


def test_a_revoked_owners_approval_tokens_and_codes_are_void_at_once(world_a: TenantWorld) -> None:
    tenant_l3_policy_set(tenant=world_a.tenant, requires_two_owners=True, actor=PLATFORM)
    other = second_owner(world_a)
    leaving, staying = strict_client(world_a.owner), strict_client(other)
    proposal, later, l1 = change(world_a), change(world_a), change(world_a, "knowledge_draft", DRAFT)
    assert (
        decide(leaving, world_a, proposal, l3_token(leaving, world_a, proposal).json()["token"]).json()["approvals"]
        == 1
    )
    # An unspent click token for the L1 change and a live code for another L3 change.
    click = post(leaving, world_a, l1.pk, "/authorize", {"decision": "approve"}).json()["token"]
    started = post(leaving, world_a, later.pk, "/authorize", {"decision": "approve"})
    assert started.status_code == 200
    code = CODE.search(str(mail.outbox[-1].body))
    assert code is not None

    membership_revoke(tenant=world_a.tenant, user=world_a.owner, actor=PLATFORM)

    assert not DecisionSignature.objects.exists()
    assert DecisionChallenge.objects.get(challenge_id=started.json()["challenge_id"]).status == ChallengeStatus.DEAD
    counts = [(v["change"], v["reason"], v["authorizations"], v["challenges"], v["approvals"]) for v in voided(world_a)]
    assert sorted(counts) == (
        sorted(
            [
                (proposal.pk, "membership_revoked", 0, 0, 1),
                (later.pk, "membership_revoked", 0, 1, 0),
                (l1.pk, "membership_revoked", 1, 0, 0),
            ]
        )
    )
    assert all(v["owner_id"] == world_a.owner.pk for v in voided(world_a))
    # The token no longer decides anything, even handed to the service directly.
    with pytest.raises(ApplicationError) as caught:
        proposal_decide(
            agent=world_a.agent,
            proposal_id=l1.pk,
            owner=world_a.owner,
            token=click,
            decision="approve",
            expected_version=1,
        )
    assert caught.value.code == "invalid_token"
    # The remaining owner's approval is the first one again: the change waits for a second owner.
    answer = decide(staying, world_a, proposal, l3_token(staying, world_a, proposal).json()["token"])
    assert answer.status_code == 200, answer.content
    assert (answer.json()["status"], answer.json()["approvals"]) == ("pending", 1)
    assert ledger_verify(chain_id=world_a.tenant.pk).ok


@pytest.mark.parametrize("how", ["agent_owner_removed", "owner_role_changed"])
def test_leaving_the_agents_owners_or_the_owner_role_voids_too(world_a: TenantWorld, how: str) -> None:
    tenant_l3_policy_set(tenant=world_a.tenant, requires_two_owners=True, actor=PLATFORM)
    other = second_owner(world_a)
    proposal = change(world_a)
    assert l3_decide(world_a, proposal, world_a.owner).status == "pending"
    if how == "agent_owner_removed":
        agent_owner_remove(agent=world_a.agent, user=world_a.owner, actor=PLATFORM)
    else:
        membership_grant(tenant=world_a.tenant, user=world_a.owner, role=Role.AUDITOR, actor=PLATFORM)
    assert [(v["change"], v["reason"], v["approvals"]) for v in voided(world_a)] == [(proposal.pk, how, 1)]
    proposal.refresh_from_db()
    assert l3_decide(world_a, proposal, other).status == "pending"


def test_the_decision_re_checks_every_approvers_membership_when_it_applies(world_a: TenantWorld) -> None:
    """Even where a removal did not go through the services (a row changed by hand), nothing a
    former owner did counts: neither their recorded approval nor their own decision."""
    tenant_l3_policy_set(tenant=world_a.tenant, requires_two_owners=True, actor=PLATFORM)
    other = second_owner(world_a)
    proposal = change(world_a)
    assert l3_decide(world_a, proposal, world_a.owner).status == "pending"
    world_a.agent.owners.remove(world_a.owner)  # no service, no signal: only the re-check is left
    proposal.refresh_from_db()
    assert l3_decide(world_a, proposal, other).status == "pending"
    # And the former owner's own decision, with a token issued while they were an owner.
    third, _ = user_ensure(email="third@alpha.test", password="pw-third")
    membership_grant(tenant=world_a.tenant, user=third, role=Role.OWNER, actor=PLATFORM)
    issued = token_issue(
        agent=world_a.agent, change_id=proposal.pk, version=1, owner=other, decision="reject", assurance="email_otp"
    )
    membership_grant(tenant=world_a.tenant, user=other, role=Role.MEMBER, actor=PLATFORM)
    with pytest.raises(ApplicationError) as caught:
        proposal_decide(
            agent=world_a.agent,
            proposal_id=proposal.pk,
            owner=other,
            token=issued.token,
            decision="reject",
            expected_version=1,
        )
    assert caught.value.code in ("invalid_token", "not_a_tenant_owner")
    proposal.refresh_from_db()
    assert proposal.status == "pending"


@pytest.mark.django_db(transaction=True)
def test_an_l3_decision_waits_for_a_removal_in_progress_and_then_sees_it() -> None:
    """A removal that holds the owner's membership row (as membership_revoke does, before it
    voids their approvals) makes a concurrent L3 decision wait: with a short lock_timeout the
    decision fails and consumes nothing; once the removal commits, the decision sees it."""
    import threading

    from django.db import OperationalError, connection, transaction

    from conftest import build_tenant
    from facade.tenancy.models import Membership

    world = build_tenant("lockstep")
    second_owner(world)  # the tenant's last owner could not be removed (issue 32)
    proposal = change(world)
    issued = token_issue(
        agent=world.agent,
        change_id=proposal.pk,
        version=1,
        owner=world.owner,
        decision="approve",
        assurance="email_otp",
    )
    held, release = threading.Event(), threading.Event()

    def removal() -> None:
        from django.db import connection as own

        try:
            with transaction.atomic():
                Membership.objects.select_for_update().get(user=world.owner, tenant=world.tenant)
                held.set()
                release.wait(timeout=60)
                membership_revoke(tenant=world.tenant, user=world.owner, actor=PLATFORM)
        finally:
            own.close()

    remover = threading.Thread(target=removal)
    remover.start()
    try:
        assert held.wait(timeout=60)
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '300ms'")
        with pytest.raises(OperationalError):
            proposal_decide(
                agent=world.agent,
                proposal_id=proposal.pk,
                owner=world.owner,
                token=issued.token,
                decision="approve",
                expected_version=1,
            )
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")
        release.set()
        remover.join()
    proposal.refresh_from_db()
    assert (proposal.status, proposal.version) == ("pending", 1)
    # The removal voided the token the decision could not consume; the decision now fails.
    with pytest.raises(ApplicationError) as caught:
        proposal_decide(
            agent=world.agent,
            proposal_id=proposal.pk,
            owner=world.owner,
            token=issued.token,
            decision="approve",
            expected_version=1,
        )
    assert caught.value.code == "invalid_token"
    assert [(v["change"], v["authorizations"]) for v in voided(world)] == [(proposal.pk, 1)]
    assert ledger_verify(chain_id=world.tenant.pk).ok
