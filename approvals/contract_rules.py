"""Pure rules of the agent contract: its canonical form, its hash and the compiler's checks.

No ORM here (the data migration imports this module too).  `contract_problems` answers every
reason a contract cannot be published, as short machine-readable strings (`field: what`), and an
empty list when it can."""

from __future__ import annotations

import hashlib
import json
import re
from collections import deque
from decimal import Decimal, InvalidOperation
from typing import Any

from .skills import DELIVERY_CHANNELS, SKILLS

# The parts of a contract, in the order the hash covers them (json sorts keys anyway).
FIELDS = (
    "mission",
    "boundary_wording",
    "wording",
    "clarification_order",
    "request_flow",
    "skill_ids",
    "delivery",
    "pricing",
    "composition_mode",
)
# How a customer or peer reply is put together (issue 15 §4, facade/dialogue/runtime/strict.py):
# `guarded` - the model's own words behind the outgoing check; `strict` - only sentences of
# approved knowledge the run cited, published templates and request status lines, chosen by the
# model and composed by the server.
GUARDED, STRICT = "guarded", "strict"
COMPOSITION_MODES = (GUARDED, STRICT)
LANGUAGES = frozenset({"en", "zh-hans"})
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
NEXT_ACTORS = frozenset({"owner", "customer", "nobody"})
# The moments the owner may word what the agent says (L2 `wording` changes).
SITUATIONS = frozenset({"greeting", "unknown", "handoff", "request_registered"})

# ISO 4217 active currency codes (static: compiling never goes to the network).
CURRENCIES = frozenset(
    """AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN
    BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP
    GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD
    KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK
    NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD
    SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD
    XOF XPF YER ZAR ZMW ZWG""".split()
)


def default_content() -> dict[str, Any]:
    """What a contract holds besides the four fields that came from `AgentProfile`: no wording
    of the owner's own (the agent says the platform's sentences), no delivery options promised."""
    return {
        "wording": {},
        "skill_ids": ["knowledge_answers", "request_intake", "handoff"],
        "delivery": [],
        "pricing": {"currency": "EUR", "items": []},
        "composition_mode": GUARDED,
    }


def content_hash(content: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a contract's content (sorted keys, no spaces, UTF-8).
    The default composition mode (`guarded`) is left out, so a version written before the mode
    existed keeps the hash it was published (and recorded in the ledger) with."""
    canonical = json.dumps(
        {
            name: content.get(name)
            for name in FIELDS
            if not (name == "composition_mode" and content.get(name, GUARDED) == GUARDED)
        },
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def _flow_problems(flow: Any) -> list[str]:
    if not isinstance(flow, dict) or not isinstance(flow.get("states"), dict) or not flow["states"]:
        return ["request_flow: needs an initial state and a non-empty map of states"]
    states: dict[str, Any] = flow["states"]
    problems: list[str] = []
    initial = flow.get("initial")
    if not isinstance(initial, str) or initial not in states:
        problems.append("request_flow: exactly one initial state, and it must be a known state")
    for name, state in states.items():
        if not isinstance(state, dict) or not isinstance(state.get("to", []), list):
            problems.append(f"request_flow: state {name} needs next_actor and a list of transitions")
            continue
        if state.get("next_actor") not in NEXT_ACTORS:
            problems.append(f"request_flow: state {name} has an unknown next_actor")
        for target in state.get("to", []):
            if not isinstance(target, str) or target not in states:
                problems.append(f"request_flow: transition {name} -> {target} goes to an unknown state")
    if problems:
        return problems
    if not any(not state.get("to") for state in states.values()):
        problems.append("request_flow: needs at least one terminal state (one with no transitions)")
    # `withdrawn` is entered by the customer from the initial state, not by a transition (see
    # tenancy.models.default_request_flow), so it counts as reachable.
    start = str(initial)
    seen, queue = {start, "withdrawn"}, deque([start])
    while queue:
        for target in states[queue.popleft()].get("to", []):
            if target not in seen:
                seen.add(target)
                queue.append(target)
    for name in states:
        if name not in seen:
            problems.append(f"request_flow: state {name} cannot be reached from the initial state")
    return problems


def item_names(item: Any) -> dict[str, str]:
    """A price-list item's name in each language it has one in: its `names` (`{"en": …,
    "zh-hans": …}`, optional), and its `name` for the language its script is in when `names` does
    not give that one (an item of an older contract has only `name`)."""
    if not isinstance(item, dict):
        return {}
    names = {str(k): str(v).strip() for k, v in (item.get("names") or {}).items() if str(v or "").strip()}
    name = str(item.get("name") or "").strip()
    if name and name not in names.values():
        names.setdefault("zh-hans" if _CJK.search(name) else "en", name)
    return {lang: names[lang] for lang in ("en", "zh-hans") if lang in names}


def item_name(item: Any, language: str) -> str:
    """The item's name in `language`, else its main `name`."""
    if not isinstance(item, dict):
        return ""
    return item_names(item).get(language) or str(item.get("name") or "").strip()


def item_label(item: Any) -> str:
    """The item by its names in every language, as the owner's pages show it ("Birthday cake (8
    people) / 生日蛋糕（8人份）"); an item with one name, by that name."""
    return " / ".join(item_names(item).values()) or (str(item.get("name", "")) if isinstance(item, dict) else "")


def _names_problems(item: dict[str, Any]) -> list[str]:
    names = item.get("names")
    if names is None:
        return []
    if not isinstance(names, dict) or not all(isinstance(v, str) and v.strip() for v in names.values()):
        return [f"pricing: the names of {item['name']!r} must map languages to non-empty text"]
    unknown = sorted(set(names) - LANGUAGES)
    return [f"pricing: unknown language {lang} in the names of {item['name']!r}" for lang in unknown]


def _pricing_problems(pricing: Any) -> list[str]:
    if not isinstance(pricing, dict) or not isinstance(pricing.get("items"), list):
        return ["pricing: needs a currency and a list of items"]
    problems: list[str] = []
    if pricing.get("currency") not in CURRENCIES:
        problems.append(f"pricing: {pricing.get('currency')!r} is not an ISO 4217 currency code")
    for item in pricing["items"]:
        if not isinstance(item, dict) or not str(item.get("name") or "").strip():
            problems.append("pricing: every item needs a name")
            continue
        problems += _names_problems(item)
        amount = item.get("amount")
        try:
            value = Decimal(amount) if isinstance(amount, str) else None
        except InvalidOperation:
            value = None
        if value is None or not value.is_finite():
            problems.append(f"pricing: the amount of {item['name']!r} must be a decimal string")
        elif value < 0:
            problems.append(f"pricing: the amount of {item['name']!r} is negative")
    return problems


def _delivery_problems(delivery: Any) -> list[str]:
    if not isinstance(delivery, list):
        return ["delivery: must be a list of options"]
    problems: list[str] = []
    channels = []
    for option in delivery:
        shaped = isinstance(option, dict) and not set(option) - {"channel", "note"}
        if not shaped or not isinstance(option.get("note", ""), str):
            problems.append('delivery: an option is {"channel": …, "note": "…"}')
            continue
        channel = option.get("channel")
        channels.append(channel)
        if channel not in DELIVERY_CHANNELS:
            problems.append(f"delivery: unknown channel {channel}")
    if len(set(map(str, channels))) != len(channels):
        problems.append("delivery: a channel is named twice")
    return problems


def _wording_problems(wording: Any) -> list[str]:
    if not isinstance(wording, dict) or not all(isinstance(v, dict) for v in wording.values()):
        return ["wording: must map languages to {situation: text}"]
    problems = [f"wording: unknown language {lang}" for lang in sorted(set(wording) - LANGUAGES)]
    for lang, said in sorted(wording.items()):
        problems += [f"wording: unknown situation {name}" for name in sorted(set(said) - SITUATIONS)]
        if not all(isinstance(text, str) and text.strip() for text in said.values()):
            problems.append(f"wording: the {lang} sentences must be non-empty text")
    return problems


def contract_problems(content: dict[str, Any]) -> list[str]:
    """Every reason `content` is not a publishable contract (empty when it is)."""
    problems = [f"{name}: unknown field" for name in sorted(set(content) - set(FIELDS))]
    for name in FIELDS:
        if name not in content:
            problems.append(f"{name}: missing")
    if problems:
        return problems
    if not isinstance(content["mission"], str):
        problems.append("mission: must be text")
    wording = content["boundary_wording"]
    if not isinstance(wording, dict) or not all(isinstance(v, str) and v.strip() for v in wording.values()):
        problems.append("boundary_wording: must map languages to non-empty text")
    else:
        problems += [f"boundary_wording: unknown language {lang}" for lang in sorted(set(wording) - LANGUAGES)]
    order = content["clarification_order"]
    if (
        not isinstance(order, list)
        or not order
        or not all(isinstance(f, str) and f.strip() for f in order)
        or len(set(order)) != len(order)
    ):
        problems.append("clarification_order: must be a non-empty list of field names without repeats")
    problems += _flow_problems(content["request_flow"])
    skills = content["skill_ids"]
    if not isinstance(skills, list):
        problems.append("skill_ids: must be a list")
    else:
        problems += [f"skill_ids: unknown skill {s}" for s in skills if s not in SKILLS]
    problems += _delivery_problems(content["delivery"])
    problems += _wording_problems(content["wording"])
    problems += _pricing_problems(content["pricing"])
    if content["composition_mode"] not in COMPOSITION_MODES:
        problems.append(f"composition_mode: must be one of {', '.join(COMPOSITION_MODES)}")
    return problems


def removals(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What `after` takes away that an open conversation of `before` relies on (issue 26 §2):
    every skill no longer granted (`skill_ids: <id>`) — each turn of a customer conversation is
    offered its contract's skills — and the state contract of its requests (`request_flow: …`):
    a state or a transition that is gone, or another initial state.  Empty for every other
    change (wording, boundary wording, clarification order, mission, prices, delivery, an added
    skill or state): those apply from a conversation's next turn and end none."""
    gone = [f"skill_ids: {s}" for s in before.get("skill_ids") or [] if s not in (after.get("skill_ids") or [])]
    old_flow, new_flow = before.get("request_flow") or {}, after.get("request_flow") or {}
    old_states, new_states = old_flow.get("states") or {}, new_flow.get("states") or {}
    if old_flow.get("initial") != new_flow.get("initial"):
        gone.append("request_flow: initial state")
    for name, state in sorted(old_states.items()):
        if name not in new_states:
            gone.append(f"request_flow: state {name}")
            continue
        kept = set((new_states[name] or {}).get("to") or [])
        gone += [f"request_flow: {name} -> {t}" for t in (state or {}).get("to") or [] if t not in kept]
    return gone
