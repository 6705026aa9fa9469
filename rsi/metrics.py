"""The owner's metrics (issue 13): per agent and per local day of the tenant's time zone, computed
from the tables the facade already writes — one aggregate query per source, grouped by local day
in PostgreSQL (never a loop over sessions in Python).

Counted only on the agent's outward faces, never a preview (an owner trying the customer face is
not a customer), and each audience apart (issue 33 §4): the figures are the customers', and the
peers' (other agents over A2A or the peer API) are counted the same way in `Metrics.peers`,
never mixed into the customers'.  The review's figures (adoption, claims) are the agent's and
are counted with the customers' only.  Each day's row keeps the counts; every rate is one
count over another, computed from the counts (so the period's totals are the sums of the days'
counts and their rates are ratios of sums, not means of daily rates).  A rate whose denominator
is 0 is None ("no data"), not 0.

Definitions (the README repeats them):
- review adoption: review proposals (origin `review_report`) the owner decided that day
  (`decided_at`) and said yes to — approved, applied, or approved then failed to apply or later
  rolled back — over all review proposals decided that day (yes or `rejected`).  Expired ones
  were never decided and are not counted.  Healthy above 20 %.
- over-commitment: replies (runs) whose reply the commitment guard blocked and replaced
  (`Run.guard_category` set, a taboo's block aside) over all replies.
- delivered violations (a count that must be 0): replies delivered that day that a later rule
  set of the outgoing check blocks — found by the nightly re-check (guard/recheck.py), counted
  once per reply, on the day the reply was delivered.
- taboo blocks (a count, not charted): replies replaced because they said what an approved taboo
  lesson forbids (`Run.guard_category` `taboo`): the owner's wording, not an over-commitment.
- model trouble (counts, not charted; issue 29): replies whose model's text was no answer even on
  its rewrite — empty (`Run.stop_reason` `empty_reply`) or junk such as a tool call written as
  text (`malformed_reply`, also `Run.guard_category`, and no over-commitment) — and runs the model
  server failed (`provider_error`): a weak or failing model shows here before customers complain.
- knowledge hit: agent replies that cite approved knowledge (a citation of a knowledge entry in
  `Message.citations`; a reply citing only the published price list or delivery options, whose
  citations have no entry, answered from the contract and is no knowledge hit) over
  knowledge questions: those replies plus recorded misses (`KnowledgeMiss`, a search no approved
  knowledge answered).
- clarification completion: a request flow is counted from the agent's first `submit_request`
  call in a session (the earlier field questions are plain text and leave no row); completed when
  a `submit_request` call succeeded — the customer confirmed the summary and the request was
  registered.  Distinct sessions with such a call that day, over distinct sessions with any.
- request conversion: requests registered that day (`CustomerRequest`, kind `request`) over
  sessions opened that day.
- satisfaction: the mean of that day's ratings (1–5 stars) and how many there were.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any
from zoneinfo import ZoneInfo

from django.db.models import Count, F, Q, QuerySet, Sum, TextField
from django.db.models.functions import Cast, TruncDate
from django.utils import timezone
from pydantic import BaseModel, computed_field

from approvals.models import ChangeProposal, ProposalStatus
from approvals.rules import Origin
from facade.dialogue.models import CustomerRequest, DialogueSession, Message, Rating, Run, Span
from facade.tenancy.models import AgentProfile
from guard.models import DeliveredViolation
from knowledge.models import KnowledgeMiss

from .review_models import ReviewReport
from .schedule_rules import day_bounds

MIN_DAYS, MAX_DAYS, DEFAULT_DAYS = 1, 90, 30
TABOO = "taboo"  # the guard category of a reply an approved taboo stopped (runtime/loop.py)
MALFORMED = "malformed_reply"  # the guard category of a reply that was no answer (runtime/malformed.py)
HEALTHY_ADOPTION = 0.2
OUTWARD = ("customer", "peer")  # the audiences counted, each apart
DELIVERED_VIOLATIONS_BASIS = (
    "measured: the nightly re-check runs the current outgoing check over the previous day's delivered "
    "replies; a reply it blocks is counted once, on the day it was delivered; must be 0"
)
# The owner said yes to these, whatever happened after; `rejected` is the only no.
ADOPTED = (ProposalStatus.APPROVED, ProposalStatus.APPLIED, ProposalStatus.FAILED, ProposalStatus.ROLLED_BACK)
DECIDED = (*ADOPTED, ProposalStatus.REJECTED)

# A stored citation of a knowledge entry: its `entry_id` is a number (a published part's is null).
# Matched on the JSON's text, the same on PostgreSQL (jsonb's text) and SQLite (the stored JSON):
# a title or snippet that says `"entry_id": 5` is escaped (`\"entry_id\"`) and does not match.
_CITES_ENTRY = r'"entry_id": ?[0-9]'


def citing_knowledge(replies: QuerySet[Message]) -> QuerySet[Message]:
    """The replies among `replies` that cite a knowledge entry (a knowledge hit)."""
    return replies.alias(citations_text=Cast("citations", TextField())).filter(citations_text__regex=_CITES_ENTRY)


COUNTS = (
    "sessions",
    "replies",
    "blocked_replies",
    "taboo_blocks",
    "knowledge_answered",
    "knowledge_missed",
    "flows_started",
    "flows_confirmed",
    "requests",
    "review_decided",
    "review_adopted",
    "review_claims",
    "review_dropped",
    "ratings",
    "rating_stars",
    "delivered_violations",
    "empty_replies",
    "malformed_replies",
    "model_failures",
)
# The charted metrics, in page order: (name, kind) — a rate in [0, 1] or a mean of stars.
METRICS: tuple[tuple[str, str], ...] = (
    ("review_adoption", "rate"),
    ("hallucinated_claims", "rate"),
    ("over_commitment", "rate"),
    ("knowledge_hit", "rate"),
    ("clarification_completion", "rate"),
    ("request_conversion", "rate"),
    ("satisfaction", "stars"),
)
# The counts under each metric: (numerator, denominator) field names of Counts (satisfaction: the
# stars summed over the ratings).
PARTS: dict[str, tuple[str, str]] = {
    "review_adoption": ("review_adopted", "review_decided"),
    "hallucinated_claims": ("review_dropped", "review_claims"),
    "over_commitment": ("blocked_replies", "replies"),
    "knowledge_hit": ("knowledge_answered", "knowledge_questions"),
    "clarification_completion": ("flows_confirmed", "flows_started"),
    "request_conversion": ("requests", "sessions"),
    "satisfaction": ("rating_stars", "ratings"),
}


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


class Counts(BaseModel):
    """The counts of one day (or the sum over days) and the metrics made from them."""

    sessions: int = 0
    replies: int = 0
    blocked_replies: int = 0
    taboo_blocks: int = 0  # replies replaced because they said what an approved taboo forbids
    knowledge_answered: int = 0
    knowledge_missed: int = 0
    flows_started: int = 0
    flows_confirmed: int = 0
    requests: int = 0
    review_decided: int = 0
    review_adopted: int = 0
    review_claims: int = 0  # every claim the day's review reports had, the dropped ones included
    review_dropped: int = 0  # claims the review's gate dropped (no evidence, a wrong pointer or figure)
    ratings: int = 0
    rating_stars: int = 0
    delivered_violations: int = 0  # delivered replies a later rule set blocks (guard.DeliveredViolation)
    empty_replies: int = 0  # the model answered nothing, even on its rewrite (stop reason empty_reply)
    malformed_replies: int = 0  # the model's text was no answer, even on its rewrite (malformed_reply)
    model_failures: int = 0  # the model server failed the run (stop reason provider_error)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def knowledge_questions(self) -> int:
        return self.knowledge_answered + self.knowledge_missed

    @computed_field  # type: ignore[prop-decorator]
    @property
    def review_adoption(self) -> float | None:
        return _ratio(self.review_adopted, self.review_decided)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def hallucinated_claims(self) -> float | None:
        return _ratio(self.review_dropped, self.review_claims)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def over_commitment(self) -> float | None:
        return _ratio(self.blocked_replies, self.replies)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def knowledge_hit(self) -> float | None:
        return _ratio(self.knowledge_answered, self.knowledge_questions)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def clarification_completion(self) -> float | None:
        return _ratio(self.flows_confirmed, self.flows_started)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def request_conversion(self) -> float | None:
        return _ratio(self.requests, self.sessions)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def satisfaction(self) -> float | None:
        return round(self.rating_stars / self.ratings, 2) if self.ratings else None


class DayRow(Counts):
    day: dt.date
    partial: bool = False  # today, still under way


class Change(BaseModel):
    """One metric, the last seven days against the seven before: the later minus the earlier
    (a rate's change is in rate units, i.e. 0.05 is five percentage points)."""

    metric: str
    this_week: float | None
    last_week: float | None
    change: float | None


class WeekOverWeek(BaseModel):
    this_week: tuple[dt.date, dt.date]
    last_week: tuple[dt.date, dt.date]
    metrics: list[Change]


class AudienceFigures(BaseModel):
    """One more audience's days and totals, counted as the customers' are (the review's figures
    are the agent's and are 0 here)."""

    audience: str
    rows: list[DayRow]
    totals: Counts


class Metrics(BaseModel):
    agent: str
    time_zone: str
    days: int
    first_day: dt.date
    last_day: dt.date
    rows: list[DayRow]
    totals: Counts
    week_over_week: WeekOverWeek
    # Other agents (A2A and the peer API): counted apart, never in `rows` or `totals`.
    peers: AudienceFigures
    healthy_review_adoption: float = HEALTHY_ADOPTION
    delivered_violations_basis: str = DELIVERED_VIOLATIONS_BASIS


# --- pure arithmetic over rows --------------------------------------------------------------


def total(rows: Iterable[Counts]) -> Counts:
    sums = dict.fromkeys(COUNTS, 0)
    for row in rows:
        for name in COUNTS:
            sums[name] += getattr(row, name)
    return Counts(**sums)


def week_over_week(rows: list[DayRow], last_complete: dt.date) -> WeekOverWeek:
    """The seven days ending `last_complete` against the seven before them (rows may hold more
    days; missing ones count as empty)."""
    this = (last_complete - dt.timedelta(days=6), last_complete)
    last = (last_complete - dt.timedelta(days=13), last_complete - dt.timedelta(days=7))
    now = total(r for r in rows if this[0] <= r.day <= this[1])
    before = total(r for r in rows if last[0] <= r.day <= last[1])
    changes = []
    for name, _kind in METRICS:
        a, b = getattr(now, name), getattr(before, name)
        changes.append(
            Change(
                metric=name,
                this_week=a,
                last_week=b,
                change=round(a - b, 4) if a is not None and b is not None else None,
            )
        )
    return WeekOverWeek(this_week=this, last_week=last, metrics=changes)


# --- the queries ----------------------------------------------------------------------------


def _by_day(qs: QuerySet[Any], field: str, zone: ZoneInfo, **aggregates: Any) -> dict[dt.date, dict[str, Any]]:
    """One grouped query: the aggregates of `qs` per local day of `field`."""
    rows = qs.annotate(_day=TruncDate(field, tzinfo=zone)).values("_day").annotate(**aggregates).order_by()
    return {row.pop("_day"): row for row in rows}


def day_counts(
    agent: AgentProfile, first: dt.date, last: dt.date, *, audience: str = "customer"
) -> dict[dt.date, dict[str, int]]:
    """The counts of each local day from `first` to `last` (inclusive) with any activity, of one
    audience's conversations (`customer` or `peer`); the review's figures with the customers'."""
    if audience not in OUTWARD:
        raise ValueError(f"audience must be one of {OUTWARD}")
    tz = agent.tenant.time_zone
    zone = ZoneInfo(tz)
    start, end = day_bounds(first, tz)[0], day_bounds(last, tz)[1]

    def within(field: str) -> Q:
        return Q(**{f"{field}__gte": start, f"{field}__lt": end})

    outward = Q(tenant_id=agent.tenant_id, agent=agent, preview=False, audience=audience)
    in_session = Q(
        session__tenant_id=agent.tenant_id, session__agent=agent, session__preview=False, session__audience=audience
    )
    outward_ids = DialogueSession.objects.filter(outward).values("pk")
    parts: list[dict[dt.date, dict[str, Any]]] = [
        _by_day(
            DialogueSession.objects.filter(outward, within("created_at")), "created_at", zone, sessions=Count("pk")
        ),
        _by_day(
            Run.objects.filter(in_session, within("started_at")),
            "started_at",
            zone,
            replies=Count("pk"),
            blocked_replies=Count("pk", filter=~Q(guard_category__in=("", TABOO, MALFORMED))),
            taboo_blocks=Count("pk", filter=Q(guard_category=TABOO)),
            empty_replies=Count("pk", filter=Q(stop_reason="empty_reply")),
            malformed_replies=Count("pk", filter=Q(stop_reason="malformed_reply")),
            model_failures=Count("pk", filter=Q(stop_reason="provider_error")),
        ),
        _by_day(
            citing_knowledge(Message.objects.filter(in_session, within("created_at"), role="agent")),
            "created_at",
            zone,
            knowledge_answered=Count("pk"),
        ),
        _by_day(
            KnowledgeMiss.objects.filter(within("created_at"), agent=agent, session_id__in=outward_ids),
            "created_at",
            zone,
            knowledge_missed=Count("pk"),
        ),
        _by_day(
            Span.objects.filter(
                Q(run__session__agent=agent, run__session__preview=False, run__session__audience=audience),
                within("started_at"),
                tenant_id=agent.tenant_id,
                kind="tool",
                name="submit_request",
            ),
            "started_at",
            zone,
            flows_started=Count("run__session", distinct=True),
            flows_confirmed=Count("run__session", distinct=True, filter=Q(outcome="ok")),
        ),
        _by_day(
            CustomerRequest.objects.filter(in_session, within("created_at"), agent=agent, kind="request"),
            "created_at",
            zone,
            requests=Count("pk"),
        ),
        _by_day(
            Rating.objects.filter(in_session, within("created_at")),
            "created_at",
            zone,
            ratings=Count("pk"),
            rating_stars=Sum(F("stars")),
        ),
        _by_day(
            DeliveredViolation.objects.filter(
                within("delivered_at"), tenant_id=agent.tenant_id, agent=agent, message__session__audience=audience
            ),
            "delivered_at",
            zone,
            delivered_violations=Count("pk"),
        ),
    ]
    if audience == "customer":
        parts += _review_counts(agent, first, last, within, zone)
    days: dict[dt.date, dict[str, int]] = {}
    for part in parts:
        for day, values in part.items():
            days.setdefault(day, {}).update({k: int(v or 0) for k, v in values.items()})
    return days


def _review_counts(
    agent: AgentProfile, first: dt.date, last: dt.date, within: Any, zone: ZoneInfo
) -> list[dict[dt.date, dict[str, Any]]]:
    """The agent's review figures of those days: the proposals decided and the claims made."""
    parts = [
        _by_day(
            ChangeProposal.objects.filter(
                within("decided_at"), tenant_id=agent.tenant_id, agent=agent, origin=Origin.REVIEW_REPORT
            ),
            "decided_at",
            zone,
            review_decided=Count("pk", filter=Q(status__in=DECIDED)),
            review_adopted=Count("pk", filter=Q(status__in=ADOPTED)),
        )
    ]
    # The review reports of those days (one row per day at most: a few dozen small rows), by the
    # day they review: the claims the reviewers made and how many the gate dropped.
    reports: dict[dt.date, dict[str, Any]] = {}
    for report in ReviewReport.objects.filter(agent=agent, day__gte=first, day__lte=last).only(
        "day", "wins", "misses", "gaps", "dropped_claims"
    ):
        dropped = len(report.dropped_claims or [])
        kept = len(report.wins or []) + len(report.misses or []) + len(report.gaps or [])
        reports[report.day] = {"review_claims": kept + dropped, "review_dropped": dropped}
    parts.append(reports)
    return parts


def agent_metrics(agent: AgentProfile, *, days: int = DEFAULT_DAYS, now: dt.datetime | None = None) -> Metrics:
    """The last `days` local days of the agent, today (partial) included, with the period's
    totals and the week over week of the last seven complete days (ending yesterday)."""
    if not MIN_DAYS <= days <= MAX_DAYS:
        raise ValueError(f"days must be {MIN_DAYS}–{MAX_DAYS}")
    tz = agent.tenant.time_zone
    today = (now or timezone.now()).astimezone(ZoneInfo(tz)).date()
    first = today - dt.timedelta(days=days - 1)
    yesterday = today - dt.timedelta(days=1)
    # The period, and the fourteen complete days the week over week needs, whichever is longer.
    start = min(first, yesterday - dt.timedelta(days=13))
    counted = day_counts(agent, start, today)
    every = [
        DayRow(day=day, partial=day == today, **counted.get(day, {}))
        for day in (start + dt.timedelta(days=i) for i in range((today - start).days + 1))
    ]
    rows = [row for row in every if row.day >= first]
    peer_counted = day_counts(agent, first, today, audience="peer")
    peer_rows = [
        DayRow(day=day, partial=day == today, **peer_counted.get(day, {}))
        for day in (first + dt.timedelta(days=i) for i in range(days))
    ]
    return Metrics(
        agent=agent.slug,
        time_zone=tz,
        days=days,
        first_day=first,
        last_day=today,
        rows=rows,
        totals=total(rows),
        week_over_week=week_over_week(every, yesterday),
        peers=AudienceFigures(audience="peer", rows=peer_rows, totals=total(peer_rows)),
    )
