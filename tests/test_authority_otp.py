"""Emailed codes for L3 decisions (issue 12, DESIGN §5): six digits from the CSPRNG, valid ten
minutes, at most five wrong tries counted under a row lock, bound to owner + change + decision,
rate-limited, fail closed without e-mail — and the code is found nowhere but in the e-mail."""

from __future__ import annotations

import datetime as dt
import logging
import re
import socket
import threading
from collections import Counter
from typing import Any

import pytest
from django.core import mail
from django.db import connection
from django.utils import timezone

from approvals.authority import (
    WrongCode,
    challenge_start,
    challenge_verify,
    mask_address,
    new_code,
    token_consume,
)
from approvals.authority_models import ChallengeStatus, DecisionChallenge, DecisionToken
from conftest import TenantWorld, build_tenant
from facade.errors import ApplicationError
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify

CHANGE = "chg_alpha0003"
OTHER_CHANGE = "chg_alpha0004"
CODE = re.compile(r"Your code: (\d{6})")


@pytest.fixture
def outbox(settings: Any) -> list[Any]:
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    mail.outbox = []
    return mail.outbox


def start(world: TenantWorld, change: str = CHANGE, decision: str = "approve", **extra: Any) -> Any:
    return challenge_start(
        agent=world.agent, change_id=change, version=7, owner=world.owner, decision=decision, **extra
    )


def verify(
    world: TenantWorld, challenge: str, code: str, change: str = CHANGE, decision: str = "approve", **extra: Any
) -> Any:
    bindings: dict[str, Any] = {"agent": world.agent, "owner": world.owner, **extra}
    return challenge_verify(challenge_id=challenge, code=code, change_id=change, decision=decision, **bindings)


def last_code(messages: list[Any]) -> str:
    found = CODE.search(messages[-1].body)
    assert found is not None
    return found.group(1)


def wrong(code: str) -> str:
    return f"{(int(code) + 1) % 1_000_000:06d}"


def invalid(world: TenantWorld, challenge: str, code: str, **extra: Any) -> None:
    with pytest.raises(ApplicationError) as caught:
        verify(world, challenge, code, **extra)
    assert (caught.value.code, caught.value.http_status) == ("invalid_challenge", 403)
    assert code not in str(caught.value)


def refusals(tenant_id: int) -> list[str]:
    rows = LedgerEvent.objects.filter(chain_id=tenant_id).of_type("authority.challenge_refused").order_by("seq")
    return [row.payload["reason"] for row in rows]


def test_codes_are_six_digits_spread_evenly_and_rarely_repeat() -> None:
    codes = [new_code() for _ in range(10_000)]
    assert all(re.fullmatch(r"\d{6}", code) for code in codes)
    for position in range(6):
        counts = Counter(code[position] for code in codes)
        # 1,000 expected per digit, standard deviation 30: 800–1,200 is ±6.7σ.
        assert set(counts) == set("0123456789") and all(800 <= n <= 1200 for n in counts.values()), counts
    # About 50 repeated codes are expected among 10,000 drawn from a million (birthday bound).
    assert 10_000 - len(set(codes)) < 150
    assert sum(code.startswith("0") for code in codes) > 800  # leading zeros are kept


def test_addresses_are_masked() -> None:
    assert mask_address("owner@demo.test") == "o***@demo.test"
    assert mask_address("x@y.z") == "x***@y.z"


@pytest.mark.django_db
def test_the_code_is_emailed_and_stored_only_as_a_digest(world_a: TenantWorld, outbox: list[Any]) -> None:
    challenge = start(world_a)
    assert challenge.sent_to == "o***@alpha.test" and challenge.challenge_id.startswith("otp_")
    assert [message.to for message in outbox] == [["owner@alpha.test"]]
    code = last_code(outbox)
    row = DecisionChallenge.objects.get()
    assert code not in row.code_hash and len(row.code_hash) == 64
    assert row.expires_at - row.created_at == dt.timedelta(minutes=10)
    assert code not in repr(challenge)
    issued = verify(world_a, challenge.challenge_id, code)
    assert code not in repr(issued)
    consumed = token_consume(
        token=issued.token, agent=world_a.agent, change_id=CHANGE, owner=world_a.owner, decision="approve"
    )
    assert (consumed.assurance, consumed.version) == ("email_otp", 7)


@pytest.mark.django_db
def test_a_code_expires_after_ten_minutes(world_a: TenantWorld, outbox: list[Any]) -> None:
    t0 = timezone.now()
    late = start(world_a, now=t0)
    late_code = last_code(outbox)
    in_time = start(world_a, change=OTHER_CHANGE, now=t0)
    in_time_code = last_code(outbox)
    invalid(world_a, late.challenge_id, late_code, now=t0 + dt.timedelta(minutes=10))
    issued = verify(
        world_a, in_time.challenge_id, in_time_code, change=OTHER_CHANGE, now=t0 + dt.timedelta(minutes=9, seconds=59)
    )
    assert issued.token
    assert refusals(world_a.tenant.pk) == ["expired"]


@pytest.mark.django_db
def test_a_used_code_cannot_be_used_again(world_a: TenantWorld, outbox: list[Any]) -> None:
    challenge = start(world_a)
    code = last_code(outbox)
    verify(world_a, challenge.challenge_id, code)
    invalid(world_a, challenge.challenge_id, code)
    assert DecisionToken.objects.count() == 1
    assert refusals(world_a.tenant.pk) == ["used"]


@pytest.mark.django_db
def test_five_wrong_codes_kill_the_challenge_even_for_the_right_code(world_a: TenantWorld, outbox: list[Any]) -> None:
    challenge = start(world_a)
    code = last_code(outbox)
    left = []
    for attempt in (wrong(code), "12345", "abcdef", "", wrong(wrong(code))):
        with pytest.raises(WrongCode) as caught:
            verify(world_a, challenge.challenge_id, attempt)
        assert (caught.value.code, caught.value.http_status) == ("wrong_code", 400)
        left.append(caught.value.remaining_attempts)
    assert left == [4, 3, 2, 1, 0]
    invalid(world_a, challenge.challenge_id, code)
    assert DecisionChallenge.objects.get().status == ChallengeStatus.DEAD
    assert not DecisionToken.objects.exists()
    failed = LedgerEvent.objects.of_type("authority.code_failed").order_by("seq")
    assert [event.payload["remaining"] for event in failed] == [4, 3, 2, 1, 0]
    assert LedgerEvent.objects.of_type("authority.challenge_dead").count() == 1
    assert refusals(world_a.tenant.pk) == ["dead"]


@pytest.mark.django_db
def test_a_code_for_another_change_decision_or_owner_is_refused(world_a: TenantWorld, outbox: list[Any]) -> None:
    challenge = start(world_a)
    code = last_code(outbox)
    invalid(world_a, challenge.challenge_id, code, change=OTHER_CHANGE)
    invalid(world_a, challenge.challenge_id, code, decision="reject")
    invalid(world_a, challenge.challenge_id, code, owner=world_a.auditor)
    invalid(world_a, "otp_unknown", code)
    assert refusals(world_a.tenant.pk) == ["change", "decision", "owner", "unknown"]
    # Refusals of the binding never evaluate the code, so they cost no tries.
    assert DecisionChallenge.objects.get().failures == 0
    assert verify(world_a, challenge.challenge_id, code).token


@pytest.mark.django_db
def test_a_new_challenge_replaces_the_previous_code(world_a: TenantWorld, outbox: list[Any]) -> None:
    first = start(world_a)
    first_code = last_code(outbox)
    second = start(world_a)
    second_code = last_code(outbox)
    invalid(world_a, first.challenge_id, first_code)
    assert verify(world_a, second.challenge_id, second_code).token
    assert LedgerEvent.objects.of_type("authority.code_sent").order_by("seq").last().payload["replaced"] == 1


@pytest.mark.django_db
def test_challenges_per_owner_and_change_are_rate_limited(world_a: TenantWorld, outbox: list[Any]) -> None:
    t0 = timezone.now()
    for minute in range(3):
        start(world_a, now=t0 + dt.timedelta(minutes=minute))
    with pytest.raises(ApplicationError) as caught:
        start(world_a, now=t0 + dt.timedelta(minutes=5))
    assert (caught.value.code, caught.value.http_status) == ("too_many_challenges", 429)
    assert caught.value.retry_after == 10 * 60 + 1
    assert len(outbox) == 3 and DecisionChallenge.objects.count() == 3
    start(world_a, change=OTHER_CHANGE, now=t0 + dt.timedelta(minutes=5))  # another change is counted apart
    start(world_a, now=t0 + dt.timedelta(minutes=15, seconds=1))  # the first one left the window
    assert refusals(world_a.tenant.pk) == ["rate_limited"]


@pytest.mark.django_db
def test_no_usable_address_fails_closed(world_a: TenantWorld, outbox: list[Any]) -> None:
    for address in ("", "not-an-address"):
        world_a.owner.email = address
        world_a.owner.save(update_fields=["email"])
        with pytest.raises(ApplicationError) as caught:
            start(world_a)
        assert (caught.value.code, caught.value.http_status) == ("email_unavailable", 503)
    assert not DecisionChallenge.objects.exists() and outbox == []
    assert refusals(world_a.tenant.pk) == ["email_unavailable", "email_unavailable"]


@pytest.mark.django_db
def test_smtp_down_fails_closed_and_leaves_nothing_usable(world_a: TenantWorld, settings: Any) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = int(probe.getsockname()[1])
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", closed_port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    with pytest.raises(ApplicationError) as caught:
        start(world_a)
    assert (caught.value.code, caught.value.http_status) == ("email_unavailable", 503)
    assert not DecisionChallenge.objects.exists()
    assert not LedgerEvent.objects.of_type("authority.code_sent").exists()
    assert refusals(world_a.tenant.pk) == ["email_unavailable"]


@pytest.mark.django_db
def test_a_real_smtp_server_receives_the_code(world_a: TenantWorld, smtp: Any) -> None:
    challenge = start(world_a)
    [(recipients, message)] = smtp.received
    assert recipients == ["owner@alpha.test"]
    body = message.get_payload(decode=True).decode()
    found = CODE.search(body)
    assert found is not None and CHANGE in body
    issued = verify(world_a, challenge.challenge_id, found.group(1))
    assert (
        token_consume(
            token=issued.token, agent=world_a.agent, change_id=CHANGE, owner=world_a.owner, decision="approve"
        ).assurance
        == "email_otp"
    )


@pytest.mark.django_db(transaction=True)
def test_fifty_parallel_wrong_guesses_at_most_five_are_evaluated(settings: Any) -> None:
    assert connection.vendor == "postgresql"
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    mail.outbox = []
    world = build_tenant("guesser")
    challenge = start(world)
    code = last_code(mail.outbox)
    barrier = threading.Barrier(50)
    outcomes: list[str] = []
    lock = threading.Lock()

    def guess(n: int) -> None:
        from django.db import connection as own  # each thread has its own connection

        attempt = f"{(int(code) + 1 + n) % 1_000_000:06d}"
        try:
            barrier.wait()
            try:
                verify(world, challenge.challenge_id, attempt)
                outcome = "ok"
            except ApplicationError as error:
                outcome = error.code
            with lock:
                outcomes.append(outcome)
        finally:
            own.close()

    threads = [threading.Thread(target=guess, args=(n,)) for n in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert Counter(outcomes) == {"wrong_code": 5, "invalid_challenge": 45}
    row = DecisionChallenge.objects.get()
    assert (row.failures, row.status) == (5, ChallengeStatus.DEAD)
    assert LedgerEvent.objects.of_type("authority.code_failed").count() == 5
    assert ledger_verify(chain_id=world.tenant.pk).ok


@pytest.mark.django_db
def test_canary_the_code_appears_nowhere_but_in_the_email(
    world_a: TenantWorld, smtp: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # Every logger at DEBUG, whatever its own configuration says.
    for name in [""] + list(logging.root.manager.loggerDict):
        caplog.set_level(logging.DEBUG, logger=name)
    # And every SQL statement with its parameters logged (django.db.backends, as under DEBUG).
    connection.force_debug_cursor = True
    seen: list[str] = []
    challenge = start(world_a)
    seen.append(repr(challenge))
    [(_, message)] = smtp.received
    found = CODE.search(message.get_payload(decode=True).decode())
    assert found is not None
    code = found.group(1)
    with pytest.raises(WrongCode) as caught:
        verify(world_a, challenge.challenge_id, wrong(code))
    seen += [str(caught.value), repr(caught.value), caught.value.detail]
    with pytest.raises(ApplicationError) as crossed:
        verify(world_a, challenge.challenge_id, code, decision="reject")
    seen += [str(crossed.value), repr(crossed.value)]
    issued = verify(world_a, challenge.challenge_id, code)
    seen.append(repr(issued))
    seen.append(
        repr(
            token_consume(
                token=issued.token, agent=world_a.agent, change_id=CHANGE, owner=world_a.owner, decision="approve"
            )
        )
    )
    with pytest.raises(ApplicationError) as reused:
        verify(world_a, challenge.challenge_id, code)
    seen += [str(reused.value), repr(reused.value)]
    # aiosmtpd's own logger ("mail.log") is the mail server carrying the e-mail: left out.
    records = [record for record in caplog.records if not record.name.startswith("mail.log")]
    connection.force_debug_cursor = False
    assert any(record.name == "django.db.backends" for record in records), "the capture would prove nothing"
    seen += [record.getMessage() for record in records]
    seen += [record.exc_text or "" for record in records]
    seen += [event.canonical for event in LedgerEvent.objects.all()]
    seen += [repr(list(model.objects.values())) for model in (DecisionChallenge, DecisionToken)]
    hits = [text for text in seen if code in text]
    assert hits == []
    assert LedgerEvent.objects.of_type("authority.code_sent").exists()


@pytest.mark.django_db
def test_the_email_speaks_the_sites_language(world_a: TenantWorld, outbox: list[Any], settings: Any) -> None:
    settings.LANGUAGE_CODE = "zh-hans"
    start(world_a, decision="reject")
    found = re.search(r"您的验证码：(\d{6})", outbox[-1].body)
    assert found is not None and "拒绝" in outbox[-1].body and "的确认码" in outbox[-1].subject
