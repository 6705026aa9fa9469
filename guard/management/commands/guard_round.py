"""`manage.py guard_round DIR`: measure one out-of-sample round with the whole outgoing check.

Prints one JSON object with the figures (recall, per category, which check caught what, false
blocks); `--misses` also prints every missed commitment and false block, one JSON object per
line after the figures.  The checks are pure: the command touches no database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from guard.rounds import RoundInvalid, RoundRow, round_measure, round_read


class Command(BaseCommand):
    help = "Measure an out-of-sample round (commitments.tsv and harmless.tsv) with the whole outgoing check."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("directory", help="the round's directory")
        parser.add_argument("--misses", action="store_true", help="also list the misses and false blocks")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            commitments, harmless = round_read(Path(options["directory"]))
        except RoundInvalid as error:
            raise CommandError(str(error)) from error
        result = round_measure(commitments, harmless)
        self.stdout.write(json.dumps(result.as_json(), ensure_ascii=False))
        if options["misses"]:
            for row in result.missed:
                shown = {"missed": row.category, "text": row.text, **_context(row)}
                self.stdout.write(json.dumps(shown, ensure_ascii=False))
            for row, verdict in result.false_blocks:
                shown = {"false_block": verdict.as_json(), "text": row.text, **_context(row)}
                self.stdout.write(json.dumps(shown, ensure_ascii=False))


def _context(row: RoundRow) -> dict[str, Any]:
    if row.knowledge is not None:
        return {"knowledge": list(row.knowledge), "customer": list(row.customer)}
    return {"given": list(row.given)}
