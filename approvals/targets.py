"""Where an L2/L3 change writes in an agent's contract, and what it writes there.  Pure: no I/O.

A target is a contract field and a path inside it: the wording of one situation in one language
is `wording` → [language, situation], boundary wording in one language is `boundary_wording` →
[language], and the other kinds replace their whole field.  A proposal's diff is the value at its
target before and after; applying writes `after` there (None removes the key, so the agent says
the platform's sentence again), and rolling back writes `before`."""

from __future__ import annotations

import copy
from typing import Any

from .schemas import Kind

FIELD_OF: dict[Kind, str] = {
    Kind.WORDING: "wording",
    Kind.BOUNDARY_WORDING: "boundary_wording",
    Kind.CLARIFICATION_ORDER: "clarification_order",
    Kind.SKILL_IDS: "skill_ids",
    Kind.DELIVERY: "delivery",
    Kind.PRICING: "pricing",
    Kind.STATE_CONTRACT: "request_flow",
    Kind.COMPOSITION_MODE: "composition_mode",
}


KIND_OF: dict[str, Kind] = {field: kind for kind, field in FIELD_OF.items()}


def target_of(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """`{"field": …, "path": […]}` of an L2/L3 payload (already validated for its kind)."""
    kind = Kind(kind)
    path: list[str] = []
    if kind == Kind.WORDING:
        path = [data["language"], data["situation"]]
    elif kind == Kind.BOUNDARY_WORDING:
        path = [data["language"]]
    return {"field": FIELD_OF[kind], "path": path}


def value_of(kind: str, data: dict[str, Any]) -> Any:
    """What the payload puts at its target."""
    kind = Kind(kind)
    if kind in (Kind.WORDING, Kind.BOUNDARY_WORDING):
        return data["text"]
    if kind == Kind.CLARIFICATION_ORDER:
        return list(data["fields"])
    if kind == Kind.SKILL_IDS:
        return list(data["skill_ids"])
    if kind == Kind.DELIVERY:
        return [dict(option) for option in data["options"]]
    if kind == Kind.COMPOSITION_MODE:
        return str(data["mode"])
    return copy.deepcopy(data)  # pricing and the state machine are the whole field


def read(content: dict[str, Any], target: dict[str, Any]) -> Any:
    """The value at `target` in a contract's content, None when absent."""
    value: Any = content.get(target["field"])
    for key in target["path"]:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return copy.deepcopy(value)


def written(content: dict[str, Any], target: dict[str, Any], value: Any) -> Any:
    """The new value of the target's whole field with `value` at its path (None removes the key,
    and a language left without sentences goes too)."""
    path = target["path"]
    if not path:
        return copy.deepcopy(value)
    field = copy.deepcopy(content.get(target["field"]) or {})
    nodes = [field]
    for key in path[:-1]:
        nodes.append(nodes[-1].setdefault(key, {}))
    if value is None:
        nodes[-1].pop(path[-1], None)
    else:
        nodes[-1][path[-1]] = copy.deepcopy(value)
    for parent, key in zip(reversed(nodes[:-1]), reversed(path[:-1]), strict=True):
        if parent.get(key) == {}:
            del parent[key]
    return field
