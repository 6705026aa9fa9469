"""`rsi_simulate` as a person drives it (issue 26 §6): the links it prints point at the running
site (`--site`, FACADE_PUBLIC_URL, or the address `make run` serves — else it says how to set
it), and its scripted customers are marked as simulated wherever an owner sees them, their
requests never counted as waiting for the owner and never e-mailed."""

from __future__ import annotations

import datetime as dt
import io
from typing import Any

import pytest
from celery.signals import before_task_publish
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from worker_support import celery_worker_pool

from facade.dialogue.models import CustomerRequest, DialogueSession
from facade.dialogue.notify import request_notify_owners
from facade.dialogue.selectors import open_requests_for_owner
from rsi.simulate import day_play, night_review

pytestmark = pytest.mark.django_db

NOTIFY = "facade.dialogue.tasks.request_notify_owners"
DAY = dt.date(2026, 11, 2)
SITE_FILE = "public_url"  # what `make run` writes in FACADE_VAR_DIR (rsi.simulate.SITE_FILE)
CUSTOMERS = 9  # three ask the gap; the six others are each of the scripted conversations once


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("rsi_simulate", *args, stdout=out)
    return out.getvalue()


def page(user: Any, path: str, language: str = "en") -> str:
    client = Client()
    client.force_login(user)
    response = client.get(path, HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def no_site(settings: Any, tmp_path: Any, monkeypatch: Any) -> Any:
    """A terminal with no FACADE_PUBLIC_URL, and a var directory `make run` has not written."""
    monkeypatch.delenv("FACADE_PUBLIC_URL", raising=False)
    settings.VAR_DIR = tmp_path
    settings.FACADE_PUBLIC_URL = "http://127.0.0.1:8000"
    return tmp_path


def test_the_links_point_at_the_running_site_or_say_how_to_set_it(world_a: Any, no_site: Any) -> None:
    slug = world_a.agent.slug
    given = run("--agent", slug, "--days", "1", "--customers-per-day", "3", "--site", "http://127.0.0.1:8300/")
    assert f"http://127.0.0.1:8300/owner/{slug}/inbox" in given and ":8000" not in given
    assert "pass --site" not in given

    # The address `make run PORT=8300` wrote as it started (the Makefile) is the running site.
    (no_site / SITE_FILE).write_text("http://127.0.0.1:8300\n")
    served = run("--agent", slug, "--days", "1", "--customers-per-day", "3")
    assert f"http://127.0.0.1:8300/owner/{slug}/" in served and ":8000" not in served

    # Nothing says where the site runs: the default, and how to point the links elsewhere.
    (no_site / SITE_FILE).unlink()
    assumed = run("--agent", slug, "--days", "1", "--customers-per-day", "3")
    assert f"http://127.0.0.1:8000/owner/{slug}/inbox" in assumed
    assert "pass --site http://HOST:PORT, or set FACADE_PUBLIC_URL" in assumed

    with pytest.raises(CommandError, match="--site is the site's address"):
        run("--agent", slug, "--days", "1", "--site", "8300")


def test_simulated_customers_are_marked_and_never_wait_for_the_owner(
    world_a: Any, django_capture_on_commit_callbacks: Any
) -> None:
    sent: list[str] = []

    def record(sender: Any = None, **_: Any) -> None:
        sent.append(str(sender))

    before_task_publish.connect(record, weak=False)
    try:
        with celery_worker_pool([NOTIFY], count=0), django_capture_on_commit_callbacks(execute=True):
            played = day_play(agent=world_a.agent, day=DAY, customers=CUSTOMERS, seed=13)
    finally:
        before_task_publish.disconnect(record)
    assert NOTIFY not in sent  # the request's e-mail to the owners is not even sent for
    sessions = DialogueSession.objects.filter(pk__in=played.session_ids)
    assert sessions.count() == CUSTOMERS and all(s.simulated for s in sessions)
    requests = CustomerRequest.objects.filter(session_id__in=played.session_ids)
    assert played.requests == requests.count() == 1
    request = requests.get()
    assert request.next_actor == "owner"  # were it real, it would wait for the owner

    # Home: not among the requests waiting, and said to be simulated beside the count.
    home = page(world_a.owner, "/")
    assert "Requests waiting for you: 0" in home and "Simulated, not counted: 1" in home
    assert "模拟请求（不计入）：1" in page(world_a.owner, "/", "zh-hans")
    # The owner chat's inbox and requests: nothing open waits.
    assert open_requests_for_owner(agent=world_a.agent) == ([], 0)
    # The Requests page lists it, marked, and not as waiting for the owner — in both languages.
    listed = page(world_a.owner, f"/owner/{world_a.agent.slug}/requests")
    item = listed[listed.index(f'id="request-{request.pk}"') :]
    item = item[: item.index("</h2>")]
    assert "badge-simulated" in item and "Simulated" in item and "Waiting for you" not in item
    assert "模拟" in page(world_a.owner, f"/owner/{world_a.agent.slug}/requests", "zh-hans")
    # The review's draft names them as simulated among its evidence; the auditor's session page too.
    report = night_review(agent=world_a.agent, day=DAY)
    draft = report.proposals[0]["change_id"]
    card = page(world_a.owner, f"/owner/{world_a.agent.slug}/inbox/{draft}/card")
    assert "Conversation with a simulated customer (rsi_simulate) on" in card
    assert "Conversation with a customer on" not in card
    assert "一位模拟顾客" in page(world_a.owner, f"/owner/{world_a.agent.slug}/inbox/{draft}/card", "zh-hans")
    session = page(world_a.auditor, f"/audit/{world_a.tenant.slug}/sessions/{request.session_id}")
    assert "badge-simulated" in session and "scripted traffic played by rsi_simulate" in session
    # No e-mail tells the owner of it.
    mail.outbox.clear()
    assert request_notify_owners(request.pk) == 0 and mail.outbox == []

    # The same request from a real customer waits, is counted and e-mailed.
    DialogueSession.objects.filter(pk=request.session_id).update(simulated=False)
    assert "Requests waiting for you: 1" in page(world_a.owner, "/")
    assert open_requests_for_owner(agent=world_a.agent)[1] == 1
    assert request_notify_owners(request.pk) == 1 and len(mail.outbox) == 1
