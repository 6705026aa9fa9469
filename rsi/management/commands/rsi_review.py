"""`manage.py rsi_review --agent SLUG [--date YYYY-MM-DD]`: the daily review by hand — the same
`review_run` the scheduler calls.  Without --date: yesterday in the tenant's time zone; today
gives a partial report, updated in place when run again."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from facade.errors import ApplicationError
from facade.tenancy.models import AgentProfile
from rsi.review import review_run
from rsi.review_input import local_today


class Command(BaseCommand):
    help = "Run the daily review of one agent's local day (default: yesterday in its tenant's time zone)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--agent", required=True, help="the agent's slug")
        parser.add_argument("--date", help="YYYY-MM-DD (today gives a partial report)")

    def handle(self, *args: Any, **options: Any) -> None:
        agent = AgentProfile.objects.select_related("tenant").filter(slug=options["agent"]).first()
        if agent is None:
            raise CommandError(f"no agent {options['agent']!r}")
        if options.get("date"):
            try:
                day = dt.date.fromisoformat(options["date"])
            except ValueError as exc:
                raise CommandError("--date is YYYY-MM-DD") from exc
        else:
            day = local_today(agent.tenant) - dt.timedelta(days=1)
        try:
            report = review_run(agent_id=agent.pk, day=day)
        except ApplicationError as exc:
            raise CommandError(exc.detail) from exc
        self.stdout.write(
            f"review {report.pk} of {agent.slug} on {report.day}{' (partial)' if report.partial else ''}: "
            f"{len(report.wins)} wins, {len(report.misses)} misses, {len(report.gaps)} gaps, "
            f"{len(report.proposals)} proposals, {report.held_back} held back, "
            f"{len(report.dropped_claims)} dropped claims"
        )
