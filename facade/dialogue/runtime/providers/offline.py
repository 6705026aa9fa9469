"""The offline provider: the default model, deterministic, no model needed.

It understands a handful of intents in English and Chinese and drives the same tools a hosted
model would, so the product is useful (and testable) without one:

- a question → `search_knowledge`, then an answer made only of the approved snippets found,
  each with its citation number; nothing found → "I don't know yet" and an offer of a person's
  follow-up (the search records the miss);
- wanting something done → asks for the agent's clarification fields one at a time, then
  `submit_request`;
- a price, a deadline or a guaranteed outcome → the agent's boundary wording and an offer to
  register a request (a "yes" starts the clarification);
- asking for a person → `request_handoff`;
- on the owner face: "remember …" → `remember_lesson`, "teach: title / text" →
  `ingest_material`, "inbox" → `read_owner_inbox`, anything else → `search_knowledge`.

Its own questions are fixed sentences, which is how it finds its place in a conversation again
from the history alone.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext_lazy as _

from facade.i18n import Phrasebook
from facade.tenancy.models import AgentProfile
from facade.tenancy.rules import Audience

from ..prompts import conversation_language, language_of
from .base import ModelReply, Provider, ToolCall, ToolSpec

_ids = itertools.count(1)

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
    unknown=_(
        "I don't know that yet — I've noted the question for the owner. Shall I ask a person to follow up with you?"
    ),
    registered=_("I've registered your request #{id}. Next: {next}."),
    handoff=_("I've asked a person to follow up with you (request #{id}). Next: {next}."),
    next_owner=_("the owner reviews it and gets back to you"),
    next_customer=_("we need something from you"),
    next_nobody=_("nothing more is needed"),
    failed=_("Sorry, I couldn't do that just now."),
    greeting=_("Hello! I can answer questions from what {name} has taught me, and register a request for the owner."),
    owner_done=_("Done: {summary}."),
    owner_inbox=_("Waiting for you: {pending} knowledge item(s); {candidates} customer candidate(s)."),
    owner_found=_("Knowledge on this (pending items marked):"),
    owner_none=_("Nothing in the knowledge base matches that."),
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


def _text(message: dict[str, Any]) -> str:
    return str(message.get("content") or "")


class OfflineProvider(Provider):
    name = "offline"

    def __init__(self, agent: AgentProfile) -> None:
        self.agent = agent

    def complete(
        self, *, messages: list[dict[str, Any]], tools: list[ToolSpec], max_tokens: int, audience: Audience
    ) -> ModelReply:
        # The owner face only when the run loop says so: a customer can write anything into the
        # conversation (or an owner's mission into the prompt), so nothing in the text decides it.
        owner = audience == Audience.OWNER
        allowed = {tool.name for tool in tools}
        prompt_tokens = sum(len(_text(m)) for m in messages) // 4 + 1
        last = messages[-1]
        if last.get("role") == "tool":
            text, needs_input = self._after_tool(messages, owner)
            return ModelReply(
                text=text[: max_tokens * 4],
                prompt_tokens=prompt_tokens,
                completion_tokens=len(text) // 4 + 1,
                needs_input=needs_input,
            )
        user = _text(last)
        language = conversation_language([_text(m) for m in reversed(messages) if m.get("role") == "user"])
        step = self._owner_step(user, allowed) if owner else self._customer_step(messages, user, language, allowed)
        if isinstance(step, ToolCall):
            return ModelReply(
                tool_calls=[step], prompt_tokens=prompt_tokens, completion_tokens=len(step.arguments) // 4 + 1
            )
        text, needs_input = step
        return ModelReply(
            text=text, prompt_tokens=prompt_tokens, completion_tokens=len(text) // 4 + 1, needs_input=needs_input
        )

    # --- customers and peers ---------------------------------------------------------------

    def _customer_step(
        self, messages: list[dict[str, Any]], user: str, language: str, allowed: set[str]
    ) -> ToolCall | tuple[str, bool]:
        answers, asked, offered_topic = self._clarification_state(messages[:-1])
        if asked is not None:
            answers[asked] = user.strip()
            return self._next_field(answers, language, allowed)
        if offered_topic is not None and _YES.match(user):
            return self._next_field({"need": offered_topic}, language, allowed)
        if _GREETING.match(user):
            return TEXT[language]["greeting"].format(name=self.agent.name), False
        if _HANDOFF.search(user) and "request_handoff" in allowed:
            return _call("request_handoff", {"reason": "the customer asked for a person"})
        if _COMMITMENT_ASK.search(user):
            return f"{self.agent.boundary(language)} {TEXT[language]['offer']}", True
        if _WANT.search(user) and "submit_request" in allowed:
            return self._next_field({"need": user.strip()}, language, allowed)
        if "search_knowledge" in allowed:
            return _call("search_knowledge", {"query": user[:500]})
        return TEXT[language]["unknown"], False

    def _fields(self) -> list[str]:
        return [str(f) for f in (self.agent.clarification_order or ["need"])]

    def _question(self, field: str, language: str) -> str:
        table = QUESTIONS[language]
        return table.get(field) or table["other"].format(field=field)

    def _next_field(self, answers: dict[str, str], language: str, allowed: set[str]) -> ToolCall | tuple[str, bool]:
        for field in self._fields():
            if not answers.get(field):
                return self._question(field, language), True
        if "submit_request" not in allowed:
            return TEXT[language]["failed"], False
        summary = answers.get("need") or next(iter(answers.values()), "")
        return _call("submit_request", {"summary": summary[:300], "details": {k: v[:500] for k, v in answers.items()}})

    def _clarification_state(self, history: list[dict[str, Any]]) -> tuple[dict[str, str], str | None, str | None]:
        """Walk the conversation: which fields were answered, which question is open, and the
        topic of an offer to register a request that is still open."""
        questions = {
            q: (lang, field) for lang, table in QUESTIONS.items() for field, q in table.items() if field != "other"
        }
        offers = {TEXT[lang]["offer"] for lang in TEXT}
        answers: dict[str, str] = {}
        asked: str | None = None
        offered: str | None = None
        previous_user = ""
        for message in history:
            role, text = message.get("role"), _text(message)
            if role == "user":
                if asked is not None:
                    answers[asked] = text.strip()
                elif offered is not None and _YES.match(text):
                    answers = {"need": offered}
                asked, offered = None, None
                previous_user = text
            elif role == "assistant":
                asked, offered = None, None
                if text in questions:
                    field = questions[text][1]
                    if not answers and field != "need":
                        answers["need"] = previous_user.strip()
                    asked = field
                elif any(text.endswith(o) for o in offers):
                    offered = previous_user.strip()
                else:
                    answers = {}
        return answers, asked, offered

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
        if result.get("outcome") != "ok":
            return words["failed"], False
        if owner:
            return self._owner_after(name, result, words), False
        if name == "search_knowledge":
            found = result.get("results") or []
            if not found:
                return words["unknown"], True
            lines = [words["found"]] + [f"[{n}] {r['title']}: {r['snippet']}" for n, r in enumerate(found, 1)]
            return "\n".join(lines), False
        if name in ("submit_request", "request_handoff"):
            request = result.get("request") or {}
            following = words.get(f"next_{request.get('next_actor', 'owner')}", words["next_owner"])
            key = "registered" if name == "submit_request" else "handoff"
            return words[key].format(id=request.get("id", "?"), next=following), False
        return words["failed"], False

    # --- the owner face -------------------------------------------------------------------

    def _owner_step(self, user: str, allowed: set[str]) -> ToolCall | tuple[str, bool]:
        stripped = user.strip()
        lesson = re.match(
            r"^(?:remember|lesson)\s*[:：,]?\s*(.+)$|^记住\s*[:：，,]?\s*(.+)$", stripped, re.IGNORECASE | re.DOTALL
        )
        if lesson and "remember_lesson" in allowed:
            text = (lesson.group(1) or lesson.group(2)).strip()
            return _call("remember_lesson", {"kind": "preference", "title": text[:60], "text": text})
        teach = re.match(
            r"^(?:teach|learn|add)\s*[:：]\s*(.+)$|^(?:知识|学习)\s*[:：]\s*(.+)$", stripped, re.IGNORECASE | re.DOTALL
        )
        if teach and "ingest_material" in allowed:
            body = (teach.group(1) or teach.group(2)).strip()
            title, _, rest = body.partition("\n")
            title, sep, after = title.partition(" / ")
            text = (after if sep else "") + ("\n" + rest if rest else "")
            return _call("ingest_material", {"title": title.strip()[:200], "text": (text.strip() or title.strip())})
        if (
            re.search(r"inbox|pending|waiting|待处理|待审|收件箱", stripped, re.IGNORECASE)
            and "read_owner_inbox" in allowed
        ):
            return _call("read_owner_inbox", {})
        if "search_knowledge" in allowed:
            return _call("search_knowledge", {"query": stripped[:500]})
        return TEXT[language_of(user)]["owner_none"], False

    def _owner_after(self, name: str, result: dict[str, Any], words: Mapping[str, str]) -> str:
        if name == "read_owner_inbox":
            return words["owner_inbox"].format(
                pending=len(result.get("pending_knowledge") or []),
                candidates=(result.get("customer_candidates") or {}).get("count", 0),
            )
        if name == "search_knowledge":
            found = result.get("results") or []
            if not found:
                return words["owner_none"]
            marked = [
                f"[{n}] {r['title']}{' (pending)' if r.get('status') == 'pending' else ''}: {r['snippet']}"
                for n, r in enumerate(found, 1)
            ]
            return "\n".join([words["owner_found"], *marked])
        if name == "ingest_material":
            created = result.get("created") or []
            summary = (
                ", ".join(f"#{c['entry_id']} v{c['version']} {c['status']}" for c in created)
                or f"{result.get('unchanged', 0)} unchanged"
            )
            return words["owner_done"].format(summary=summary)
        if name == "remember_lesson":
            return words["owner_done"].format(
                summary=f"#{result.get('entry_id')} v{result.get('version')} {result.get('status')}"
            )
        return words["owner_done"].format(summary=name)


def _call(name: str, arguments: dict[str, Any]) -> ToolCall:
    return ToolCall(id=f"call_{next(_ids)}", name=name, arguments=json.dumps(arguments, ensure_ascii=False))
