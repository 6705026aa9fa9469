"""What the owner's pages and e-mails call a request's kind, states and next actors, in the
reader's language.  A state or actor a flow names that is not listed here is shown as written."""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

KIND_LABELS: dict[str, Promise] = {
    "request": _("Request"),
    "handoff": _("Follow-up by a person"),
}
STATE_LABELS: dict[str, Promise] = {
    "submitted": _("Submitted"),
    "needs_info": _("Needs information from the customer"),
    "accepted": _("Accepted"),
    "in_progress": _("In progress"),
    "done": _("Done"),
    "declined": _("Declined"),
    "cancelled": _("Cancelled"),
    "withdrawn": _("Withdrawn"),
}
# Who acts next, as the owner reads it.
ACTOR_LABELS: dict[str, Promise] = {
    "owner": _("you (the business)"),
    "customer": _("the customer"),
    "nobody": _("nobody — it is finished"),
}


def label(table: dict[str, Promise], code: str) -> str:
    return str(table[code]) if code in table else code
