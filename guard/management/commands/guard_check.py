"""`manage.py guard_check "TEXT"`: run the commitment guard on one message and print the verdict.

Prints exactly one line of JSON - `{"blocked": true, "category": "price"}` or
`{"blocked": false, "category": null}` - so scripts and the owner's tooling can use it as is.
`-` reads the message from standard input; a message that itself starts with "-" goes after
`--`.  The guard is pure: the command touches no database."""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from guard.engine import guard_check


class Command(BaseCommand):
    help = 'Check one outgoing message with the commitment guard; "-" reads it from standard input.'
    # The guard reads no model and no setting; system checks would only slow a per-message call.
    requires_system_checks: list[str] = []
    # Lets call_command(..., stdin=...) stand in for the process's standard input.
    stealth_options = ("stdin",)

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("text", nargs="?", help='the message to check, or "-" to read it from standard input')

    def handle(self, *args: Any, **options: Any) -> None:
        text: str | None = options["text"]
        if text is None:
            raise CommandError('no message given: pass the text to check, or "-" to read it from standard input')
        if text == "-":
            text = (options.get("stdin") or sys.stdin).read()
        if not text.strip():
            raise CommandError("the message to check is empty")
        self.stdout.write(json.dumps(guard_check(text).as_json()))
