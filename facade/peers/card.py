"""An agent's A2A Agent Card (A2A 1.0, section 8), built from its live contract and nothing else.

Each agent is discovered on its own: one host serves many agents, so each has its own base URL
`<public URL>/a2a/<slug>` with the card at the well-known path under it
(`/a2a/<slug>/.well-known/agent-card.json`, where `A2ACardResolver(base_url=…)` looks), and its
JSON-RPC interface names the agent in the interface's `tenant` field, which every client sends
back in each request (section 8.3.2).

What the card says comes from the owner: the agent's name, the live contract's mission as the
description and its version, the contract's skills that the peer face offers (the catalogue's
wording, with examples in English and Chinese), the business's name as provider.  Nothing in it
comes from a customer or a peer."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from approvals.contract import live_terms
from approvals.skills import skill_tools
from facade.dialogue.runtime.builtin_tools import registry
from facade.tenancy.models import AgentProfile
from facade.tenancy.rules import Audience

from .protocol import BINDING, PROTOCOL_VERSION

KEY_HEADER = "X-API-Key"
SCHEME = "peerKey"
INPUT_MODES = ["text/plain"]
# Replies are text; a registered request comes as an artifact of JSON data (its id and state).
OUTPUT_MODES = ["text/plain", "application/json"]


@dataclass(frozen=True)
class PeerSkill:
    name: str
    description: str
    tags: tuple[str, ...]
    examples: tuple[str, ...]  # English, then Chinese


# The peer face's wording of the platform's skills (approvals/skills.py).  A skill appears on a
# card only when the live contract grants it and it grants a tool the peer face is offered.
PEER_SKILLS: dict[str, PeerSkill] = {
    "knowledge_answers": PeerSkill(
        name="Answers from approved knowledge",
        description="Answers questions about the business from the knowledge its owner approved, citing the "
        "entries used; it says so when it does not know.",
        tags=("questions", "knowledge", "faq"),
        examples=("What are your opening hours?", "你们的营业时间是几点？"),
    ),
    "request_intake": PeerSkill(
        name="Request intake",
        description="Clarifies what is needed and registers a request for the business to act on; the reply "
        "carries the request's id and state as data. It never promises a price, a date or an outcome.",
        tags=("requests", "booking", "orders"),
        examples=("I would like to book a repair for next Tuesday.", "我想预约下周二上门维修。"),
    ),
}


def base_url(agent: AgentProfile) -> str:
    return f"{settings.FACADE_PUBLIC_URL.rstrip('/')}/a2a/{agent.slug}"


def interface_url(agent: AgentProfile) -> str:
    return f"{base_url(agent)}/jsonrpc"


def peer_skill_ids(skill_ids: list[str]) -> list[str]:
    """The contract's skills the peer face serves: those granting a tool peers are offered."""
    offered = {tool.name for tool in registry.for_audience(Audience.PEER)}
    return [s for s in skill_ids if s in PEER_SKILLS and skill_tools([s]) & offered]


def agent_card(agent: AgentProfile) -> dict[str, Any]:
    terms = live_terms(agent)
    description = terms.mission.strip() or f"The agent of {agent.tenant.name}."
    skills = [
        {
            "id": skill_id,
            "name": PEER_SKILLS[skill_id].name,
            "description": PEER_SKILLS[skill_id].description,
            "tags": list(PEER_SKILLS[skill_id].tags),
            "examples": list(PEER_SKILLS[skill_id].examples),
            "inputModes": INPUT_MODES,
            "outputModes": OUTPUT_MODES,
        }
        for skill_id in peer_skill_ids(terms.skill_ids)
    ]
    return {
        "name": agent.name,
        "description": description,
        "supportedInterfaces": [
            {
                "url": interface_url(agent),
                "protocolBinding": BINDING,
                "tenant": agent.slug,
                "protocolVersion": PROTOCOL_VERSION,
            }
        ],
        "provider": {"organization": agent.tenant.name, "url": settings.FACADE_PUBLIC_URL.rstrip("/")},
        "version": str(terms.version or 1),
        "capabilities": {"streaming": True, "pushNotifications": False, "extendedAgentCard": False},
        "securitySchemes": {
            SCHEME: {
                "apiKeySecurityScheme": {
                    "description": "An API key the agent's owner issued to your agent.",
                    "location": "header",
                    "name": KEY_HEADER,
                }
            }
        },
        "securityRequirements": [{"schemes": {SCHEME: {"list": []}}}],
        "defaultInputModes": INPUT_MODES,
        "defaultOutputModes": OUTPUT_MODES,
        "skills": skills,
    }


def card_etag(card: dict[str, Any]) -> str:
    canonical = json.dumps(card, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return '"' + hashlib.sha256(canonical.encode()).hexdigest()[:32] + '"'
