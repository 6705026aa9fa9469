"""The daily review (issue 13, "The daily review (Reflect)"): one write, `review_run`, which the
scheduler, `manage.py rsi_review` and `POST /api/agents/<slug>/reviews` all call.

It builds the day's `ReviewInput` from aggregates, stores the aggregates with the report, lets
the reviewers speak (the deterministic offline reviewer; an LLM reviewer is not built yet),
passes every claim through the gate, turns surviving proposals into pending change proposals
(origin `review_report`, at most the tenant's daily number; a kind the owner keeps rejecting
needs more sessions affected; each takes a token of the agent's escalation budget, and none left
pauses its proposing until the owner clears the inbox — rsi/governance.py) and writes the ledger
— all in one transaction under the report's row lock, so a second or concurrent run finds the
same report.
The report itself changes no behaviour."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from collections.abc import Callable
from http import HTTPStatus
from typing import Any, Literal

from django.apps import apps
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from pydantic import BaseModel, ConfigDict

from approvals.models import ChangeProposal, ProposalStatus
from approvals.rules import Origin
from approvals.selectors import preference_decisions
from approvals.services import ProposalError, proposal_create
from facade.errors import ApplicationError
from facade.tenancy.models import AgentProfile, Tenant
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from knowledge.models import LESSON_KINDS, EntryVersion, KnowledgeHit, SourceType
from knowledge.models import Kind as KnowledgeKind
from knowledge.selectors import knowledge_search

from . import review_events as events
from .governance import budget_lock, budget_refund, budget_resume, budget_spend
from .governance_rules import HoldReason, KindPreference, preference_bars
from .review_input import day_bounds, local_today, review_input_build, time_zone_of
from .review_llm import llm_reviewer
from .review_models import ReviewAggregate, ReviewReport
from .review_rules import Figures, Known, gate, offline_review
from .weekly import is_weekly_day, weekly_report

OFFLINE_REVIEWER = "offline-rules-v1"
KNOWLEDGE_KINDS = [kind for kind in KnowledgeKind if kind not in LESSON_KINDS]
ACTOR = Actor.platform("rsi_review")


def proposals_per_day(tenant: Tenant) -> int:
    own = getattr(tenant, "review_proposals_per_day", None)
    return int(own if own is not None else settings.FACADE_REVIEW_PROPOSALS_PER_DAY)


def owner_preferences(agent: AgentProfile, now: dt.datetime) -> dict[str, KindPreference]:
    """What the owner's recent decisions of the review's own proposals say, per kind (the bars
    of governance_rules.preference_bars)."""
    since = now - dt.timedelta(days=settings.FACADE_PREFERENCE_WINDOW_DAYS)
    return preference_bars(
        preference_decisions(agent=agent, origin=Origin.REVIEW_REPORT, since=since),
        min_net=settings.FACADE_PREFERENCE_MIN_NET_REJECTIONS,
        sessions_per_rejection=settings.FACADE_PREFERENCE_SESSIONS_PER_REJECTION,
    )


def _cited(claims: list[Any], kind: str) -> set[Any]:
    found: set[Any] = set()
    for claim in claims:
        evidence = claim.get("evidence") if isinstance(claim, dict) else None
        for pointer in evidence if isinstance(evidence, list) else []:
            if isinstance(pointer, dict) and pointer.get("type") == kind:
                found.add(pointer.get("id"))
    return found


def _known(
    agent: AgentProfile, start: dt.datetime, end: dt.datetime, claims: list[Any], figures: dict[str, int]
) -> Known:
    """What the claims' pointers may resolve to: only the ids they cite are looked up, scoped to
    this agent's customer and peer sessions of the day and the knowledge it used that day."""
    session_ids: list[str] = []
    for value in _cited(claims, "session"):
        try:
            session_ids.append(str(uuid.UUID(str(value))))
        except ValueError:
            continue
    session_model = apps.get_model("dialogue", "DialogueSession")
    sessions = session_model.objects.filter(
        pk__in=session_ids,
        agent=agent,
        audience__in=("customer", "peer"),
        preview=False,
        created_at__gte=start,
        created_at__lt=end,
    ).values_list("id", flat=True)
    versions = [v for v in _cited(claims, "knowledge_version") if type(v) is int]
    used = KnowledgeHit.objects.filter(
        agent=agent, version_id__in=versions, created_at__gte=start, created_at__lt=end
    ).values_list("version_id", flat=True)
    return Known(aggregates=figures, sessions=frozenset(str(s) for s in sessions), versions=frozenset(used))


def _shown_claim(claim: dict[str, Any]) -> dict[str, Any]:
    return {k: claim[k] for k in ("kind", "text", "evidence", "figure", "reviewer") if k in claim}


def proposal_key(proposal: dict[str, Any]) -> str:
    """What makes two proposals of a report the same one (a re-run of a partial day makes it once)."""
    what = (
        proposal.get("topic")
        or hashlib.sha256(json.dumps(proposal.get("payload"), sort_keys=True, default=str).encode()).hexdigest()[:16]
    )
    return f"{proposal['kind']}:{what}"


def still_waiting(agent: AgentProfile, proposal: dict[str, Any]) -> str | None:
    """The id of an earlier review's draft for the same topic that still waits for the owner's
    decision: a topic customers keep asking is a gap every night, but one pending draft of it is
    enough (the gap links to it) — a week of the same question would otherwise fill the inbox
    with copies of one draft."""
    if proposal["kind"] != "knowledge_draft":
        return None
    return (
        ChangeProposal.objects.filter(
            agent=agent,
            origin=Origin.REVIEW_REPORT,
            kind="knowledge_draft",
            status=ProposalStatus.PENDING,
            expires_at__gt=timezone.now(),  # one about to expire unseen does not hold the topic back
        )
        .filter(
            Q(payload__title=proposal["payload"]["title"]) | Q(payload__topic=proposal["payload"].get("topic") or "-")
        )
        .order_by("created_at")
        .values_list("pk", flat=True)
        .first()
    )


class ProposedAction(BaseModel):
    """A proposal a report made, as the report lists it: the change it filed and who decides it.
    `requires` is always the owner's approval (DESIGN §3: a reviewer's `auto` is overridden by the
    gate, and the report says so of every action)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    change_id: str
    kind: str
    summary: str
    requires: Literal["owner_approval"] = "owner_approval"

    def stored(self, key: str) -> dict[str, Any]:
        return {"key": key, **self.model_dump()}


def answer_offer(agent: AgentProfile, proposal: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    """A knowledge draft for one of the day's topics names that topic (`topic`, its hash: the
    owner's approval resolves it everywhere); any other `topic` a reviewer wrote into a payload
    is removed.  When an entry customers are served already answers the topic — found by the
    same search customers get, in either of the entry's languages — the draft becomes the offer
    "already answered by entry …": a new version of that entry with the topic among its
    questions (the same text), which the owner decides like any L1 change, instead of a second
    answer to write."""
    if proposal["kind"] != "knowledge_draft" or not isinstance(proposal.get("payload"), dict):
        return proposal
    payload = {k: v for k, v in proposal["payload"].items() if k != "topic"}
    topic = proposal.get("topic", "")
    label = labels.get(topic, "")
    if not label:
        return {**proposal, "payload": payload}
    payload["topic"] = topic
    covering = None
    for found in knowledge_search(agent=agent, query=label, audience=Audience.CUSTOMER, limit=1):
        # An entry of facts (not a lesson), in the owner's own words: a customer candidate's text
        # is customer text, which a card never shows.
        covering = (
            EntryVersion.objects.filter(pk=found.version_id, agent=agent, served=True, entry__kind__in=KNOWLEDGE_KINDS)
            .exclude(source_type=SourceType.CUSTOMER)
            .first()
        )
    if covering is None or payload.get("entry_id"):
        return {**proposal, "payload": payload}
    offer: dict[str, Any] = {
        "entry_id": covering.entry_id,
        "title": covering.title,
        "text": covering.body,
        "questions": [*covering.questions, label][-20:],
        "topic": topic,
    }
    if covering.translations:
        offer["translations"] = {
            language: {"title": value.get("title", ""), "text": value.get("body", "")}
            for language, value in covering.translations.items()
        }
    summary = (
        f"Already answered by entry {covering.entry_id} “{covering.title[:80]}”: add “{label[:80]}” to its questions"
    )
    return {**proposal, "payload": offer, "summary": summary[:300]}


def _no_progress(step: str) -> None:
    return None


def review_run(
    *,
    agent_id: int,
    day: dt.date,
    now: dt.datetime | None = None,
    progress: Callable[[str], None] = _no_progress,
) -> ReviewReport:
    """Review agent `agent_id`'s local `day` (the tenant's time zone).  Running it again gives the
    same report: a finished past day is returned as it is; today's (partial) report is updated in
    place.  A future day is refused.  `progress` is told each step as it begins (rsi.run_progress
    .STEPS); the report of a complete Sunday also carries the week over week (rsi/weekly.py)."""
    agent = AgentProfile.objects.select_related("tenant").get(pk=agent_id)
    today = local_today(agent.tenant, now)
    if day > today:
        raise ApplicationError("future_day", "a day that has not begun cannot be reviewed", HTTPStatus.BAD_REQUEST)
    partial = day == today
    # get_or_create retries the read when a concurrent process created the row first.
    report, _ = ReviewReport.objects.get_or_create(
        agent=agent, day=day, defaults={"tenant_id": agent.tenant_id, "time_zone": time_zone_of(agent.tenant)}
    )
    with transaction.atomic():
        report = ReviewReport.objects.select_for_update().get(pk=report.pk)
        if report.status == ReviewReport.Status.FINISHED and not report.partial:
            return report
        report.runs += 1
        report.partial = partial
        report.status = ReviewReport.Status.RUNNING
        started = events.review_started(report=report, agent_slug=agent.slug, actor=ACTOR)

        progress("input")
        built = review_input_build(agent=agent, day=day, partial=partial)
        review_input = built.review_input
        report.aggregates.all().delete()
        ReviewAggregate.objects.bulk_create(
            ReviewAggregate(
                report=report,
                key=key,
                value=value,
                label=built.labels.get(key, ""),
                session_ids=review_input.sessions.get(key, []),
            )
            for key, value in review_input.figures.items()
        )

        figures = Figures(
            values=review_input.figures,
            sessions={k: tuple(v) for k, v in review_input.sessions.items()},
            topics=built.shown,
            clarification_order=tuple(str(f) for f in (agent.clarification_order or [])),
        )
        progress("reviewers")
        claims: list[Any] = list(offline_review(figures))
        offline_count = len(claims)
        reviewer, model, unreadable = OFFLINE_REVIEWER, "", 0
        llm = llm_reviewer(agent)
        if llm is not None:
            # A remote call under the report's row lock: a concurrent run waits for it rather
            # than asking the model a second time.
            more, unreadable = llm.review(review_input)
            claims += more
            reviewer, model = f"{OFFLINE_REVIEWER}+{llm.name}", llm.model
        for index, claim in enumerate(claims):
            if isinstance(claim, dict):  # who wrote it, whatever it says of itself
                claim["reviewer"] = OFFLINE_REVIEWER if index < offline_count else "llm"
        progress("gate")
        start, end = day_bounds(agent.tenant, day)
        clock = now or timezone.now()
        preferences = {k: p for k, p in owner_preferences(agent, clock).items() if p.min_sessions}
        result = gate(
            claims,
            _known(agent, start, end, claims, review_input.figures),
            cap=proposals_per_day(agent.tenant),
            min_sessions={kind: p.min_sessions for kind, p in preferences.items()},
        )

        dropped = [
            {
                "reason": d.reason.value,
                "kind": d.kind,
                "reviewer": OFFLINE_REVIEWER if d.index < offline_count else "llm",
            }
            for d in result.dropped
        ]
        if unreadable:
            dropped.append({"reason": "unreadable_output", "kind": "unknown", "reviewer": "llm"})
        for index, d in enumerate(dropped):
            events.review_claim_dropped(
                report=report,
                agent_slug=agent.slug,
                reviewer=d["reviewer"],
                kind=d["kind"],
                reason=d["reason"],
                index=result.dropped[index].index if index < len(result.dropped) else -1,
                actor=ACTOR,
            )

        progress("proposals")
        made = {p["key"]: p for p in report.proposals}
        # The escalation budget, locked after the reviewers spoke (a slow model holds no other
        # review of this agent up): a paused agent whose inbox was cleared resumes; each new
        # proposal takes a token, and none left pauses it.
        budget = budget_lock(agent=agent, now=clock)
        budget_resume(budget=budget, agent=agent, report=report, now=clock, actor=ACTOR)
        paused_held = 0
        waiting: dict[str, str] = {}
        for proposal in result.proposals:
            key = proposal_key(proposal)
            if key in made:
                continue
            proposal = answer_offer(agent, proposal, built.labels)
            earlier = still_waiting(agent, proposal)
            if earlier is not None:
                waiting[key] = earlier
                continue
            if not budget_spend(budget=budget, agent=agent, report=report, now=clock, actor=ACTOR):
                paused_held += 1
                continue
            try:
                change = proposal_create(
                    agent=agent,
                    kind=proposal["kind"],
                    payload=proposal["payload"],
                    summary=proposal["summary"],
                    origin=Origin.REVIEW_REPORT,
                    actor=ACTOR,
                    evidence=proposal["evidence"] or None,
                    claimed=proposal["claimed"] or None,
                    caused_by=started.seq,
                )
            except ProposalError as exc:
                budget_refund(budget=budget, now=clock)
                dropped.append(
                    {"reason": f"proposal_refused:{exc.code}", "kind": proposal["kind"], "reviewer": OFFLINE_REVIEWER}
                )
                continue
            made[key] = ProposedAction(change_id=change.pk, kind=change.kind, summary=change.summary).stored(key)
            events.review_proposal_made(
                report=report,
                agent_slug=agent.slug,
                proposal_id=change.pk,
                kind=change.kind,
                sessions_affected=proposal["sessions_affected"],
                evidence=len(change.evidence or []),
                actor=ACTOR,
            )

        by_topic = {**waiting, **{p["key"]: p["change_id"] for p in made.values()}}
        sorted_claims: dict[str, list[dict[str, Any]]] = {"win": [], "miss": [], "gap": []}
        for claim in result.kept:
            shown = _shown_claim(claim)
            if "proposal" in claim:
                shown["change_id"] = by_topic.get(proposal_key(claim["proposal"]), "")
            sorted_claims[claim["kind"]].append(shown)

        report.review_input = review_input.model_dump(mode="json")
        report.input_digest = review_input.digest()
        report.wins, report.misses, report.gaps = sorted_claims["win"], sorted_claims["miss"], sorted_claims["gap"]
        report.proposals = list(made.values())
        held = {
            HoldReason.DAILY_CAP.value: result.held_back,
            HoldReason.OWNER_PREFERENCE.value: sum(result.held_by_preference.values()),
            HoldReason.PAUSED.value: paused_held,
        }
        report.held_back = sum(held.values())
        report.held_back_reasons = held
        report.preferences = [
            {
                "kind": kind,
                "approvals": p.approvals,
                "rejections": p.rejections,
                "min_sessions": p.min_sessions,
                "held_back": result.held_by_preference.get(kind, 0),
            }
            for kind, p in preferences.items()
        ]
        report.paused = budget.paused
        report.dropped_claims = dropped
        report.overrides = result.overrides
        report.reviewer = reviewer
        report.model = model  # empty when only the offline reviewer's rules spoke
        report.week_over_week = None
        if is_weekly_day(day, partial=partial):
            kept = len(report.wins) + len(report.misses) + len(report.gaps)
            report.week_over_week = weekly_report(agent, day, own_claims=kept + len(dropped), own_dropped=len(dropped))
        report.status = ReviewReport.Status.FINISHED
        report.finished_at = timezone.now()
        report.save()
        events.review_finished(report=report, agent_slug=agent.slug, actor=ACTOR)
    return report


def latest_report(agent: AgentProfile) -> ReviewReport | None:
    return ReviewReport.objects.filter(agent=agent, status=ReviewReport.Status.FINISHED).order_by("-day").first()


def report_get(agent: AgentProfile, day: dt.date) -> ReviewReport | None:
    return ReviewReport.objects.filter(agent=agent, day=day).first()


def report_view(report: ReviewReport) -> dict[str, Any]:
    """The report as the API answers it (and the inbox reads it): figures, claims with pointers,
    proposals by id, counts — no customer text is stored in it to begin with."""
    return {
        "id": str(report.pk),
        "agent": report.review_input.get("agent", ""),
        "day": report.day.isoformat(),
        "timeZone": report.time_zone,
        "status": report.status,
        "partial": report.partial,
        "runs": report.runs,
        "inputDigest": report.input_digest,
        "reviewer": report.reviewer,
        "model": report.model,
        "wins": report.wins,
        "misses": report.misses,
        "gaps": report.gaps,
        # Each says who decides it (the seed's report format): the owner, whatever a reviewer wrote.
        "proposals": [
            ProposedAction(change_id=p["change_id"], kind=p["kind"], summary=p["summary"]).model_dump()
            for p in report.proposals
        ],
        "heldBack": report.held_back,
        "heldBackReasons": report.held_back_reasons,
        "paused": report.paused,
        "pausedReason": "escalation_budget_spent" if report.paused else None,
        "preferences": report.preferences,
        "droppedClaims": len(report.dropped_claims),
        "droppedReasons": report.dropped_claims,
        "overrides": report.overrides,
        "input": report.review_input,
        "finishedAt": report.finished_at.isoformat() if report.finished_at else None,
        # Monday's report (a complete Sunday's): rsi.weekly.WeeklyComparison; null on other days
        "weekOverWeek": report.week_over_week,
    }
