"""The latest daily review as the owner inbox shows it (a section above the cards): wins, misses
and gaps in the reader's language, each with its evidence opened the way a card opens it — a
conversation as its summary (approvals.cards), a figure as its value — never a customer's words;
then the dropped-claims and held-back counts: by the daily cap, by the owner's preference (per
kind), and whether proposing is paused (the escalation budget) and why."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext

from approvals.cards import KIND_WORDS, Evidence
from approvals.cards import _session_evidence as session_evidence
from approvals.models import ChangeProposal, ProposalStatus
from approvals.schemas import REVIEW_DRAFT_PLACEHOLDER
from facade.tenancy.models import AgentProfile
from knowledge.selectors import unanswered_topics

from .governance import escalation_capacity, escalation_refill_per_day
from .governance_rules import HoldReason
from .metrics_web import TITLES, shown, shown_change
from .review import latest_report
from .review_models import ReviewReport

MAX_EVIDENCE = 4


@dataclass
class ClaimView:
    kind: str
    text: str
    evidence: list[Evidence] = field(default_factory=list)
    change_id: str = ""
    # A gap's topic now (knowledge.selectors.unanswered_topics, the one definition of an open
    # topic): "answered" once an answer was published for it; else what its proposal asks:
    # "unwritten" (a draft whose answer the owner writes) or "attach" (already answered by an
    # entry); "" for other claims.
    state: str = ""
    topic: str = ""


@dataclass
class ReviewView:
    report: ReviewReport
    wins: list[ClaimView]
    misses: list[ClaimView]
    gaps: list[ClaimView]
    proposals: int
    held_back: int  # by the daily cap
    dropped: int
    paused: str = ""  # why proposing is paused, in the reader's language; "" when it is not
    # "held back: N because you rejected this kind K times", one line per kind
    preferences: list[str] = field(default_factory=list)
    weeks: list[dict[str, str]] = field(default_factory=list)  # Monday's report: the week over week

    @property
    def groups(self) -> list[tuple[str, list[ClaimView]]]:
        return [(gettext("Gaps"), self.gaps), (gettext("Misses"), self.misses), (gettext("Wins"), self.wins)]


def _figure_words(key: str, value: int, label: str) -> str:
    if key.startswith("topic."):
        return gettext("Unanswered topic “%(topic)s”: %(n)s times") % {"topic": label, "n": value}
    return gettext("Figure %(key)s: %(n)s") % {"key": key, "n": value}


def claim_text(claim: dict[str, Any], figures: dict[str, int], labels: dict[str, str]) -> str:
    """The claim in the reader's language when a rule of the offline reviewer made it (known by
    its figure); otherwise as written."""
    key = (claim.get("figure") or {}).get("key", "")
    if claim["kind"] == "gap" and key in labels:
        text = gettext("“%(topic)s” was asked %(n)s times by several customers and no approved knowledge answered it.")
        return text % {"topic": labels[key], "n": figures.get(key, 0)}
    if claim["kind"] == "miss" and key == "sessions.expired":
        return gettext("%(n)s of %(total)s conversations expired before they finished.") % {
            "n": figures.get(key, 0),
            "total": figures.get("sessions.total", 0),
        }
    if claim["kind"] == "win" and key == "runs.completed":
        return gettext("%(n)s of %(total)s replies completed without a stop.") % {
            "n": figures.get(key, 0),
            "total": figures.get("runs.total", 0),
        }
    return str(claim.get("text", ""))


def _claims(
    report: ReviewReport, claims: list[dict[str, Any]], figures: dict[str, int], labels: dict[str, str]
) -> list[ClaimView]:
    views = []
    for claim in claims:
        key = str((claim.get("figure") or {}).get("key", ""))
        view = ClaimView(
            kind=claim["kind"],
            text=claim_text(claim, figures, labels),
            change_id=str(claim.get("change_id", "")),
            topic=key if claim["kind"] == "gap" and key.startswith("topic.") else "",
        )
        for pointer in claim.get("evidence", [])[:MAX_EVIDENCE]:
            if pointer.get("type") == "session":
                view.evidence.append(session_evidence(report.agent_id, str(pointer.get("id"))))
            elif pointer.get("type") == "aggregate":
                key = str(pointer.get("key"))
                view.evidence.append(Evidence(_figure_words(key, figures.get(key, 0), labels.get(key, "")), []))
        views.append(view)
    return views


def _gap_states(agent: AgentProfile, gaps: list[ClaimView]) -> None:
    """What each gap line says of its topic today: answered (it is no open topic any more: its
    draft was approved, or the owner answered it on the Unanswered questions page), or what its
    pending proposal needs."""
    open_refs = {topic.ref for topic in unanswered_topics(agent).topics}
    ids = [gap.change_id for gap in gaps if gap.change_id]
    payloads = dict(
        ChangeProposal.objects.filter(agent=agent, pk__in=ids, status=ProposalStatus.PENDING).values_list(
            "pk", "payload"
        )
    )
    for gap in gaps:
        if gap.topic and gap.topic not in open_refs:
            gap.state = "answered"
        elif gap.change_id in payloads:
            payload = payloads[gap.change_id] or {}
            if payload.get("entry_id") and payload.get("topic"):
                gap.state = "attach"
            elif str(payload.get("text", "")).strip() == REVIEW_DRAFT_PLACEHOLDER:
                gap.state = "unwritten"


def _paused(report: ReviewReport, held: int) -> str:
    if not report.paused:
        return ""
    text = gettext(
        "Proposing is paused: this agent's proposals used up its escalation budget (%(capacity)s proposals, "
        "%(per_day)s more a day). Held back for that: %(n)s. Once you have decided every pending proposal below, "
        "the next review proposes again."
    )
    return text % {"capacity": escalation_capacity(), "per_day": escalation_refill_per_day(), "n": held}


def _preferences(report: ReviewReport) -> list[str]:
    lines = []
    for item in report.preferences:
        if not item.get("held_back"):
            continue
        text = gettext(
            "Held back: %(n)s (%(kind)s) because you rejected this kind of proposal %(k)s times "
            "(and approved it %(a)s times) lately."
        )
        kind = KIND_WORDS.get(item["kind"])
        lines.append(
            text
            % {
                "n": item["held_back"],
                "kind": str(kind) if kind is not None else item["kind"],
                "k": item["rejections"],
                "a": item["approvals"],
            }
        )
    return lines


def _direction_words() -> dict[str, str]:
    return {
        "up": gettext("up"),
        "down": gettext("down"),
        "same": gettext("unchanged"),
        "unknown": gettext("no data to compare"),
    }


def weekly_rows(comparison: dict[str, Any] | None) -> list[dict[str, str]]:
    """Monday's week over week (rsi.weekly.WeeklyComparison, as stored) in the reader's words."""
    if not comparison:
        return []
    words = _direction_words()
    rows = []
    for metric in comparison.get("metrics", []):
        name, kind = metric["metric"], metric["kind"]
        better = metric.get("better")
        direction = words.get(metric["direction"], metric["direction"])
        if better is not None:
            direction += " · " + (gettext("better") if better else gettext("worse"))
        rows.append(
            {
                "title": str(TITLES.get(name, name)),
                "this_week": shown(metric["this_week"], kind),
                "last_week": shown(metric["last_week"], kind),
                "change": shown_change(metric["change"], kind),
                "direction": direction,
                "this_counts": "%s / %s" % tuple(metric["this_counts"]),
                "last_counts": "%s / %s" % tuple(metric["last_counts"]),
            }
        )
    return rows


def _report(agent: AgentProfile, day: str) -> ReviewReport | None:
    """The finished report of `day` (YYYY-MM-DD) when given and there is one, else the latest."""
    try:
        wanted = dt.date.fromisoformat(day) if day else None
    except ValueError:
        wanted = None
    if wanted is not None:
        found = ReviewReport.objects.filter(agent=agent, day=wanted, status=ReviewReport.Status.FINISHED).first()
        if found is not None:
            return found
    return latest_report(agent)


def inbox_review(agent: AgentProfile, *, day: str = "") -> ReviewView | None:
    report = _report(agent, day)
    if report is None:
        return None
    rows = list(report.aggregates.values_list("key", "value", "label"))
    figures = {key: value for key, value, _label in rows}
    labels = {key: label for key, _value, label in rows if label}
    reasons = report.held_back_reasons or {}
    gaps = _claims(report, report.gaps, figures, labels)
    _gap_states(agent, gaps)
    return ReviewView(
        report=report,
        wins=_claims(report, report.wins, figures, labels),
        misses=_claims(report, report.misses, figures, labels),
        gaps=gaps,
        proposals=len(report.proposals),
        # A report from before the reasons were counted held back by the daily cap only.
        held_back=int(reasons.get(HoldReason.DAILY_CAP, 0)) if reasons else report.held_back,
        dropped=len(report.dropped_claims),
        paused=_paused(report, int(reasons.get(HoldReason.PAUSED, 0))),
        preferences=_preferences(report),
        weeks=weekly_rows(report.week_over_week),
    )
