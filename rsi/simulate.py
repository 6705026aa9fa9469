"""A simulated week of customer traffic for trying the self-improvement loop (`manage.py
rsi_simulate`; README "Watch the loop").

Each simulated day is a local day of the tenant's time zone before today, so the owner overview's
charts show it.  Its customers — each a new customer identity, as a first visit to the chat makes
one — talk to the agent through the real customer runtime (`session_open`, `message_admit`,
`turn_handle`: the services the chat API and WebSocket call, with the agent's live contract and
its configured model), with the clock set to that day (time-machine), so every row and ledger
event of the day carries that day's time.  Then that night's review runs at 03:30 the next local
morning, as the schedule would run it.  The traffic is scripted and deterministic for a seed: a
question the demo knowledge cannot answer, asked by at least 3 distinct customers a day (the
review names a topic only then), questions it can answer (in English and Chinese), a price
question (the boundary wording, no commitment), a request registered after the clarification
questions, and a question only one customer asks (counted, never named).

Nothing here decides anything: the review's proposals wait in the inbox for the owner.  A day
that has its review already is skipped (reviews are one per agent and day, and a finished day's
report is final: traffic added to it would never be reviewed).  `today=True` plays today's traffic
at the real time instead, and today's review is partial (updated in place by the next run) — how
the owner sees the same questions answered after approving the draft.  Each played day writes
`simulation.day_played` at the real time, naming its sessions, so the ledger tells the demo's
backdated traffic from real service."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import random
import re
import uuid
import zoneinfo
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus

import time_machine
from django.conf import settings
from django.db import transaction
from django.http import HttpResponse

from facade.dialogue.models import CustomerRequest, Message, Run
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.services import message_admit, session_open
from facade.errors import ApplicationError
from facade.tenancy.identity import Principal, customer_cookie_name, set_customer_cookie
from facade.tenancy.models import AgentProfile, Customer
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from facade.tenancy.services import customer_create
from knowledge.models import KnowledgeMiss

from .metrics import citing_knowledge
from .review import review_run
from .review_input import local_today, time_zone_of
from .review_models import ReviewReport
from .simulate_events import SimulationDayPlayed, simulation_day_played

MIN_DAYS, MAX_DAYS, DEFAULT_DAYS = 1, 30, 7
MIN_CUSTOMERS, MAX_CUSTOMERS, DEFAULT_CUSTOMERS = 3, 40, 8
DEFAULT_SEED = 13
ACTOR = Actor.platform("rsi_simulate")
OPENS, CLOSES = dt.time(9, 0), dt.time(17, 0)  # the simulated customers come within these hours
REVIEW_AT = dt.time(3, 30)  # the schedule's review time (rsi/schedule_rules.py), the next morning

# The question the demo's knowledge cannot answer.  The same words every time: the review groups
# misses by a topic key made from the question's words.
GAP_QUESTION = "Do you offer gift wrapping?"
GAP_SHARE = 0.4  # of each day's customers, at least three (the review's k-anonymity threshold)
# The other conversations, in the order a day takes them (from a seeded offset); "{when}" and
# "{contact}" are filled per customer.
CONVERSATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("hours", ("What time do you open?",)),
    ("price", ("How much does a birthday cake cost?",)),
    ("request", ("I'd like to order a birthday cake", "{when}", "{contact}", "yes")),
    ("hours_zh", ("你们几点开门？",)),
    ("cakes", ("Do you do wedding cakes?", "Thanks, bye!")),
    ("one_asker", ("Can I leave my bike in your courtyard?",)),
)


@dataclass
class DayPlayed:
    """What one simulated day did (`skipped` says why when it played nothing)."""

    day: dt.date
    partial: bool = False
    skipped: str = ""
    sessions: int = 0
    messages: int = 0
    gap_askers: int = 0
    misses: int = 0
    answered: int = 0  # agent replies citing approved knowledge
    gap_answered: int = 0  # of them, replies to the gap question
    blocked: int = 0  # replies the commitment guard replaced
    requests: int = 0
    report: ReviewReport | None = None
    session_ids: list[str] = field(default_factory=list)


def simulation_check(*, agent: AgentProfile, days: int, customers: int, remote_model: bool) -> None:
    """Refuse what the simulation cannot do well: a number of days outside 1–30 (the overview
    shows 30), too few customers for the review to name a topic or too many for a demo, and —
    unless asked for — a remote model, which would be sent every scripted turn."""
    if not MIN_DAYS <= days <= MAX_DAYS:
        raise ApplicationError(
            "invalid_days", f"days must be {MIN_DAYS} to {MAX_DAYS} (got {days})", HTTPStatus.BAD_REQUEST
        )
    if not MIN_CUSTOMERS <= customers <= MAX_CUSTOMERS:
        raise ApplicationError(
            "invalid_customers",
            f"customers per day must be {MIN_CUSTOMERS} to {MAX_CUSTOMERS} (got {customers}): the review names "
            f"a topic only once {MIN_CUSTOMERS} distinct customers asked it",
            HTTPStatus.BAD_REQUEST,
        )
    provider = settings.FACADE_LLM_PROVIDER
    if provider != "offline" and not remote_model:
        raise ApplicationError(
            "remote_model",
            f"FACADE_LLM_PROVIDER is {provider!r}: the simulation would send every scripted turn (about "
            f"{days * customers * 2} model calls) to {settings.FACADE_LLM_BASE_URL or 'the remote model'}. "
            "Unset it to play on the offline model, or pass --remote-model to allow the calls",
            HTTPStatus.BAD_REQUEST,
        )


SITE_FILE = "public_url"  # in FACADE_VAR_DIR: the address `make run` serves, written as it starts


@dataclass(frozen=True)
class Site:
    """Where the printed links point, and how that was known (`given`: --site; `configured`:
    FACADE_PUBLIC_URL in the environment; `served`: what `make run` wrote; `assumed`: the
    default, which may not be where the site runs)."""

    url: str
    how: str


def site_address(*, given: str = "", environ: Mapping[str, str] | None = None) -> Site:
    """The running site's address for the links `rsi_simulate` prints.  A command run in another
    terminal than `make run PORT=8300` does not have the server's FACADE_PUBLIC_URL: `make run`
    leaves it in FACADE_VAR_DIR for it."""
    environ = os.environ if environ is None else environ
    if given.strip():
        url = given.strip().rstrip("/")
        if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
            raise ApplicationError(
                "invalid_site", f"--site is the site's address, such as http://127.0.0.1:8300 (got {url[:80]!r})"
            )
        return Site(url, "given")
    if environ.get("FACADE_PUBLIC_URL", "").strip():
        return Site(settings.FACADE_PUBLIC_URL.rstrip("/"), "configured")
    served = settings.VAR_DIR / SITE_FILE
    with contextlib.suppress(OSError):
        url = served.read_text(encoding="utf-8").strip().rstrip("/")
        if re.fullmatch(r"https?://\S+", url):
            return Site(url, "served")
    return Site(settings.FACADE_PUBLIC_URL.rstrip("/"), "assumed")


def day_script(day: dt.date, customers: int, seed: int) -> list[tuple[str, tuple[str, ...]]]:
    """The day's conversations, in the order the customers come: deterministic for (day, seed)."""
    rng = random.Random(f"{seed}:{day.isoformat()}")
    gap = min(customers, max(MIN_CUSTOMERS, round(customers * GAP_SHARE)))
    offset = rng.randrange(len(CONVERSATIONS))
    others = [CONVERSATIONS[(offset + i) % len(CONVERSATIONS)] for i in range(customers - gap)]
    script = [("gap", (GAP_QUESTION,))] * gap + others
    rng.shuffle(script)
    return script


def _moments(day: dt.date, zone: zoneinfo.ZoneInfo, count: int, seed: int) -> list[dt.datetime]:
    """When each of the day's customers comes: spread over the opening hours, a little jitter."""
    rng = random.Random(f"{seed}:{day.isoformat()}:times")
    opens = dt.datetime.combine(day, OPENS, tzinfo=zone)
    span = (dt.datetime.combine(day, CLOSES, tzinfo=zone) - opens) / count
    return [
        opens + span * i + dt.timedelta(minutes=rng.randrange(max(1, int(span.total_seconds() // 120))))
        for i in range(count)
    ]


def _principal(customer: Customer) -> Principal:
    """The principal the chat's edges would build from this customer's signed cookie."""
    response = HttpResponse()
    set_customer_cookie(response, customer.tenant, customer)
    name = customer_cookie_name(customer.tenant)
    return Principal(customer_cookies={name: response.cookies[name].value})


def _filled(text: str, day: dt.date, number: int) -> str:
    when = day + dt.timedelta(days=5)
    return text.format(when=f"{when:%A} {when.day} {when:%B}", contact=f"customer{number}@example.test")


def _converse(agent: AgentProfile, turns: tuple[str, ...], day: dt.date, number: int, played: DayPlayed) -> str:
    customer = customer_create(tenant=agent.tenant)
    principal = _principal(customer)
    session = session_open(agent=agent, audience=Audience.CUSTOMER, customer=customer, simulated=True)
    for text in turns:
        text = _filled(text, day, number)
        session = message_admit(principal=principal, session_id=session.pk, text=text)
        turn_handle(session=session, text=text)
        played.messages += 1
    return str(session.pk)


def _count(agent: AgentProfile, played: DayPlayed, gap_sessions: list[str]) -> None:
    replies = Message.objects.filter(session_id__in=played.session_ids, role="agent")
    played.answered = citing_knowledge(replies).count()
    played.gap_answered = citing_knowledge(replies.filter(session_id__in=gap_sessions)).count()
    played.misses = KnowledgeMiss.objects.filter(agent=agent, session_id__in=played.session_ids).count()
    runs = Run.objects.filter(session_id__in=played.session_ids)
    played.blocked = runs.exclude(guard_category="").count()
    played.requests = CustomerRequest.objects.filter(session_id__in=played.session_ids, kind="request").count()


def day_play(*, agent: AgentProfile, day: dt.date, customers: int, seed: int, now: bool = False) -> DayPlayed:
    """Play one day's scripted traffic through the customer runtime, with the clock on `day`
    (or, with `now`, at the real time: today's traffic).  Writes `simulation.day_played`."""
    zone = zoneinfo.ZoneInfo(time_zone_of(agent.tenant))
    script = day_script(day, customers, seed)
    played = DayPlayed(day=day, partial=now)
    gap_sessions: list[str] = []
    moments = _moments(day, zone, len(script), seed)
    for number, ((kind, turns), moment) in enumerate(zip(script, moments, strict=True), 1):
        if now:
            session_id = _converse(agent, turns, day, number, played)
        else:
            with time_machine.travel(moment, tick=True):
                session_id = _converse(agent, turns, day, number, played)
        played.session_ids.append(session_id)
        if kind == "gap":
            gap_sessions.append(session_id)
    played.sessions, played.gap_askers = len(played.session_ids), len(gap_sessions)
    _count(agent, played, gap_sessions)
    with transaction.atomic():
        simulation_day_played(
            tenant_id=agent.tenant_id,
            run_id=uuid.uuid4(),
            payload=SimulationDayPlayed(
                agent=agent.slug,
                day=day.isoformat(),
                time_zone=str(zone),
                seed=seed,
                customers=len(script),
                sessions=played.session_ids,
                messages=played.messages,
            ),
            actor=ACTOR,
        )
    return played


def night_review(*, agent: AgentProfile, day: dt.date) -> ReviewReport:
    """The review of `day` at 03:30 the next local morning, as the schedule runs it."""
    zone = zoneinfo.ZoneInfo(time_zone_of(agent.tenant))
    with time_machine.travel(dt.datetime.combine(day + dt.timedelta(days=1), REVIEW_AT, tzinfo=zone), tick=True):
        return review_run(agent_id=agent.pk, day=day)


def simulation_run(
    *,
    agent: AgentProfile,
    days: int = DEFAULT_DAYS,
    customers: int = DEFAULT_CUSTOMERS,
    seed: int = DEFAULT_SEED,
    today: bool = False,
    remote_model: bool = False,
) -> Iterator[DayPlayed]:
    """Play the `days` local days before today (oldest first), each followed by its night's
    review; or, with `today`, only today at the real time and today's partial review.  Yields
    each day as it is done.  A past day that has its review already is skipped."""
    simulation_check(agent=agent, days=days, customers=customers, remote_model=remote_model)
    current = local_today(agent.tenant)
    if today:
        played = day_play(agent=agent, day=current, customers=customers, seed=seed, now=True)
        played.report = review_run(agent_id=agent.pk, day=current)
        yield played
        return
    for back in range(days, 0, -1):
        day = current - dt.timedelta(days=back)
        reviewed = ReviewReport.objects.filter(agent=agent, day=day).first()
        if reviewed is not None and reviewed.status == ReviewReport.Status.FINISHED:
            yield DayPlayed(day=day, skipped="reviewed already", report=reviewed)
            continue
        played = day_play(agent=agent, day=day, customers=customers, seed=seed)
        played.report = night_review(agent=agent, day=day)
        yield played
