"""Where a customer's request stands, as the customer face says it (issue 26 §3): one sentence per
state of the request flow, read from the request's state and whether anyone of the business has
acted on it — never a promise.  A state these sentences do not know (a flow the owner extended)
is named as the flow names it.  The Chinese is in locale/."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext_lazy as _

from facade.i18n import Phrasebook

STATES = Phrasebook(
    submitted=_("Request #{id} is registered and waits for the owner; nothing is confirmed yet."),
    submitted_seen=_("Request #{id} is registered and the owner has seen it; nothing is confirmed yet."),
    needs_info=_("Request #{id}: the owner needs more information from you."),
    accepted=_("Request #{id} has been accepted by the owner."),
    in_progress=_("Request #{id} is in progress."),
    done=_("Request #{id} is done."),
    declined=_("Request #{id} was declined by the owner."),
    cancelled=_("Request #{id} was cancelled."),
    withdrawn=_("Request #{id} was withdrawn."),
    other=_("Request #{id} stands at “{state}”."),
)
NEXT = Phrasebook(
    owner=_("Next: the owner gets back to you; any details are confirmed with you then."),
    customer=_("Next: the owner waits for your answer."),
    nobody=_("Nothing more happens with it."),
)
_KNOWN = frozenset({"submitted", "needs_info", "accepted", "in_progress", "done", "declined", "cancelled", "withdrawn"})


def status_line(request: Mapping[str, Any], language: str) -> str:
    """What the customer is told about `request` (a `request_view` with `owner_acted`)."""
    state = str(request.get("state") or "")
    key = state if state in _KNOWN else "other"
    if key == "submitted" and request.get("owner_acted"):
        key = "submitted_seen"
    line = STATES[language][key].format(id=request.get("id", "?"), state=state.replace("_", " "))
    following = NEXT[language].get(str(request.get("next_actor") or "")) or NEXT[language]["owner"]
    return f"{line}{'' if language.startswith('zh') else ' '}{following}"
