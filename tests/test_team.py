"""The team of a business (issue 32 §2): owners invite co-owners and auditors by e-mail — a
one-time link, stored only as a hash, that expires and works only for the invited address —,
list the members, change roles and remove people.  The last owner stays; removing an owner voids
their authority at once through the one path issue 28 built (`authority.approvals_voided`).
Every invitation, acceptance, refusal, role change and removal is a ledger event.  The e-mail
goes through a real SMTP server (aiosmtpd, tests/smtp_support.py)."""

from __future__ import annotations

import hashlib
import logging
import re
import socket
from datetime import timedelta
from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.utils import timezone
from test_approvals_decide import strict_client

from approvals.authority import token_issue
from approvals.authority_models import DecisionToken
from conftest import TenantWorld
from facade.errors import ApplicationError
from facade.tenancy.models import Invitation, Membership, Role
from facade.tenancy.policy import AgentPolicy
from facade.tenancy.schemas import Actor
from facade.tenancy.services import (
    agent_owner_add,
    invitation_create,
    membership_grant,
    membership_revoke,
    user_ensure,
)
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify

pytestmark = pytest.mark.django_db

LINK = re.compile(r"https://shop\.example(/accounts/invitation/\?token=([A-Za-z0-9_-]+))")
PASSWORD = "a-long-Passphrase-42"
PLATFORM = Actor.platform("tests")


@pytest.fixture(autouse=True)
def _fresh_counters() -> None:
    cache.clear()


def invite(client: Any, world: TenantWorld, email: str, role: str = "owner") -> Any:
    return client.post(f"/api/tenants/{world.tenant.slug}/invitations", {"email": email, "role": role}, format="json")


def link_of(smtp: Any, n: int = -1) -> tuple[str, str]:
    """The path (with its query) and the secret of the n-th e-mail's link."""
    body = smtp.received[n][1].get_payload(decode=True).decode()
    found = LINK.search(body)
    assert found is not None, body
    return found.group(1), found.group(2)


def events(world: TenantWorld, *types: str) -> list[tuple[str, dict[str, Any]]]:
    rows = LedgerEvent.objects.filter(chain_id=world.tenant.pk).order_by("seq")
    return [(row.event_type, row.payload) for row in rows if row.event_type in types]


def open_link(client: Client, path: str) -> Any:
    """Open the e-mail's link: it answers by dropping the secret from the address bar."""
    opened = client.get(path)
    assert (opened.status_code, opened["Location"]) == (302, "/accounts/invitation/"), opened.content
    return client.get("/accounts/invitation/")


def second_owner(world: TenantWorld) -> Any:
    user, _ = user_ensure(email=f"second@{world.tenant.slug}.test", password="pw-second")
    membership_grant(tenant=world.tenant, user=user, role=Role.OWNER, actor=PLATFORM)
    agent_owner_add(agent=world.agent, user=user, actor=PLATFORM)
    return user


# --- inviting and accepting --------------------------------------------------------------------


def test_an_invited_address_accepts_with_a_new_account_and_the_link_works_once(
    world_a: TenantWorld, smtp: Any, caplog: pytest.LogCaptureFixture
) -> None:
    for name in [""] + list(logging.root.manager.loggerDict):
        caplog.set_level(logging.DEBUG, logger=name)
    connection.force_debug_cursor = True
    owner = strict_client(world_a.owner)
    answer = invite(owner, world_a, "  New.Partner@Alpha.TEST ", "owner")
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert (body["email"], body["role"], body["status"]) == ("new.partner@alpha.test", "owner", "pending")
    assert not {"token", "link", "url"} & set(body)  # the link goes to the address, never to the inviter
    [(recipients, message)] = smtp.received
    assert recipients == ["new.partner@alpha.test"]
    assert "Alpha" in str(message["Subject"])
    path, secret = link_of(smtp)
    invitation = Invitation.objects.get()
    assert invitation.token_hash == hashlib.sha256(secret.encode()).hexdigest()

    visitor = Client()
    page = open_link(visitor, path)
    assert page.status_code == 200
    assert "Create the account and accept" in page.content.decode()
    # A password Django's validators refuse creates nothing.
    weak = visitor.post("/accounts/invitation/", {"new_password1": "123", "new_password2": "123"})
    assert weak.status_code == 200 and "too short" in weak.content.decode()
    assert not Membership.objects.filter(user__username="new.partner@alpha.test").exists()
    accepted = visitor.post("/accounts/invitation/", {"new_password1": PASSWORD, "new_password2": PASSWORD})
    assert (accepted.status_code, accepted["Location"]) == (302, "/team/alpha/")
    membership = Membership.objects.select_related("user").get(user__username="new.partner@alpha.test")
    assert membership.role == Role.OWNER and membership.user.check_password(PASSWORD)
    assert AgentPolicy.is_owner(membership.user, world_a.agent)  # a co-owner owns the business's agents
    assert visitor.get("/team/alpha/").status_code == 200  # signed in by accepting

    # The link works once: opened again (another browser), it is refused, and that is recorded.
    again = Client()
    assert open_link(again, path).status_code == 410
    refused = again.post("/accounts/invitation/", {"new_password1": PASSWORD, "new_password2": PASSWORD})
    assert refused.status_code == 410 and "already been accepted" in refused.content.decode()

    recorded = events(world_a, "invitation.created", "invitation.accepted", "invitation.refused", "membership.granted")
    recorded = recorded[[kind for kind, _ in recorded].index("invitation.created") :]
    assert [kind for kind, _ in recorded] == [
        "invitation.created",
        "membership.granted",
        "invitation.accepted",
        "invitation.refused",
    ]
    assert recorded[0][1]["sent_to"] == "n***@alpha.test" and recorded[0][1]["role"] == "owner"
    assert recorded[2][1] == {"user_id": membership.user_id, "role": "owner", "account_created": True}
    assert recorded[3][1] == {"reason": "used", "user_id": None}
    assert events(world_a, "agent.owner_added")[-1][1] == {"user_id": membership.user_id}
    assert ledger_verify(chain_id=world_a.tenant.pk).ok

    # The secret is in the e-mail and nowhere else: not in a table, the ledger, a log or the session.
    connection.force_debug_cursor = False
    seen = [repr(list(Invitation.objects.values()))]
    seen += [event.canonical for event in LedgerEvent.objects.all()]
    seen += [record.getMessage() for record in caplog.records if not record.name.startswith("mail.log")]
    seen += [repr(dict(visitor.session)), repr(dict(again.session))]
    assert [text for text in seen if secret in text] == []


def test_an_existing_account_signs_in_with_the_invited_address_to_accept(
    world_a: TenantWorld, world_b: TenantWorld, smtp: Any
) -> None:
    owner = strict_client(world_a.owner)
    assert invite(owner, world_a, "owner@bravo.test", "auditor").status_code == 201
    path, _secret = link_of(smtp)

    # Someone else, signed in, holding the link: refused, recorded, nothing granted.
    intruder = Client()
    intruder.force_login(world_b.auditor)
    assert open_link(intruder, path).status_code == 403
    tried = intruder.post("/accounts/invitation/")
    assert tried.status_code == 403 and "signed in as auditor@bravo.test" in tried.content.decode()
    assert not Membership.objects.filter(tenant=world_a.tenant, user=world_b.auditor).exists()

    # Signed out, the holder cannot make a new account for an address that has one.
    visitor = Client()
    page = open_link(visitor, path)
    assert "Sign in to accept" in page.content.decode()
    taken = visitor.post("/accounts/invitation/", {"new_password1": PASSWORD, "new_password2": PASSWORD})
    assert taken.status_code == 200 and "sign in with it" in taken.content.decode()
    world_b.owner.refresh_from_db()
    assert world_b.owner.check_password("pw-bravo") and not world_b.owner.check_password(PASSWORD)

    # Signing in with the invited address keeps the invitation in the session, and accepts it.
    signed_in = visitor.post(
        "/accounts/login/", {"username": "owner@bravo.test", "password": "pw-bravo", "next": "/accounts/invitation/"}
    )
    assert (signed_in.status_code, signed_in["Location"]) == (302, "/accounts/invitation/")
    assert "Accept the invitation" in visitor.get("/accounts/invitation/").content.decode()
    done = visitor.post("/accounts/invitation/")
    assert (done.status_code, done["Location"]) == (302, "/")
    membership = Membership.objects.get(tenant=world_a.tenant, user=world_b.owner)
    assert membership.role == Role.AUDITOR
    assert not AgentPolicy.is_owner(world_b.owner, world_a.agent)  # an auditor owns nothing
    assert [p["reason"] for _, p in events(world_a, "invitation.refused")] == ["wrong_account"]
    assert events(world_a, "invitation.refused")[0][1]["user_id"] == world_b.auditor.pk
    assert events(world_a, "invitation.accepted")[0][1]["account_created"] is False


def test_an_expired_a_replaced_a_cancelled_and_an_unknown_link_are_refused(world_a: TenantWorld, smtp: Any) -> None:
    owner = strict_client(world_a.owner)
    old = invitation_create(
        tenant=world_a.tenant,
        email="late@alpha.test",
        role="auditor",
        invited_by=world_a.owner,
        actor=Actor.human(world_a.owner.pk),
        now=timezone.now() - timedelta(days=8),
    )
    expired_path, _ = link_of(smtp)
    visitor = Client()
    assert open_link(visitor, expired_path).status_code == 410
    answer = visitor.post("/accounts/invitation/", {"new_password1": PASSWORD, "new_password2": PASSWORD})
    assert answer.status_code == 410 and "expired" in answer.content.decode()

    # A new invitation of the same address replaces the old one (its link stops working).
    assert invite(owner, world_a, "late@alpha.test", "auditor").status_code == 201
    old.refresh_from_db()
    assert old.status == "cancelled"
    fresh_path, _ = link_of(smtp)
    assert invite(owner, world_a, "late@alpha.test", "auditor").status_code == 201
    replaced = Client()
    assert open_link(replaced, fresh_path).status_code == 410
    assert (
        replaced.post("/accounts/invitation/", {"new_password1": PASSWORD, "new_password2": PASSWORD}).status_code
        == 410
    )

    # The owner cancels the newest one.
    newest_path, _ = link_of(smtp)
    newest = Invitation.objects.filter(status="pending").get()
    assert [i["id"] for i in owner.get("/api/tenants/alpha/invitations").json()] == [newest.pk]
    assert owner.delete(f"/api/tenants/alpha/invitations/{newest.pk}").status_code == 204
    assert owner.delete(f"/api/tenants/alpha/invitations/{newest.pk}").json()["error"] == "not_pending"
    cancelled = Client()
    assert open_link(cancelled, newest_path).status_code == 410
    assert (
        cancelled.post("/accounts/invitation/", {"new_password1": PASSWORD, "new_password2": PASSWORD}).status_code
        == 410
    )

    # A link nothing matches (a made-up or truncated secret) says so, and the session holds nothing.
    stranger = Client()
    assert stranger.get("/accounts/invitation/?token=" + "x" * 43).status_code == 404
    assert stranger.get(newest_path[:-5]).status_code == 404
    assert stranger.post("/accounts/invitation/").status_code == 404

    assert not get_user("late@alpha.test")
    reasons = [p["reason"] for _, p in events(world_a, "invitation.refused")]
    assert reasons == ["expired", "cancelled", "cancelled"]
    assert [p["reason"] for _, p in events(world_a, "invitation.cancelled")] == ["replaced", "replaced", "cancelled"]


def get_user(username: str) -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.filter(username=username).first()


# --- who may invite ----------------------------------------------------------------------------


def test_only_the_tenants_owners_invite(world_a: TenantWorld, world_b: TenantWorld, smtp: Any) -> None:
    auditor = strict_client(world_a.auditor)
    refused = invite(auditor, world_a, "friend@alpha.test", "owner")
    assert (refused.status_code, refused.json()["error"]) == (403, "read_only")
    member = strict_client(world_a.member)
    assert invite(member, world_a, "friend@alpha.test", "owner").status_code == 404
    assert member.get("/api/tenants/alpha/members").status_code == 404
    stranger = strict_client(world_b.owner)
    assert invite(stranger, world_a, "friend@alpha.test", "owner").status_code == 404
    assert stranger.get("/api/tenants/alpha/members").status_code == 404
    assert stranger.delete(f"/api/tenants/alpha/members/{world_a.owner.memberships.get().pk}").status_code == 404
    anonymous = Client(enforce_csrf_checks=False)
    assert anonymous.post(
        "/api/tenants/alpha/invitations", {"email": "x@alpha.test", "role": "owner"}, content_type="application/json"
    ).status_code in (401, 403)
    # A platform operator takes businesses on but does not manage their people.
    from test_business import operator

    staff = strict_client(operator())
    assert staff.get("/api/tenants/alpha/members").status_code == 404
    assert invite(staff, world_a, "friend@alpha.test", "owner").status_code == 404
    assert staff.delete(f"/api/tenants/alpha/members/{world_a.owner.memberships.get().pk}").status_code == 404
    # The members page, likewise.
    assert Client().get("/team/alpha/").status_code == 302
    for user in (world_a.member, world_b.owner, operator()):
        page = Client()
        page.force_login(user)
        assert page.get("/team/alpha/").status_code == 404
        assert page.post("/team/alpha/invite", {"email": "x@alpha.test", "role": "owner"}).status_code == 404
    assert not Invitation.objects.exists() and smtp.received == []


def test_bad_invitations_are_refused_with_a_reason(world_a: TenantWorld, smtp: Any, settings: Any) -> None:
    owner = strict_client(world_a.owner)
    cases = [
        ("auditor@alpha.test", "owner", 409, "already_a_member"),
        ("AUDITOR@alpha.test", "auditor", 409, "already_a_member"),
        ("not-an-address", "owner", 400, "invalid_email"),
        ("someone@alpha.test", "member", 400, "invalid_input"),
        ("someone@alpha.test", "operator", 400, "invalid_input"),
    ]
    for email, role, status, code in cases:
        answer = invite(owner, world_a, email, role)
        assert (answer.status_code, answer.json()["error"]) == (status, code), (email, role)
    settings.FACADE_RATE_INVITATIONS = "2/3600"
    assert invite(owner, world_a, "one@alpha.test").status_code == 201
    assert invite(owner, world_a, "two@alpha.test").status_code == 201
    limited = invite(owner, world_a, "three@alpha.test")
    assert (limited.status_code, limited.json()["error"]) == (429, "rate_limited")
    assert Invitation.objects.count() == 2 and len(smtp.received) == 2


def test_no_mail_no_invitation(world_a: TenantWorld, settings: Any) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = int(probe.getsockname()[1])
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", closed_port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    answer = invite(strict_client(world_a.owner), world_a, "someone@alpha.test")
    assert (answer.status_code, answer.json()["error"]) == (503, "email_unavailable")
    assert not Invitation.objects.exists()
    assert not LedgerEvent.objects.of_type("invitation.created").exists()


# --- members: roles and removal ----------------------------------------------------------------


def test_members_are_listed_and_the_last_owner_stays(world_a: TenantWorld) -> None:
    owner = strict_client(world_a.owner)
    listed = owner.get("/api/tenants/alpha/members").json()
    assert [(m["email"], m["role"]) for m in listed] == [
        ("owner@alpha.test", "owner"),
        ("auditor@alpha.test", "auditor"),
        ("member@alpha.test", "member"),
    ]
    mine = listed[0]["id"]
    removed = owner.delete(f"/api/tenants/alpha/members/{mine}")
    assert (removed.status_code, removed.json()["error"]) == (409, "last_owner")
    demoted = owner.patch(f"/api/tenants/alpha/members/{mine}", {"role": "auditor"}, format="json")
    assert (demoted.status_code, demoted.json()["error"]) == (409, "last_owner")
    # The service itself holds the rule, whoever calls it.
    with pytest.raises(ApplicationError) as caught:
        membership_revoke(tenant=world_a.tenant, user=world_a.owner, actor=PLATFORM)
    assert caught.value.code == "last_owner"
    with pytest.raises(ApplicationError):
        membership_grant(tenant=world_a.tenant, user=world_a.owner, role=Role.MEMBER, actor=PLATFORM)
    # A deactivated co-owner is no owner to leave in charge.
    other = second_owner(world_a)
    other.is_active = False
    other.save(update_fields=["is_active"])
    assert owner.delete(f"/api/tenants/alpha/members/{mine}").json()["error"] == "last_owner"
    assert Membership.objects.get(pk=mine).role == Role.OWNER
    assert not events(world_a, "membership.revoked", "membership.role_changed")


def test_removing_an_owner_voids_their_authority_at_once(world_a: TenantWorld) -> None:
    from test_authority_step_up import change

    leaving = second_owner(world_a)
    proposal = change(world_a)
    issued = token_issue(
        agent=world_a.agent,
        change_id=proposal.pk,
        version=proposal.version,
        owner=leaving,
        decision="approve",
        assurance="email_otp",
    )
    owner = strict_client(world_a.owner)
    membership = Membership.objects.get(tenant=world_a.tenant, user=leaving)
    assert owner.delete(f"/api/tenants/alpha/members/{membership.pk}").status_code == 204
    assert not Membership.objects.filter(pk=membership.pk).exists()
    assert not world_a.agent.owners.filter(pk=leaving.pk).exists()
    token = DecisionToken.objects.get(authorization_id=issued.authorization_id)
    assert token.expires_at <= timezone.now()
    voided = events(world_a, "authority.approvals_voided")
    assert [(p["owner_id"], p["reason"], p["authorizations"]) for _, p in voided] == [
        (leaving.pk, "membership_revoked", 1)
    ]
    assert events(world_a, "membership.revoked")[-1][1] == {"user_id": leaving.pk}
    assert ledger_verify(chain_id=world_a.tenant.pk).ok


def test_role_changes_are_recorded_and_follow_the_agents(world_a: TenantWorld) -> None:
    from test_authority_step_up import change

    owner = strict_client(world_a.owner)
    auditor_membership = Membership.objects.get(tenant=world_a.tenant, user=world_a.auditor)
    promoted = owner.patch(f"/api/tenants/alpha/members/{auditor_membership.pk}", {"role": "owner"}, format="json")
    assert promoted.status_code == 200 and promoted.json()["role"] == "owner"
    assert AgentPolicy.is_owner(world_a.auditor, world_a.agent)
    proposal = change(world_a)
    token_issue(
        agent=world_a.agent,
        change_id=proposal.pk,
        version=proposal.version,
        owner=world_a.auditor,
        decision="approve",
        assurance="email_otp",
    )
    demoted = owner.patch(f"/api/tenants/alpha/members/{auditor_membership.pk}", {"role": "auditor"}, format="json")
    assert demoted.status_code == 200
    assert not AgentPolicy.is_owner(world_a.auditor, world_a.agent)
    assert not world_a.agent.owners.filter(pk=world_a.auditor.pk).exists()
    assert [p for _, p in events(world_a, "membership.role_changed")] == [
        {"user_id": world_a.auditor.pk, "role": "owner", "previous": "auditor"},
        {"user_id": world_a.auditor.pk, "role": "auditor", "previous": "owner"},
    ]
    assert [(p["reason"], p["authorizations"]) for _, p in events(world_a, "authority.approvals_voided")] == [
        ("owner_role_changed", 1)
    ]
    refused = owner.patch(f"/api/tenants/alpha/members/{auditor_membership.pk}", {"role": "member"}, format="json")
    assert refused.status_code == 400
