"""`manage.py guard_check "TEXT"`: run the whole outgoing check on a message and print the verdict.

The message goes through `guard.outgoing.outgoing_check` exactly as a customer reply in a turn
does, with the context a turn has, said by hand (`guard.context.stated_context`, the same
`CheckContext` the run loop builds from its messages with `turn_context`):

* `--knowledge "Title: text"` (repeatable, in citation order: [1] the first) — an approved entry
  the run cited, or the published price list as cited ("Price list (version 3): Birthday cake
  (8 people): 35.00 EUR"): attributed quotes of it and faithful restatements of its prices are
  not read as commitments, exactly as in a turn, and its figures count as given;
* `--customer "TEXT"` (repeatable, oldest first) — the customer's own messages in the
  conversation: their figures said back and their words quoted in a question are not read as
  commitments, and their figures count as given;
* `--given "TEXT"` (repeatable) — anything else the model was given, for the grounding check
  only; with `--agent SLUG` also the agent's published texts — its live contract's mission, its
  own wording, its boundary wording and the labels of its request flow — and the texts (title and
  body) of its approved knowledge versions served and valid now; and, as in a turn, the owner's
  approved taboos are checked first (`{"blocked": true, "category": "taboo", "check": "taboo"}`).

Prints exactly one line of JSON per message —
`{"blocked": true, "category": "price", "check": "guard", "rule": null}`, or
`{"blocked": false, "category": null, "check": null, "rule": null}` — so scripts and the
owner's tooling can use it as is.  `--file F` checks one sentence per line (blank lines
skipped; `-` reads the lines from standard input) and prints one line per sentence.  `-` as the
message reads it from standard input; a message that itself starts with "-" goes after `--`.
Without `--agent` the command touches no database."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from guard.context import stated_context
from guard.outgoing import outgoing_check
from guard.texts import texts_in


def published_texts(slug: str) -> list[str]:
    """What every customer run of the agent `slug` is given before the conversation: its live
    contract's texts and its approved knowledge served and valid now."""
    from django.db.models import Q
    from django.utils import timezone

    from approvals.contract import live_terms
    from facade.tenancy.models import AgentProfile
    from knowledge.models import EntryVersion, Status

    agent = AgentProfile.objects.filter(slug=slug).first()
    if agent is None:
        raise CommandError(f"no agent with the slug {slug!r}")
    terms = live_terms(agent)
    texts = [terms.mission, *terms.boundary_wording.values()]
    texts += [sentence for said in terms.wording.values() for sentence in said.values()]
    texts += list(texts_in(terms.request_flow))
    now = timezone.now()
    versions = (
        EntryVersion.objects.filter(agent=agent, status=Status.APPROVED, served=True)
        .filter(
            Q(valid_from__isnull=True) | Q(valid_from__lte=now), Q(valid_until__isnull=True) | Q(valid_until__gt=now)
        )
        .order_by("entry_id")
        .values_list("title", "body")
    )
    texts += [f"{title}\n{body}" for title, body in versions]
    return [text for text in texts if text]


# A reply that says what an approved taboo lesson forbids (category and check "taboo", as the run
# loop records it).
TABOO_VERDICT = {"blocked": True, "category": "taboo", "check": "taboo", "rule": None}


def agent_taboos(slug: str) -> tuple[Any, ...]:
    from facade.tenancy.models import AgentProfile
    from knowledge.selectors import taboos_in_effect

    agent = AgentProfile.objects.get(slug=slug)
    return taboos_in_effect(agent)


def taboo_broken(text: str, taboos: tuple[Any, ...]) -> bool:
    from facade.dialogue.runtime.taboo import taboo_hit

    return taboo_hit(text, taboos) is not None


class Command(BaseCommand):
    help = (
        "Check outgoing messages as a customer reply in a turn is checked, with the turn's context: the "
        "approved entries it cited (--knowledge), the customer's messages (--customer) and anything else "
        "the model was given (--given; the agent's published texts with --agent). "
        'Prints one JSON line {"blocked", "category", "check", "rule"} per message; "-" reads the message '
        "from standard input, --file checks one sentence per line."
    )
    # Without --agent the check reads no model and no setting; system checks would only slow a
    # per-message call.
    requires_system_checks: list[str] = []
    # Lets call_command(..., stdin=...) stand in for the process's standard input.
    stealth_options = ("stdin",)

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("text", nargs="?", help='the message to check, or "-" to read it from standard input')
        parser.add_argument(
            "--given",
            action="append",
            default=[],
            metavar="TEXT",
            help="a text the model was given (repeatable): its figures may appear in the message",
        )
        parser.add_argument(
            "--knowledge",
            action="append",
            default=[],
            metavar="TEXT",
            help='an approved entry the run cited, as "Title: text" (repeatable, in citation order): '
            "quoting and restating it is not committing",
        )
        parser.add_argument(
            "--customer",
            action="append",
            default=[],
            metavar="TEXT",
            help="a message of the customer in this conversation (repeatable, oldest first): saying "
            "its figures back or quoting it in a question is not committing",
        )
        parser.add_argument(
            "--agent",
            metavar="SLUG",
            help="also count the agent's published texts and its approved knowledge valid now as given",
        )
        parser.add_argument(
            "--file", metavar="F", help='check each non-blank line of F ("-": standard input) as one message'
        )

    def handle(self, *args: Any, **options: Any) -> None:
        text: str | None = options["text"]
        path: str | None = options["file"]
        stdin = options.get("stdin") or sys.stdin
        if text is not None and path is not None:
            raise CommandError("pass either a message or --file, not both")
        if path is not None:
            try:
                content = stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
            except OSError as error:
                raise CommandError(f"cannot read {path}: {error.strerror}") from error
            messages = [line.strip() for line in content.splitlines() if line.strip()]
            if not messages:
                raise CommandError(f"{path} holds no message to check")
        else:
            if text is None:
                raise CommandError('no message given: pass the text to check, or "-" to read it from standard input')
            if text == "-":
                text = stdin.read()
            if not text.strip():
                raise CommandError("the message to check is empty")
            messages = [text]
        given = list(options["given"])
        taboos: tuple[Any, ...] = ()
        if options["agent"]:
            given += published_texts(options["agent"])
            taboos = agent_taboos(options["agent"])
        context = stated_context(knowledge=options["knowledge"], customer=options["customer"], given=given)
        for message in messages:
            # As in a turn: the owner's approved taboos first (the whole reply, quotes included),
            # then the whole outgoing check.
            if taboos and taboo_broken(message, taboos):
                self.stdout.write(json.dumps(TABOO_VERDICT))
                continue
            verdict = outgoing_check(message, **context.as_kwargs())
            self.stdout.write(json.dumps(verdict.as_json(), ensure_ascii=False))
