"""The owner's feeds page (`/owner/<slug>/feeds`): subscribe the agent to feeds, enable or
disable them, run observe now, read the latest digest's candidates and propose one as
knowledge.  Server-rendered; every write is a plain form POST (CSRF) that calls the one service
that also writes the ledger, then redirects back.  Only for an agent the signed-in user owns
(anything else answers 404).  Feed text is untrusted: the template escapes it, and nothing of a
digest reaches the customer face."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_POST, require_safe

from facade.tenancy.models import AgentProfile
from facade.tenancy.policy import AgentPolicy, NotFound
from facade.tenancy.schemas import Actor

from .observe import ObserveError, candidate_propose, feed_add, feed_set_enabled, observe_run
from .observe_models import URL_MAX, Digest, DigestItem, FeedSubscription
from .schedule_rules import local_now

MAX_CANDIDATES_SHOWN = 100


def _owned(request: HttpRequest, slug: str) -> AgentProfile:
    try:
        return AgentPolicy.get_owned(request.user, slug)
    except NotFound as exc:
        raise Http404("no such agent among those you own") from exc


def _back(slug: str, anchor: str = "") -> HttpResponseRedirect:
    return HttpResponseRedirect(reverse("owner-feeds", args=[slug]) + (f"#{anchor}" if anchor else ""))


def error_words() -> dict[str, str]:
    """What a subscription's last error means, in the reader's language."""
    return {
        "bad_url": gettext("The address is not a web address we can fetch."),
        "refused_address": gettext("The address is private or local, so it was not fetched."),
        "dns_failed": gettext("The host name could not be found."),
        "connect_failed": gettext("The server could not be reached."),
        "timeout": gettext("The server took too long to answer."),
        "too_many_redirects": gettext("The address redirected too many times."),
        "http_error": gettext("The server answered with an error."),
        "oversize": gettext("The feed is larger than 2 MB."),
        "malformed": gettext("The answer is not a valid RSS or Atom feed."),
    }


@require_safe
@login_required
@ensure_csrf_cookie
def owner_feeds(request: HttpRequest, slug: str) -> HttpResponse:
    agent = _owned(request, slug)
    digest = Digest.objects.filter(agent=agent).order_by("-day").first()
    words = error_words()
    feeds = [
        {"feed": feed, "error": words.get(feed.last_error, feed.last_error)}
        for feed in FeedSubscription.objects.filter(agent=agent)
    ]
    context: dict[str, Any] = {
        "agent": agent,
        "feeds": feeds,
        "digest": digest,
        "items": list(digest.items.all()[:MAX_CANDIDATES_SHOWN]) if digest else [],
        "url_max": URL_MAX,
    }
    return render(request, "rsi/owner_feeds.html", context)


@require_POST
@login_required
def owner_feeds_add(request: HttpRequest, slug: str) -> HttpResponse:
    agent = _owned(request, slug)
    try:
        feed_add(
            agent=agent,
            url=request.POST.get("url", "")[: URL_MAX + 1],
            keywords=request.POST.get("keywords", "")[:2000],
            actor=Actor.human(request.user.pk),
        )
    except ObserveError as exc:
        problems = {
            "invalid_url": gettext("Give an http:// or https:// address."),
            "invalid_keywords": gettext("At most 20 keywords of at most 60 characters each."),
            "duplicate_feed": gettext("This agent already follows that feed."),
            "too_many_feeds": gettext("This agent follows as many feeds as it may."),
        }
        messages.error(request, problems.get(exc.code, gettext("The feed could not be added.")))
    else:
        messages.success(request, gettext("Feed added. Run observe to fetch it."))
    return _back(slug)


@require_POST
@login_required
def owner_feed_toggle(request: HttpRequest, slug: str, feed_id: int) -> HttpResponse:
    agent = _owned(request, slug)
    feed = FeedSubscription.objects.filter(pk=feed_id, agent=agent).first()
    if feed is None:
        raise Http404("no such feed of this agent")
    enabled = request.POST.get("enabled") == "1"
    feed_set_enabled(feed=feed, enabled=enabled, actor=Actor.human(request.user.pk))
    messages.success(request, gettext("Feed enabled.") if enabled else gettext("Feed disabled."))
    return _back(slug, f"feed-{feed.pk}")


@require_POST
@login_required
def owner_feeds_run(request: HttpRequest, slug: str) -> HttpResponse:
    agent = _owned(request, slug)
    digest = observe_run(agent_id=agent.pk, day=local_now(timezone.now(), agent.tenant.time_zone).date())
    messages.success(
        request,
        gettext("Observe ran: %(ok)s feeds fetched, %(failed)s failed.")
        % {"ok": digest.feeds_ok, "failed": digest.feeds_failed},
    )
    return _back(slug, "digest")


@require_POST
@login_required
def owner_candidate_propose(request: HttpRequest, slug: str, item_id: int) -> HttpResponse:
    agent = _owned(request, slug)
    item = DigestItem.objects.filter(pk=item_id, agent=agent).first()
    if item is None:
        raise Http404("no such candidate of this agent")
    candidate_propose(item=item, owner=request.user)
    messages.success(request, gettext("Proposed as knowledge. It waits for your decision in the inbox."))
    return _back(slug, f"item-{item.pk}")


__all__ = ["owner_feeds", "owner_feeds_add", "owner_feed_toggle", "owner_feeds_run", "owner_candidate_propose"]
