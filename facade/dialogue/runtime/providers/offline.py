"""The offline provider: the default model, deterministic, no model needed.

It understands a handful of intents in English and Chinese and drives the same tools a hosted
model would, so the product is useful (and testable) without one:

- a question → `search_knowledge`, then an answer made only of the approved snippets found,
  each with its citation number; nothing found → "I don't know yet" and an offer of a person's
  follow-up (the search records the miss);
- wanting something done → asks for the agent's clarification fields one at a time, each
  answer checked for what it is (`rules.field_problem`; asked again politely when it does not
  fit), a question in between answered before the open question is asked again, "cancel" / 算了
  leaving the flow; then the summary (`runtime/summary.py`) and, on a yes, `submit_request` (on
  a no: what to change);
- "change the contact of request #3 to …" / "cancel my request #3" / 撤回请求 → `amend_request` /
  `withdraw_request`;
- a price, a deadline or a guaranteed outcome → `search_knowledge`; what the approved entries
  found say is quoted, attributed to them (guard/quoting.py), then the agent's boundary
  wording and an offer to register a request (a "yes" starts the clarification);
- greetings, thanks, goodbyes, a bare yes or no (runtime/small_talk.py) → a polite fixed
  sentence, no search (so no knowledge miss);
- asking for a person → `request_handoff`;
- on the owner face: "help" and small talk → what it can do, with examples; "remember …" →
  `remember_lesson`; a correction ("we never say X", "don't tell customers X", 我们从不说X,
  不要跟客户说X) → `remember_lesson` with a taboo named after X, answered with where it waits
  (the owner's inbox: every lesson is pending until the owner approves it); "teach: title /
  text" → `ingest_material` (a malformed one → the right form, nothing created); "requests" →
  `read_customer_requests`; "unanswered" → `read_unanswered_questions`; "inbox" or "what's
  new" → `read_owner_inbox`; a statement of fact ("We now also sell …") → a draft and "Shall I
  add this?", and a yes on the next turn → `add_confirmed_knowledge`; anything else →
  `search_knowledge`.  In English or Chinese.  What the teaching tools write waits for the
  owner's approval on its card, like every change (issue 28 §1).

Its own questions are fixed sentences, which is how it finds its place in a conversation again
from the history alone.

Strict composition (runtime/strict.py): everything it says to a customer or a peer is already a
published template, a quote of a search result or a status line of a request, so each answer is
built as a `Said` — the text, and the parts it is made of.  Called with `composition="strict"`
it answers with those parts, the structured choice, and the server composes the reply from them;
otherwise with the text.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from typing import Any

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from approvals.contract import ContractTerms, live_terms
from approvals.published import answered_by_published
from approvals.rules import decision_words
from approvals.summaries import summary_shown
from facade.i18n import Phrasebook
from facade.tenancy.models import AgentProfile
from facade.tenancy.rules import Audience

from ... import intents, rules
from ..prompts import conversation_language
from ..request_status import status_line
from ..small_talk import SmallTalk, small_talk
from ..summary import SUMMARY, request_summary
from ..ways_out import PASS_QUESTIONS, PASSED_ON, WAYS
from .base import ModelReply, Provider, ToolCall, ToolSpec

_ids = itertools.count(1)


class Said(str):
    """An answer to a customer or a peer: its text (guarded mode) and the parts it is made of,
    each a structured choice of strict composition (`{"kind", "id"[, "slots"]}`)."""

    parts: tuple[dict[str, Any], ...]

    def __new__(cls, text: str, parts: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> Said:
        said = super().__new__(cls, text)
        said.parts = tuple(parts)
        return said


def template(text: str, template_id: str, slots: dict[str, str] | None = None) -> Said:
    return Said(text, [{"kind": "template", "id": template_id, **({"slots": slots} if slots else {})}])


def status(text: str, status_id: str, slots: dict[str, str] | None = None) -> Said:
    return Said(text, [{"kind": "status", "id": status_id, **({"slots": slots} if slots else {})}])


def joined(separator: str, *said: str) -> Said:
    """Answers one after another (an empty one left out): the texts joined by `separator`, the
    parts in order.  A plain string among them has no parts: strict mode refuses it."""
    kept = [s for s in said if s]
    parts: list[dict[str, Any]] = []
    for s in kept:
        parts += list(s.parts) if isinstance(s, Said) else [{"kind": "free_text"}]
    return Said(separator.join(kept), parts)


# Its own sentences (facade/i18n.py; the Chinese is in locale/), read as QUESTIONS[language][key].
# The questions double as markers: a history is read back by finding them in it, in any language.
QUESTIONS = Phrasebook(
    need=_("What exactly do you need? A sentence or two is enough."),
    when=_("By when would you like it? The owner will confirm what is possible."),
    contact=_("How can the owner reach you (email or phone)?"),
    other=_("Please tell me: {field}?"),
)
TEXT = Phrasebook(
    offer=_("Shall I register a request so that the owner can confirm it with you?"),
    found=_("Here is what I found:"),
    quoted=_("This is what our published information says:"),
    unknown=_(
        "I don't know that yet — I've noted the question for the owner. Shall I ask a person to follow up with you?"
    ),
    registered=_("I've registered your request #{id}. Next: {next}."),
    handoff=_("I've asked a person to follow up with you (request #{id}). Next: {next}."),
    request_ref=_("(Request #{id}. Next: {next}.)"),
    withdrawn=_("I've withdrawn your request #{id}; nothing more will happen with it."),
    amended=_("I've updated your request #{id}."),
    not_found=_("I couldn't find that request in this conversation."),
    owner_has_acted=_(
        "The owner has already started on request #{id}, so I can't change it here. Shall I ask a person to follow up?"
    ),
    already_withdrawn=_("Request #{id} has been withdrawn already."),
    cancelled=_("All right, I've left it there — nothing was registered."),
    change=_('What should I change? Send the new detail (what you need, when, or how to reach you), or say "cancel".'),
    bad_contact=_("That doesn't look like an e-mail address or phone number."),
    bad_when=_("That doesn't look like a date or time."),
    unknown_short=_("I don't know that yet — I've noted the question for the owner."),
    next_owner=_("the owner reviews it and gets back to you"),
    next_customer=_("we need something from you"),
    next_nobody=_("nothing more is needed"),
    failed=_("Sorry, I couldn't do that just now."),
    greeting=_("Hello! I can answer questions from what {name} has taught me, and register a request for the owner."),
    thanks=_("You're welcome! Is there anything else I can help you with?"),
    goodbye=_("Goodbye, and thank you for visiting {name}!"),
    no=_("All right. If anything else comes up, just ask."),
    yes=_("All right. What would you like to know?"),
)

_COMMITMENT_ASK = re.compile(
    r"how much|price|cost|quote|fee|charge|cheap|discount|how long|when (?:will|can|could|would)|deadline"
    r"|delivery (?:date|time)|by (?:when|tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"|guarantee|promise|for sure|"
    # "什么时候" alone is just "when" ("营业时间是什么时候？" asks for the opening hours): only
    # "when will/can it …", as in English.
    r"多少钱|价格|价钱|报价|收费|费用|便宜|优惠|多久|什么时候(?:能|可以|会|才|给|交|送|做好|完成)|几天|哪天|期限|送达|到货"
    r"|保证|承诺|一定|包过|确定能",
    re.IGNORECASE,
)
_WANT = re.compile(
    r"\b(?:i(?:'d| would) like|i want|i need|can you (?:make|do|build|fix|book|order)|order|book|reserve|custom)\b|"
    r"我想|我要|想要|帮我|订|预约|预订|定制|下单|购买|买",
    re.IGNORECASE,
)
_HANDOFF = re.compile(
    r"\b(?:human|a person|someone|real person|agent|staff|call me)\b|人工|真人|客服|工作人员|找人", re.IGNORECASE
)
_YES = re.compile(
    r"^\s*(?:(?:yes|yeah|yep|sure|ok(?:ay)?|please|go ahead|do it)\b|(?:好|可以|是的|行|嗯|要的|需要|麻烦))",
    re.IGNORECASE,
)
_GREETING = re.compile(
    r"^\s*(?:hi|hello|hey|good (?:morning|afternoon|evening)|你好|您好|嗨|哈喽)\s*[.!。！]?\s*$", re.IGNORECASE
)


# Opening hours are published information, not a deadline: "when do you open?", "什么时候营业?".
_HOURS_ASK = re.compile(
    r"\b(?:open|opens|opening|close|closes|closing|hours)\b|开门|关门|营业|开业|休息|几点开|几点关", re.IGNORECASE
)


_NOT_A_YES = (SmallTalk.THANKS, SmallTalk.GOODBYE, SmallTalk.NO)


def _says_yes(text: str) -> bool:
    """A yes to the open offer: "OK" or 可以 — but not "可以礼品包装吗？" (a question), nor "OK,
    thanks" or "no thanks"."""
    return bool(_YES.match(text)) and not intents.asks(text) and small_talk(text) not in _NOT_A_YES


def _commitment_ask(text: str) -> bool:
    return bool(_COMMITMENT_ASK.search(text)) and not _HOURS_ASK.search(text)


def _text(message: dict[str, Any]) -> str:
    return str(message.get("content") or "")


class OfflineProvider(Provider):
    name = "offline"
    rewrites = False  # deterministic: asked again, it would write the same reply

    def __init__(self, agent: AgentProfile, terms: ContractTerms | None = None) -> None:
        """`terms`: the contract to speak by instead of the live one (the proposal replay's
        hypothetical contract, approvals/replay.py)."""
        self.agent = agent
        self._terms: ContractTerms | None = terms

    @property
    def terms(self) -> ContractTerms:
        """The agent's live contract, read once per provider (one provider serves one turn)."""
        if self._terms is None:
            self._terms = live_terms(self.agent)
        return self._terms

    def complete(
        self,
        *,
        messages: list[dict[str, Any]],
        tools: list[ToolSpec],
        max_tokens: int,
        audience: Audience,
        composition: str = "guarded",
    ) -> ModelReply:
        # The owner face only when the run loop says so: a customer can write anything into the
        # conversation (or an owner's mission into the prompt), so nothing in the text decides it.
        owner = audience == Audience.OWNER
        allowed = {tool.name for tool in tools}
        prompt_tokens = sum(len(_text(m)) for m in messages) // 4 + 1
        last = messages[-1]
        strict = composition == "strict" and not owner
        if last.get("role") == "tool":
            text, needs_input = self._after_tool(messages, owner)
            text = _choices(text) if strict else text[: max_tokens * 4]
            return ModelReply(
                text=text,
                prompt_tokens=prompt_tokens,
                completion_tokens=len(text) // 4 + 1,
                needs_input=needs_input,
            )
        user = _text(last)
        language = conversation_language([_text(m) for m in reversed(messages) if m.get("role") == "user"])
        step = (
            self._owner_step(messages, user, language, allowed)
            if owner
            else self._customer_step(messages, user, language, allowed)
        )
        if isinstance(step, ToolCall):
            return ModelReply(
                tool_calls=[step], prompt_tokens=prompt_tokens, completion_tokens=len(step.arguments) // 4 + 1
            )
        text, needs_input = step
        if not owner and text == self.terms.boundary(language):  # a price question mid-flow
            text = joined("\n\n", text, self._resume(messages, language))
        if strict:
            text = _choices(text)
        return ModelReply(
            text=text, prompt_tokens=prompt_tokens, completion_tokens=len(text) // 4 + 1, needs_input=needs_input
        )

    # --- customers and peers ---------------------------------------------------------------

    def _customer_step(
        self, messages: list[dict[str, Any]], user: str, language: str, allowed: set[str]
    ) -> ToolCall | tuple[str, bool]:
        state = self._clarification_state(messages[:-1])
        words = TEXT[language]
        withdraw = _WITHDRAW.search(user)
        if withdraw and "withdraw_request" in allowed:
            named = withdraw.group("id") or withdraw.group("zid")
            if state.in_flow and not named:  # "cancel the request" while it is being put together
                return template(words["cancelled"], "cancelled"), False
            return _call("withdraw_request", _request_id(named))
        if state.in_flow:
            return self._flow_step(state, user, language, allowed)
        amend = _amend(user)
        if amend is not None and "amend_request" in allowed:
            request_id, field, value = amend
            return _call("amend_request", {**_request_id(request_id), "details": {field: value}})
        talk = small_talk(user)
        way_out = self._ways_out(state, user, language, allowed)
        if way_out is not None:
            return way_out
        # "OK, thanks" or "no thanks" after the offer to register a request is not a yes to it.
        if state.offered is not None and _says_yes(user):
            return self._next_field({"need": state.offered}, language, allowed)
        if _GREETING.match(user):
            return self._greeting(language), False
        if talk is not None:
            # Answered, never searched: small talk is not a question nobody could answer.
            if talk == SmallTalk.GREETING:
                return self._greeting(language), False
            return template(words[talk.value].format(name=self.agent.name), talk.value), False
        if _HANDOFF.search(user) and "request_handoff" in allowed:
            return _call("request_handoff", {"reason": "the customer asked for a person"})
        if _commitment_ask(user):
            # What the approved entries say is quoted first (guard/quoting.py); the customer's
            # own price or date stays the owner's to confirm.
            if "search_knowledge" in allowed:
                return _call("search_knowledge", {"query": user[:500]})
            return self._boundary(language), True
        if _WANT.search(user) and "submit_request" in allowed:
            return self._next_field({"need": user.strip()}, language, allowed)
        if "search_knowledge" in allowed:
            return _call("search_knowledge", {"query": user[:500]})
        return self._unknown(language), False

    # --- the ways out of the request flow (issue 26 §3) --------------------------------------

    def _ways_out(
        self, state: "FlowState", user: str, language: str, allowed: set[str]
    ) -> ToolCall | tuple[str, bool] | None:
        """Outside the flow: an answer to the offer to pass something on to the owner, a question
        about a registered request (answered from its state, never a new order), the wish to pass
        it on, or a decision only the business can make; None for anything else."""
        if state.pass_topic is not None:
            if _says_yes(user):
                return self._pass_on({}, state.pass_topic, language, allowed)
            if rules.is_decline(user) or small_talk(user) == SmallTalk.NO:
                return template(TEXT[language]["no"], "no"), False
        if intents.status_asked(user):
            if "read_request_status" in allowed:
                return _call("read_request_status", _request_id(str(intents.request_number(user) or "")))
            if "search_knowledge" in allowed:
                return _call("search_knowledge", {"query": user[:500]})
            return self._unknown(language), False
        if intents.passes_on(user) and "request_handoff" in allowed:
            return self._pass_on({}, "", language, allowed)
        if intents.decision_asked(user):
            return self._decision(language, allowed), True
        return None

    def _decision(self, language: str, allowed: set[str]) -> Said:
        """A discount, a special price or a promise: only the owner decides — said so, and offered
        to be passed on (never searched: it is no question the knowledge failed to answer)."""
        words = WAYS[language]
        said = template(words["decision"], "decision")
        if "request_handoff" in allowed:
            return _joined(language, said, template(words["pass_offer"], "pass_offer"))
        if "submit_request" in allowed:
            return _joined(language, said, template(TEXT[language]["offer"], "offer"))
        return said

    def _pass_on(
        self, answers: dict[str, str], topic: str, language: str, allowed: set[str]
    ) -> ToolCall | tuple[str, bool]:
        """Pass what the customer gave so far to the owner, as a follow-up by a person."""
        if "request_handoff" not in allowed:
            return template(TEXT[language]["failed"], "failed"), False
        details = {k: v[:500] for k, v in answers.items() if v}
        if topic:
            details["asked"] = topic[:500]
        reason = answers.get("need") or topic or PASSED_ON
        return _call("request_handoff", {"reason": reason[:300], "details": details})

    def _passing(
        self, state: "FlowState", user: str, language: str, allowed: set[str]
    ) -> ToolCall | tuple[str, bool] | None:
        """In the flow, after the agent offered to pass the request on: a yes passes it on, an
        answer that fits the open field is taken, a no goes back to the open question; None for
        anything else (read as in the flow)."""
        if _says_yes(user):
            return self._pass_on(state.answers, state.topic, language, allowed)
        if state.asked is not None and rules.field_problem(state.asked, user) is None:
            return self._next_field({**state.answers, state.asked: user.strip()}, language, allowed)
        if rules.is_decline(user) or small_talk(user) == SmallTalk.NO:
            return self._open_question(replace(state, passing="", refused=0), language), True
        return None

    def _greeting(self, language: str) -> Said:
        text = self._said(language, "greeting") or TEXT[language]["greeting"].format(name=self.agent.name)
        return template(text, "greeting")

    def _unknown(self, language: str) -> Said:
        return template(self._said(language, "unknown") or TEXT[language]["unknown"], "unknown")

    def _flow_step(
        self, state: "FlowState", user: str, language: str, allowed: set[str]
    ) -> ToolCall | tuple[str, bool]:
        """A message while a request is being put together: an answer to the open field, a yes or
        no to the summary, a change, a way out — or a question of its own, answered before the
        flow goes on (`_after_tool` asks again)."""
        words = TEXT[language]
        if rules.is_cancel(user):
            return template(words["cancelled"], "cancelled"), False
        if intents.passes_on(user) and "request_handoff" in allowed:
            return self._pass_on(state.answers, state.topic, language, allowed)
        if state.passing:
            passing = self._passing(state, user, language, allowed)
            if passing is not None:
                return passing
        if intents.decision_asked(user):
            return self._decision(language, allowed), True
        if intents.status_asked(user) and "read_request_status" in allowed:  # an earlier request
            return _call("read_request_status", _request_id(str(intents.request_number(user) or "")))
        if state.asked is not None:
            if rules.field_problem(state.asked, user) is None:
                return self._next_field({**state.answers, state.asked: user.strip()}, language, allowed)
            if state.asked != "need" and intents.orders(user) and not intents.asks(user):
                # What is needed, said again ("我想订一个生日蛋糕" when asked by when): no refusal.
                return self._next_field({**state.answers, "need": user.strip()}, language, allowed)
            return self._aside(user, language, allowed) or self._reask(state, language, allowed)
        if state.confirming:
            if rules.is_confirmation(user):
                if "submit_request" not in allowed:
                    return template(words["failed"], "failed"), False
                summary, details = _request_of(state.answers)
                return _call("submit_request", {"summary": summary, "details": details})
            if rules.is_decline(user) and _amend(user) is None:
                return template(words["change"], "change"), True
        changed = _changed(state.answers, user)
        if changed is not None:
            return self._next_field(changed, language, allowed)
        named = _named_field(user)
        if named is not None and named in self._fields():
            return self._question(named, language), True
        aside = self._aside(user, language, allowed)
        if aside is not None:
            return aside
        if state.changing:  # anything else is a new description of what is needed
            return self._next_field({**state.answers, "need": user.strip()}, language, allowed)
        return self._summary(state.answers, language), True

    def _aside(self, user: str, language: str, allowed: set[str]) -> ToolCall | tuple[str, bool] | None:
        """A question asked in the middle of the flow: searched like any question, a price or a
        date included (the answer quotes what the entries say, then asks the open question
        again); met with the boundary when searching is not allowed."""
        if not intents.asks(user):
            return None
        if "search_knowledge" in allowed:
            # A price or a date too: what the entries say is quoted, then the boundary (_after_tool).
            return _call("search_knowledge", {"query": user[:500]})
        if _commitment_ask(user):
            return template(self.terms.boundary(language), "boundary"), True  # `complete` adds the open question
        return None

    def _reask(self, state: "FlowState", language: str, allowed: set[str]) -> tuple[str, bool]:
        """The open field asked again after an answer that does not fit: the first time with
        what is wrong; the second time in a row with the way out instead (passed on to the owner
        as it is, or "cancel") — never a third identical refusal."""
        field = str(state.asked)
        kind = rules.field_kind(field)
        prefix = {rules.FieldKind.CONTACT: "bad_contact", rules.FieldKind.WHEN: "bad_when"}.get(kind)
        question = self._question(field, language)
        if not prefix:
            return question, True
        if state.refused % 2 == 1:
            still = template(WAYS[language][f"still_{prefix}"], f"still_{prefix}")
            if "request_handoff" in allowed:
                return _joined(language, still, template(WAYS[language]["way_out"], "way_out")), True
            return _joined(language, still, template(WAYS[language]["cancel_hint"], "cancel_hint"), question), True
        return _joined(language, template(TEXT[language][prefix], prefix), question), True

    def _said(self, language: str, situation: str) -> str | None:
        """The owner's own sentence for the situation, from the live contract (L2 `wording`)."""
        return self.terms.said(language, situation)

    def _boundary(self, language: str) -> Said:
        boundary = template(self.terms.boundary(language), "boundary")
        return _joined(language, boundary, template(TEXT[language]["offer"], "offer"))

    def _fields(self) -> list[str]:
        return [str(f) for f in (self.terms.clarification_order or ["need"])]

    def _question(self, field: str, language: str) -> Said:
        table = QUESTIONS[language]
        return template(table.get(field) or table["other"].format(field=field), f"ask.{field}")

    def _summary(self, answers: dict[str, str], language: str) -> Said:
        summary, details = _request_of(answers)
        slots = {**details, "need": summary}
        return template(request_summary(summary=summary, details=details, language=language), "summary", slots)

    def _next_field(self, answers: dict[str, str], language: str, allowed: set[str]) -> ToolCall | tuple[str, bool]:
        for field in self._fields():
            if not answers.get(field):
                return self._question(field, language), True
        if "submit_request" not in allowed:
            return template(TEXT[language]["failed"], "failed"), False
        return self._summary(answers, language), True

    def _resume(self, messages: list[dict[str, Any]], language: str) -> Said | str:
        """What to ask again after answering a question asked in the middle of the flow: the open
        field, the summary or the question what to change; "" outside the flow."""
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
        return self._open_question(self._clarification_state(messages[:last_user]), language)

    def _open_question(self, state: "FlowState", language: str) -> Said | str:
        """The question `state` leaves open, as the agent asks it; "" when none is."""
        if state.passing:
            return template(WAYS[language][state.passing], state.passing)
        if state.asked is not None:
            return self._question(state.asked, language)
        if state.confirming:
            return self._summary(state.answers, language)
        if state.changing:
            return template(TEXT[language]["change"], "change")
        if state.pass_topic is not None:
            return template(WAYS[language]["pass_offer"], "pass_offer")
        if state.offered is not None:
            return template(WAYS[language]["offer_again"], "offer_again")
        return ""

    def _clarification_state(self, history: list[dict[str, Any]]) -> "FlowState":
        """Walk the conversation: which fields were answered, what the agent's last message
        left open (a field, the summary, the question what to change, an offer) — read from the
        fixed sentences the agent's messages end with."""
        questions = [(q, field) for table in QUESTIONS.values() for field, q in table.items() if field != "other"] + [
            (q, field) for field in self._fields() for q in (self._question(field, lang) for lang in QUESTIONS)
        ]
        closings = [SUMMARY[lang]["closing"] for lang in SUMMARY]
        changes = [TEXT[lang]["change"] for lang in TEXT]
        offers = [TEXT[lang]["offer"] for lang in TEXT]
        again = [WAYS[lang]["offer_again"] for lang in WAYS]
        passes = [(WAYS[lang][key], key) for key in PASS_QUESTIONS for lang in WAYS]
        refusals = [w[key] for w in (TEXT[lang] for lang in TEXT) for key in ("bad_contact", "bad_when")]
        refusals += [w[key] for w in (WAYS[lang] for lang in WAYS) for key in ("still_bad_contact", "still_bad_when")]
        state = FlowState()
        previous_user = ""
        for message in history:
            role, text = message.get("role"), _text(message).strip()
            if role == "user":
                state = state.after_user(text)
                previous_user = text
            elif role == "assistant" and not message.get("tool_calls"):
                asked = next((field for q, field in questions if text.endswith(q)), None)
                passing = next((key for q, key in passes if text.endswith(q)), None)
                answers = state.answers
                if asked is not None and not answers and asked != "need":
                    answers = {"need": previous_user}
                refused = any(text.startswith(r) for r in refusals)
                if asked is not None:
                    count = (state.refused if state.asked == asked else 0) + 1 if refused else 0
                    state = FlowState(answers=answers, asked=asked, refused=count)
                elif passing is not None:
                    # What is passed on is the decision asked for, not a question answered since.
                    asked_for = previous_user if intents.decision_asked(previous_user) else None
                    if state.in_flow or passing == "way_out":
                        topic = asked_for or state.topic
                        state = replace(state, passing=passing, topic=topic, refused=state.refused + int(refused))
                    else:
                        state = FlowState(pass_topic=asked_for or state.pass_topic or previous_user)
                elif any(text.endswith(c) for c in closings) and answers:
                    state = FlowState(answers=answers, confirming=True)
                elif any(text.endswith(c) for c in changes) and answers:
                    state = FlowState(answers=answers, changing=True)
                elif any(text.endswith(o) for o in again) and state.offered is not None:
                    state = FlowState(offered=state.offered)  # a question answered: the same offer
                elif any(text.endswith(o) for o in offers):
                    state = FlowState(offered=previous_user)
                else:
                    state = FlowState()
        return state

    # --- after a tool ran -----------------------------------------------------------------

    def _after_tool(self, messages: list[dict[str, Any]], owner: bool) -> tuple[str, bool]:
        language = conversation_language([_text(m) for m in reversed(messages) if m.get("role") == "user"])
        words = TEXT[language]
        call = next(
            (m["tool_calls"][-1] for m in reversed(messages) if m.get("role") == "assistant" and m.get("tool_calls")),
            None,
        )
        try:
            result = json.loads(_text(messages[-1]))
        except ValueError:
            result = {}
        name = call["function"]["name"] if call else ""
        if result.get("outcome") == "needs_confirmation" and result.get("summary"):
            # The server's own summary, shown as it gave it (in strict mode: the summary template
            # of the fields the call submitted, which the server renders the same way).
            return self._confirmation(str(result["summary"]), call), True
        if owner:
            if result.get("outcome") != "ok":
                return self._owner_failed(name, result, language), False
            return self._owner_after(name, result, language), False
        if result.get("outcome") != "ok":
            refused = self._refused(name, result, words)
            resume = self._resume(messages, language) if name == "read_request_status" else ""
            return (joined("\n\n", refused, resume), True) if resume else (refused, False)
        if name == "search_knowledge":
            found = result.get("results") or []
            asked = next((_text(m) for m in reversed(messages) if m.get("role") == "user"), "")
            # A price or a delivery option the contract publishes answers the question: quoted,
            # with no boundary after it (approvals/published.py).
            published = answered_by_published(found)
            commitment = _commitment_ask(asked) and not published
            resume = self._resume(messages, language)
            # In the middle of a request the open question follows, not a second offer.
            boundary = template(self.terms.boundary(language), "boundary") if resume else self._boundary(language)
            answer: Said
            if not found:
                if commitment:
                    answer = boundary
                elif resume:
                    answer = template(words["unknown_short"], "unknown_short")
                else:
                    return self._unknown(language), True
            else:
                # Each entry as it stands, attributed to it by its citation number and title: the
                # form the server recognises as a quote (guard/quoting.py).
                colon = "：" if language == "zh-hans" else ": "
                # An item asked of a published list is its line alone ("n.k"), not the whole list.
                quotes = [
                    Said(
                        f"[{cite}] {r['title']}{colon}{r['snippet']}",
                        [{"kind": "knowledge", "id": f"{cite}.{r['part']}" if r.get("part") else str(cite)}],
                    )
                    for cite, r in ((r.get("cite", n), r) for n, r in enumerate(found, 1))
                ]
                lead = (
                    [template(words["quoted"], "quoted"), *quotes, boundary]
                    if commitment
                    else [
                        template(words["quoted" if published else "found"], "quoted" if published else "found"),
                        *quotes,
                    ]
                )
                answer = joined("\n", *lead)
            if resume:
                return joined("\n\n", answer, resume), True
            return answer, commitment
        if name == "read_request_status":
            found = result.get("requests") or [{}]
            line = status(status_line(found[0], language), "state")
            resume = self._resume(messages, language)  # asked in the middle of a new request
            return (joined("\n\n", line, resume), True) if resume else (line, False)
        if name in ("withdraw_request", "amend_request"):
            request = result.get("request") or {}
            key = "withdrawn" if name == "withdraw_request" else "amended"
            done = status(words[key].format(id=request.get("id", "?")), key)
            resume = self._resume(messages, language)  # an earlier request, while a new one is put together
            return (joined("\n\n", done, resume), True) if resume else (done, False)
        if name in ("submit_request", "request_handoff"):
            request = result.get("request") or {}
            following = words.get(f"next_{request.get('next_actor', 'owner')}", words["next_owner"])
            key = "registered" if name == "submit_request" else "handoff"
            own = self._said(language, "request_registered" if key == "registered" else "handoff")
            if own:  # the owner's sentence, then what the request is and what happens next
                ref = words["request_ref"].format(id=request.get("id", "?"), next=following)
                return status(_joined(language, own, ref), key), False
            return status(words[key].format(id=request.get("id", "?"), next=following), key), False
        return template(words["failed"], "failed"), False

    def _confirmation(self, summary: str, call: dict[str, Any] | None) -> Said:
        """The server's summary of a `submit_request` call that waits for the customer's yes."""
        try:
            arguments = json.loads(call["function"]["arguments"]) if call else {}
        except (ValueError, KeyError, TypeError):
            arguments = {}
        details = arguments.get("details") if isinstance(arguments, dict) else None
        slots = {str(k): str(v) for k, v in (details or {}).items()}
        slots["need"] = str(arguments.get("summary") or slots.get("need") or "")
        return template(summary, "summary", slots)

    def _refused(self, name: str, result: dict[str, Any], words: Mapping[str, str]) -> Said:
        error = str(result.get("error") or "")
        shown = result.get("request_id") or "?"
        mine = ("not_found", "owner_has_acted", "already_withdrawn")
        if name in ("withdraw_request", "amend_request", "read_request_status") and error in mine:
            slots = {"request": str(shown)} if error != "not_found" else None
            return template(words[error].format(id=shown), error, slots)
        detail = str(result.get("detail") or "")
        if error == "invalid_fields" and "not_a_contact" in detail:
            return template(words["bad_contact"], "bad_contact")
        if error == "invalid_fields" and "not_a_date_or_time" in detail:
            return template(words["bad_when"], "bad_when")
        return template(words["failed"], "failed")

    # --- the owner face -------------------------------------------------------------------

    def _owner_step(
        self, messages: list[dict[str, Any]], user: str, language: str, allowed: set[str]
    ) -> ToolCall | tuple[str, bool]:
        stripped = user.strip()
        words = OWNER[language]
        draft = _draft_shown(messages[:-1])
        if draft is not None and "add_confirmed_knowledge" in allowed:
            if rules.owner_says_yes(stripped):
                return _call("add_confirmed_knowledge", {"title": draft[0], "text": draft[1]})
            if rules.owner_says_no(stripped):
                return words["not_added"], False
        decision = decision_words(stripped)
        if decision is not None and "decide_change" in allowed:
            # Only the card's buttons decide: this shows the card (decide_change never decides).
            return _call("decide_change", {"proposal_id": decision[1]})
        lesson = _LESSON.match(stripped)
        if lesson and "remember_lesson" in allowed:
            text = (lesson.group(1) or lesson.group(2)).strip()
            said = never_said(text)
            if said is not None:  # "remember: never say X" is a taboo like "never say X"
                return _call("remember_lesson", _taboo(said, text, language))
            return _call("remember_lesson", {"kind": "preference", "title": text[:60], "text": text})
        said = never_said(stripped)
        if said is not None and "remember_lesson" in allowed:
            return _call("remember_lesson", _taboo(said, stripped, language))
        teach = _TEACH.match(stripped)
        if teach and "ingest_material" in allowed:
            title, text = _teaching(teach.group(1) or teach.group(2) or "")
            if rules.teach_problem(title, text) is not None:
                return words["teach_form"], False
            return _call("ingest_material", {"title": title[:200], "text": text})
        intent = _owner_intent(stripped)
        if intent == "help":
            return words["help"], False
        if intent == "requests" and "read_customer_requests" in allowed:
            return _call("read_customer_requests", {})
        if intent == "unanswered" and "read_unanswered_questions" in allowed:
            return _call("read_unanswered_questions", {})
        if intent == "inbox" and "read_owner_inbox" in allowed:
            return _call("read_owner_inbox", {})
        if intent in ("thanks", "bye"):
            return words[intent], False
        if rules.owner_says_yes(stripped) or rules.owner_says_no(stripped):
            return words["nothing_pending"], False
        if _is_statement(stripped) and "add_confirmed_knowledge" in allowed:
            text = stripped[:2000]
            title = _title_of(text)
            return "\n".join(
                [words["draft"], DRAFT_ENTRY[language]["entry"].format(title=title, text=text), words["confirm"]]
            ), True
        if "search_knowledge" in allowed:
            return _call("search_knowledge", {"query": stripped[:500]})
        return words["none"], False

    def _owner_after(self, name: str, result: dict[str, Any], language: str) -> str:
        words = OWNER[language]
        if name == "propose_change":
            card = result.get("card") or {}
            return words["proposed"].format(id=card.get("id", "?"), summary=_summary(card, language))
        if name == "read_owner_inbox":
            changes = result.get("pending_changes") or {}
            lines = []
            if changes.get("count"):
                lines.append(words["changes"].format(count=changes["count"]))
                lines += [
                    words["change_line"].format(id=c["id"], level=c["level"], summary=_summary(c, language))
                    for c in changes.get("changes") or []
                ][:10]
            lines += [
                words["inbox"].format(
                    requests=result.get("open_requests", 0),
                    unanswered=result.get("unanswered_topics", 0),
                    pending=len(result.get("pending_knowledge") or []),
                )
            ]
            lines += [words["item"].format(title=p["title"]) for p in result.get("pending_knowledge") or []][:10]
            candidates = (result.get("customer_candidates") or {}).get("count", 0)
            if candidates:
                lines.append(words["candidates"].format(count=candidates))
            lines.append(words["inbox_more"])
            return "\n".join(lines)
        if name == "read_customer_requests":
            shown = result.get("requests") or []
            if not shown:
                return words["no_requests"]
            lines = [words["requests"].format(count=result.get("count", len(shown)))]
            for r in shown:
                state = OWNER_STATES[language].get(r["state"]) or str(r["state"]).replace("_", " ")
                actor = OWNER_ACTORS[language].get(r["next_actor"]) or str(r["next_actor"])
                kind = words["handoff"] if r.get("kind") == "handoff" else words["request"]
                lines.append(
                    words["request_line"].format(
                        kind=kind.format(id=r["id"]), date=str(r.get("created_at", ""))[:10], state=state, actor=actor
                    )
                )
            return "\n".join(lines)
        if name == "read_unanswered_questions":
            topics = result.get("topics") or []
            if not topics:
                return words["no_unanswered"].format(n=settings.FACADE_UNANSWERED_MIN_ASKERS)
            lines = [words["unanswered"]]
            lines += [words["topic_line"].format(topic=t["topic"], count=t["count"]) for t in topics]
            lines.append(words["unanswered_more"])
            return "\n".join(lines)
        if name == "search_knowledge":
            found = result.get("results") or []
            if not found:
                return words["none"]
            marked = [
                f"[{n}] {r['title']}{words['pending_mark'] if r.get('status') == 'pending' else ''}: {r['snippet']}"
                for n, r in enumerate(found, 1)
            ]
            return "\n".join([words["found"], *marked])
        if name in ("ingest_material", "add_confirmed_knowledge"):
            created = result.get("created")
            if created is None:  # one entry
                created = [result]
            if not created:
                return words["unchanged"].format(title=result.get("title", ""))
            # A model's writing always waits for the owner's decision on its card (issue 28 §1).
            return "\n".join(
                words["added_waiting"].format(title=c.get("title", ""), id=c.get("change_id") or "?") for c in created
            )
        if name == "remember_lesson":
            # Always pending (the knowledge services never approve a lesson by themselves).
            card = result.get("card") or {}
            return words["lesson_pending"].format(title=result.get("title", ""), id=card.get("id", "?"))
        return words["done"]

    def _owner_failed(self, name: str, result: dict[str, Any], language: str) -> str:
        words = OWNER[language]
        if name == "decide_change":
            card = result.get("card")
            if not card:
                return words["no_change"]
            return words["decide_on_card"].format(id=card["id"], summary=_summary(card, language))
        if result.get("error") == "malformed_teach":
            return words["teach_form"]
        if name == "add_confirmed_knowledge":
            return words["not_confirmed"]
        return TEXT[language]["failed"]


# The owner face's own sentences (facade/i18n.py; the Chinese is in locale/).  The draft's three
# lines are markers too: a "yes" on the next turn finds the draft in the history by them.
OWNER = Phrasebook(
    help=_(
        "I help you look after your agent. You can write to me in plain words, for example:\n"
        "• Tell me a fact: “We now also sell gluten-free brownies.” — I show you a draft, save it once you say yes, "
        "and customers are told it once you approve its card.\n"
        "• Teach an entry — teach: title / text, e.g. “teach: Opening hours / Monday to Saturday, 9 to 18”\n"
        "• Record a lesson: “remember: never promise same-day delivery”\n"
        "• “requests” — customers' open requests and who acts next\n"
        "• “unanswered” — questions the knowledge base could not answer\n"
        "• “inbox” — everything that waits for you\n"
        "• Anything else is looked up in the knowledge base."
    ),
    thanks=_("You're welcome. Write “help” whenever you want to see what I can do."),
    bye=_("Goodbye! Your agent keeps answering customers from what it knows."),
    nothing_pending=_("There is nothing waiting for a yes or no. Write “help” to see what I can do."),
    draft=_("Here is a draft for the knowledge base:"),
    confirm=_("Shall I add this?"),
    not_added=_("All right, I haven't added it."),
    not_confirmed=_("I only add a draft after you have seen it and said yes. Tell me the fact again."),
    teach_form=_("To teach an entry, write: teach: title / text"),
    added_waiting=_(
        "Saved “{title}”. It waits for your approval on its card (change {id}); customers are told it once you "
        "approve it there."
    ),
    unchanged=_("“{title}” is already in the knowledge base as written; nothing changed."),
    lesson_pending=_(
        "I recorded the lesson “{title}”. It waits for your approval in your inbox (change {id}); nothing "
        "changes until you approve it."
    ),
    taboo_title=_("Never say ‘{said}’"),
    done=_("Done."),
    inbox=_(
        "Waiting for you: {requests} open customer request(s), {unanswered} unanswered question topic(s), "
        "{pending} knowledge item(s) to review."
    ),
    item=_("• To review: “{title}”"),
    candidates=_("• {count} suggestion(s) drawn from customer conversations, on the knowledge page."),
    inbox_more=_("Write “requests” or “unanswered” to see them."),
    changes=_("Changes waiting for your decision ({count}) — decide them on their cards or in your inbox:"),
    change_line=_("• {id} (level {level}): {summary}"),
    proposed=_(
        "I prepared change {id} for you to decide: {summary}. Nothing changes until you approve it on its card."
    ),
    decide_on_card=_(
        "Change {id}: {summary}. Decide it with the buttons on its card below; a contract change also asks for the "
        "code we e-mail you. I cannot decide it for you."
    ),
    no_change=_("I found no change with that id. Write “inbox” to see what waits for you."),
    requests=_("Open customer requests ({count}):"),
    request=_("Request #{id}"),
    handoff=_("Follow-up by a person #{id}"),
    request_line=_("• {kind}, {date}: {state} — next: {actor}"),
    no_requests=_("No customer requests are open."),
    unanswered=_("Questions customers asked that the knowledge base could not answer (topic — times asked):"),
    topic_line=_("• {topic} — {count}"),
    unanswered_more=_("To answer one, tell me the fact or write: teach: title / text"),
    no_unanswered=_("No unanswered questions to show: a question is listed once {n} customers have asked it."),
    found=_("Knowledge on this (pending items marked):"),
    pending_mark=_(" (waiting for review)"),
    none=_("Nothing in the knowledge base matches that."),
)
# Only punctuation, which Chinese writes full-width: the draft's middle line.
DRAFT_ENTRY = Phrasebook(entry=_("“{title}”: {text}"))
OWNER_STATES = Phrasebook(
    submitted=_("new, waiting for you"),
    needs_info=_("waiting for the customer's information"),
    accepted=_("accepted"),
    in_progress=_("in progress"),
)
OWNER_ACTORS = Phrasebook(owner=_("you"), customer=_("the customer"), nobody=_("nobody"))

_LESSON = re.compile(r"^(?:remember|lesson)\s*[:：,]?\s*(.+)$|^记住\s*[:：，,]?\s*(.+)$", re.IGNORECASE | re.DOTALL)
# An owner's correction: "we never say X", "don't tell customers X", 我们从不说X, 不要跟客户说X.
_NEVER_SAY = (
    re.compile(
        r"^(?:(?:so|and|but|please|remember)[,:]?\s+)?(?:we|you|i)?\s*(?:never|don[’']?t|do\s+not|must\s+not"
        r"|mustn[’']?t|should\s+not|shouldn[’']?t|won[’']?t|will\s+not)\s+(?:ever\s+)?"
        r"(?:say|use\s+the\s+words?|call\s+(?:it|us|them|anything|our\s+\w+)"
        r"|tell\s+(?:customers|clients|guests|buyers|people|anyone|them)(?:\s+that)?)\s+(?P<said>.+)$",
        re.IGNORECASE | re.DOTALL,
    ),
    re.compile(
        r"^(?:请|以后|记住)?[:：，,]?\s*(?:我们|你)?(?:从不|从来不|绝不|永远不要|永远不|千万不要|千万别|不要|别|不能|不许|不准)再?"
        r"(?:(?:跟|对|和|向)(?:客户|顾客|客人|买家|他们)们?)?说(?P<said>.+)$",
        re.DOTALL,
    ),
)
_QUOTES = "\"'“”‘’「」『』《》 \t\n"
_NOT_SAID = frozenset({"that", "this", "it", "so", "anything", "了", "啦", "这个", "那个"})


def never_said(text: str) -> str | None:
    """What the owner says is never to be said ("cheap" in "we never say cheap"), or None when
    the message is not such a correction."""
    for pattern in _NEVER_SAY:
        match = pattern.match(text.strip())
        if match is None:
            continue
        said = match.group("said").strip().rstrip(".!。！?？").strip(_QUOTES).rstrip(".!。！?？").strip()
        if said and said.casefold() not in _NOT_SAID:
            return said[:150]
    return None


def _taboo(said: str, text: str, language: str) -> dict[str, str]:
    """The `remember_lesson` arguments of a correction: a taboo named after what is not said, which
    it forbids once the owner approves it."""
    title = OWNER[language]["taboo_title"].format(said=said)
    return {"kind": "taboo", "title": title, "text": text[:5000], "phrase": said}


_TEACH = re.compile(r"^(?:teach|learn|add)\s*[:：]\s*(.*)$|^(?:知识|学习)\s*[:：]\s*(.*)$", re.IGNORECASE | re.DOTALL)
# What the owner asks for, in a short message (a longer one is a fact or a question).
_OWNER_INTENTS = (
    (
        "help",
        re.compile(
            r"\bhelp\b|what can you do|what do you do|how (?:do|does) (?:this|it|you) work|\bcommands\b"
            r"|帮助|你能做什么|你会做什么|你会什么|能做什么|怎么用|如何使用|使用说明",
            re.IGNORECASE,
        ),
    ),
    ("requests", re.compile(r"\brequests?\b|请求|客户需求", re.IGNORECASE)),
    ("unanswered", re.compile(r"\bunanswered\b|\bmissed\b|未回答|没回答|没有回答|答不上|没答上", re.IGNORECASE)),
    (
        "inbox",
        re.compile(
            r"\binbox\b|\bpending\b|\bwaiting\b|what'?s new|anything new|待处理|待审|收件箱|有什么新|新消息|最新",
            re.IGNORECASE,
        ),
    ),
    (
        "thanks",
        re.compile(r"^\s*(?:thanks|thank you|thx|cheers|great,? thanks)\b|^\s*(?:谢谢|多谢|感谢)", re.IGNORECASE),
    ),
    ("bye", re.compile(r"^\s*(?:bye|goodbye|see you)\b|^\s*(?:再见|拜拜)", re.IGNORECASE)),
    (
        "help",
        re.compile(
            r"^\s*(?:hi|hello|hey|good (?:morning|afternoon|evening))\b|^\s*(?:你好|您好|嗨|哈喽)", re.IGNORECASE
        ),
    ),
)
OWNER_INTENT_MAX = 60
# A fact the owner states about the business: "We now also sell …", "我们现在也卖…", or any
# complete sentence of a few words that is not a question.
_QUESTION = re.compile(
    r"[?？]\s*$|^\s*(?:do|does|did|is|are|was|were|can|could|should|would|will|what|when|where|how|who|why|which)\b"
    r"|[吗呢]\s*[。.!！]?\s*$|^\s*(?:什么|怎么|为什么|哪|谁|是否|有没有|能不能|可不可以)",
    re.IGNORECASE,
)
_WE = re.compile(
    r"^\s*(?:we|we're|we've|our|the shop|from now on|starting|as of)\b|^\s*(?:我们|本店|我店|店里|从现在起|今后|以后)",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!。！]\s*$")
_OFFER_EN = re.compile(
    r"^\s*(?:we|our shop|the shop)\s+(?:(?:now|also|still|newly)\s+)*"
    r"(?:sell|offer|have|make|bake|serve|stock|carry)s?\s+(?P<what>.+?)[.!]*\s*$",
    re.IGNORECASE,
)
_OFFER_ZH = re.compile(
    r"^\s*(?:我们|本店|我店|店里)(?:现在|目前|今后|从现在起|从今天起)?(?:也|还|都|开始)*"
    r"(?:卖|售|出售|销售|提供|有|做|供应)(?P<what>.+?)[。！!.]*\s*$"
)
TITLE_WORDS = 6


def _owner_intent(text: str) -> str | None:
    if len(text) > OWNER_INTENT_MAX or (_WE.match(text) and _SENTENCE_END.search(text)):
        return None
    return next((name for name, pattern in _OWNER_INTENTS if pattern.search(text)), None)


def _is_statement(text: str) -> bool:
    if not text or "\n" in text or _QUESTION.search(text):
        return False
    if _WE.match(text):
        return True
    cjk = len(re.findall(r"[\u4e00-\u9fff]", text))
    return bool(_SENTENCE_END.search(text)) and (len(text.split()) >= 4 or cjk >= 6)


def _title_of(sentence: str) -> str:
    """A short title for a stated fact: what the business sells or offers, when it says so;
    otherwise its first words."""
    offer = _OFFER_EN.match(sentence) or _OFFER_ZH.match(sentence)
    if offer:
        what = offer.group("what").strip()
    else:
        what = sentence.strip().rstrip(".!。！")
        if not re.search(r"[\u4e00-\u9fff]", what):
            what = " ".join(what.split()[:TITLE_WORDS])
        else:
            what = what[:16]
    what = what[: rules.TEACH_TITLE_MAX].strip("“”\"' ")
    return what[:1].upper() + what[1:]


def _teaching(body: str) -> tuple[str, str]:
    """`teach: title / text` (or the title on the first line and the text below): the title and
    the text; a missing part is empty (and the teaching is refused)."""
    body = body.strip()
    first, _newline, rest = body.partition("\n")
    title, slash, after = first.partition(" / ")
    if not slash and not rest:  # "营业时间/周一至周六" too, but not the "/" of "24/7"
        bare = _BARE_SLASH.search(first)
        if bare:
            title, slash, after = first[: bare.start()], "/", first[bare.end() :]
    text = (after if slash else "") + ("\n" + rest if rest else "")
    return title.strip(), text.strip()


_BARE_SLASH = re.compile(r"(?<!\d)\s*/\s*|\s*/\s*(?!\d)")
_DRAFT_LINE = re.compile(r"^“(?P<title>[^”\n]+)”\s*[:：]\s*(?P<text>.+)$", re.DOTALL)


def _draft_shown(history: list[dict[str, Any]]) -> tuple[str, str] | None:
    """The draft the agent's last message showed, when it still waits for the owner's answer."""
    last = next((m for m in reversed(history) if m.get("role") == "assistant" and _text(m)), None)
    if last is None:
        return None
    text = _text(last)
    for language in OWNER:
        head, ask = OWNER[language]["draft"], OWNER[language]["confirm"]
        if text.startswith(head + "\n") and text.endswith("\n" + ask):
            entry = _DRAFT_LINE.match(text[len(head) + 1 : -len(ask) - 1])
            if entry:
                return entry.group("title").strip(), entry.group("text").strip()
    return None


def _choices(text: str) -> str:
    """The structured choice of an answer (strict composition): its parts as a JSON list; an
    answer that is not a `Said` is sent as the text it is, which the server refuses."""
    return json.dumps(list(text.parts), ensure_ascii=False) if isinstance(text, Said) else text


def _summary(card: Mapping[str, Any], language: str) -> str:
    """A proposal's summary as the owner reads it in this conversation's language (a summary the
    platform wrote in English for the record is translated; approvals/summaries.py)."""
    with translation.override(language):
        return summary_shown(str(card.get("summary", "")))


def _call(name: str, arguments: dict[str, Any]) -> ToolCall:
    return ToolCall(id=f"call_{next(_ids)}", name=name, arguments=json.dumps(arguments, ensure_ascii=False))


@dataclass(frozen=True)
class FlowState:
    """Where a request being put together stands, as read back from the conversation."""

    answers: dict[str, str] = dataclass_field(default_factory=dict)
    asked: str | None = None  # the field the agent's last message asked for
    confirming: bool = False  # the agent's last message showed the summary
    changing: bool = False  # the agent's last message asked what to change
    offered: str | None = None  # the topic of an open offer to register a request
    refused: int = 0  # how many times in a row the open field's answer was refused
    passing: str = ""  # in the flow, the open offer to pass the request on (a key of ways_out.WAYS)
    topic: str = ""  # what the customer asked the owner to decide, passed on with the request
    pass_topic: str | None = None  # outside the flow: the topic of an open offer to pass it on

    @property
    def in_flow(self) -> bool:
        return self.asked is not None or self.confirming or self.changing or bool(self.passing)

    def after_user(self, text: str) -> "FlowState":
        """The answers once the customer said `text` (what the agent made of it shows in its
        next message, which sets what is open again)."""
        if (self.offered is not None or self.pass_topic is not None) and intents.asks(text):
            return self  # a question answered, and the same offer made again
        if self.offered is not None and _says_yes(text):
            return FlowState(answers={"need": self.offered})
        if not self.in_flow or rules.is_cancel(text):
            return FlowState()
        if self.asked is not None:
            if rules.field_problem(self.asked, text) is None:
                return replace(self, answers={**self.answers, self.asked: text.strip()})
            if self.asked != "need" and intents.orders(text) and not intents.asks(text):
                return replace(self, answers={**self.answers, "need": text.strip()})  # what is needed, said again
            return self
        changed = _changed(self.answers, text)
        if changed is not None:
            return replace(self, answers=changed)
        if self.changing and not rules.is_question(text) and _named_field(text) is None and not rules.is_cancel(text):
            return replace(self, answers={**self.answers, "need": text.strip()})
        return self


_WITHDRAW = re.compile(
    r"\b(?:cancel|withdraw|call off|take back|delete)\s+(?:my\s+|the\s+|this\s+|that\s+)?(?:request|order)\b"
    r"(?:\s*(?:#|no\.?|number)?\s*(?P<id>\d+))?"
    r"|(?:撤回|撤销|取消)(?:我的|这个|那个)?(?:请求|订单|申请)(?:\s*#?\s*(?P<zid>\d+))?",
    re.IGNORECASE,
)
_AMEND_EN = re.compile(
    r"^\s*(?:(?:no|nope|actually|wait)[,.!\s]+)?(?:please\s+)?(?:change|update|amend|correct|set)\s+(?:the\s+|my\s+)?"
    r"(?P<field>contact|e-?mail(?:\s+address)?|phone(?:\s+number)?|number|date|time|deadline|when)"
    r"(?:\s+(?:of|on|for|in)\s+(?:my\s+|the\s+)?request(?:\s*#?\s*(?P<id>\d+))?)?\s+to\s+(?P<value>.+?)\s*$",
    re.IGNORECASE,
)
_AMEND_ZH = re.compile(
    r"^\s*(?:(?:不对|不是|不)[,，。!！\s]*)?(?:请)?(?:把)?(?:我的)?(?:请求|订单)?\s*#?\s*(?P<id>\d+)?\s*(?:的)?"
    r"(?P<field>联系方式|电话|手机号?|邮箱|时间|日期)\s*(?:改成|改为|换成|更改为|改到|换到)\s*(?P<value>.+?)\s*$"
)
_FIELD_NAMES = (
    (re.compile(r"contact|e-?mail|phone|number|reach|联系|电话|手机|邮箱", re.IGNORECASE), "contact"),
    (re.compile(r"\b(?:date|time|deadline|when|day)\b|时间|日期|哪天", re.IGNORECASE), "when"),
    (re.compile(r"\b(?:what|need|description|request|item|order)\b|需求|内容|要什么", re.IGNORECASE), "need"),
)


def _joined(language: str, *sentences: str) -> Said:
    """Sentences one after another: with a space in English, without one after Chinese
    punctuation."""
    return joined("" if language.startswith("zh") else " ", *sentences)


def _request_id(raw: str | None) -> dict[str, Any]:
    return {"request_id": int(raw)} if raw else {}


def _field_of(name: str) -> str:
    return next((field for pattern, field in _FIELD_NAMES if pattern.search(name)), "need")


def _amend(text: str) -> tuple[str | None, str, str] | None:
    """ "change the contact of request #3 to …" / "把请求3的联系方式改成…": (id, field, value)."""
    found = _AMEND_EN.match(text) or _AMEND_ZH.match(text)
    if found is None:
        return None
    return found.group("id"), _field_of(found.group("field")), found.group("value").strip()


def _named_field(text: str) -> str | None:
    """A short message that names a field to change ("the date", "联系方式")."""
    if len(text) > 40 or rules.is_question(text) or rules.looks_like_contact(text) or rules.looks_like_when(text):
        return None
    return next((field for pattern, field in _FIELD_NAMES if pattern.search(text)), None)


def _changed(answers: dict[str, str], text: str) -> dict[str, str] | None:
    """The answers with one changed by `text`, when it plainly gives a new contact, date or
    "change X to Y"; None when it does not."""
    amend = _amend(text)
    if amend is not None and rules.field_problem(amend[1], amend[2]) is None:
        return {**answers, amend[1]: amend[2]}
    if rules.is_question(text) or rules.is_cancel(text):
        return None
    if rules.looks_like_contact(text):
        return {**answers, "contact": text.strip()}
    if rules.looks_like_when(text) and len(text) <= 60:
        return {**answers, "when": text.strip()}
    return None


def _request_of(answers: dict[str, str]) -> tuple[str, dict[str, str]]:
    summary = answers.get("need") or next(iter(answers.values()), "")
    return summary[:300], {k: v[:500] for k, v in answers.items()}
