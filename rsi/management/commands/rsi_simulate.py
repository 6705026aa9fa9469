"""`manage.py rsi_simulate --agent SLUG [--days 7] [--customers-per-day 8] [--seed 13] [--today]
[--remote-model] [--site URL]`: a simulated week of customer traffic and each night's review, to watch the
self-improvement loop (rsi/simulate.py; README "Watch the loop")."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.models import ChangeProposal, ProposalStatus
from facade.errors import ApplicationError
from facade.tenancy.models import AgentProfile
from rsi.simulate import (
    DEFAULT_CUSTOMERS,
    DEFAULT_DAYS,
    DEFAULT_SEED,
    GAP_QUESTION,
    MAX_CUSTOMERS,
    MAX_DAYS,
    MIN_CUSTOMERS,
    MIN_DAYS,
    DayPlayed,
    Site,
    simulation_run,
    site_address,
)


class Command(BaseCommand):
    help = (
        "Play scripted customer traffic on the days before today (the clock set to each day) through the real "
        "customer runtime, and run each night's review, to watch the self-improvement loop. --today plays today "
        "instead, after the owner has decided the review's draft."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--agent", required=True, help="the agent's slug")
        parser.add_argument(
            "--days", type=int, default=DEFAULT_DAYS, help=f"days before today to play, {MIN_DAYS}–{MAX_DAYS}"
        )
        parser.add_argument(
            "--customers-per-day",
            type=int,
            default=DEFAULT_CUSTOMERS,
            help=f"distinct customers a day, {MIN_CUSTOMERS}–{MAX_CUSTOMERS}",
        )
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="the same seed plays the same traffic")
        parser.add_argument(
            "--today",
            action="store_true",
            help="play today's customers at the real time instead (and today's partial review); run it after "
            "approving the review's draft to see the same question answered",
        )
        parser.add_argument(
            "--remote-model",
            action="store_true",
            help="allow playing on the configured remote model (FACADE_LLM_PROVIDER=openai): every scripted turn "
            "is a model call",
        )
        parser.add_argument(
            "--site",
            default="",
            help="the address the site is served at, for the links printed at the end (default: FACADE_PUBLIC_URL, "
            "else the address `make run` is serving)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        agent = AgentProfile.objects.select_related("tenant").filter(slug=options["agent"]).first()
        if agent is None:
            raise CommandError(f"no agent {options['agent']!r} (seed_demo makes 'demo-shop')")
        played: list[DayPlayed] = []
        try:
            site = site_address(given=options["site"])
            for day in simulation_run(
                agent=agent,
                days=options["days"],
                customers=options["customers_per_day"],
                seed=options["seed"],
                today=options["today"],
                remote_model=options["remote_model"],
            ):
                self._day(day)
                played.append(day)
        except ApplicationError as exc:
            raise CommandError(exc.detail) from exc
        self._next(agent, played, site, today=options["today"])

    def _day(self, day: DayPlayed) -> None:
        when = f"{day.day.isoformat()} {day.day:%a}" + (" (today)" if day.partial else "")
        if day.skipped:
            which = f" (review {day.report.pk})" if day.report else ""
            self.stdout.write(f"{when}: skipped — {day.skipped}{which}; reviews are one per day")
            return
        self.stdout.write(
            f"{when}: {day.sessions} customers, {day.messages} messages; “{GAP_QUESTION}” asked by "
            f"{day.gap_askers}, answered from knowledge {day.gap_answered} times; unanswered questions: {day.misses}, "
            f"replies citing knowledge: {day.answered}, replies blocked by the commitment guard: {day.blocked}, "
            f"requests registered: {day.requests}"
        )
        report = day.report
        if report is None:
            return
        made = {p["change_id"] for p in report.proposals}
        self.stdout.write(
            f"  review {report.pk}{' (partial: today so far)' if report.partial else ''} — gaps: {len(report.gaps)}, "
            f"misses: {len(report.misses)}, wins: {len(report.wins)}, proposals: {len(report.proposals)}, "
            f"held back: {report.held_back}, claims dropped: {len(report.dropped_claims)}"
        )
        for proposal in report.proposals:
            self.stdout.write(f"    proposed {proposal['change_id']} ({proposal['kind']}): {proposal['summary']}")
        for gap in report.gaps:
            change = gap.get("change_id")
            if change and change not in made:
                self.stdout.write(f"    the gap's draft {change} is still waiting in the inbox (not proposed again)")

    def _next(self, agent: AgentProfile, played: list[DayPlayed], site: Site, *, today: bool) -> None:
        base = f"{site.url}/owner/{agent.slug}"
        if not [day for day in played if not day.skipped]:
            self.stdout.write(
                "Nothing played: every day asked for has its review already. To see what the agent does now, "
                f"play today: manage.py rsi_simulate --agent {agent.slug} --today"
            )
        waiting = (
            ChangeProposal.objects.filter(
                agent=agent, origin="review_report", kind="knowledge_draft", status=ProposalStatus.PENDING
            )
            .order_by("-created_at")
            .first()
        )
        self.stdout.write("")
        self.stdout.write(f"Sign in as an owner of {agent.slug} and open:")
        self.stdout.write(f"  the overview  {base}/  — knowledge hits and over-commitment per day")
        self.stdout.write(f"  the inbox     {base}/inbox  — the latest review, its gaps and the drafts it proposed")
        self.stdout.write(f"  the requests  {base}/requests  — the simulated customers' requests, marked “Simulated”")
        if site.how == "assumed":
            self.stdout.write(
                f"(These links assume the site runs at {site.url}. If it runs elsewhere — `make run PORT=8300`, say — "
                "pass --site http://HOST:PORT, or set FACADE_PUBLIC_URL as the server has it.)"
            )
        if waiting is not None:
            self.stdout.write(
                f"Next: in the inbox, write the answer into the draft {waiting.pk} (“Write the answer”), save it, "
                "and approve it. Then play today's customers, who ask the same question:"
            )
            self.stdout.write(f"  manage.py rsi_simulate --agent {agent.slug} --today")
        elif today:
            self.stdout.write(
                "The answers citing knowledge are on the overview's knowledge-hit chart (today's point); run --today "
                "again for more of today's customers — today's review is updated in place."
            )
