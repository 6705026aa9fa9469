"""The owner's Peers page (issue 33 §4): the agent's peer keys — issue, set trust, pause,
revoke —, each key's recent tasks as counts by state, the card as peers see it and a request to
copy.  Server-rendered; every write is a plain form POST (CSRF) through the one service that also
writes the ledger.  Only an owner of the agent: anything else answers 404.  A peer's words never
appear here (task counts and states only)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST, require_safe

from facade.errors import ApplicationError
from facade.tenancy.models import AgentProfile, PeerCredential, PeerTrust
from facade.tenancy.policy import AgentPolicy, NotFound
from facade.tenancy.schemas import Actor
from facade.tenancy.services import peer_key_create, peer_key_revoke, peer_key_trust_set

from .card import agent_card, base_url, interface_url
from .listing import agent_listing_set, is_listed
from .models import PeerTask
from .rules import TaskState

RECENT_DAYS = 30

TRUST_LABELS: dict[str, Promise] = {
    PeerTrust.ASK: _("Ask only: questions"),
    PeerTrust.REQUESTS: _("Requests: questions, and it may register requests"),
    PeerTrust.PAUSED: _("Paused: the key does not work"),
}
STATE_LABELS: dict[str, Promise] = {
    TaskState.SUBMITTED: _("Submitted"),
    TaskState.WORKING: _("Working"),
    TaskState.INPUT_REQUIRED: _("Waiting for the peer"),
    TaskState.COMPLETED: _("Completed"),
    TaskState.REJECTED: _("Refused"),
    TaskState.FAILED: _("Failed"),
    TaskState.CANCELED: _("Canceled"),
}


@dataclass
class KeyRow:
    key: PeerCredential
    trust: str
    counts: list[tuple[str, int]]
    total: int


def _owned(request: HttpRequest, slug: str) -> AgentProfile:
    try:
        return AgentPolicy.get_owned(request.user, slug)
    except NotFound as exc:
        raise Http404("no such agent among those you own") from exc


def _example(agent: AgentProfile) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "When are you open?"}]}},
    }
    return (
        f"curl -H 'A2A-Version: 1.0' -H \"X-API-Key: $KEY\" -H 'Content-Type: application/json' \\\n"
        f"  -d '{json.dumps(body, separators=(',', ':'))}' \\\n  {interface_url(agent)}"
    )


def _page(request: HttpRequest, agent: AgentProfile, *, issued: str = "", status: int = 200) -> HttpResponse:
    since = timezone.now() - dt.timedelta(days=RECENT_DAYS)
    keys = list(PeerCredential.objects.filter(agent=agent).order_by("revoked_at", "-created_at"))
    counted: dict[Any, dict[str, int]] = {}
    for peer_id, state, n in (
        PeerTask.objects.filter(agent=agent, updated_at__gte=since)
        .values_list("peer_id", "state")
        .annotate(n=Count("pk"))
        .order_by()
    ):
        counted.setdefault(peer_id, {})[state] = n
    rows = []
    for key in keys:
        mine = counted.get(key.pk, {})
        counts = [(str(STATE_LABELS[s]), mine[s]) for s in STATE_LABELS if mine.get(s)]
        rows.append(
            KeyRow(key=key, trust=str(TRUST_LABELS.get(key.trust, key.trust)), counts=counts, total=sum(mine.values()))
        )
    context = {
        "agent": agent,
        "rows": rows,
        "trusts": [(value, str(label)) for value, label in TRUST_LABELS.items()],
        "issued": issued,
        "card_url": f"{base_url(agent)}/.well-known/agent-card.json",
        "base_url": base_url(agent),
        "card": json.dumps(agent_card(agent), indent=2, ensure_ascii=False),
        "example": _example(agent),
        "days": RECENT_DAYS,
        "listed": is_listed(agent),
        "list_url": f"{settings.FACADE_PUBLIC_URL.rstrip('/')}{reverse('a2a-agents')}",
    }
    return render(request, "peers/owner_peers.html", context, status=status)


@require_safe
@login_required
def peers_page(request: HttpRequest, slug: str) -> HttpResponse:
    return _page(request, _owned(request, slug))


@require_POST
@login_required
def peer_issue(request: HttpRequest, slug: str) -> HttpResponse:
    agent = _owned(request, slug)
    try:
        issued = peer_key_create(
            agent=agent,
            name=request.POST.get("name", "")[:200],
            actor=Actor.human(request.user.pk),
            created_by=request.user,
        )
    except ApplicationError:
        messages.error(request, gettext("A key needs a name of 1 to 100 characters."))
        return HttpResponseRedirect(reverse("owner-peers", args=[slug]))
    # Shown once, in this answer only: the key is in no message, session, log or table.
    messages.success(request, gettext("Key “%(name)s” issued.") % {"name": issued.name})
    return _page(request, agent, issued=issued.key)


def _owned_key(request: HttpRequest, slug: str, key_id: str) -> PeerCredential:
    agent = _owned(request, slug)
    found = PeerCredential.objects.filter(agent=agent, pk=key_id).first()
    if found is None:
        raise Http404("no such key of this agent")
    return found


@require_POST
@login_required
def peer_trust(request: HttpRequest, slug: str, key_id: str) -> HttpResponse:
    key = _owned_key(request, slug, key_id)
    try:
        key = peer_key_trust_set(
            credential=key, trust=request.POST.get("trust", "")[:16], actor=Actor.human(request.user.pk)
        )
    except ApplicationError:
        messages.error(request, gettext("That trust cannot be set for key “%(name)s”.") % {"name": key.name})
    else:
        messages.success(
            request,
            gettext("Key “%(name)s”: %(trust)s.") % {"name": key.name, "trust": TRUST_LABELS[key.trust]},
        )
    return HttpResponseRedirect(reverse("owner-peers", args=[slug]) + f"#key-{key.pk}")


@require_POST
@login_required
def peer_revoke(request: HttpRequest, slug: str, key_id: str) -> HttpResponse:
    key = _owned_key(request, slug, key_id)
    peer_key_revoke(credential=key, actor=Actor.human(request.user.pk))
    messages.success(request, gettext("Key “%(name)s” revoked: it no longer works.") % {"name": key.name})
    return HttpResponseRedirect(reverse("owner-peers", args=[slug]))


@require_POST
@login_required
def peer_listing(request: HttpRequest, slug: str) -> HttpResponse:
    """Put the agent on the platform's list of A2A agents, or take it off (`listed`: 1 or 0)."""
    agent = _owned(request, slug)
    listed = request.POST.get("listed") == "1"
    agent_listing_set(agent=agent, listed=listed, actor=Actor.human(request.user.pk))
    if listed:
        messages.success(request, gettext("Your agent is on the platform's list of agents."))
    else:
        messages.success(request, gettext("Your agent is no longer on the platform's list of agents."))
    return HttpResponseRedirect(reverse("owner-peers", args=[slug]) + "#listing-h")
