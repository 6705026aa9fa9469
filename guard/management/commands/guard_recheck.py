"""`manage.py guard_recheck [--agent SLUG] [--date YYYY-MM-DD]`: the nightly re-check by hand.

Re-runs the current outgoing check over the delivered customer and peer replies of one local day
(default: each agent's yesterday in its tenant's time zone) whose stored rule-set hash is an
older one (guard/recheck.py), and prints one JSON line per agent: `{"agent", "day",
"ruleset_hash", "checked", "skipped", "violations"}`.  A reply already counted is never counted
again, so running it twice is harmless."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from facade.tenancy.models import AgentProfile
from guard.recheck import previous_day, recheck_day


class Command(BaseCommand):
    help = "Re-check one local day's delivered customer and peer replies with the current outgoing check."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--agent", help="the agent's slug (default: every agent)")
        parser.add_argument("--date", help="the local day, YYYY-MM-DD (default: each agent's yesterday)")

    def handle(self, *args: Any, **options: Any) -> None:
        day: dt.date | None = None
        if options["date"]:
            try:
                day = dt.date.fromisoformat(options["date"])
            except ValueError as exc:
                raise CommandError("--date must be YYYY-MM-DD") from exc
        agents = AgentProfile.objects.select_related("tenant").order_by("pk")
        if options["agent"]:
            agents = agents.filter(slug=options["agent"])
            if not agents.exists():
                raise CommandError(f"no agent {options['agent']!r}")
        for agent in agents:
            result = recheck_day(agent_id=agent.pk, day=day or previous_day(agent))
            self.stdout.write(json.dumps(result.as_json()))
