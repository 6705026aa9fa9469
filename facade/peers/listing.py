"""The platform's list of A2A agents (issue 33 §1): the agents whose owners opted in, each as its
card names it and where the card is.  A2A 1.0 leaves registries to the deployment (its discovery
topic: well-known URI, curated registries, direct configuration); this is the simplest curated
one — a public JSON document at `/a2a/agents`, made from the agents' live contracts only."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor

from . import events
from .card import agent_card, base_url
from .models import AgentListing

LIST_MAX = 500  # the most agents the list names (the newest listed first beyond it are left out)


def agent_listing_set(*, agent: AgentProfile, listed: bool, actor: Actor) -> bool:
    """Put the agent on the list or take it off; returns whether anything changed (the ledger
    records only a change)."""
    with transaction.atomic():
        AgentProfile.objects.select_for_update().filter(pk=agent.pk).first()  # one change at a time
        present = AgentListing.objects.filter(agent=agent).exists()
        if present == listed:
            return False
        if listed:
            AgentListing.objects.create(agent=agent, tenant_id=agent.tenant_id)
        else:
            AgentListing.objects.filter(agent=agent).delete()
        events.a2a_listing_changed(agent=agent, listed=listed, actor=actor)
    return True


def is_listed(agent: AgentProfile) -> bool:
    return AgentListing.objects.filter(agent=agent).exists()


def listed_agents() -> list[dict[str, Any]]:
    """The opted-in agents, by name: what each card says of it and where the card is."""
    agents = (
        AgentProfile.objects.filter(a2a_listing__isnull=False)
        .select_related("tenant")
        .order_by("a2a_listing__listed_at", "slug")[:LIST_MAX]
    )
    listed = []
    for agent in agents:
        card = agent_card(agent)
        listed.append(
            {
                "name": card["name"],
                "description": card["description"],
                "provider": card["provider"],
                "version": card["version"],
                "skills": [skill["id"] for skill in card["skills"]],
                "url": base_url(agent),
                "cardUrl": f"{base_url(agent)}/.well-known/agent-card.json",
            }
        )
    return sorted(listed, key=lambda a: (a["name"].casefold(), a["url"]))
