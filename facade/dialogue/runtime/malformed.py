"""Text that is not an answer (issue 29 §2): what a weak or confused model writes instead of a reply.

A small model that fails at a tool call writes the call as text (`functions.request_handoff:`),
names an internal tool, echoes its prompt (the system prompt, a tool schema, the chat template's
own tokens), answers nothing at all, or answers in a language the conversation does not use.
None of that promises anything, so the commitment guard lets it through; this check keeps it
from a customer, a peer and the owner alike.  The run loop (`reply_blocked`) blocks such a
reply as category `malformed_reply` (`empty_reply` when there was no text): recorded like any
block, given the one bounded rewrite, and — when the rewrite is junk too — replaced by an honest
"I don't have a good answer to that" (loop.HONEST), never by "a technical problem".

Each rule has an id (the verdict's `rule`) and sentences it must and must not catch
(`RULES`, read by tests/test_malformed.py).  The check is pure: it reads the reply, the tool
names, the prompt the model was given and the languages the principal wrote in.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

MALFORMED = "malformed_reply"  # the guard category (Run.guard_category) and the stop reason
EMPTY = "empty_reply"  # the stop reason of a run whose model answered nothing, even on its rewrite

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
# A call written as text, in the forms small and self-hosted models use (providers/openai.py
# reads a whole-text call to an offered tool as a call; whatever is left here is junk).
_CALL_TEXT = re.compile(
    r"\bfunctions\.[A-Za-z_]\w*|</?tool_call>|\[TOOL_CALLS\]|<function[=>]|<\|python_tag\|>|\bto=functions\b"
)
# The chat template's own tokens: `<|im_start|>`, `<|eot_id|>`, `[INST]`, `<s>` …
_TEMPLATE = re.compile(r"<\|[A-Za-z_]+\|>|\[/?INST\]|</?s>|<</?SYS>>|<\|?endoftext\|?>")
# JSON of a call or of a tool's schema: an object whose first key is one a call or schema has.
_CALL_JSON = re.compile(
    r'\{\s*"(?:name|function|type|tool|tool_calls|arguments|parameters|properties|role)"\s*:', re.IGNORECASE
)
# The prompt's framing, said as if it were the answer.
_FRAMING = re.compile(
    r"^\s*(?:#+\s*)?(?:ROLE|SYSTEM|SYSTEM PROMPT|TOOLS?|INSTRUCTIONS?|ASSISTANT|USER)\s*:"
    r"|\bYou are the assistant of\b|\bReply in (?:English|Simplified Chinese)\b|\[cite\] Title:",
    re.IGNORECASE | re.MULTILINE,
)
_SPACE = re.compile(r"\s+")
# What ends a line but does not change what it says, for comparing a reply's first line with a
# question the principal asked ("可以找人工吗？" said back as "可以找人工吗？:").
_ENDING = re.compile(r"[\s.!?。！？:：…]+$")
# A question this long or longer (after _ENDING) said back whole as the reply's first line is echoed.
QUESTION_CHARS = 4
# A line of the prompt this long or longer, found whole in the reply, is the prompt echoed.
ECHO_CHARS = 24


@dataclass(frozen=True)
class Rule:
    id: str
    what: str
    catches: tuple[str, ...] = ()
    passes: tuple[str, ...] = ()


RULES = (
    Rule("empty", "no text, or only white space", ("", "  \n "), ("Yes.",)),
    Rule(
        "call_text",
        "a tool call written as text",
        ("functions.request_handoff:", 'Sure! <tool_call>{"name": "x"}</tool_call>', "[TOOL_CALLS] []"),
        ("The functions of our shop are baking and delivery.",),
    ),
    Rule(
        "template",
        "the chat template's own tokens",
        ("<|im_start|>assistant\nHello", "Hi [INST] what", "ok<|eot_id|>"),
        ("We open at 9 (weekdays) | 10 at weekends.",),
    ),
    Rule(
        "tool_name",
        "the name of one of the runtime's tools",
        ("I will use search_knowledge now.", "请稍等，我调用 request_handoff。"),
        ("I will search our knowledge now.", "Our search knowledge base is small."),
    ),
    Rule(
        "call_json",
        "JSON of a call or a tool's schema",
        ('{"name": "x", "arguments": {}}', 'Here: {"type": "object", "properties": {}}'),
        ("Our cakes {chocolate, lemon} are popular.",),
    ),
    Rule(
        "scaffolding",
        "the prompt's framing or a line of it, echoed",
        ("ROLE: assistant", "You are the assistant of Example Bakery.", "Reply in English."),
        ("I'm the bakery's assistant. How can I help?",),
    ),
    Rule(
        "echo",
        "the principal's question said back as the reply's first line",
        ("Hello, when do you open?\n\nYou can ask again.", "hello, when do you open:"),
        ("When do we open? At nine, Monday to Saturday.", "We open at nine. When do you want to come?"),
    ),
    Rule(
        "language",
        "a language the principal has not written in",
        ("Здравствуйте, чем могу помочь?",),
        ("Hello, how can I help?",),
    ),
)


@dataclass(frozen=True)
class JunkCheck:
    """The check for one run: the runtime's tool names, the lines of the prompt the model was
    given, the languages ("en", "zh-hans") the principal's messages were written in and the
    questions they asked (as `_question`)."""

    tool_names: frozenset[str]
    prompt_lines: tuple[str, ...] = ()
    languages: frozenset[str] = field(default_factory=frozenset)
    questions: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, *, tool_names: Iterable[str], system: str, principal_said: Iterable[str]) -> JunkCheck:
        lines = tuple(
            _normal(line)
            for line in system.splitlines()
            # An indented line is wording the model is meant to say (the boundary), not framing.
            if len(line.strip()) >= ECHO_CHARS and not line.startswith((" ", "\t"))
        )
        said = list(principal_said)
        questions = frozenset(
            _question(text)
            for text in said
            if text.rstrip().endswith(("?", "？")) and len(_question(text)) >= QUESTION_CHARS
        )
        return cls(frozenset(tool_names), lines, frozenset(filter(None, map(language_shown, said))), questions)

    def __call__(self, text: str) -> str | None:
        """The id of the rule `text` breaks, or None when it may be an answer."""
        if not text.strip():
            return "empty"
        if _CALL_TEXT.search(text):
            return "call_text"
        if _TEMPLATE.search(text):
            return "template"
        if any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text) for name in self.tool_names):
            return "tool_name"
        if _CALL_JSON.search(text) or _json_object(text):
            return "call_json"
        said = _normal(text)
        if _FRAMING.search(text) or any(line in said for line in self.prompt_lines):
            return "scaffolding"
        # A small model repeats the question and goes on with something else (SmolLM2-135M, issue
        # 29: "可以找人工吗？" and a line of nonsense); a reply that starts by saying it back answers nothing.
        if self.questions and _question(text.strip().splitlines()[0]) in self.questions:
            return "echo"
        written = script_of(text)
        if written == "other" or (written in ("en", "zh-hans") and self.languages and written not in self.languages):
            return "language"
        return None


def malformed(
    text: str, *, tool_names: Iterable[str] = (), system: str = "", principal_said: Iterable[str] = ()
) -> str | None:
    """`JunkCheck` in one call."""
    return JunkCheck.of(tool_names=tool_names, system=system, principal_said=principal_said)(text)


def language_shown(text: str) -> str | None:
    """The language a principal's message shows: Chinese characters, Latin words, or neither."""
    if _CJK.search(text):
        return "zh-hans"
    return "en" if re.search(r"[A-Za-z]{2,}", text) else None


def script_of(text: str) -> str | None:
    """The language a reply is written in, by its letters: "zh-hans" when Chinese characters
    weigh as much as a third of the Latin letters (a Chinese sentence names products in Latin
    letters), "en" for Latin letters, "other" for mostly another script (Cyrillic, Arabic …),
    None with no letters at all (a number, an emoji)."""
    cjk = len(_CJK.findall(text))
    latin = len(_LATIN.findall(text))
    other = sum(1 for ch in text if ch.isalpha()) - cjk - latin
    if other > 2 * (cjk + latin) and other >= 4:
        return "other"
    if cjk and cjk * 3 >= latin:
        return "zh-hans"
    if latin:
        return "en"
    return None


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def _question(text: str) -> str:
    return _ENDING.sub("", _normal(text))


def _json_object(text: str) -> bool:
    """Whether the whole reply is a JSON object or list (a structure, not an answer)."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return False
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict | list)
