"""Pure decisions of the dialogue app: request transitions, trust, idle sessions,
whether a tool call may run.  No ORM here: plain data in, decisions out, anything unknown refused."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection
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
