"""Server-rendered pages: home, the customer chat of an agent and its owner's chat, the CSRF
refusal page and the favicon."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.staticfiles import finders
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET, require_safe

from approvals.selectors import pending_count
from approvals.web import approvals_texts, outbox_enabled
from audit.access import is_auditor_only
from facade.dialogue.selectors import requests_simulated_for_owner, requests_waiting_for_owner
from facade.tenancy.models import AgentProfile, Role
from facade.tenancy.policy import AgentPolicy, NotFound, TenantPolicy, ledger_tenants
from knowledge.selectors import unanswered_count


def owned_agent_cards(user: Any) -> list[dict[str, Any]]:
    """The agents the user owns, each with what waits for its owner: change proposals to decide,
    requests whose next actor is the business, and the topics of questions nothing answered that
    its Unanswered questions page lists (previews left out)."""
    agents = AgentPolicy.owned(user).select_related("tenant").order_by("slug")
    return [
        {
            "agent": agent,
            "requests_waiting": requests_waiting_for_owner(agent=agent),
            "requests_simulated": requests_simulated_for_owner(agent=agent),
            "unanswered": unanswered_count(agent),
            "unanswered_url": reverse("owner-unanswered", args=[agent.slug]),
            "changes_waiting": pending_count(agent=agent),
        }
        for agent in agents
    ]


PUBLIC_AGENTS_SHOWN = 20


def public_agents() -> list[AgentProfile]:
    """The agents whose customer chat `/` links to when signed out, by name (the first few)."""
    return list(AgentProfile.objects.order_by("name", "slug")[:PUBLIC_AGENTS_SHOWN])


@require_safe  # pages read; a write to one would be answered as if it had done something
def home(request: HttpRequest) -> HttpResponse:
    context = {
        "owned_agents": owned_agent_cards(request.user),
        "ledger_tenants": ledger_tenants(request.user).order_by("slug"),
        # The businesses whose team (members page) the user manages: the tenants they own.
        "team_tenants": TenantPolicy.as_member(request.user, (Role.OWNER.value,)).order_by("slug"),
        "demo_outbox": outbox_enabled(),
        # Signed out, `/` leads to the chats a visitor may use: every agent's customer page is
        # public by its slug (AgentPolicy.get_public), so none is disclosed that was not.
        "public_agents": [] if request.user.is_authenticated else public_agents(),
        # Self-service sign-up of a business (issue 32 §1), when the installation offers it.
        "signup_offered": settings.FACADE_SIGNUP != "off",
        # The Verify button's texts, written into the page as JSON by json_script (so that no
        # translation can break out of the data island).
        "verify_text": {
            "ok": gettext("✓ {n} events verified"),
            "bad": gettext("✗ first bad seq {seq} ({reason})"),
        },
    }
    return render(request, "home.html", context)


def chat_texts() -> dict[str, Any]:
    """Everything the chat script says, in the reader's language."""
    return {
        "you": gettext("You"),
        "agent": gettext("Assistant"),
        "sending": gettext("Sending…"),
        "not_sent": gettext("Not sent"),
        "progress": {
            "thinking": gettext("Thinking…"),
            "searching_knowledge": gettext("Searching knowledge…"),
            "registering_request": gettext("Registering your request…"),
            "handing_off": gettext("Asking a person to follow up…"),
            "withdrawing_request": gettext("Withdrawing your request…"),
            "amending_request": gettext("Updating your request…"),
            "reading_request": gettext("Looking up your request…"),
            "ingesting": gettext("Adding the material to the knowledge…"),
            "remembering": gettext("Recording the lesson…"),
            "reading_inbox": gettext("Reading your inbox…"),
            "proposing": gettext("Preparing a proposal for you to decide…"),
            "working": gettext("Working…"),
        },
        "sources": gettext("Sources:"),
        "citation": gettext("{title} (entry {entry}, version {version})"),
        "published_citation": gettext("{title}, as published by the business"),
        "request": gettext("Request #{id}"),
        "handoff": gettext("Follow-up by a person #{id}"),
        "state": gettext("State: {state}"),
        "next": gettext("Who acts next: {actor}"),
        "states": {
            "submitted": gettext("Submitted"),
            "needs_info": gettext("Needs information from you"),
            "accepted": gettext("Accepted"),
            "in_progress": gettext("In progress"),
            "done": gettext("Done"),
            "declined": gettext("Declined"),
            "cancelled": gettext("Cancelled"),
            "withdrawn": gettext("Withdrawn by you"),
        },
        "withdraw": gettext("Withdraw this request"),
        "withdraw_confirm": gettext("Yes, withdraw it"),
        "actors": {
            "owner": gettext("the business"),
            "customer": gettext("you"),
            "nobody": gettext("nobody — it is finished"),
        },
        "errors": {
            "rate_limited": gettext("Too many messages. Please try again in {seconds} s."),
            "session_ended": gettext("This conversation has ended. Your next message starts a new one."),
            "no_longer_owner": gettext("You are no longer an owner of this agent."),
            "message_too_long": gettext("Your message is too long (at most {max} characters)."),
            "over_limit": gettext(
                "Your message is {over} characters over the limit of {max}. Nothing was sent: shorten it, "
                "then send it again."
            ),
            "rating": gettext("Please choose from 1 to 5 stars."),
            "network": gettext("No connection. Your message will be sent when the connection is back."),
            "owner_has_acted": gettext(
                "The business has already acted on this request, so it can no longer be withdrawn here."
            ),
            "other": gettext("Something went wrong. Please try again."),
            "temporarily_unavailable": gettext(
                "The service is briefly unavailable. Your message is kept and will be sent again automatically."
            ),
        },
        # On a message the server could not take yet (static/js/customer.js re-sends it).
        "waiting": gettext("Waiting to be sent again…"),
        # The count under the box, shown from COUNT_FROM of the limit (static/js/customer.js).
        "count": gettext("{count} of {max} characters"),
        "count_over": gettext("{over} characters too many ({count} of {max})"),
        "reconnecting": gettext("Reconnecting…"),
        "owner_face": gettext("You are signed in as an owner of this agent, so this conversation uses the owner face."),
        "business": gettext("The business"),
    }


def chat_context(agent: AgentProfile, mode: str, *, preview: bool = False) -> dict[str, Any]:
    return {
        "agent": agent,
        "mode": mode,
        "preview": preview,
        "star_choices": [(1, gettext("1 star"))] + [(n, gettext("%(n)d stars") % {"n": n}) for n in range(2, 6)],
        "chat": {
            "mode": mode,
            "agent": agent.slug,
            "maxChars": settings.FACADE_MESSAGE_MAX_CHARS,  # the server's limit, counted by the page
            "preview": preview,
            "texts": chat_texts(),
        },
    }


@require_safe
@ensure_csrf_cookie
def customer_page(request: HttpRequest, slug: str) -> HttpResponse:
    try:
        agent = AgentPolicy.get_public(slug)
    except NotFound as exc:
        raise Http404("no such agent") from exc
    context = chat_context(agent, "customer")
    if request.user.is_authenticated and AgentPolicy.is_owner(request.user, agent):
        context["preview_url"] = reverse("owner-preview", args=[agent.slug])
    # A signed-in auditor is read-only everywhere (audit/readonly.py), the customer face included:
    # their customer cookie (a separate identity) does not make them a customer while they are
    # signed in, or an auditor could add conversations to the very figures they audit.  The page
    # says so and offers no chat; signed out, they are a visitor like any other.
    context["auditor_read_only"] = is_auditor_only(request.user)
    return render(request, "customer.html", context)


@require_safe
@login_required
@ensure_csrf_cookie
def owner_preview(request: HttpRequest, slug: str) -> HttpResponse:
    """The customer face as a customer sees it, for an owner of the agent: its conversations are
    previews, marked as such and left out of every metric and review (others: 404)."""
    try:
        agent = AgentPolicy.get_owned(request.user, slug)
    except NotFound as exc:
        raise Http404("no such agent among those you own") from exc
    return render(request, "customer.html", chat_context(agent, "customer", preview=True))


@require_safe
@login_required
@ensure_csrf_cookie
def owner_chat(request: HttpRequest, slug: str) -> HttpResponse:
    """The owner face of the chat: only for signed-in owners of this agent (others: 404)."""
    try:
        agent = AgentPolicy.get_owned(request.user, slug)
    except NotFound as exc:
        raise Http404("no such agent among those you own") from exc
    context = chat_context(agent, "owner")
    # Proposal cards in replies are the inbox's own (approvals/web.py), loaded by their id.
    context["chat"]["cardUrl"] = reverse("owner-inbox-card", args=[agent.slug, "__id__"])
    context["approvals_text"] = approvals_texts()
    return render(request, "owner_chat.html", context)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A form refused by Django's CSRF check (a page left open too long, cookies blocked): the
    site's 403 page saying what to do, not Django's technical one.  `reason` is for developers
    and not shown.  (The API's views are DRF's, which answer their own JSON 403; a plain Django
    view under `/api/` — the reference page — gets the same JSON here.)"""
    if request.path_info.startswith("/api/"):
        detail = "CSRF Failed: the CSRF token is missing or wrong"
        return JsonResponse({"error": "forbidden", "detail": detail}, status=403)
    return render(request, "403.html", {"csrf_failed": True}, status=403)


@functools.lru_cache(maxsize=1)
def _favicon_ico() -> bytes:
    found = finders.find("favicon.ico")
    if not found:
        raise FileNotFoundError("static/favicon.ico")
    return Path(str(found)).read_bytes()


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    """`/favicon.ico`, which browsers and feed readers ask for whatever the page links (the pages
    link static/favicon.svg): the same mark, so that the request never ends in a 404."""
    response = HttpResponse(_favicon_ico(), content_type="image/x-icon")
    response["Cache-Control"] = "public, max-age=86400"
    return response
