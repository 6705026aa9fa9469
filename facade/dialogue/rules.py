"""Pure decisions of the dialogue app: request transitions, trust, idle sessions,
whether a tool call may run.  No ORM here: plain data in, decisions out, anything unknown refused."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from facade.tenancy.rules import Audience

TRUST_MIN, TRUST_MAX = 0, 100
# Trust moves only for what the customer did.  A rate limit costs no trust: a refusal writes
# nothing but its counter, and the limit hit may be one that other callers behind the same
# address used up.  Nor does a reply the commitment guard blocked: the reply was the agent's.
TRUST_DELTA = {"request_completed": +5}


def request_can_move(flow: dict[str, Any], state: str, to: str) -> bool:
    """Whether the request flow allows `state` → `to`; an unknown state allows nothing."""
    states = flow.get("states") or {}
    return to in states and to in (states.get(state) or {}).get("to", [])


def trust_after(score: int, reason: str) -> int:
    return max(TRUST_MIN, min(TRUST_MAX, score + TRUST_DELTA[reason]))


def is_idle(last_activity: dt.datetime, now: dt.datetime, idle_minutes: int) -> bool:
    return now - last_activity >= dt.timedelta(minutes=idle_minutes)


def text_problem(text: str) -> str | None:
    """What makes a piece of text unfit to store, or None.  A NUL cannot go into a PostgreSQL
    text column, and a lone surrogate (which JSON's `\\ud800` escapes can produce) is not
    Unicode at all and cannot be encoded for the database or a reply; both would fail later,
    deep in a turn, so they are refused at the door — alike over HTTP and the WebSocket."""
    if "\x00" in text:
        return "contains a NUL character"
    try:
        text.encode("utf-8")  # in C, and only a surrogate makes a str unencodable
    except UnicodeEncodeError:
        return "contains a lone surrogate (not valid Unicode)"
    return None


class RefusalReason(StrEnum):
    UNKNOWN_TOOL = "unknown_tool"
    AUDIENCE = "not_for_this_audience"
    BINDING = "wrong_tenant_or_agent"
    NO_LONGER_OWNER = "no_longer_owner"
    NOT_IN_CONTRACT = "not_in_contract"  # a customer-face tool the live contract's skills do not grant


def may_execute(
    *,
    tool_audiences: Collection[str] | None,
    audience: str,
    session_agent_id: int,
    agent_id: int,
    session_tenant_id: int,
    agent_tenant_id: int,
    owner_still: bool,
) -> RefusalReason | None:
    """The execution-time check of a tool call: None means allowed.  `tool_audiences` is None when
    no tool of that name is registered.  An audience the tool does not list (an unknown one
    included) is refused; so is a session bound to another agent or tenant than the one running,
    and an owner session whose principal is no longer an owner."""
    if tool_audiences is None:
        return RefusalReason.UNKNOWN_TOOL
    if audience not in tool_audiences:
        return RefusalReason.AUDIENCE
    if session_agent_id != agent_id or session_tenant_id != agent_tenant_id:
        return RefusalReason.BINDING
    if audience == Audience.OWNER and not owner_still:
        return RefusalReason.NO_LONGER_OWNER
    return None


# --- the owner face's teaching commands --------------------------------------------------

TEACH_FORM = "teach: title / text"
TEACH_TITLE_MAX = 120
# A title that still carries the command (`teach: …`) is a whole line used as a title.
_TEACH_COMMAND = re.compile(r"^\s*(?:teach|learn|add|知识|学习)\s*[:：]", re.IGNORECASE)
# The owner's own "yes" to a draft the agent showed: short, and nothing in it says no.
_OWNER_YES = re.compile(
    r"^\s*(?:yes|yeah|yep|sure|ok(?:ay)?|please do|please add|go ahead|do it|add it|confirm(?:ed)?"
    r"|好|可以|是的|是|行|对|确认|添加|加上|加吧|要)",
    re.IGNORECASE,
)
_OWNER_NO = re.compile(r"\b(?:no|not|don'?t|do not|never|cancel|stop|wait)\b|不|别|取消|算了|先不", re.IGNORECASE)
OWNER_ANSWER_MAX = 40


class TeachProblem(StrEnum):
    """Why a title and text from the owner face are not an entry."""

    EMPTY = "empty"
    COMMAND_IN_TITLE = "command_in_title"
    TITLE_IS_TEXT = "title_is_text"
    TITLE_TOO_LONG = "title_too_long"


def teach_problem(title: str, text: str) -> TeachProblem | None:
    """What makes `title` and `text` a malformed teaching, or None.  "teach: missing slash no
    title" once became an approved entry titled with the whole line: a title must name the entry
    (one short line, not the command, not the text again) and the text must say something."""
    title, text = title.strip(), text.strip()
    if not title or not text:
        return TeachProblem.EMPTY
    if _TEACH_COMMAND.match(title) or _TEACH_COMMAND.match(text):
        return TeachProblem.COMMAND_IN_TITLE
    if " ".join(title.casefold().split()) == " ".join(text.casefold().split()):
        return TeachProblem.TITLE_IS_TEXT
    if len(title) > TEACH_TITLE_MAX or "\n" in title:
        return TeachProblem.TITLE_TOO_LONG
    return None


def owner_says_yes(text: str) -> bool:
    """Whether the owner's message is a plain yes (the evidence that a shown draft is wanted)."""
    short = text.strip()
    return len(short) <= OWNER_ANSWER_MAX and bool(_OWNER_YES.match(short)) and not _OWNER_NO.search(short)


def owner_says_no(text: str) -> bool:
    short = text.strip()
    return len(short) <= OWNER_ANSWER_MAX and bool(_OWNER_NO.search(short)) and not _OWNER_YES.match(short)


def request_is_open(flow: dict[str, Any], state: str) -> bool:
    """A request still waits for someone while its flow lets it move on; an unknown state is
    shown as open rather than hidden from the owner."""
    states = flow.get("states") or {}
    if state not in states:
        return True
    return bool((states.get(state) or {}).get("to"))


# --- the request flow: what a field's answer must look like, and what a customer means ------------
#
# The same rules serve the offline model (to re-ask politely) and the server (`submit_request`,
# `amend_request` refuse what does not fit, whatever model called them): governance never depends
# on the model behaving.  Each pattern is a named rule with its language; the table tests in
# tests/test_rules_dialogue.py hold the sentences each must and must not match.


class FieldKind(StrEnum):
    CONTACT = "contact"  # an e-mail address or a phone number
    WHEN = "when"  # a date, a time or a time frame
    TEXT = "text"  # anything that is not empty


_CONTACT_NAMES = frozenset(
    {"contact", "email", "e-mail", "phone", "tel", "telephone", "mobile", "联系方式", "电话", "邮箱"}
)
_WHEN_NAMES = frozenset(
    {"when", "deadline", "date", "time", "due", "by_when", "pickup", "delivery_date", "时间", "日期", "期限"}
)


def field_kind(name: str) -> FieldKind:
    """What a clarification field holds, by its name; a name not known here is free text."""
    key = name.strip().lower()
    if key in _CONTACT_NAMES:
        return FieldKind.CONTACT
    if key in _WHEN_NAMES:
        return FieldKind.WHEN
    return FieldKind.TEXT


@dataclass(frozen=True)
class Pattern:
    """A named heuristic: its id, the language it reads and what it matches."""

    id: str
    language: str
    regex: re.Pattern[str]

    def search(self, text: str) -> bool:
        return self.regex.search(text) is not None


def _rule(rule_id: str, language: str, pattern: str) -> Pattern:
    return Pattern(rule_id, language, re.compile(pattern, re.IGNORECASE))


EMAIL = _rule("contact.email", "any", r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}")
# A run of 7 to 15 digits that may be grouped by spaces, dots, dashes or brackets, with a + in front.
_DATE_RUN = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}")
_PHONE_RUN = re.compile(r"(?<![\w@])\+?\(?\d[\d\s().\-]{5,22}\d(?!\w)")

_ZH_NUM = "[0-9零〇一二两三四五六七八九十]"
WHEN_PATTERNS = (
    _rule("when.weekday", "en", r"\b(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?s?\b"),
    _rule(
        "when.relative",
        "en",
        r"\b(?:today|tonight|tomorrow|tmrw|tomorow|day after tomorrow|asap|as soon as possible|weekend|noon|midday"
        r"|midnight|morning|afternoon|evening|(?:this|next|coming|end of (?:the )?)\s*(?:week|month|year)"
        r"|any ?time|whenever|no rush|flexible)\b",
    ),
    _rule(
        "when.month",
        "en",
        r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
        r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b",
    ),
    _rule("when.iso_date", "any", r"\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b"),
    _rule("when.numeric_date", "any", r"\b\d{1,2}[/.]\d{1,2}(?:[/.]\d{2,4})?\b"),
    _rule("when.ordinal_day", "en", r"\b\d{1,2}(?:st|nd|rd|th)\b"),
    _rule("when.clock", "any", r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.|h|o'?clock)(?!\w)|\b\d{1,2}:\d{2}\b"),
    _rule(
        "when.span",
        "en",
        r"\b(?:in|within)\s+(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of)\s+"
        r"(?:hours?|days?|weeks?|months?)\b",
    ),
    _rule("when.zh_day", "zh", r"今天|今晚|明天|明早|明晚|后天|周末|月底|月初|年底|年前|尽快|越快越好|不急|随时"),
    _rule("when.zh_weekday", "zh", r"(?:周|星期|礼拜)[一二三四五六日天]"),
    _rule("when.zh_week", "zh", r"(?:本|这|下|下个|这个)(?:周|星期|礼拜|月)"),
    _rule("when.zh_date", "zh", rf"{_ZH_NUM}{{1,3}}\s*月(?:\s*{_ZH_NUM}{{1,3}}\s*[日号])?|{_ZH_NUM}{{1,3}}\s*[日号]"),
    _rule("when.zh_clock", "zh", rf"{_ZH_NUM}{{1,3}}\s*点(?:半|钟|\s*{_ZH_NUM}{{1,3}}\s*分)?|上午|下午|中午|晚上|早上"),
    _rule("when.zh_span", "zh", rf"{_ZH_NUM}{{1,3}}\s*(?:天|周|个?星期|个?礼拜|个?月|小时)(?:内|后|之内|以内)"),
)
# Asking something, in either language: a question word first, or a verb and its subject ("do
# you", "is there"), or a Chinese question word.  A question mark alone ("Friday?", "Is Friday
# ok?") does not make an answer a question.
QUESTION = _rule(
    "question",
    "any",
    r"^\s*(?:what|when|where|how|why|which|who|whom|whose)\b"
    r"|^\s*(?:do|does|did|can|could|would|will|is|are|was|were|should|may|might|have|has|shall)\s+"
    r"(?:you|we|i|it|they|he|she|the|this|that|these|those|there|your|my|our|a|an|anyone|someone)\b"
    r"|[吗呢]\s*[?？。]?\s*$|几点|什么|怎么|哪|多少|有没有|是否|能不能|可不可以|会不会",
)
CANCEL = _rule(
    "cancel",
    "any",
    r"^\s*(?:(?:oh|ok|okay|no|please)[,\s]+)?(?:cancel|never\s*mind|nevermind|stop|forget (?:about )?it|quit"
    r"|leave it|don'?t bother)(?:\s+(?:it|that|this|please))*\s*[.!。！]*\s*$"
    r"|^\s*(?:算了|取消|不用了|不要了|不需要了|停止?|不用|别弄了)(?:吧|了|吧谢谢|谢谢)?\s*[.!。！]*\s*$",
)
CONFIRM = _rule(
    "confirm",
    "any",
    r"^\s*(?:yes|yeah|yep|yup|sure|ok|okay|correct|right|confirm(?:ed)?|go ahead|please do|do it|looks good"
    r"|perfect|that'?s (?:right|correct|it))\b|^\s*(?:是|对|好|确认|可以|行|嗯|没错|没问题|提交|登记)",
)
# A "yes" that goes on to change something is not a confirmation.
_BUT = re.compile(r"\bbut\b|\bchange\b|\bnot\b|n't\b|\bwrong\b|\binstead\b|但|改|不对|不是|错", re.IGNORECASE)
DECLINE = _rule(
    "decline",
    "any",
    r"^\s*(?:no|nope|nah|not (?:quite|really|yet)|wrong|wait|change)\b|^\s*(?:不|否|错|等等|等一下|要改|修改)",
)


def looks_like_contact(text: str) -> bool:
    """An e-mail address or a phone number (7 to 15 digits) stands in the text."""
    if EMAIL.search(text):
        return True
    return any(
        7 <= sum(c.isdigit() for c in run) <= 15 and not _DATE_RUN.fullmatch(run.strip())
        for run in _PHONE_RUN.findall(text)
    )


def looks_like_when(text: str) -> bool:
    """A date, a time or a time frame stands in the text, and the text does not ask something."""
    return not QUESTION.search(text) and any(rule.search(text) for rule in WHEN_PATTERNS)


def is_question(text: str) -> bool:
    return QUESTION.search(text)


def is_cancel(text: str) -> bool:
    return CANCEL.search(text)


def is_confirmation(text: str) -> bool:
    return len(text) <= 80 and CONFIRM.search(text) and not _BUT.search(text)


def is_decline(text: str) -> bool:
    return DECLINE.search(text) and not CONFIRM.search(text)


def field_problem(name: str, value: str) -> str | None:
    """Why `value` cannot be the answer for the field `name` (a short machine-readable code), or
    None when it fits."""
    if not value.strip():
        return "empty"
    kind = field_kind(name)
    if kind == FieldKind.CONTACT and not looks_like_contact(value):
        return "not_a_contact"
    if kind == FieldKind.WHEN and not looks_like_when(value):
        return "not_a_date_or_time"
    return None


def confirms(*, shown: str, reply: str, summaries: Collection[str]) -> bool:
    """Whether `reply` (the customer's latest message) confirms a summary the agent showed: the
    agent's message before it (`shown`) ends with one of `summaries` (the same request rendered
    in each language) and the reply is a plain yes."""
    tail = shown.rstrip()
    return is_confirmation(reply) and any(s.strip() and tail.endswith(s.strip()) for s in summaries)


class ChangeRefusal(StrEnum):
    OWNER_HAS_ACTED = "owner_has_acted"
    ALREADY_WITHDRAWN = "already_withdrawn"
    NOT_IN_FLOW = "withdrawal_not_in_flow"


WITHDRAWN = "withdrawn"


def customer_may_change(*, flow: dict[str, Any], state: str, owner_acted: bool) -> ChangeRefusal | None:
    """Whether the customer may still amend or withdraw a request: only while it stands in its
    flow's first state and nobody of the business has acted on it."""
    if state == WITHDRAWN:
        return ChangeRefusal.ALREADY_WITHDRAWN
    if owner_acted or state != flow.get("initial"):
        return ChangeRefusal.OWNER_HAS_ACTED
    if WITHDRAWN not in (flow.get("states") or {}):
        return ChangeRefusal.NOT_IN_FLOW
    return None
