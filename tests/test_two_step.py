"""Issue 10, point 12: owners may enrol an authenticator app (TOTP, django-otp) and then sign
in with a password and a code; a tenant can require it of its owners."""

from __future__ import annotations

import time
from typing import Any
from unittest import mock

import pytest
from django.core.management import call_command
from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice

from conftest import TenantWorld
from facade.accounts.rules import TwoStep, TwoStepFacts, two_step

EMAIL, PASSWORD = "owner@alpha.test", "pw-alpha"


@pytest.mark.parametrize(
    ("has_device", "verified", "required", "expected"),
    [
        (False, False, False, TwoStep.PASS),
        (False, False, True, TwoStep.MUST_ENROL),
        (True, True, True, TwoStep.PASS),
        (True, True, False, TwoStep.PASS),
        (True, False, False, TwoStep.MUST_SIGN_IN_AGAIN),
        (True, False, True, TwoStep.MUST_SIGN_IN_AGAIN),
    ],
)
def test_two_step_rule(has_device: bool, verified: bool, required: bool, expected: TwoStep) -> None:
    assert two_step(TwoStepFacts(has_device, verified, required)) is expected


def code_for(device: TOTPDevice, steps_ahead: int = 0) -> str:
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    totp.time = time.time() + device.step * steps_ahead
    return f"{totp.token():0{device.digits}d}"


def pause_passed() -> None:
    """django-otp's throttle wants a pause after a wrong code (1 s, doubling): pretend it passed."""
    TOTPDevice.objects.update(throttling_failure_count=0, throttling_failure_timestamp=None)


def signed_in(client: Any) -> bool:
    return "_auth_user_id" in client.session


def enrol(client: Any, next_url: str = "") -> TOTPDevice:
    page = client.get("/accounts/two-step/")
    assert page.status_code == 200
    device = TOTPDevice.objects.get(confirmed=False)
    text = page.content.decode()
    assert "otpauth://totp/" in text and device.config_url.replace("&", "&amp;") in text
    response = client.post("/accounts/two-step/", {"code": code_for(device), "next": next_url})
    assert response.status_code == 302
    device.refresh_from_db()
    assert device.confirmed
    return device


@pytest.mark.django_db
def test_an_owner_enrols_and_then_signs_in_with_password_and_code(client: Any, world_a: TenantWorld) -> None:
    client.force_login(world_a.owner)
    wrong = client.post("/accounts/two-step/", {"code": "000000"})
    assert wrong.status_code == 200 and "not right" in wrong.content.decode()
    assert not TOTPDevice.objects.filter(confirmed=True).exists()
    pause_passed()
    device = enrol(client)
    assert "is on" in client.get("/accounts/two-step/").content.decode()
    client.logout()

    # The password alone does not sign in.
    step = client.post("/accounts/login/", {"username": EMAIL, "password": PASSWORD, "next": "/owner/alpha-agent/chat"})
    assert step.status_code == 302 and step["Location"].startswith("/accounts/login/code/")
    assert not signed_in(client)
    assert client.get("/owner/alpha-agent/chat").status_code == 302  # still to the sign-in page

    wrong = client.post("/accounts/login/code/", {"code": "123456", "next": "/owner/alpha-agent/chat"})
    assert wrong.status_code == 200 and not signed_in(client)
    throttled = client.post("/accounts/login/code/", {"code": code_for(device, 1)})
    assert "Too many wrong codes" in throttled.content.decode() and not signed_in(client)
    pause_passed()
    right = client.post("/accounts/login/code/", {"code": code_for(device, 1), "next": "/owner/alpha-agent/chat"})
    assert right.status_code == 302 and right["Location"] == "/owner/alpha-agent/chat"
    assert signed_in(client)
    assert client.get("/owner/alpha-agent/chat").status_code == 200


@pytest.mark.django_db
def test_a_code_is_never_kept_in_the_session(client: Any, world_a: TenantWorld) -> None:
    client.force_login(world_a.owner)
    device = enrol(client)
    client.logout()
    client.post("/accounts/login/", {"username": EMAIL, "password": PASSWORD})
    code = code_for(device, 1)
    client.post("/accounts/login/code/", {"code": code})
    assert signed_in(client)
    assert code not in repr(dict(client.session.items()))


@pytest.mark.django_db
def test_the_code_step_expires(client: Any, world_a: TenantWorld) -> None:
    client.force_login(world_a.owner)
    device = enrol(client)
    client.logout()
    client.post("/accounts/login/", {"username": EMAIL, "password": PASSWORD})
    later = time.time() + 301
    with mock.patch("facade.accounts.views.time.time", return_value=later):
        response = client.post("/accounts/login/code/", {"code": code_for(device, 1)})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?")
    assert not signed_in(client)


@pytest.mark.django_db
def test_the_code_step_without_a_password_step_goes_back_to_sign_in(client: Any, world_a: TenantWorld) -> None:
    response = client.post("/accounts/login/code/", {"code": "123456"})
    assert response.status_code == 302 and not signed_in(client)


@pytest.mark.django_db
def test_a_session_from_before_enrolment_no_longer_counts(client: Any, world_a: TenantWorld) -> None:
    from django.test import Client

    other_browser = Client()
    other_browser.force_login(world_a.owner)
    client.force_login(world_a.owner)
    enrol(client)
    response = other_browser.get("/owner/alpha-agent/chat")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert not signed_in(other_browser)
    assert client.get("/owner/alpha-agent/chat").status_code == 200  # the enrolling session gave a code


@pytest.mark.django_db
def test_a_tenant_requires_an_authenticator_of_its_owners(client: Any, world_a: TenantWorld) -> None:
    from facade.tenancy.schemas import Actor
    from facade.tenancy.services import tenant_totp_require
    from ledger.models import LedgerEvent

    def events() -> list[dict[str, Any]]:
        found = LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).of_type("tenant.totp_requirement_changed")
        found = found.order_by("seq")
        return [e.payload for e in found]

    actor = Actor.human(1)
    tenant_totp_require(tenant=world_a.tenant, required=True, actor=actor)
    tenant_totp_require(tenant=world_a.tenant, required=True, actor=actor)  # no change: no event
    assert events() == [{"required": True}]

    client.force_login(world_a.owner)
    page = client.get("/owner/alpha-agent/chat")
    assert page.status_code == 302 and page["Location"].startswith("/accounts/two-step/?next=")
    assert client.get("/").status_code == 302
    api = client.get("/api/ledger/verify?tenant=alpha")
    assert api.status_code == 403 and api.json()["error"] == "two_step_enrolment_required"
    assert "requires" in client.get("/accounts/two-step/").content.decode()

    enrol(client, next_url="/owner/alpha-agent/chat")
    assert client.get("/owner/alpha-agent/chat").status_code == 200
    assert client.get("/api/ledger/verify?tenant=alpha").status_code == 200

    # The tenant's auditor is not an owner: not held.
    auditor = type(client)()
    auditor.force_login(world_a.auditor)
    assert auditor.get("/api/ledger/verify?tenant=alpha").status_code == 200

    tenant_totp_require(tenant=world_a.tenant, required=False, actor=actor)
    assert events() == [{"required": True}, {"required": False}]


@pytest.mark.django_db
def test_the_requirement_is_set_from_the_command_line(world_a: TenantWorld) -> None:
    call_command("tenant_require_totp", "alpha")
    world_a.tenant.refresh_from_db()
    assert world_a.tenant.owners_require_totp
    call_command("tenant_require_totp", "alpha", "--off")
    world_a.tenant.refresh_from_db()
    assert not world_a.tenant.owners_require_totp
