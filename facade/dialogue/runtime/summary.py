"""The summary of a request that the customer confirms before anything is registered.

The server renders it (`submit_request` answers `needs_confirmation` with it) and the offline
model renders the same text from the same function; `submit_request` registers only when the
agent's message before the customer's latest one ends with this summary of exactly the fields
submitted, and the customer's latest message is a plain yes (`rules.confirms`).  So a model that
skips the summary, or submits other fields than the customer saw, cannot register anything.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.utils.translation import gettext_lazy as _

from facade.i18n import Phrasebook

SUMMARY = Phrasebook(
    intro=_("Please check your request before I register it:"),
    closing=_("Shall I register it for the owner? (yes / no)"),
    need=_("What you need"),
    when=_("When"),
    contact=_("Contact"),
)
# The fields the summary names by a label of its own, in this order; any other field follows
# under its own name, alphabetically.
_KNOWN = ("need", "when", "contact")
SUMMARY_CHARS, FIELD_CHARS, MAX_FIELDS = 300, 500, 10


def _flat(text: str, limit: int) -> str:
    return " ".join(str(text).split())[:limit]


def normalised(summary: str, details: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """The summary and fields as they would be stored: whitespace collapsed, cut to length, empty
    fields dropped, at most MAX_FIELDS."""
    fields = {str(k).strip()[:40]: _flat(v, FIELD_CHARS) for k, v in list(details.items())[:MAX_FIELDS]}
    return _flat(summary, SUMMARY_CHARS), {k: v for k, v in fields.items() if k and v}


def request_summary(*, summary: str, details: Mapping[str, str], language: str) -> str:
    words = SUMMARY[language]
    colon = "：" if language.startswith("zh") else ": "
    line, fields = normalised(summary, details)
    rows = [f"- {words['need']}{colon}{line}"]
    if fields.get("need") and fields["need"] != line:
        rows.append(f"- {words['need']}{colon}{fields['need']}")
    rest = sorted((k for k in fields if k != "need"), key=lambda k: (_KNOWN.index(k) if k in _KNOWN else 99, k))
    rows += [f"- {words.get(k, k) if k in _KNOWN else k}{colon}{fields[k]}" for k in rest]
    return "\n".join([words["intro"], *rows, words["closing"]])


def request_summaries(*, summary: str, details: Mapping[str, str]) -> list[str]:
    """The same summary in every language of the site (the customer may switch language)."""
    return [request_summary(summary=summary, details=details, language=language) for language in SUMMARY]
