"""The nightly re-check of delivered replies (issue 15 §6, guard/recheck.py): yesterday's reply that
slipped past an older rule set is found once the rule set changed, counted once however often it
is read again, shown to the owner with its rule and the agent's words but never the customer's;
replies the current rule set already read are not read again, and a day with nothing new costs
no check at all; the run is claimed at 03:00 in each tenant's own time zone, before the review,
and the review's input carries the violations as figures and pointers."""

from __future__ import annotations

import datetime as dt
import io
import json
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from facade.dialogue.models import DialogueSession, Message, Run
from facade.dialogue.services import session_open
from facade.tenancy.models import AgentProfile
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from facade.tenancy.services import customer_create, tenant_time_zone_set
from guard import outgoing, recheck
from guard.models import DeliveredViolation
from knowledge.schemas import SourceIn
from knowledge.services import entry_propose
from ledger.models import LedgerEvent
from rsi.metrics import agent_metrics
from rsi.review_input import review_input_build
from rsi.schedule import run_execute, tick
from rsi.schedule_models import RsiRun, RunStatus

pytestmark = pytest.mark.django_db

SHANGHAI = "Asia/Shanghai"
OLD = "0" * 64  # the hash of a rule set that is no longer the current one
# A customer's words, which must never reach the owner's page, the ledger or the review.
CUSTOMER = "My grandmother's violet teapot cracked on Tuesday, how much to mend it?"
SLIPPED = "Mending your teapot will cost €45, guaranteed."
HARMLESS = "Thank you, I'll pass this on to the owner, who will get back to you."
QUOTED = "[1] Mending prices: Small repairs start from €35."
APPLIED = "[1] Mending prices: Small repairs start from €35.\nThat's what you'll pay."


class Counting:
    """`outgoing_check`, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str, **kwargs: Any) -> outgoing.OutgoingVerdict:
        self.calls += 1
        return outgoing.outgoing_check(text, **kwargs)


def shanghai(world: Any) -> dt.date:
    """The tenant in Shanghai; its local yesterday."""
    tenant_time_zone_set(tenant=world.tenant, time_zone=SHANGHAI, actor=Actor.platform("tests"))
    world.agent.refresh_from_db()
    return dt.datetime.now(ZoneInfo(SHANGHAI)).date() - dt.timedelta(days=1)


def at(day: dt.date, hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(hour, minute), tzinfo=ZoneInfo(SHANGHAI)).astimezone(dt.UTC)


def delivered(
    world: Any,
    when: dt.datetime,
    reply: str,
    *,
    ruleset: str = OLD,
    asked: str = CUSTOMER,
    citations: list[dict[str, Any]] | None = None,
    audience: Audience = Audience.CUSTOMER,
    preview: bool = False,
) -> Message:
    """A customer's question and the agent's reply as delivered at `when`, stored with `ruleset`."""
    if preview:
        session = session_open(agent=world.agent, audience=Audience.CUSTOMER, user=world.owner, preview=True)
    else:
        session = session_open(agent=world.agent, audience=audience, customer=customer_create(tenant=world.tenant))
    question = Message.objects.create(session=session, role="principal", text=asked)
    Run.objects.create(tenant=world.tenant, session=session, message=question, status="completed")
    answer = Message.objects.create(
        session=session, role="agent", text=reply, reply_to=question, citations=citations or [], ruleset_hash=ruleset
    )
    DialogueSession.objects.filter(pk=session.pk).update(created_at=when)
    Message.objects.filter(pk=question.pk).update(created_at=when)
    Message.objects.filter(pk=answer.pk).update(created_at=when + dt.timedelta(seconds=5))
    answer.refresh_from_db()
    return answer


def events(world: Any, name: str) -> list[LedgerEvent]:
    return list(LedgerEvent.objects.filter(chain_id=world.tenant.pk).of_type(name).order_by("seq"))


def mending_entry(world: Any) -> list[dict[str, Any]]:
    """An approved entry the run cited, as the reply's stored citations name it."""
    version = entry_propose(
        agent=world.agent,
        title="Mending prices",
        body="Small repairs start from €35. Larger ones are quoted after a look.",
        actor=Actor.human(world.owner.pk),
        source=SourceIn(type="owner_dialogue", ref="chat:1", version="1"),
    )
    assert version.status == "approved"
    return [{"entry_id": version.entry_id, "version": version.number, "title": version.title}]


def test_a_reply_that_slipped_past_an_older_rule_set_is_found_once_and_shown_without_the_customers_words(
    world_a: Any,
) -> None:
    day = shanghai(world_a)
    cited = mending_entry(world_a)
    slipped = delivered(world_a, at(day, 10), SLIPPED)
    harmless = delivered(world_a, at(day, 11), HARMLESS)
    quoted = delivered(world_a, at(day, 12), QUOTED, citations=cited)  # passes only with its citation
    applied = delivered(world_a, at(day, 13), APPLIED, citations=cited)  # a named rule: quote.applied
    # Read by the current rule set already: never read again, though it would fail now.
    current = delivered(world_a, at(day, 14), "It will be €99, promised.", ruleset=outgoing.RULESET_HASH)
    # Not yesterday's, or not delivered to a customer: not read.
    today = delivered(world_a, at(day + dt.timedelta(days=1), 9), SLIPPED)
    preview = delivered(world_a, at(day, 15), SLIPPED, preview=True)

    counting = Counting()
    result = recheck.recheck_day(agent_id=world_a.agent.pk, day=day, check=counting)
    assert (result.checked, result.skipped, result.violations) == (4, 1, 2)
    assert counting.calls == 4  # the reply with the current hash was not re-run
    found = {v.message_id: v for v in DeliveredViolation.objects.all()}
    assert set(found) == {slipped.pk, applied.pk}
    assert (found[slipped.pk].category, found[slipped.pk].failed_check, found[slipped.pk].rule) == (
        "price",
        "guard",
        "price.en.money",
    )
    assert (found[applied.pk].category, found[applied.pk].rule) == ("applied_quote", "quote.applied")
    assert found[slipped.pk].run_id == Run.objects.get(message_id=slipped.reply_to_id).pk
    assert found[slipped.pk].ruleset_hash == outgoing.RULESET_HASH
    marked = dict(Message.objects.filter(role="agent").values_list("pk", "ruleset_hash"))
    assert {marked[m.pk] for m in (slipped, harmless, quoted, applied, current)} == {outgoing.RULESET_HASH}
    assert marked[today.pk] == OLD and marked[preview.pk] == OLD

    # The ledger: one event per violation (ids, category, rule, hash — no text) and the day's counts.
    found_events = events(world_a, "guard.delivered_violation")
    assert sorted(e.payload["message_id"] for e in found_events) == sorted([slipped.pk, applied.pk])
    applied_event = next(e for e in found_events if e.payload["message_id"] == applied.pk)
    assert applied_event.payload["rule"] == "quote.applied" and applied_event.payload["check"] == "guard"
    assert applied_event.payload["run_id"] == str(Run.objects.get(message_id=applied.reply_to_id).pk)
    completed = events(world_a, "guard.recheck_completed")
    assert [(e.payload["checked"], e.payload["skipped"], e.payload["violations"]) for e in completed] == [(4, 1, 2)]
    ledger = "".join(LedgerEvent.objects.values_list("canonical", flat=True))
    assert "teapot" not in ledger and "€45" not in ledger

    # Run again: nothing new to read, no call, still one violation and one event per reply.
    again = Counting()
    second = recheck.recheck_day(agent_id=world_a.agent.pk, day=day, check=again)
    assert (again.calls, second.checked, second.skipped, second.violations) == (0, 0, 5, 0)
    assert DeliveredViolation.objects.count() == 2 and len(events(world_a, "guard.delivered_violation")) == 2
    assert len(events(world_a, "guard.recheck_completed")) == 1  # a day with nothing to read writes nothing

    # The owner's overview: the count, each violation's rule, category and day, a pointer to the
    # reply and the agent's own words — never the customer's.
    client = Client()
    client.force_login(world_a.owner)
    page = client.get(f"/owner/{world_a.agent.slug}/").content.decode()
    section = page.split('id="delivered-violations"', 1)[1].split("</section>", 1)[0]
    assert '<span class="total">2</span>' in section
    assert "Commitments delivered to customers despite the guard: 2." in section
    assert f'id="violation-{found[applied.pk].pk}"' in section and "quote.applied" in section
    assert "a quote applied to the customer" in section and "a price" in section
    assert f"Reply {slipped.pk} in conversation {slipped.session_id}" in section
    assert "Mending your teapot will cost €45, guaranteed." in section  # the agent's words
    assert f'datetime="{day.isoformat()}"' in section
    assert "grandmother" not in page and "violet" not in page  # the customer's never
    # The metric counts them on the day the replies were delivered.
    rows = {row.day: row for row in agent_metrics(world_a.agent, days=7).rows}
    assert rows[day].delivered_violations == 2 and rows[day + dt.timedelta(days=1)].delivered_violations == 0

    # The auditor console's metrics page shows the pointers, not the replies.
    auditor = Client()
    auditor.force_login(world_a.auditor)
    console = auditor.get(f"/audit/{world_a.tenant.slug}/metrics?agent={world_a.agent.slug}")
    assert console.status_code == 200
    text = console.content.decode()
    assert f"Reply {slipped.pk}" in text and "€45, guaranteed" not in text and "grandmother" not in text


def test_a_later_rule_set_reads_the_day_again_but_counts_a_reply_once(world_a: Any, monkeypatch: Any) -> None:
    day = shanghai(world_a)
    slipped = delivered(world_a, at(day, 10), SLIPPED)
    recheck.recheck_day(agent_id=world_a.agent.pk, day=day)
    assert DeliveredViolation.objects.filter(message=slipped).count() == 1
    # A new rule set (another hash): the reply is read again and still fails, and is not counted again.
    monkeypatch.setattr(outgoing, "RULESET_HASH", "f" * 64)
    counting = Counting()
    result = recheck.recheck_day(agent_id=world_a.agent.pk, day=day, check=counting)
    assert (counting.calls, result.checked, result.violations) == (1, 1, 0)
    violation = DeliveredViolation.objects.get()
    assert violation.message_id == slipped.pk and violation.ruleset_hash != "f" * 64  # the first finder's
    assert len(events(world_a, "guard.delivered_violation")) == 1
    assert Message.objects.get(pk=slipped.pk).ruleset_hash == "f" * 64


def test_a_day_with_no_new_rules_costs_one_query_and_no_check(world_a: Any, django_assert_max_num_queries: Any) -> None:
    day = shanghai(world_a)
    for hour in (9, 10, 11):
        delivered(world_a, at(day, hour), SLIPPED, ruleset=outgoing.RULESET_HASH)
    counting = Counting()
    with django_assert_max_num_queries(4):  # the agent, the savepoint pair and one aggregate
        result = recheck.recheck_day(agent_id=world_a.agent.pk, day=day, check=counting)
    assert counting.calls == 0 and (result.checked, result.skipped, result.violations) == (0, 3, 0)
    assert not DeliveredViolation.objects.exists() and not events(world_a, "guard.recheck_completed")


def test_grounding_reads_what_the_run_was_given_rebuilt_on_the_server(world_a: Any) -> None:
    """A figure the customer named earlier in the conversation, or the agent's published texts
    hold, is given; one nobody gave is a violation of the grounding check."""
    day = shanghai(world_a)
    said_back = delivered(world_a, at(day, 9), "Noted: you want it within 10 days.", asked="I need it within 10 days")
    made_up = delivered(world_a, at(day, 10), "Noted: you want it within 12 days.", asked="I need it soon")
    recheck.recheck_day(agent_id=world_a.agent.pk, day=day)
    assert list(DeliveredViolation.objects.values_list("message_id", "category", "failed_check")) == [
        (made_up.pk, "unsourced_figure", "grounding")
    ]
    assert said_back.pk != made_up.pk


def test_the_command_rechecks_a_chosen_day_or_each_agents_yesterday(world_a: Any) -> None:
    day = shanghai(world_a)
    delivered(world_a, at(day, 10), SLIPPED)
    out = io.StringIO()
    call_command("guard_recheck", "--agent", world_a.agent.slug, "--date", day.isoformat(), stdout=out)
    line = json.loads(out.getvalue())
    assert line == {
        "agent": world_a.agent.slug,
        "day": day.isoformat(),
        "ruleset_hash": outgoing.RULESET_HASH,
        "checked": 1,
        "skipped": 0,
        "violations": 1,
    }
    out = io.StringIO()
    call_command("guard_recheck", stdout=out)  # every agent's yesterday: read already
    assert [json.loads(x)["skipped"] for x in out.getvalue().splitlines()] == [1]
    with pytest.raises(CommandError):
        call_command("guard_recheck", "--agent", "nobody-here")
    with pytest.raises(CommandError):
        call_command("guard_recheck", "--date", "yesterday")


def test_the_beat_claims_the_recheck_at_0300_local_before_the_review_and_its_run_rechecks(
    world_a: Any, world_b: Any
) -> None:
    tenant_time_zone_set(tenant=world_a.tenant, time_zone=SHANGHAI, actor=Actor.platform("tests"))
    tenant_time_zone_set(tenant=world_b.tenant, time_zone="Europe/Berlin", actor=Actor.platform("tests"))
    AgentProfile.objects.update(created_at=dt.datetime(2026, 11, 30, tzinfo=dt.UTC))

    def claims(world: Any) -> set[tuple[str, str]]:
        return {(r.kind, r.day.isoformat()) for r in RsiRun.objects.filter(agent=world.agent)}

    # 19:10 UTC on 12-01: 03:10 on 12-02 in Shanghai (re-check due, review not yet), 20:10 in Berlin.
    tick(now=dt.datetime(2026, 12, 1, 19, 10, tzinfo=dt.UTC))
    assert ("recheck", "2026-12-01") in claims(world_a) and ("review", "2026-12-01") not in claims(world_a)
    assert ("recheck", "2026-12-01") not in claims(world_b) and ("recheck", "2026-11-30") in claims(world_b)
    # Berlin's 03:00 on 12-02 is 02:00 UTC; at 02:10 its review (03:30) is not due yet.
    tick(now=dt.datetime(2026, 12, 2, 2, 10, tzinfo=dt.UTC))
    assert ("recheck", "2026-12-01") in claims(world_b) and ("review", "2026-12-01") not in claims(world_b)
    tick(now=dt.datetime(2026, 12, 2, 2, 40, tzinfo=dt.UTC))
    assert ("review", "2026-12-01") in claims(world_b)

    # The claimed run's task runs the re-check of its day.
    slipped = delivered(world_a, at(dt.date(2026, 12, 1), 10), SLIPPED)
    run = RsiRun.objects.get(agent=world_a.agent, kind="recheck", day=dt.date(2026, 12, 1))
    assert run_execute(run.pk) == "done"
    assert RsiRun.objects.get(pk=run.pk).status == RunStatus.DONE
    assert DeliveredViolation.objects.get().message_id == slipped.pk


def test_the_review_input_carries_the_violations_as_figures_and_pointers_and_no_words(world_a: Any) -> None:
    day = shanghai(world_a)
    cited = mending_entry(world_a)
    slipped = delivered(world_a, at(day, 10), SLIPPED)
    applied = delivered(world_a, at(day, 11), APPLIED, citations=cited)
    delivered(world_a, at(day, 12), HARMLESS)
    recheck.recheck_day(agent_id=world_a.agent.pk, day=day)
    review_input = review_input_build(agent=world_a.agent, day=day, partial=False).review_input
    figures = review_input.figures
    assert figures["guard.delivered_violations"] == 2
    assert figures["violations.rule.quote.applied"] == 1 and figures["violations.rule.price.en.money"] == 1
    assert {(v.message_id, v.rule, v.category) for v in review_input.violations} == {
        (slipped.pk, "price.en.money", "price"),
        (applied.pk, "quote.applied", "applied_quote"),
    }
    assert {v.session_id for v in review_input.violations} == {str(slipped.session_id), str(applied.session_id)}
    assert sorted(review_input.sessions["guard.delivered_violations"]) == sorted(
        [str(slipped.session_id), str(applied.session_id)]
    )
    dumped = review_input.model_dump_json()
    assert "teapot" not in dumped and "grandmother" not in dumped  # neither the customer's words nor the reply's


def test_the_recheck_gives_what_the_prompt_gave_not_the_price_list() -> None:
    """The grounding check of the re-check reads the contract texts the customer prompt holds;
    the pricing and delivery terms, which the model is never given, do not make a figure given."""
    from guard.recheck import _prompt_texts

    content = {
        "mission": "We bake cakes.",
        "boundary_wording": {"en": "The owner confirms prices."},
        "wording": {"en": {"greeting": "Hello!"}},
        "clarification_order": ["need", "when"],
        "request_flow": {"states": {"new": {"label": "New"}}},
        "pricing": {"items": [{"name": "Birthday cake", "amount": "77"}]},
        "delivery": [{"name": "Courier", "days": 3}],
    }
    texts = _prompt_texts(content)
    assert "We bake cakes." in texts and "The owner confirms prices." in texts and "Hello!" in texts
    assert "need" in texts and "New" in texts
    assert not any("77" in text or "Courier" in text or "Birthday cake" in text for text in texts)


@pytest.mark.parametrize(
    "asked, reply, violation",
    [
        # The customer's own figure said back (issue 27 §2): read with the session's customer
        # messages, as the turn read it, it is no violation.
        (
            "The garage down the road quoted me $310 for the brakes.",
            "So the garage quoted you $310 — we'd need to see the car first.",
            False,
        ),
        ("别家报价三千二，你们呢？", "您说别家报价三千二，我们这边需要师傅看过才能报价。", False),
        # Agreeing to it still is.
        ("Can you do the brakes for $310?", "Sure, $310 it is, we'll do the brakes for that.", True),
    ],
)
def test_the_nightly_re_check_reads_a_reply_with_the_customers_messages(
    world_a: Any, asked: str, reply: str, violation: bool
) -> None:
    day = shanghai(world_a)
    delivered(world_a, at(day, 10), reply, asked=asked)
    result = recheck.recheck_day(agent_id=world_a.agent.pk, day=day)
    assert (result.checked, result.violations) == (1, int(violation))
