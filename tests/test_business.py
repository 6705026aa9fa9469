"""A business joins (issue 32 §1): a platform operator takes it on from a page or the API — its
name and address, time zone, languages, first agent and the e-mail of its first owner, who gets an
invitation (a real SMTP server, aiosmtpd) and owns the agent once they accept.  All or nothing;
operators only; `seed_demo` goes through the same service."""

from __future__ import annotations

import io
import re
import socket
from typing import Any

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client
from test_approvals_decide import strict_client

from conftest import TenantWorld
from facade.tenancy.models import AgentProfile, Invitation, Membership, Tenant
from facade.tenancy.policy import AgentPolicy
from facade.tenancy.services import user_ensure
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify

pytestmark = pytest.mark.django_db

LINK = re.compile(r"https://shop\.example(/accounts/invitation/\?token=[A-Za-z0-9_-]+)")
PASSWORD = "a-long-Passphrase-42"
BODY = {
    "name": "Rosa's Bakery",
    "slug": "rosa-bakery",
    "time_zone": "Asia/Shanghai",
    "languages": ["zh-hans", "en"],
    "agent": {"slug": "rosa", "name": "Rosa"},
    "owner_email": "Rosa@Bakery.test",
}


@pytest.fixture(autouse=True)
def _fresh_counters() -> None:
    cache.clear()


def operator() -> Any:
    user, _ = user_ensure(email="operator@platform.test", password="pw-operator", is_staff=True, is_superuser=True)
    return user


def test_an_operator_takes_on_a_business_whose_invited_owner_then_runs_it(smtp: Any) -> None:
    staff = strict_client(operator())
    answer = staff.post("/api/businesses", BODY, format="json")
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert body["business"]["slug"] == "rosa-bakery" and body["agent"] == "rosa"
    assert (body["invitation"]["email"], body["invitation"]["role"]) == ("rosa@bakery.test", "owner")
    tenant = Tenant.objects.get(slug="rosa-bakery")
    assert (tenant.name, tenant.time_zone, tenant.languages) == ("Rosa's Bakery", "Asia/Shanghai", ["zh-hans", "en"])
    agent = AgentProfile.objects.get(slug="rosa")
    assert agent.tenant == tenant and not agent.owners.exists()  # nobody owns it until the owner accepts
    assert [staff.get("/api/businesses").json()[0]["slug"]] == ["rosa-bakery"]

    [(recipients, message)] = smtp.received
    assert recipients == ["rosa@bakery.test"]
    found = LINK.search(message.get_payload(decode=True).decode())
    assert found is not None
    owner = Client()
    assert owner.get(found.group(1)).status_code == 302
    accepted = owner.post("/accounts/invitation/", {"new_password1": PASSWORD, "new_password2": PASSWORD})
    assert (accepted.status_code, accepted["Location"]) == (302, "/team/rosa-bakery/")
    user = Membership.objects.get(tenant=tenant).user
    assert AgentPolicy.is_owner(user, agent) and AgentPolicy.is_tenant_owner(user.pk, agent)
    assert owner.get("/owner/rosa/").status_code == 200

    kinds = [e.event_type for e in LedgerEvent.objects.filter(chain_id=tenant.pk).order_by("seq")]
    assert kinds[:5] == [
        "tenant.created",
        "tenant.time_zone_changed",
        "tenant.languages_changed",
        "agent.created",
        "contract.published",
    ]
    assert "invitation.created" in kinds and "invitation.accepted" in kinds and "agent.owner_added" in kinds
    created = LedgerEvent.objects.filter(chain_id=tenant.pk).of_type("invitation.created").get()
    assert created.actor_id == f"user:{operator().pk}"
    assert ledger_verify(chain_id=tenant.pk).ok


@pytest.mark.parametrize(
    ("change", "status", "code"),
    [
        ({"slug": "alpha"}, 409, "tenant_exists"),
        ({"agent": {"slug": "alpha-agent"}}, 409, "agent_exists"),
        ({"slug": "Rosa Bakery"}, 400, "invalid_slug"),
        ({"agent": {"slug": "-rosa"}}, 400, "invalid_slug"),
        ({"time_zone": "+08:00"}, 400, "invalid_time_zone"),
        ({"languages": ["fr"]}, 400, "invalid_languages"),
        ({"languages": ["en", "en"]}, 400, "invalid_languages"),
        ({"owner_email": "not an address"}, 400, "invalid_email"),
        ({"name": "   "}, 400, "invalid_input"),
    ],
)
def test_a_refused_business_leaves_nothing_behind(
    world_a: TenantWorld, smtp: Any, change: dict[str, Any], status: int, code: str
) -> None:
    before = (Tenant.objects.count(), AgentProfile.objects.count(), LedgerEvent.objects.count())
    answer = strict_client(operator()).post("/api/businesses", {**BODY, **change}, format="json")
    assert (answer.status_code, answer.json()["error"]) == (status, code), answer.content
    assert (Tenant.objects.count(), AgentProfile.objects.count(), LedgerEvent.objects.count()) == before
    assert not Invitation.objects.exists() and smtp.received == []


def test_no_mail_no_business(settings: Any) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = int(probe.getsockname()[1])
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", closed_port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    answer = strict_client(operator()).post("/api/businesses", BODY, format="json")
    assert (answer.status_code, answer.json()["error"]) == (503, "email_unavailable")
    assert not Tenant.objects.exists() and not LedgerEvent.objects.exists()


def test_only_operators_take_on_businesses(world_a: TenantWorld, smtp: Any) -> None:
    for user in (world_a.owner, world_a.auditor, world_a.member):
        client = strict_client(user)
        answer = client.post("/api/businesses", BODY, format="json")
        assert answer.status_code == 403 and answer.json()["error"] in ("not_an_operator", "read_only")
        assert client.get("/api/businesses").status_code == 403
        page = Client()
        page.force_login(user)
        assert page.get("/platform/businesses/").status_code == 404
        assert page.post("/platform/businesses/new", {"name": "x"}).status_code in (403, 404)
    assert Client().get("/platform/businesses/").status_code == 302  # signed out: to sign in
    assert not Tenant.objects.filter(slug="rosa-bakery").exists() and smtp.received == []


def test_the_operators_page_takes_on_a_business_and_keeps_a_refused_form(world_a: TenantWorld, smtp: Any) -> None:
    page = Client()
    page.force_login(operator())
    assert "A new business" in page.get("/platform/businesses/").content.decode()
    form = {
        "name": "Rosa's Bakery",
        "slug": "alpha",  # taken
        "time_zone": "Asia/Shanghai",
        "languages": ["zh-hans", "en"],
        "agent_name": "Rosa",
        "agent_slug": "rosa",
        "owner_email": "rosa@bakery.test",
    }
    refused = page.post("/platform/businesses/new", form)
    assert refused.status_code == 409
    text = refused.content.decode()
    assert "The address alpha is taken" in text and 'value="rosa@bakery.test"' in text
    made = page.post("/platform/businesses/new", {**form, "slug": "rosa-bakery"})
    assert (made.status_code, made["Location"]) == (302, "/platform/businesses/#business-rosa-bakery")
    listed = page.get("/platform/businesses/").content.decode()
    assert "Rosa&#x27;s Bakery joined, with its agent rosa" in listed and "Asia/Shanghai" in listed
    assert [r for r, _ in smtp.received] == [["rosa@bakery.test"]]


def test_seed_demo_is_a_business_joining_through_the_same_service() -> None:
    out = io.StringIO()
    call_command("seed_demo", "--tenant", "acme", "--agent", "acme-desk", "--owner-email", "boss@acme.test", stdout=out)
    tenant = Tenant.objects.get(slug="acme")
    assert tenant.languages == ["en", "zh-hans"]
    kinds = [e.event_type for e in LedgerEvent.objects.filter(chain_id=tenant.pk).order_by("seq")]
    assert kinds[:2] == ["tenant.created", "agent.created"]
    assert AgentPolicy.is_owner(Membership.objects.get(tenant=tenant, role="owner").user, tenant.agents.get())
    # Run again: nothing new is made.
    count = LedgerEvent.objects.filter(chain_id=tenant.pk).count()
    call_command("seed_demo", "--tenant", "acme", "--agent", "acme-desk", "--owner-email", "boss@acme.test", stdout=out)
    assert LedgerEvent.objects.filter(chain_id=tenant.pk).count() == count
