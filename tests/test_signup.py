"""Self-service sign-up of a business (issue 32 §1, FACADE_SIGNUP): off by default; `invite`
says businesses join by the platform's invitation; `open` e-mails a link (a real SMTP server)
and creates nothing until it is opened; then the business is made through the operator's own
service, with the address's account as its first owner.  Rate-limited per address; a taken
address is said clearly; a forged, altered or reused link makes nothing."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from conftest import TenantWorld
from facade.tenancy.models import AgentProfile, Membership, Tenant
from facade.tenancy.policy import AgentPolicy
from ledger.models import LedgerEvent

pytestmark = pytest.mark.django_db

LINK = re.compile(r"https://shop\.example(/signup/verify/\?token=[A-Za-z0-9_:.-]+)")
PASSWORD = "a-long-Passphrase-42"
FORM = {
    "name": "Rosa's Bakery",
    "slug": "rosa-bakery",
    "time_zone": "Europe/Berlin",
    "languages": ["en", "zh-hans"],
    "agent_name": "Rosa",
    "agent_slug": "rosa",
    "email": "rosa@bakery.test",
}


@pytest.fixture(autouse=True)
def _fresh_counters() -> None:
    cache.clear()


def link_of(smtp: Any, n: int = -1) -> str:
    found = LINK.search(smtp.received[n][1].get_payload(decode=True).decode())
    assert found is not None
    return found.group(1)


@pytest.mark.parametrize("mode", ["off", "invite"])
def test_sign_up_is_off_by_default_and_invite_only_points_to_the_platform(settings: Any, smtp: Any, mode: str) -> None:
    settings.FACADE_SIGNUP = mode
    visitor = Client()
    if mode == "off":
        assert visitor.get("/signup/").status_code == 404
        assert visitor.post("/signup/", FORM).status_code == 404
        assert visitor.get("/signup/verify/").status_code == 404
    else:
        assert "by invitation" in visitor.get("/signup/").content.decode()
        assert visitor.post("/signup/", FORM).status_code == 200
    assert not Tenant.objects.exists() and smtp.received == []


def test_an_open_sign_up_creates_nothing_until_the_emailed_link_is_opened(
    world_a: TenantWorld, settings: Any, smtp: Any
) -> None:
    settings.FACADE_SIGNUP = "open"
    visitor = Client()
    asked = visitor.post("/signup/", FORM)
    assert asked.status_code == 200 and "We sent a link to rosa@bakery.test" in asked.content.decode()
    assert not Tenant.objects.filter(slug="rosa-bakery").exists()
    [(recipients, _message)] = smtp.received
    assert recipients == ["rosa@bakery.test"]
    path = link_of(smtp)

    # An altered link makes nothing.
    assert Client().get(path[:-3] + "xyz").status_code == 404

    opened = visitor.get(path)
    assert (opened.status_code, opened["Location"]) == (302, "/signup/verify/")
    page = visitor.get("/signup/verify/")
    assert page.status_code == 200 and "Create Rosa&#x27;s Bakery" in page.content.decode()
    made = visitor.post("/signup/verify/", {"new_password1": PASSWORD, "new_password2": PASSWORD})
    assert (made.status_code, made["Location"]) == (302, "/team/rosa-bakery/")
    tenant = Tenant.objects.get(slug="rosa-bakery")
    owner = Membership.objects.get(tenant=tenant, role="owner").user
    assert owner.username == "rosa@bakery.test" and owner.check_password(PASSWORD)
    assert AgentPolicy.is_owner(owner, AgentProfile.objects.get(slug="rosa"))
    assert (tenant.time_zone, tenant.languages) == ("Europe/Berlin", ["en", "zh-hans"])
    actors = {event.actor_id for event in LedgerEvent.objects.filter(chain_id=tenant.pk)}
    assert actors == {f"user:{owner.pk}"}

    # The same link again: its address is taken now, and nothing more is made.
    again = Client()
    again.get(path)
    reused = again.post("/signup/verify/", {"new_password1": PASSWORD, "new_password2": PASSWORD})
    assert reused.status_code == 409 and "is taken" in reused.content.decode()
    assert Tenant.objects.filter(slug="rosa-bakery").count() == 1


def test_a_taken_address_is_said_and_sign_ups_are_rate_limited(world_a: TenantWorld, settings: Any, smtp: Any) -> None:
    settings.FACADE_SIGNUP = "open"
    visitor = Client()
    taken = visitor.post("/signup/", {**FORM, "slug": "alpha"})
    assert taken.status_code == 409 and "The address alpha is taken" in taken.content.decode()
    bad = visitor.post("/signup/", {**FORM, "time_zone": "Mars/Olympus"})
    assert bad.status_code == 400
    settings.FACADE_RATE_SIGNUP = "1/3600"
    assert visitor.post("/signup/", FORM).status_code == 200
    limited = visitor.post("/signup/", FORM)
    assert limited.status_code == 429
    assert len(smtp.received) == 1 and not Tenant.objects.filter(slug="rosa-bakery").exists()


def test_an_existing_account_signs_in_and_no_other_account_can_use_the_link(
    world_a: TenantWorld, settings: Any, smtp: Any
) -> None:
    settings.FACADE_SIGNUP = "open"
    Client().post("/signup/", {**FORM, "email": "auditor@alpha.test"})
    path = link_of(smtp)
    intruder = Client()
    intruder.force_login(world_a.member)
    intruder.get(path)
    assert "you are signed in as member@alpha.test" in intruder.get("/signup/verify/").content.decode()
    refused = intruder.post("/signup/verify/")
    assert refused.status_code == 403 and not Tenant.objects.filter(slug="rosa-bakery").exists()
    visitor = Client()
    visitor.get(path)
    assert "Sign in to accept" in visitor.get("/signup/verify/").content.decode()
    taken = visitor.post("/signup/verify/", {"new_password1": PASSWORD, "new_password2": PASSWORD})
    assert taken.status_code == 409 and not Tenant.objects.filter(slug="rosa-bakery").exists()
