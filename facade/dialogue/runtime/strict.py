"""Strict composition (issue 15 §4): in `strict` mode a customer or peer reply is put together by
the server, never written by the model.

The model answers with a structured choice, a JSON list (or `{"reply": [...]}`, the object the
OpenAI-compatible provider asks for, since a JSON schema's root must be an object there):

    [{"kind": "knowledge", "id": "1"},                      # citation 1 as it stands
     {"kind": "knowledge", "id": "1.2"},                    # its second sentence
     {"kind": "template", "id": "boundary"},                # a published template
     {"kind": "template", "id": "summary", "slots": {"need": "a birthday cake", "when": "Friday"}},
     {"kind": "status", "id": "registered"}]                # a status line of this run's request

validated with pydantic (`Choices`, extra keys refused), and the server composes the reply, one
part a line, from

* sentences of the approved knowledge versions this run's search returned (`ctx.citations`,
  which hold the snippet the search gave), each rendered as the attributed line
  ``[n] Title: sentence`` that guard/quoting.py recognises, so the citation stays;
* the agent's published templates (`templates`): the owner's wording from the contract, or the
  platform's sentence, the boundary wording, the clarification questions of the contract's
  clarification order, the request summary;
* request status lines from the request state machine: what this run's tool did to a request
  (`registered`, `handoff`, `withdrawn`, `amended`) or where a request of the session stands
  (`request`, slot `request` the number).

A slot is filled only from what the customer gave: its value must stand, word for word (case
and spacing aside), in one of the customer's own messages of this session.  Anything else — free
text, an unknown id, knowledge this run did not retrieve, a slot the customer did not give (a
price, say) — is refused with a reason code (`REASONS`); the run loop then sends the boundary
wording, as for a blocked reply, and records the code (never the text).

`composition_mode(agent, terms)` is the one place the runtime asks which mode an agent is in.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal

from django.utils import translation
from django.utils.translation import gettext_lazy as _
from pydantic import BaseModel, ConfigDict, Field, RootModel, StringConstraints, ValidationError

from approvals.contract import ContractTerms
from approvals.contract_rules import GUARDED, STRICT
from facade.i18n import Phrasebook
from facade.tenancy.models import AgentProfile
from guard.breaker import breaker_open

from ..labels import STATE_LABELS, label
from .request_status import status_line
from .summary import request_summary

__all__ = [
    "GUARDED",
    "REASONS",
    "STRICT",
    "STRICT_REFUSED",
    "Choice",
    "Choices",
    "Composed",
    "compose",
    "composition_mode",
    "instructions",
    "response_schema",
    "templates",
]

# Where a request of the session stands (status `request`); the Chinese is in locale/.
STATUS_LINE = Phrasebook(line=_("Request #{id}: {state}. Next: {next}."))
STRICT_REFUSED: Final = "strict_refused"  # the guard category of a refused strict reply
MAX_PARTS: Final = 12
# Why a structured choice was refused: the code goes into the `guard.blocked` event.
REASONS: Final = frozenset(
    {
        "not_structured",  # not JSON, or not a list of choices (free text)
        "invalid_choice",  # the list does not validate (a missing or unknown key, a wrong kind)
        "unknown_template",
        "unknown_knowledge",  # knowledge this run did not retrieve, or a sentence it does not have
        "unknown_status",  # a status line of no request this run or session has
        "unknown_slot",  # a slot the part does not take
        "slot_not_given",  # a slot value the customer did not give
    }
)


def composition_mode(agent: AgentProfile, terms: ContractTerms) -> str:
    """How `agent`'s customer and peer replies are put together: "strict" or "guarded".  The
    runtime reads the mode only through this function.  An open guard breaker (guard/breaker.py:
    too many blocked replies in an hour) forces strict until an owner closes it."""
    return STRICT if terms.composition_mode == STRICT or breaker_open(agent) else GUARDED


# --- the structured choice -----------------------------------------------------------------------

SlotName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,39}$")]
SlotValue = Annotated[str, StringConstraints(min_length=1, max_length=500)]


class Choice(BaseModel):
    """One part of a strict reply: what kind it is, which one, and the slots it fills."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["knowledge", "template", "status"]
    id: Annotated[str, StringConstraints(min_length=1, max_length=80)]
    slots: dict[SlotName, SlotValue] = Field(default_factory=dict, max_length=10)


class Choices(RootModel[Annotated[list[Choice], Field(min_length=1, max_length=MAX_PARTS)]]):
    """The model's whole answer in strict mode."""


def response_schema() -> dict[str, Any]:
    """The JSON schema the OpenAI-compatible provider asks the model's answer to follow (an object
    at the root, as OpenAI's structured outputs require, holding the list of choices)."""
    item = {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["knowledge", "template", "status"]},
            "id": {"type": "string"},
            "slots": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "required": ["kind", "id"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"reply": {"type": "array", "items": item, "minItems": 1, "maxItems": MAX_PARTS}},
        "required": ["reply"],
        "additionalProperties": False,
    }


def _parsed(raw: str) -> list[Choice] | str:
    """The choices in the model's answer, or the reason code it is refused with."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return "not_structured"
    if isinstance(data, dict) and set(data) == {"reply"}:
        data = data["reply"]
    if not isinstance(data, list):
        return "not_structured"
    try:
        return Choices.model_validate(data).root
    except ValidationError:
        return "invalid_choice"


# --- what may be said ----------------------------------------------------------------------------


def templates(agent: AgentProfile, terms: ContractTerms, language: str) -> dict[str, str]:
    """The agent's published templates in `language`, by id: the owner's own sentence where the
    contract has one, else the platform's (the offline model's sentences, the same ones the
    contract page shows).  `summary` takes slots and is not listed here."""
    from .providers.offline import QUESTIONS, TEXT  # the platform's sentences
    from .ways_out import WAYS

    words = TEXT[language]
    found = {
        "greeting": terms.said(language, "greeting") or words["greeting"].format(name=agent.name),
        "unknown": terms.said(language, "unknown") or words["unknown"],
        "unknown_short": words["unknown_short"],
        "boundary": terms.boundary(language),
        "offer": words["offer"],
        "found": words["found"],
        "quoted": words["quoted"],
        "thanks": words["thanks"],
        "goodbye": words["goodbye"].format(name=agent.name),
        "yes": words["yes"],
        "no": words["no"],
        "cancelled": words["cancelled"],
        "change": words["change"],
        "failed": words["failed"],
        "bad_contact": words["bad_contact"],
        "bad_when": words["bad_when"],
        "not_found": words["not_found"],
        **WAYS[language],  # the request flow's ways out (issue 26 §3)
    }
    own_handoff = terms.said(language, "handoff")
    if own_handoff:
        found["handoff"] = own_handoff
    for name in terms.clarification_order or ["need"]:
        questions = QUESTIONS[language]
        found[f"ask.{name}"] = questions.get(name) or questions["other"].format(field=name)
    return found


def _normal(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


# Where a sentence of a snippet ends: the ends guard/quoting.py splits a snippet at ("." not
# between digits: "€3.50"), so a sentence rendered here is whole units of the snippet there.
_SENTENCE_END: Final = re.compile(r"[!?。！？;；•…]+|\.(?!\d)")


def sentences(snippet: str) -> list[str]:
    """The snippet's sentences, each with its closing punctuation, whitespace collapsed."""
    flat = " ".join(snippet.split())
    found, start = [], 0
    for end in _SENTENCE_END.finditer(flat):
        found.append(flat[start : end.end()].strip())
        start = end.end()
    found.append(flat[start:].strip())
    return [s for s in found if re.search(r"\w", s)]


# --- composing -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Composed:
    """A strict reply: its text, the citations (indexes into the run's) it quoted and whether it
    ends asking the customer something (a question, the summary to confirm), or the reason it
    was refused (`text` None)."""

    text: str | None
    reason: str = ""
    cited: tuple[int, ...] = ()
    asks: bool = False


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _given(value: str, said: Sequence[str]) -> bool:
    wanted = _normal(value)
    return bool(wanted) and any(wanted in _normal(text) for text in said)


def _knowledge(choice: Choice, citations: Sequence[Mapping[str, Any]], language: str) -> tuple[str, int]:
    if choice.slots:
        raise _Refused("unknown_slot")
    match = re.fullmatch(r"([1-9][0-9]?)(?:\.([1-9][0-9]?))?", choice.id)
    if match is None or int(match.group(1)) > len(citations):
        raise _Refused("unknown_knowledge")
    number = int(match.group(1))
    cited = citations[number - 1]
    snippet = str(cited.get("snippet") or "")
    if match.group(2) is None:
        passage = " ".join(snippet.split())  # the entry's own words as they stand
    else:
        # A published price list or delivery options: its lines as listed (an item alone).
        units = cited.get("units")
        parts = [str(u) for u in units] if cited.get("published") and isinstance(units, list) else sentences(snippet)
        index = int(match.group(2))
        if index > len(parts):
            raise _Refused("unknown_knowledge")
        passage = parts[index - 1]
    if not passage:
        raise _Refused("unknown_knowledge")
    colon = "：" if language.startswith("zh") else ": "
    # The line's number is given by `compose`: the quote's place among the entries the reply cites.
    return f"{cited.get('title', '')}{colon}{passage}", number - 1


def _summary(choice: Choice, terms: ContractTerms, language: str, said: Sequence[str]) -> str:
    allowed = {"need", *terms.clarification_order}
    if not choice.slots.get("need"):
        raise _Refused("unknown_slot")
    if set(choice.slots) - allowed:
        raise _Refused("unknown_slot")
    if not all(_given(value, said) for value in choice.slots.values()):
        raise _Refused("slot_not_given")
    return request_summary(summary=choice.slots["need"], details=dict(choice.slots), language=language)


def _status(
    choice: Choice, agent: AgentProfile, terms: ContractTerms, language: str, ctx: _Run, said: Sequence[str]
) -> str:
    from .providers.offline import TEXT

    words = TEXT[language]

    def following(request: Mapping[str, Any]) -> str:
        return words.get(f"next_{request.get('next_actor', 'owner')}") or words["next_owner"]

    done = {"registered": "submit_request", "handoff": "request_handoff"}
    done |= {"withdrawn": "withdraw_request", "amended": "amend_request"}
    if choice.id == "state":  # where the request read_request_status read this turn stands
        if choice.slots:
            raise _Refused("unknown_slot")
        if ctx.request is None or "read_request_status" not in ctx.tools_done:
            raise _Refused("unknown_status")
        return status_line(ctx.request, language)
    if choice.id in done:
        if choice.slots:
            raise _Refused("unknown_slot")
        request = ctx.request
        if request is None or done[choice.id] not in ctx.tools_done:
            raise _Refused("unknown_status")
        ref = {"id": request.get("id", "?"), "next": following(request)}
        if choice.id in ("registered", "handoff"):
            own = terms.said(language, "request_registered" if choice.id == "registered" else "handoff")
            if own:
                space = "" if language.startswith("zh") else " "
                return f"{own}{space}{words['request_ref'].format(**ref)}"
        return words[choice.id].format(**ref)
    if choice.id == "request":
        if set(choice.slots) != {"request"}:
            raise _Refused("unknown_slot")
        number = choice.slots["request"].strip().lstrip("#")
        if not number.isdigit() or not _given(number, said):
            raise _Refused("slot_not_given")
        request = ctx.session_request(int(number))
        if request is None:
            raise _Refused("unknown_status")
        with translation.override(language):
            state = label(STATE_LABELS, str(request["state"]))
        return STATUS_LINE[language]["line"].format(id=number, state=state, next=following(request))
    raise _Refused("unknown_status")


class _Lazy(Sequence[str]):
    """The customer's messages, read on first use."""

    def __init__(self, load: Callable[[], Sequence[str]]) -> None:
        self._load = load
        self._texts: list[str] | None = None

    def _all(self) -> list[str]:
        if self._texts is None:
            self._texts = list(self._load())
        return self._texts

    def __getitem__(self, index: Any) -> Any:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())


# Templates that name a request the customer gave the number of (slot `request`).
REQUEST_TEMPLATES: Final = frozenset({"owner_has_acted", "already_withdrawn"})


def _about_request(choice: Choice, language: str, said: Sequence[str]) -> str:
    from .providers.offline import TEXT

    if set(choice.slots) != {"request"}:
        raise _Refused("unknown_slot")
    number = choice.slots["request"].strip().lstrip("#")
    if not number.isdigit() or not _given(number, said):
        raise _Refused("slot_not_given")
    return TEXT[language][choice.id].format(id=number)


@dataclass(frozen=True)
class _Run:
    """What a strict reply may draw on from its run: the request a tool of this run touched, the
    tools that ran, and the session's requests by number."""

    request: Mapping[str, Any] | None
    tools_done: frozenset[str]
    session_request: Callable[[int], Mapping[str, Any] | None]


def compose(
    raw: str,
    *,
    agent: AgentProfile,
    terms: ContractTerms,
    language: str,
    citations: Sequence[Mapping[str, Any]],
    customer_said: Callable[[], Sequence[str]],
    request: Mapping[str, Any] | None = None,
    tools_done: Iterable[str] = (),
    session_request: Callable[[int], Mapping[str, Any] | None] = lambda number: None,
) -> Composed:
    """The reply the server composes from the model's answer `raw`, or why it refuses to.
    `citations`: the run's (approved versions its search returned, with their snippets);
    `customer_said`: the customer's own messages of the session, this one included (read only
    when a slot is filled); `request`: the request a tool of this run touched and `tools_done`
    the tools that ran; `session_request(n)`: request #n of the session, None when it has none."""
    parsed = _parsed(raw.strip())
    if isinstance(parsed, str):
        return Composed(text=None, reason=parsed)
    run = _Run(request=request, tools_done=frozenset(tools_done), session_request=session_request)
    said = _Lazy(customer_said)
    published = templates(agent, terms, language)
    lines: list[str] = []
    cited: list[int] = []
    try:
        for choice in parsed:
            if choice.kind == "knowledge":
                quote, index = _knowledge(choice, citations, language)
                if index not in cited:
                    cited.append(index)
                # Numbered by its place among the entries this reply cites (the reply's citations,
                # in that order), so "[1]" in the text, the check's list and the stored list agree.
                lines.append(f"[{cited.index(index) + 1}] {quote}")
            elif choice.kind == "template" and choice.id == "summary":
                lines.append(_summary(choice, terms, language, said))
            elif choice.kind == "template" and choice.id in REQUEST_TEMPLATES:
                lines.append(_about_request(choice, language, said))
            elif choice.kind == "template":
                if choice.id not in published:
                    raise _Refused("unknown_template")
                if choice.slots:
                    raise _Refused("unknown_slot")
                lines.append(published[choice.id])
            else:
                lines.append(_status(choice, agent, terms, language, run, said))
    except _Refused as refused:
        return Composed(text=None, reason=refused.reason)
    text = "\n".join(lines)
    asks = text.rstrip().endswith(("?", "？")) or (parsed[-1].kind, parsed[-1].id) == ("template", "summary")
    return Composed(text=text, cited=tuple(cited), asks=asks)


def instructions(agent: AgentProfile, terms: ContractTerms, language: str) -> str:
    """What the model is told in strict mode (appended to the customer or peer prompt)."""
    published = templates(agent, terms, language)
    lines = [
        "STRICT MODE. Never write a reply of your own words. Answer only with JSON: a list of parts,",
        '[{"kind": "knowledge"|"template"|"status", "id": "...", "slots": {...}}], and nothing else.',
        "The server composes the reply from it; anything else is refused and the boundary wording is sent.",
        '- knowledge: id "n" quotes search result n as it stands, "n.k" its k-th sentence (n = the result\'s cite;',
        '  a result with a "part" k is that line of a published list: "n.k" quotes it alone).',
        "- template: one of these ids (the text it stands for):",
        *(f"    {key}: {text}" for key, text in published.items()),
        '    summary: the request summary; slots "need" and the clarification fields, each exactly as the',
        "      customer wrote it (end your answer with it before submit_request).",
        '    owner_has_acted, already_withdrawn: slot {"request": "<number the customer gave>"}.',
        '- status: "registered", "handoff", "withdrawn", "amended", "state" (read_request_status) after that tool',
        '  ran in this turn; "request"',
        '  with slot {"request": "<number the customer gave>"} for where a request stands.',
        "A slot holds only words the customer wrote in this conversation: never a price, a date or an amount of yours.",
    ]
    return "\n".join(lines)
