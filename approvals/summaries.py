"""A proposal's summary as the reader reads it.  The platform writes some summaries itself, in
English, into the proposal and the ledger — the review's drafts, "… waits for your decision",
roll-backs — and the record keeps them so; the inbox card and the owner chat show them in the
reader's language.  A summary an owner or a model wrote is shown as written."""

from __future__ import annotations

import re

from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

# Summaries the platform itself writes, in English, into the proposal and the ledger (the record
# keeps them so); a card shows them in the reader's language.  Each: the stored sentence's shape
# and the catalogue's sentence with the same placeholders.  A summary an owner or a model wrote
# matches none and is shown as written.
SUMMARY_SHAPES: tuple[tuple[re.Pattern[str], Promise], ...] = (
    (
        re.compile(r"Answer “(?P<topic>.*)” \(a draft from the daily review: write the answer\)", re.S),
        _("Answer “%(topic)s” (a draft from the daily review: write the answer)"),
    ),
    (
        re.compile(
            r"Already answered by entry (?P<entry>\d+) “(?P<title>.*)”: add “(?P<topic>.*)” to its questions", re.S
        ),
        _("Already answered by entry %(entry)s “%(title)s”: add “%(topic)s” to its questions"),
    ),
    (
        re.compile(r"Ask for the contact first: many conversations expired before they finished"),
        _("Ask for the contact first: many conversations expired before they finished"),
    ),
    (
        re.compile(r"(?P<title>.*) \(version (?P<number>\d+)\) waits for your decision: (?P<reasons>[a-z_, ]+)", re.S),
        _("%(title)s (version %(number)s) waits for your decision: %(reasons)s"),
    ),
    (
        re.compile(r"(?P<title>.*) \(version (?P<number>\d+)\) waits for your decision", re.S),
        _("%(title)s (version %(number)s) waits for your decision"),
    ),
)
ROLLBACK_SHAPE = re.compile(r"Roll back (?P<id>\S+): (?P<rest>.*)", re.S)


def summary_shown(summary: str) -> str:
    """A proposal's summary in the reader's language when the platform wrote it (SUMMARY_SHAPES),
    else as it was written."""
    rollback = ROLLBACK_SHAPE.fullmatch(summary)
    if rollback:
        return gettext("Roll back %(id)s: %(summary)s") % {
            "id": rollback["id"],
            "summary": summary_shown(rollback["rest"]),
        }
    for shape, sentence in SUMMARY_SHAPES:
        found = shape.fullmatch(summary)
        if found:
            return str(sentence) % found.groupdict()
    return summary
