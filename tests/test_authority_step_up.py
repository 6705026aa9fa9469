"""What an L3 decision needs beside the token and the e-mailed code (issue 12, "Email OTP for
L3"): a fresh sign-in and a rotated session id after the step-up, an authenticator code where
the tenant requires one, two different owners where the tenant requires them, and a per-owner
limit on authorisation attempts — every refusal a ledger event.  CSRF checks are on throughout."""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import pytest
from django.core import mail
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice
from rest_framework.test import APIClient
from test_approvals_decide import post, strict_client

from approvals.authority import token_issue
from approvals.authority_models import ChallengeStatus, DecisionChallenge, DecisionSignature
from approvals.models import ChangeProposal
from approvals.services import proposal_create, proposal_decide
from approvals.step_up import SIGNED_IN_AT
from conftest import TenantWorld, build_tenant
from facade.errors import ApplicationError
from facade.tenancy.models import Role, Tenant
from facade.tenancy.schemas import Actor
from facade.tenancy.services import agent_owner_add, membership_grant, tenant_l3_policy_set, user_ensure
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify

PRICING = {"currency": "EUR", "items": [{"name": "Repair", "amount": "35.00"}]}
DRAFT = {"title": "Opening hours", "text": "The workshop opens on Saturdays from nine to noon."}
CODE = re.compile(r"Your code: (\d{6})")
PLATFORM = Actor.platform("tests")


@pytest.fixture(autouse=True)
def _fresh_counters(settings: Any) -> None:
    """Each test starts with no authorisation attempts counted, and mail kept in memory."""
    cache.clear()
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    mail.outbox = []


def change(world: TenantWorld, kind: str = "pricing", payload: Any = None) -> ChangeProposal:
    return proposal_create(
        agent=world.agent,
        kind=kind,
        payload=payload if payload is not None else PRICING,
        summary="a change",
        origin="review_report",
        actor=PLATFORM,
    )


def second_owner(world: TenantWorld) -> Any:
    user, _ = user_ensure(email=f"second@{world.tenant.slug}.test", password="pw-second")
    membership_grant(tenant=world.tenant, user=user, role=Role.OWNER, actor=PLATFORM)
    agent_owner_add(agent=world.agent, user=user, actor=PLATFORM)
    return user


def refused(tenant: Tenant) -> list[tuple[str, str]]:
    rows = LedgerEvent.objects.filter(chain_id=tenant.pk).of_type("authority.attempt_refused").order_by("seq")
    return [(row.payload["step"], row.payload["reason"]) for row in rows]


def set_session(client: APIClient, **values: Any) -> None:
    session = client.session
    for key, value in values.items():
        if value is None:
            session.pop(key, None)
        else:
            session[key] = value
    session.save()


def l3_token(client: APIClient, world: TenantWorld, proposal: ChangeProposal, totp: Any = None) -> Any:
    """authorize → the e-mailed code → verify; the verify response."""
    started = post(client, world, proposal.pk, "/authorize", {"decision": "approve"})
    assert started.status_code == 200, started.content
    found = CODE.search(mail.outbox[-1].body)
    assert found is not None
    body = {"challenge_id": started.json()["challenge_id"], "code": found.group(1)}
    if totp is not None:
        body["totp"] = totp() if callable(totp) else totp
    return post(client, world, proposal.pk, "/authorize/verify", body)


def decide(
    client: APIClient, world: TenantWorld, proposal: ChangeProposal, token: str, decision: str = "approve"
) -> Any:
    return post(client, world, proposal.pk, "/decide", {"token": token, "decision": decision, "expected_version": 1})


# --- a fresh session, rotated after the step-up ----------------------------------------------


@pytest.mark.django_db
def test_l3_needs_a_recent_sign_in_at_each_step_and_l1_does_not(world_a: TenantWorld, settings: Any) -> None:
    settings.FACADE_STEP_UP_FRESH_SECONDS = 900
    owner = strict_client(world_a.owner)
    l3, l1 = change(world_a), change(world_a, "knowledge_draft", DRAFT)
    set_session(owner, **{SIGNED_IN_AT: int(time.time()) - 901})

    stale = post(owner, world_a, l3.pk, "/authorize", {"decision": "approve"})
    assert (stale.status_code, stale.json()["error"]) == (403, "reauthentication_required")
    assert "15 minutes" in stale.json()["detail"]
    assert not mail.outbox and not DecisionChallenge.objects.exists()
    # Click-level decisions ride on the session as it is.
    assert post(owner, world_a, l1.pk, "/authorize", {"decision": "approve"}).status_code == 200
    # A session that never recorded its sign-in (one from before this check) is not fresh either.
    set_session(owner, **{SIGNED_IN_AT: None})
    for tail, body in (
        ("/authorize/verify", {"challenge_id": "otp_x", "code": "123456"}),
        ("/decide", {"token": "t", "decision": "approve", "expected_version": 1}),
    ):
        answer = post(owner, world_a, l3.pk, tail, body)
        assert (answer.status_code, answer.json()["error"]) == (403, "reauthentication_required")
    assert refused(world_a.tenant) == [
        ("authorize", "reauthentication_required"),
        ("verify", "reauthentication_required"),
        ("decide", "reauthentication_required"),
    ]

    # Signing in again makes it fresh: the whole L3 flow goes through.
    owner = strict_client(world_a.owner)
    verified = l3_token(owner, world_a, l3)
    assert verified.status_code == 200, verified.content
    assert decide(owner, world_a, l3, verified.json()["token"]).json()["status"] == "applied"
    assert ledger_verify(chain_id=world_a.tenant.pk).ok


@pytest.mark.django_db
def test_the_session_id_rotates_after_the_code_and_the_owner_stays_signed_in(world_a: TenantWorld) -> None:
    owner = strict_client(world_a.owner)
    proposal = change(world_a)
    before = owner.cookies["sessionid"].value
    started = post(owner, world_a, proposal.pk, "/authorize", {"decision": "approve"})
    assert owner.cookies["sessionid"].value == before  # asking for a code does not rotate it
    found = CODE.search(mail.outbox[-1].body)
    assert found is not None
    verified = post(
        owner,
        world_a,
        proposal.pk,
        "/authorize/verify",
        {"challenge_id": started.json()["challenge_id"], "code": found.group(1)},
    )
    assert verified.status_code == 200, verified.content
    after = owner.cookies["sessionid"].value
    assert after and after != before
    # The old id no longer signs anyone in; the new one does, and decides.
    old = APIClient()
    old.cookies["sessionid"] = before
    assert old.get(f"/api/agents/{world_a.agent.slug}/changes").status_code in (401, 403)
    assert owner.get(f"/api/agents/{world_a.agent.slug}/changes").status_code == 200
    assert decide(owner, world_a, proposal, verified.json()["token"]).json()["status"] == "applied"


# --- an authenticator code where the tenant requires one ------------------------------------


def enrol(world_user: Any, client: APIClient) -> TOTPDevice:
    """A confirmed authenticator, and a session that gave its code (as signing in with it does)."""
    device = TOTPDevice.objects.create(user=world_user, name="app", confirmed=True)
    set_session(client, **{DEVICE_ID_SESSION_KEY: device.persistent_id})
    return device


def totp_now(device: TOTPDevice, offset: int = 0) -> str:
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    totp.time = time.time() + offset * device.step
    return f"{totp.token():0{device.digits}d}"


def not_a_current_totp(device: TOTPDevice) -> str:
    near = {totp_now(device, offset) for offset in (-2, -1, 0, 1, 2)}
    return next(f"{n:06d}" for n in range(1_000_000) if f"{n:06d}" not in near)


@pytest.mark.django_db
def test_a_tenant_requiring_totp_refuses_an_owner_without_an_authenticator(world_a: TenantWorld) -> None:
    tenant_l3_policy_set(tenant=world_a.tenant, requires_totp=True, actor=PLATFORM)
    owner = strict_client(world_a.owner)
    proposal = change(world_a)
    answer = post(owner, world_a, proposal.pk, "/authorize", {"decision": "approve"})
    assert (answer.status_code, answer.json()["error"]) == (403, "totp_enrolment_required")
    assert not mail.outbox  # no code is sent for a decision that cannot be made
    verify = post(owner, world_a, proposal.pk, "/authorize/verify", {"challenge_id": "otp_x", "code": "1"})
    assert (verify.status_code, verify.json()["error"]) == (403, "totp_enrolment_required")
    # L1 is not affected by the L3 setting.
    l1 = change(world_a, "knowledge_draft", DRAFT)
    assert post(owner, world_a, l1.pk, "/authorize", {"decision": "approve"}).status_code == 200
    assert refused(world_a.tenant) == [("authorize", "totp_not_enrolled"), ("verify", "totp_not_enrolled")]


@pytest.mark.django_db
def test_totp_step_up_missing_wrong_then_right(world_a: TenantWorld, settings: Any) -> None:
    settings.OTP_TOTP_THROTTLE_FACTOR = 0  # django-otp's wait after a wrong code is its own business
    tenant_l3_policy_set(tenant=world_a.tenant, requires_totp=True, actor=PLATFORM)
    owner = strict_client(world_a.owner)
    device = enrol(world_a.owner, owner)
    proposal = change(world_a)
    started = post(owner, world_a, proposal.pk, "/authorize", {"decision": "approve"})
    assert started.status_code == 200, started.content
    found = CODE.search(mail.outbox[-1].body)
    assert found is not None
    body = {"challenge_id": started.json()["challenge_id"], "code": found.group(1)}

    missing = post(owner, world_a, proposal.pk, "/authorize/verify", body)
    assert (missing.status_code, missing.json()["error"]) == (400, "totp_required")
    wrong = post(owner, world_a, proposal.pk, "/authorize/verify", {**body, "totp": not_a_current_totp(device)})
    assert (wrong.status_code, wrong.json()["error"]) == (400, "wrong_totp")
    challenge = DecisionChallenge.objects.get()
    # Neither spent a try of the e-mailed code, nor the challenge.
    assert (challenge.status, challenge.failures) == (ChallengeStatus.LIVE, 0)
    device.refresh_from_db()
    assert device.throttling_failure_count == 1  # django-otp counted the wrong authenticator code

    verified = post(owner, world_a, proposal.pk, "/authorize/verify", {**body, "totp": totp_now(device)})
    assert verified.status_code == 200, verified.content
    assert verified.json()["assurance"] == "email_otp+totp"
    decided = decide(owner, world_a, proposal, verified.json()["token"])
    assert decided.status_code == 200, decided.content
    proposal.refresh_from_db()
    assert (proposal.status, proposal.assurance) == ("applied", "email_otp+totp")
    assert LedgerEvent.objects.of_type("proposal.decided").get().payload["assurance"] == "email_otp+totp"
    assert refused(world_a.tenant) == [("verify", "totp_missing"), ("verify", "wrong_totp")]
    events = " ".join(str(e.payload) for e in LedgerEvent.objects.all())
    assert found.group(1) not in events and verified.json()["token"] not in events
    assert ledger_verify(chain_id=world_a.tenant.pk).ok


@pytest.mark.django_db
def test_an_authenticator_code_is_used_once(world_a: TenantWorld) -> None:
    tenant_l3_policy_set(tenant=world_a.tenant, requires_totp=True, actor=PLATFORM)
    owner = strict_client(world_a.owner)
    device = enrol(world_a.owner, owner)
    first, second = change(world_a), change(world_a, payload={**PRICING, "currency": "USD"})
    code = totp_now(device)
    assert l3_token(owner, world_a, first, totp=code).status_code == 200
    again = l3_token(owner, world_a, second, totp=code)
    assert (again.status_code, again.json()["error"]) == (400, "wrong_totp")


@pytest.mark.django_db
def test_an_email_only_token_cannot_decide_l3_where_totp_is_required(world_a: TenantWorld) -> None:
    owner = strict_client(world_a.owner)
    enrol(world_a.owner, owner)
    proposal = change(world_a)
    # Issued before the tenant turned the requirement on: not enough once it is on.
    issued = token_issue(
        agent=world_a.agent,
        change_id=proposal.pk,
        version=1,
        owner=world_a.owner,
        decision="approve",
        assurance="email_otp",
    )
    tenant_l3_policy_set(tenant=world_a.tenant, requires_totp=True, actor=PLATFORM)
    answer = decide(owner, world_a, proposal, issued.token)
    assert (answer.status_code, answer.json()["error"]) == (403, "assurance_required")
    proposal.refresh_from_db()
    assert (proposal.status, proposal.version) == ("pending", 1)
    assert refused(world_a.tenant) == [("decide", "assurance_required")]


@pytest.mark.django_db
def test_a_click_token_for_l3_is_recorded_as_assurance_required(world_a: TenantWorld) -> None:
    proposal = change(world_a)
    issued = token_issue(agent=world_a.agent, change_id=proposal.pk, version=1, owner=world_a.owner, decision="approve")
    with pytest.raises(ApplicationError) as caught:
        proposal_decide(
            agent=world_a.agent,
            proposal_id=proposal.pk,
            owner=world_a.owner,
            token=issued.token,
            decision="approve",
            expected_version=1,
        )
    assert caught.value.code == "assurance_required"
    assert refused(world_a.tenant) == [("decide", "assurance_required")]


# --- two owners -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_two_owners_each_with_their_own_code_and_the_same_owner_cannot_approve_twice(world_a: TenantWorld) -> None:
    assert connection.vendor == "postgresql"
    tenant_l3_policy_set(tenant=world_a.tenant, requires_two_owners=True, actor=PLATFORM)
    other = second_owner(world_a)
    first, second = strict_client(world_a.owner), strict_client(other)
    proposal = change(world_a)

    verified = l3_token(first, world_a, proposal)
    assert verified.status_code == 200, verified.content
    signed = decide(first, world_a, proposal, verified.json()["token"])
    assert signed.status_code == 200, signed.content
    assert signed.json()["status"] == "pending" and signed.json()["awaiting"] == "second_owner"
    assert signed.json()["approvals"] == 1 and signed.json()["version"] == 1
    proposal.refresh_from_db()
    assert (proposal.status, proposal.version, proposal.decided_by) == ("pending", 1, None)
    assert not LedgerEvent.objects.of_type("proposal.decided").exists()
    [signature] = DecisionSignature.objects.all()
    assert (signature.owner, signature.version, signature.assurance) == (world_a.owner, 1, "email_otp")

    # The same owner again: refused before a code is sent, and at decide with a good token.
    again = post(first, world_a, proposal.pk, "/authorize", {"decision": "approve"})
    assert (again.status_code, again.json()["error"]) == (403, "same_approver")
    sneaked = token_issue(
        agent=world_a.agent,
        change_id=proposal.pk,
        version=1,
        owner=world_a.owner,
        decision="approve",
        assurance="email_otp",
    )
    with pytest.raises(ApplicationError) as caught:
        proposal_decide(
            agent=world_a.agent,
            proposal_id=proposal.pk,
            owner=world_a.owner,
            token=sneaked.token,
            decision="approve",
            expected_version=1,
        )
    assert (caught.value.code, caught.value.http_status) == ("same_approver", 403)
    assert DecisionSignature.objects.count() == 1

    # The second owner, with their own code, decides it.
    theirs = l3_token(second, world_a, proposal)
    assert theirs.status_code == 200, theirs.content
    decided = decide(second, world_a, proposal, theirs.json()["token"])
    assert decided.status_code == 200, decided.content
    assert decided.json()["status"] == "applied" and decided.json()["version"] == 2
    proposal.refresh_from_db()
    assert (proposal.status, proposal.decided_by) == ("applied", other)
    assert {s.owner for s in DecisionSignature.objects.all()} == {world_a.owner, other}
    recorded = LedgerEvent.objects.of_type("authority.signature_recorded").order_by("seq")
    assert [(e.payload["owner_id"], e.payload["approvals"]) for e in recorded] == [(world_a.owner.pk, 1), (other.pk, 2)]
    assert refused(world_a.tenant) == [("authorize", "same_approver"), ("decide", "same_approver")]
    assert ledger_verify(chain_id=world_a.tenant.pk).ok


@pytest.mark.django_db
def test_under_the_two_owner_rule_either_owner_can_reject(world_a: TenantWorld) -> None:
    tenant_l3_policy_set(tenant=world_a.tenant, requires_two_owners=True, actor=PLATFORM)
    other = second_owner(world_a)
    first, second = strict_client(world_a.owner), strict_client(other)
    proposal = change(world_a)
    assert decide(first, world_a, proposal, l3_token(first, world_a, proposal).json()["token"]).json()["status"] == (
        "pending"
    )
    started = post(second, world_a, proposal.pk, "/authorize", {"decision": "reject"})
    found = CODE.search(mail.outbox[-1].body)
    assert found is not None and "reject" in mail.outbox[-1].body
    verified = post(
        second,
        world_a,
        proposal.pk,
        "/authorize/verify",
        {"challenge_id": started.json()["challenge_id"], "code": found.group(1)},
    )
    rejected = decide(second, world_a, proposal, verified.json()["token"], "reject")
    assert rejected.status_code == 200, rejected.content
    assert rejected.json()["status"] == "rejected"
    proposal.refresh_from_db()
    assert (proposal.status, proposal.decided_by) == ("rejected", other)
    # It is over: the first owner can no longer do anything with it.
    late = post(first, world_a, proposal.pk, "/authorize", {"decision": "approve"})
    assert (late.status_code, late.json()["error"]) == (409, "not_pending")


@pytest.mark.django_db
def test_a_single_owner_rejects_alone_and_an_edit_voids_earlier_approvals(world_a: TenantWorld) -> None:
    tenant_l3_policy_set(tenant=world_a.tenant, requires_two_owners=True, actor=PLATFORM)
    owner = strict_client(world_a.owner)
    proposal = change(world_a)
    assert decide(owner, world_a, proposal, l3_token(owner, world_a, proposal).json()["token"]).json()["status"] == (
        "pending"
    )
    edited = owner.patch(
        f"/api/agents/{world_a.agent.slug}/changes/{proposal.pk}",
        {"payload": {**PRICING, "currency": "USD"}, "expected_version": 1},
        format="json",
    )
    assert edited.status_code == 200 and edited.json()["version"] == 2
    # The approval was of version 1: the same owner may approve version 2, which again waits.
    verified = l3_token(owner, world_a, proposal)
    answer = post(
        owner,
        world_a,
        proposal.pk,
        "/decide",
        {"token": verified.json()["token"], "decision": "approve", "expected_version": 2},
    )
    assert answer.json()["status"] == "pending" and answer.json()["approvals"] == 1


@pytest.mark.django_db(transaction=True)
def test_two_owners_approving_at_once_on_postgresql_make_exactly_one_decision() -> None:
    assert connection.vendor == "postgresql"
    world = build_tenant("pair")
    tenant_l3_policy_set(tenant=world.tenant, requires_two_owners=True, actor=PLATFORM)
    other = second_owner(world)
    proposal = change(world)
    owners = [world.owner, other]
    tokens = [
        token_issue(
            agent=world.agent, change_id=proposal.pk, version=1, owner=o, decision="approve", assurance="email_otp"
        ).token
        for o in owners
    ]
    barrier = threading.Barrier(2)
    outcomes: list[str] = []
    lock = threading.Lock()

    def approve(owner: Any, token: str) -> None:
        from django.db import connection as own

        try:
            barrier.wait()
            result = proposal_decide(
                agent=world.agent,
                proposal_id=proposal.pk,
                owner=owner,
                token=token,
                decision="approve",
                expected_version=1,
            )
            with lock:
                outcomes.append(result.status)
        finally:
            own.close()

    threads = [threading.Thread(target=approve, args=pair) for pair in zip(owners, tokens, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["applied", "pending"]
    proposal.refresh_from_db()
    assert (proposal.status, proposal.version) == ("applied", 2)
    assert DecisionSignature.objects.count() == 2
    assert LedgerEvent.objects.of_type("proposal.decided").count() == 1
    assert ledger_verify(chain_id=world.tenant.pk).ok


# --- the per-owner attempt limit --------------------------------------------------------------


@pytest.mark.django_db
def test_authorisation_attempts_are_limited_per_owner(world_a: TenantWorld, settings: Any) -> None:
    settings.FACADE_RATE_AUTHORITY = "3/900"
    owner = strict_client(world_a.owner)
    proposal = change(world_a, "knowledge_draft", DRAFT)
    answers = [post(owner, world_a, proposal.pk, "/authorize", {"decision": "approve"}) for _ in range(2)]
    # A wrong token is an attempt too.
    answers.append(decide(owner, world_a, proposal, "not-a-token"))
    assert [a.status_code for a in answers] == [200, 200, 403]
    for tail, body in (
        ("/authorize", {"decision": "approve"}),
        ("/authorize/verify", {"challenge_id": "otp_x", "code": "123456"}),
        ("/decide", {"token": "t", "decision": "approve", "expected_version": 1}),
    ):
        limited = post(owner, world_a, proposal.pk, tail, body)
        assert (limited.status_code, limited.json()["error"]) == (429, "rate_limited")
        assert 1 <= limited.json()["retry_after"] <= 900
    # Another owner is counted apart.
    other = strict_client(second_owner(world_a))
    assert post(other, world_a, proposal.pk, "/authorize", {"decision": "approve"}).status_code == 200
    assert refused(world_a.tenant) == [
        ("authorize", "rate_limited"),
        ("verify", "rate_limited"),
        ("decide", "rate_limited"),
    ]
    assert LedgerEvent.objects.of_type("authority.token_refused").count() == 1


# --- the tenant's setting ---------------------------------------------------------------------


@pytest.mark.django_db
def test_the_l3_policy_is_set_by_command_and_recorded(world_a: TenantWorld, capsys: Any) -> None:
    call_command("tenant_l3_policy", world_a.tenant.slug, "--totp", "on", "--two-owners", "on")
    assert "L3 authenticator code on, two owners on" in capsys.readouterr().out
    call_command("tenant_l3_policy", world_a.tenant.slug, "--totp", "on")  # no change: no event
    call_command("tenant_l3_policy", world_a.tenant.slug, "--two-owners", "off")
    world_a.tenant.refresh_from_db()
    assert (world_a.tenant.l3_requires_totp, world_a.tenant.l3_requires_two_owners) == (True, False)
    changes = LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).of_type("tenant.l3_policy_changed")
    assert [(e.payload["l3_requires_totp"], e.payload["l3_requires_two_owners"]) for e in changes.order_by("seq")] == [
        (True, True),
        (True, False),
    ]


@pytest.mark.django_db
def test_the_refusals_speak_chinese(world_a: TenantWorld) -> None:
    tenant_l3_policy_set(tenant=world_a.tenant, requires_two_owners=True, actor=PLATFORM)
    owner = strict_client(world_a.owner)
    proposal = change(world_a)
    set_session(owner, **{SIGNED_IN_AT: int(time.time()) - 10_000})
    stale = owner.post(
        f"/api/agents/{world_a.agent.slug}/changes/{proposal.pk}/authorize",
        {"decision": "approve"},
        format="json",
        HTTP_ACCEPT_LANGUAGE="zh-hans",
    )
    assert stale.json()["error"] == "reauthentication_required"
    assert "请退出后重新登录" in stale.json()["detail"]
    owner = strict_client(world_a.owner)
    signed = decide(owner, world_a, proposal, l3_token(owner, world_a, proposal).json()["token"])
    assert signed.json()["awaiting"] == "second_owner"
    again = owner.post(
        f"/api/agents/{world_a.agent.slug}/changes/{proposal.pk}/authorize",
        {"decision": "approve"},
        format="json",
        HTTP_ACCEPT_LANGUAGE="zh-hans",
    )
    assert (again.json()["error"], again.json()["detail"]) == (
        "same_approver",
        "您已批准此变更；它还需要另一位所有者的批准。",
    )
