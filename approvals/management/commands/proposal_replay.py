"""`manage.py proposal_replay CHANGE_ID`: the replay preview of a pending proposal by hand — the
same `proposal_replay_run` the Celery task runs, in this process.  Prints the counts (never a
customer's words)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.replay import proposal_replay_run


class Command(BaseCommand):
    help = "Replay a pending proposal on the past days' customer turns and store the counts."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("change_id", help="the proposal's id (chg_…)")

    def handle(self, *args: Any, **options: Any) -> None:
        replay = proposal_replay_run(proposal_id=options["change_id"])
        if replay is None:
            raise CommandError("no pending proposal of a replayed kind (knowledge draft, wording, order of questions)")
        self.stdout.write(
            json.dumps(
                {
                    "replay": replay.pk,
                    "proposal": replay.proposal_id,
                    "version": replay.proposal_version,
                    "status": replay.status,
                    "model": replay.model,
                    "timed_out": replay.timed_out,
                    "counts": replay.counts,
                },
                sort_keys=True,
            )
        )
