"""Observe (issue 13): the writes.  `observe_run` fetches an agent's enabled feeds and stores the
day's digest; the owner's subscriptions are added and toggled here; a candidate becomes a
pending knowledge proposal only through `candidate_propose`.

Nothing here makes anything effective: the digest is for the owner's eyes, and a proposal made
from it waits in the inbox like any other (approvals decides, never this module)."""

from __future__ import annotations

import calendar
import datetime
import html
import xml.sax
from dataclasses import dataclass
from typing import Any

import feedparser
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.html import strip_tags

from approvals.services import proposal_create
from facade.errors import ApplicationError
from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor

from . import observe_events as events
from .observe_fetch import FetchFailed, fetch_feed
from .observe_models import URL_MAX, Digest, DigestItem, FeedStatus, FeedSubscription
from .observe_rules import MAX_KEYWORD_CHARS, MAX_KEYWORDS, SCHEMES, item_key, keywords_clean, relevance

OBSERVER = Actor.platform("observe")
SUMMARY_CHARS = 2000
TITLE_CHARS = 300


class ObserveError(ApplicationError):
    pass


# --- subscriptions ----------------------------------------------------------------------------


def _valid_url(url: str) -> str:
    from urllib.parse import urlsplit

    url = url.strip()
    if not url or len(url) > URL_MAX:
        raise ObserveError("invalid_url", f"a feed URL is 1 to {URL_MAX} characters")
    parts = urlsplit(url)
    if parts.scheme.lower() not in SCHEMES or not parts.hostname or parts.username or parts.password:
        raise ObserveError("invalid_url", "a feed URL is http:// or https:// with a host and no user or password")
    return url


def _valid_keywords(raw: list[str] | str) -> list[str]:
    words = keywords_clean(raw)
    if len(words) > MAX_KEYWORDS or any(len(w) > MAX_KEYWORD_CHARS for w in words):
        raise ObserveError(
            "invalid_keywords", f"at most {MAX_KEYWORDS} keywords of at most {MAX_KEYWORD_CHARS} characters each"
        )
    return words


@transaction.atomic
def feed_add(
    *, agent: AgentProfile, url: str, keywords: list[str] | str, actor: Actor, enabled: bool = True
) -> FeedSubscription:
    url = _valid_url(url)
    words = _valid_keywords(keywords)
    AgentProfile.objects.select_for_update().filter(pk=agent.pk).first()  # count and insert under one lock
    if FeedSubscription.objects.filter(agent=agent, url=url).exists():
        raise ObserveError("duplicate_feed", "this agent already follows that feed", 409)
    if FeedSubscription.objects.filter(agent=agent).count() >= settings.FACADE_OBSERVE_MAX_FEEDS:
        raise ObserveError("too_many_feeds", f"an agent follows at most {settings.FACADE_OBSERVE_MAX_FEEDS} feeds")
    feed = FeedSubscription.objects.create(agent=agent, url=url, keywords=words, enabled=enabled)
    events.feed_added(feed=feed, actor=actor)
    return feed


@transaction.atomic
def feed_set_enabled(*, feed: FeedSubscription, enabled: bool, actor: Actor) -> FeedSubscription:
    locked = FeedSubscription.objects.select_for_update().select_related("agent").get(pk=feed.pk)
    if locked.enabled != enabled:
        locked.enabled = enabled
        locked.save(update_fields=["enabled"])
        events.feed_toggled(feed=locked, actor=actor)
    return locked


# --- one run ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    key: str
    guid: str
    link: str
    title: str
    summary: str
    published: datetime.datetime | None


def _text(value: Any, limit: int) -> str:
    return " ".join(html.unescape(strip_tags(str(value or ""))).split())[:limit]


def _published(entry: Any) -> datetime.datetime | None:
    parsed = entry.get("published_parsed") or entry.get("updated_parsed")
    if not parsed:
        return None
    return datetime.datetime.fromtimestamp(calendar.timegm(parsed), tz=datetime.UTC)


def parse_feed(body: bytes) -> list[Entry]:
    """The entries of an RSS or Atom document; raises FetchFailed("malformed") for anything that
    is not a feed."""
    parsed = feedparser.parse(body)
    # feedparser falls back to a lenient parser on broken XML and would still hand out entries:
    # a document that is not well-formed is refused whole (an encoding or content-type remark is
    # not an XML error and passes).
    broken = isinstance(parsed.get("bozo_exception"), xml.sax.SAXException)
    if not parsed.get("version") or broken or (parsed.get("bozo") and not parsed.entries):
        raise FetchFailed("malformed")
    found: list[Entry] = []
    for entry in parsed.entries:
        guid = str(entry.get("id") or "")[:500]
        link = str(entry.get("link") or "")[:URL_MAX]
        title = _text(entry.get("title"), TITLE_CHARS)
        summary = _text(entry.get("summary") or entry.get("description"), SUMMARY_CHARS)
        if not (guid or link or title):
            continue
        found.append(
            Entry(item_key(guid, link, title), guid, link, title or link[:TITLE_CHARS], summary, _published(entry))
        )
    return found


def _digest_for(agent: AgentProfile, day: datetime.date) -> Digest:
    digest, _ = Digest.objects.get_or_create(agent=agent, day=day)
    return digest


def _record_failure(feed: FeedSubscription, failure: FetchFailed, day: datetime.date) -> None:
    with transaction.atomic():
        feed.last_status = FeedStatus.FAILED
        feed.last_error = failure.code
        feed.last_http_status = failure.status
        feed.last_fetched_at = timezone.now()
        feed.save(update_fields=["last_status", "last_error", "last_http_status", "last_fetched_at"])
        events.feed_failed(feed=feed, day=day.isoformat(), actor=OBSERVER)


def _store(feed: FeedSubscription, digest: Digest, status: int, entries: list[Entry], etag: str, modified: str) -> int:
    """The feed's new candidates into the digest; returns how many were new to the agent."""
    with transaction.atomic():
        known = set(
            DigestItem.objects.filter(agent=feed.agent, key__in=[e.key for e in entries]).values_list("key", flat=True)
        )
        rows: list[DigestItem] = []
        for entry in entries:
            if entry.key in known:
                continue
            known.add(entry.key)
            rel = relevance(feed.keywords, entry.title, entry.summary)
            if feed.keywords and not rel.matched:
                continue  # the owner named what matters: an item matching none is not a candidate
            rows.append(
                DigestItem(
                    digest=digest,
                    agent=feed.agent,
                    subscription=feed,
                    feed_url=feed.url,
                    key=entry.key,
                    guid=entry.guid,
                    link=entry.link,
                    title=entry.title,
                    summary=entry.summary,
                    published=entry.published,
                    score=rel.score,
                    matched=rel.matched,
                )
            )
            if len(rows) >= settings.FACADE_OBSERVE_ITEMS_PER_FEED:
                break
        # Another run at the same moment may have stored some of them: the unique key keeps one
        # (and with ignore_conflicts no ids come back, so the new ones are counted).
        before = DigestItem.objects.filter(agent=feed.agent).count()
        DigestItem.objects.bulk_create(rows, ignore_conflicts=True)
        created = DigestItem.objects.filter(agent=feed.agent).count() - before
        feed.last_status = FeedStatus.NOT_MODIFIED if status == 304 else FeedStatus.OK
        feed.last_error = ""
        feed.last_http_status = status
        feed.last_fetched_at = timezone.now()
        if status == 200:
            feed.etag, feed.last_modified = etag, modified
        feed.save(
            update_fields=["last_status", "last_error", "last_http_status", "last_fetched_at", "etag", "last_modified"]
        )
        return max(created, 0)


def observe_run(*, agent_id: int, day: datetime.date) -> Digest:
    """Fetch the agent's enabled feeds and store the digest of (agent, day).  Idempotent: the
    digest is unique per agent and day and updated in place, and an item already in any of the
    agent's digests is not stored again.  A failing feed is recorded on its subscription (and
    in the ledger) and the others go on.  Network calls run outside any transaction."""
    agent = AgentProfile.objects.select_related("tenant").get(pk=agent_id)
    digest = _digest_for(agent, day)
    feeds = list(FeedSubscription.objects.filter(agent=agent, enabled=True).select_related("agent").order_by("pk"))
    new = failed = 0
    for feed in feeds:
        try:
            fetched = fetch_feed(feed.url, etag=feed.etag, last_modified=feed.last_modified)
            entries = parse_feed(fetched.body) if fetched.status == 200 else []
        except FetchFailed as failure:
            failed += 1
            _record_failure(feed, failure, day)
            continue
        new += _store(feed, digest, fetched.status, entries, fetched.etag, fetched.last_modified)
    with transaction.atomic():
        locked = Digest.objects.select_for_update().select_related("agent").get(pk=digest.pk)
        locked.runs += 1
        locked.feeds_ok = len(feeds) - failed
        locked.feeds_failed = failed
        locked.save(update_fields=["runs", "feeds_ok", "feeds_failed", "updated_at"])
        events.digest_stored(
            digest=locked, feeds=len(feeds), items_new=new, items_total=locked.items.count(), actor=OBSERVER
        )
    return locked


# --- the owner's decision to propose ----------------------------------------------------------


def _proposal_text(item: DigestItem) -> str:
    parts = [item.summary or item.title]
    if item.link:
        parts.append(item.link)
    return "\n\n".join(parts)[:20_000]


@transaction.atomic
def candidate_propose(*, item: DigestItem, owner: Any) -> str:
    """Turn a candidate into a pending `knowledge_draft` proposal (origin `observe_digest`); its
    summary names the feed URL and the item's guid or link.  Proposing the same candidate again
    returns the proposal made the first time.  Returns the proposal's id."""
    locked = DigestItem.objects.select_for_update().select_related("agent", "agent__tenant").get(pk=item.pk)
    if locked.proposal_id:
        return locked.proposal_id
    source = locked.guid or locked.link
    summary = f"From feed {locked.feed_url} — item {source}"
    proposal = proposal_create(
        agent=locked.agent,
        kind="knowledge_draft",
        origin="observe_digest",
        payload={"title": locked.title, "text": _proposal_text(locked)},
        summary=summary[:300],
        actor=Actor.human(owner.pk),
    )
    locked.proposal_id = proposal.pk
    locked.save(update_fields=["proposal_id"])
    events.candidate_proposed(item=locked, actor=Actor.human(owner.pk))
    return str(proposal.pk)
