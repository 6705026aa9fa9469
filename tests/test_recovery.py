"""A forgotten password and a changed e-mail address (issue 32 §2): Django's own reset flow in the
site's layout and both languages, rate-limited, never saying whether an address has an account;
an e-mail change confirmed from the new address by the same account.  Real SMTP (aiosmtpd)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client

from conftest import TenantWorld

pytestmark = pytest.mark.django_db

RESET = re.compile(r"https://shop\.example(/accounts/password/reset/[^/\s]+/[^/\s]+/)")
CHANGE = re.compile(r"https://shop\.example(/accounts/email/confirm/\?token=\S+)")
PASSWORD = "a-new-Passphrase-77"


@pytest.fixture(autouse=True)
def _fresh_counters() -> None:
    cache.clear()


def signs_in(username: str, password: str) -> bool:
    user = get_user_model().objects.filter(username=username).first()
    return user is not None and user.check_password(password)


CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')


def page_text(content: bytes) -> str:
    """A page without its CSRF token (new for every visitor)."""
    return CSRF.sub("", content.decode())


def body(smtp: Any, n: int = -1) -> str:
    return str(smtp.received[n][1].get_payload(decode=True).decode())


def test_a_forgotten_password_is_reset_by_the_emailed_link_once(world_a: TenantWorld, smtp: Any) -> None:
    visitor = Client()
    asked = visitor.post("/accounts/password/reset/", {"email": "Owner@Alpha.test"})
    assert (asked.status_code, asked["Location"]) == (302, "/accounts/password/reset/sent/")
    [(recipients, _message)] = smtp.received
    assert recipients == ["owner@alpha.test"]
    found = RESET.search(body(smtp))
    assert found is not None
    opened = visitor.get(found.group(1))
    assert opened.status_code == 302 and opened["Location"].endswith("/set-password/")
    page = visitor.get(opened["Location"])
    assert "Choose a new password" in page.content.decode()
    done = visitor.post(opened["Location"], {"new_password1": PASSWORD, "new_password2": PASSWORD})
    assert (done.status_code, done["Location"]) == (302, "/accounts/password/reset/done/")
    assert signs_in("owner@alpha.test", PASSWORD)
    # The link worked once.
    again = Client().get(found.group(1))
    assert again.status_code == 200 and "This link does not work" in again.content.decode()


def test_the_answer_is_the_same_whether_or_not_the_address_has_an_account(world_a: TenantWorld, smtp: Any) -> None:
    answers = []
    for address in ("owner@alpha.test", "nobody@alpha.test"):
        visitor = Client()
        asked = visitor.post("/accounts/password/reset/", {"email": address})
        answers.append((asked.status_code, asked["Location"], page_text(visitor.get(asked["Location"]).content)))
    assert answers[0] == answers[1]
    assert [r for r, _ in smtp.received] == [["owner@alpha.test"]]


def test_reset_emails_are_limited_per_address_alike_for_any_address(
    world_a: TenantWorld, smtp: Any, settings: Any
) -> None:
    settings.FACADE_RATE_PASSWORD_RESET = "2/3600"
    refusals = []
    for address in ("owner@alpha.test", "nobody@alpha.test"):
        visitor = Client()
        for _ in range(2):
            assert visitor.post("/accounts/password/reset/", {"email": address}).status_code == 302
        refused = visitor.post("/accounts/password/reset/", {"email": address})
        assert refused.status_code == 429
        refusals.append(page_text(refused.content).replace(address, "ADDRESS"))
    assert refusals[0] == refusals[1] and "Too many reset e-mails" in refusals[0]
    assert len(smtp.received) == 2


def test_the_reset_pages_and_email_speak_chinese(world_a: TenantWorld, smtp: Any) -> None:
    visitor = Client(HTTP_ACCEPT_LANGUAGE="zh-hans")
    page = visitor.get("/accounts/password/reset/")
    assert "忘记密码了吗？" in page.content.decode()
    visitor.post("/accounts/password/reset/", {"email": "owner@alpha.test"})
    assert "申请设置新密码" in body(smtp)
    assert "如果该地址有账户" in visitor.get("/accounts/password/reset/sent/").content.decode()


def test_an_email_change_takes_effect_from_the_new_address_only_for_the_same_account(
    world_a: TenantWorld, smtp: Any
) -> None:
    owner = Client()
    owner.force_login(world_a.owner)
    wrong = owner.post("/accounts/email/", {"email": "boss@alpha.test", "password": "wrong"})
    assert wrong.status_code == 400 and smtp.received == []
    sent = owner.post("/accounts/email/", {"email": "Boss@Alpha.test", "password": "pw-alpha"})
    assert sent.status_code == 200 and "We sent a link to boss@alpha.test" in sent.content.decode()
    [(recipients, _message)] = smtp.received
    assert recipients == ["boss@alpha.test"]
    world_a.owner.refresh_from_db()
    assert world_a.owner.email == "owner@alpha.test"  # nothing changes before the link is opened
    path = CHANGE.search(body(smtp))
    assert path is not None

    # Another account holding the link: nothing.
    other = Client()
    other.force_login(world_a.auditor)
    assert other.get(path.group(1)).status_code == 404
    token = path.group(1).split("token=", 1)[1]
    assert other.post("/accounts/email/confirm/", {"token": token}).status_code == 404

    assert "Sign in with boss@alpha.test from now on?" in owner.get(path.group(1)).content.decode()
    done = owner.post("/accounts/email/confirm/", {"token": token})
    assert (done.status_code, done["Location"]) == (302, "/")
    world_a.owner.refresh_from_db()
    assert (world_a.owner.email, world_a.owner.username) == ("boss@alpha.test", "boss@alpha.test")
    assert smtp.received[-1][0] == ["owner@alpha.test"]  # the old address is told
    assert signs_in("boss@alpha.test", "pw-alpha")
    # Used once: the account's address moved on, so the same link no longer matches it.
    assert owner.post("/accounts/email/confirm/", {"token": token}).status_code == 404


def test_an_address_of_another_account_is_said_only_to_that_mailbox(world_a: TenantWorld, smtp: Any) -> None:
    owner = Client()
    owner.force_login(world_a.owner)
    sent = owner.post("/accounts/email/", {"email": "auditor@alpha.test", "password": "pw-alpha"})
    assert sent.status_code == 200 and "We sent a link" in sent.content.decode()  # the form does not tell
    path = CHANGE.search(body(smtp))
    assert path is not None
    taken = owner.get(path.group(1))
    assert taken.status_code == 409 and "already belongs to another account" in taken.content.decode()
    world_a.owner.refresh_from_db()
    assert world_a.owner.email == "owner@alpha.test"


def test_the_account_page_offers_the_address_the_password_and_two_step_sign_in(world_a: TenantWorld) -> None:
    from facade.tenancy.schemas import Actor
    from facade.tenancy.services import tenant_totp_require

    tenant_totp_require(tenant=world_a.tenant, required=True, actor=Actor.platform("tests"))
    owner = Client()
    owner.force_login(world_a.owner)
    # An owner of a tenant that requires an authenticator is sent to enrol first (/accounts/ is exempt).
    page = owner.get("/accounts/settings/").content.decode()
    assert "Turn it on with an authenticator app" in page and "Your business requires it." in page
    assert 'href="/accounts/email/"' in page and 'href="/accounts/password/change/"' in page
    changed = owner.post(
        "/accounts/password/change/",
        {"old_password": "pw-alpha", "new_password1": PASSWORD, "new_password2": PASSWORD},
    )
    assert (changed.status_code, changed["Location"]) == (302, "/accounts/settings/?changed=password")
    assert signs_in("owner@alpha.test", PASSWORD)
    zh = owner.get("/accounts/settings/", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "您的账户" in zh.content.decode() and "修改密码" in zh.content.decode()
