"""The request flow's ways out (issue 26 §3): the sentences the agent says when a customer asks a
question in the middle of it, asks for something only the business can decide (a discount, a
special price, a promise), cannot give a field twice in a row, or wants the owner to take it from
here.  Like the offline model's other sentences they double as markers: the flow is read back
from the conversation by finding them at the end of the agent's messages.  The Chinese is in
locale/."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from facade.i18n import Phrasebook

WAYS = Phrasebook(
    # a question answered while an offer to register a request was open: the offer again
    offer_again=_("Shall I still register a request so that the owner can confirm it with you?"),
    # a field refused a second time: the way out is offered instead of a third identical refusal
    still_bad_contact=_("That still doesn't look like an e-mail address or phone number."),
    still_bad_when=_("That still doesn't look like a date or time."),
    cancel_hint=_('Or say "cancel" to leave it.'),  # the way out when the contract grants no handoff
    way_out=_('I can pass your request to the owner as it is instead, or you can say "cancel". Shall I pass it on?'),
    # a decision only the business can make: said so, and offered to be passed on
    decision=_(
        "I can't promise a discount, a special price or anything else myself: that is a decision only the owner "
        "can make."
    ),
    pass_offer=_("Shall I pass this on to the owner?"),
)


def flow_instructions(tool_names: list[str]) -> list[str]:
    """What a hosted model is told of the ways out, for the tools this run offers (runtime/prompts.py)."""
    lines = ["A question asked in the middle of a request is answered; then ask your open question again."]
    if "read_request_status" in tool_names:
        lines.append("A question about a request already registered: call read_request_status; never start a new one.")
    if "request_handoff" in tool_names:
        lines += [
            "A discount, a special price or a promise asked for is a decision only the owner makes: say so, agree to "
            "nothing, and offer to pass it on (request_handoff); do not search for it.",
            "When an answer to the same question fits nowhere twice, offer to pass the request on to the owner as it "
            "is (request_handoff), or to cancel.",
        ]
    return lines


# The markers of an open way out, in the order they are looked for.
PASS_QUESTIONS = ("way_out", "pass_offer")
# The summary a request passed on is registered with when the customer said nothing of it.
PASSED_ON = "the customer asked to pass it on to the owner"
