"""`manage.py rsi_observe --agent SLUG [--date YYYY-MM-DD]`: the same `observe_run` the
scheduler calls, by hand.  The day defaults to today in the server's time zone."""

from __future__ import annotations

import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from facade.tenancy.models import AgentProfile
from rsi.observe import observe_run
from rsi.schedule_rules import local_now


class Command(BaseCommand):
    help = "Fetch an agent's feeds and store (or update) that day's digest."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--agent", required=True, help="the agent's slug")
        parser.add_argument("--date", help="YYYY-MM-DD (default: today)")

    def handle(self, *args: Any, **options: Any) -> None:
        agent = AgentProfile.objects.select_related("tenant").filter(slug=options["agent"]).first()
        if agent is None:
            raise CommandError(f"no agent {options['agent']!r}")
        try:
            day = (
                datetime.date.fromisoformat(options["date"])
                if options["date"]
                else local_now(timezone.now(), agent.tenant.time_zone).date()
            )
        except ValueError as exc:
            raise CommandError("--date is YYYY-MM-DD") from exc
        digest = observe_run(agent_id=agent.pk, day=day)
        self.stdout.write(
            f"digest {digest.pk} for {agent.slug} on {day.isoformat()}: run {digest.runs}, "
            f"{digest.items.count()} candidates, {digest.feeds_ok} feeds fetched, {digest.feeds_failed} failed"
        )
