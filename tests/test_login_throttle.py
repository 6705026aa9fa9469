"""Issue 10, point 12: wrong passwords lock a sign-in out (django-axes), per account and
address, and per account from every address together; a success resets; the lock-out ends
after the cool-off."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.utils import timezone

from conftest import TenantWorld

pytestmark = pytest.mark.django_db

LIMIT = 3
COOLOFF = 15


@pytest.fixture(autouse=True)
def _limits(settings: Any) -> None:
    settings.FACADE_LOGIN_FAILURE_LIMIT = LIMIT
    settings.AXES_FAILURE_LIMIT = LIMIT
    settings.FACADE_LOGIN_ACCOUNT_FAILURE_LIMIT = 3 * LIMIT
    settings.FACADE_LOGIN_COOLOFF_MINUTES = COOLOFF
    settings.AXES_COOLOFF_TIME = timedelta(minutes=COOLOFF)


def sign_in(client: Any, email: str, password: str, ip: str = "10.0.0.1", **extra: Any) -> Any:
    return client.post("/accounts/login/", {"username": email, "password": password}, REMOTE_ADDR=ip, **extra)


def signed_in(response: Any) -> bool:
    return response.status_code == 302 and "_auth_user_id" in response.client.session


def fail(client: Any, email: str, times: int, ip: str = "10.0.0.1") -> Any:
    response = None
    for _ in range(times):
        response = sign_in(client, email, "wrong-password", ip)
    return response


def test_the_right_password_is_refused_once_locked_out(client: Any, world_a: TenantWorld) -> None:
    before = fail(client, "owner@alpha.test", LIMIT - 1)
    assert before.status_code == 200 and "Too many" not in before.content.decode()
    locking = sign_in(client, "owner@alpha.test", "wrong-password")
    assert locking.status_code == 429 and "Too many failed sign-in attempts" in locking.content.decode()

    right = sign_in(client, "owner@alpha.test", "pw-alpha")
    assert right.status_code == 429 and not signed_in(right)
    page = right.content.decode()
    assert "Please try again in 15 min." in page and 'role="alert"' in page
    assert 'value="owner@alpha.test"' in page  # the email is kept for later


def test_forty_wrong_passwords_in_a_row_do_not_let_the_right_one_in(client: Any, world_a: TenantWorld) -> None:
    """The issue's reproduction: 40 wrong passwords, then the right one signed in."""
    fail(client, "owner@alpha.test", 40)
    assert not signed_in(sign_in(client, "owner@alpha.test", "pw-alpha"))


def test_a_success_resets_the_count(client: Any, world_a: TenantWorld) -> None:
    fail(client, "owner@alpha.test", LIMIT - 1)
    assert signed_in(sign_in(client, "owner@alpha.test", "pw-alpha"))
    client.logout()
    fail(client, "owner@alpha.test", LIMIT - 1)
    assert signed_in(sign_in(client, "owner@alpha.test", "pw-alpha"))


def test_another_account_from_the_same_address_is_not_affected(client: Any, world_a: TenantWorld) -> None:
    fail(client, "owner@alpha.test", 10)
    assert signed_in(sign_in(client, "auditor@alpha.test", "pw-alpha"))


def test_the_same_account_from_another_address_is_not_locked_by_one_address(client: Any, world_a: TenantWorld) -> None:
    fail(client, "owner@alpha.test", 10, ip="10.0.0.66")
    assert signed_in(sign_in(client, "owner@alpha.test", "pw-alpha", ip="10.0.0.1"))


def test_spraying_one_account_from_many_addresses_locks_it(client: Any, world_a: TenantWorld) -> None:
    for n in range(3):  # each address stays under its own limit; together they reach the account's
        fail(client, "owner@alpha.test", LIMIT, ip=f"10.9.0.{n}")
    response = sign_in(client, "owner@alpha.test", "pw-alpha", ip="10.0.0.1")
    assert response.status_code == 429 and not signed_in(response)
    # Another account is still fine.
    assert signed_in(sign_in(client, "auditor@alpha.test", "pw-alpha", ip="10.0.0.1"))


def test_the_lock_out_ends_after_the_cool_off(client: Any, world_a: TenantWorld) -> None:
    fail(client, "owner@alpha.test", LIMIT)
    almost = timezone.now() + timedelta(minutes=COOLOFF - 1)
    with mock.patch("axes.handlers.proxy.now", return_value=almost):
        assert not signed_in(sign_in(client, "owner@alpha.test", "pw-alpha"))
    later = timezone.now() + timedelta(minutes=COOLOFF, seconds=1)
    with mock.patch("axes.handlers.proxy.now", return_value=later):
        assert signed_in(sign_in(client, "owner@alpha.test", "pw-alpha"))


def test_attempts_during_the_lock_out_do_not_extend_it(client: Any, world_a: TenantWorld) -> None:
    fail(client, "owner@alpha.test", LIMIT)
    halfway = timezone.now() + timedelta(minutes=COOLOFF // 2)
    with mock.patch("axes.handlers.proxy.now", return_value=halfway):
        fail(client, "owner@alpha.test", 5)
    later = timezone.now() + timedelta(minutes=COOLOFF, seconds=1)
    with mock.patch("axes.handlers.proxy.now", return_value=later):
        assert signed_in(sign_in(client, "owner@alpha.test", "pw-alpha"))


def test_the_lock_out_is_said_in_chinese(client: Any, world_a: TenantWorld) -> None:
    fail(client, "owner@alpha.test", LIMIT)
    response = sign_in(client, "owner@alpha.test", "pw-alpha", HTTP_ACCEPT_LANGUAGE="zh-CN")
    assert response.status_code == 429 and "登录失败次数过多" in response.content.decode()


def test_no_password_is_kept_with_a_failed_attempt(client: Any, world_a: TenantWorld) -> None:
    from axes.models import AccessAttempt

    sign_in(client, "owner@alpha.test", "a-secret-guess")
    assert AccessAttempt.objects.count() == 1
    assert "a-secret-guess" not in AccessAttempt.objects.get().post_data


def test_the_lock_out_counts_the_client_behind_a_trusted_proxy(settings: Any) -> None:
    """Behind a trusted proxy each client is its own address to the lock-out, as to the rate
    limits; without one, X-Forwarded-For is not believed."""
    from django.test import RequestFactory

    from facade.accounts.throttle import client_address

    request = RequestFactory().post("/accounts/login/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.7")
    settings.FACADE_TRUSTED_PROXIES = ["10.0.0.0/8"]
    assert client_address(request) == "198.51.100.7"
    settings.FACADE_TRUSTED_PROXIES = []
    assert client_address(request) == "10.0.0.2"
