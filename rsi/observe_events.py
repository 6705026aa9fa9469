"""Observe's ledger events (issue 13): one payload model and one typed constructor per type (see
ledger/catalogue.py).  Feed text never enters the ledger: ids, URLs, codes and counts only."""

from __future__ import annotations

from facade.tenancy.schemas import Actor
from ledger.catalogue import EventPayload, EventType, register
from ledger.models import LedgerEvent
from ledger.schemas import AppendedEvent
from ledger.services import ledger_append

from .observe_models import Digest, DigestItem, FeedSubscription

APP = "rsi"


class FeedAdded(EventPayload):
    agent: str
    feed: int
    url: str
    keywords: int  # how many (the owner's words stay on the subscription)
    enabled: bool


class FeedToggled(EventPayload):
    agent: str
    feed: int
    url: str
    enabled: bool


class FeedFailed(EventPayload):
    agent: str
    feed: int
    url: str
    # bad_url, refused_address, dns_failed, connect_failed, timeout, too_many_redirects, http_error,
    # oversize, malformed
    error: str
    http_status: int | None
    day: str


class DigestStored(EventPayload):
    agent: str
    digest: int
    day: str
    run: int  # the digest's run count: a second run that day updates the same digest
    feeds: int
    feeds_failed: int
    items_new: int
    items_total: int


class CandidateProposed(EventPayload):
    agent: str
    digest: int
    item: int
    feed_url: str
    item_link: str
    proposal: str  # the pending knowledge_draft proposal it became


def _type(name: str, entity: str, payload: type[EventPayload], description: str) -> EventType:
    return register(name, app=APP, entity_type=entity, payload=payload, description=description)


FEED_ADDED = _type("observe.feed_added", "feed", FeedAdded, "An owner subscribed an agent to a feed.")
FEED_TOGGLED = _type("observe.feed_toggled", "feed", FeedToggled, "An owner enabled or disabled a feed subscription.")
FEED_FAILED = _type(
    "observe.feed_failed",
    "feed",
    FeedFailed,
    "Fetching or parsing a feed failed (its code); the other feeds of the run went on.",
)
DIGEST_STORED = _type(
    "observe.digest_stored",
    "digest",
    DigestStored,
    "Observe stored (or, run again the same day, updated) an agent's digest of candidate items (counts only).",
)
CANDIDATE_PROPOSED = _type(
    "observe.candidate_proposed",
    "digest_item",
    CandidateProposed,
    "An owner turned a digest candidate into a pending knowledge proposal (its feed URL and item link).",
)


def _append(
    event_type: EventType,
    *,
    chain_id: int,
    entity_id: int,
    actor: Actor,
    payload: EventPayload,
    caused_by: int | None = None,
) -> AppendedEvent:
    return ledger_append(
        chain_id=chain_id,
        event_type=event_type.name,
        entity_type=event_type.entity_type,
        entity_id=entity_id,
        actor_type=actor.type,
        actor_id=actor.id,
        payload=payload.model_dump(),
        caused_by=caused_by,
    )


def feed_added(*, feed: FeedSubscription, actor: Actor) -> AppendedEvent:
    payload = FeedAdded(
        agent=feed.agent.slug, feed=feed.pk, url=feed.url, keywords=len(feed.keywords), enabled=feed.enabled
    )
    return _append(FEED_ADDED, chain_id=feed.agent.tenant_id, entity_id=feed.pk, actor=actor, payload=payload)


def feed_toggled(*, feed: FeedSubscription, actor: Actor) -> AppendedEvent:
    payload = FeedToggled(agent=feed.agent.slug, feed=feed.pk, url=feed.url, enabled=feed.enabled)
    return _append(FEED_TOGGLED, chain_id=feed.agent.tenant_id, entity_id=feed.pk, actor=actor, payload=payload)


def feed_failed(*, feed: FeedSubscription, day: str, actor: Actor) -> AppendedEvent:
    payload = FeedFailed(
        agent=feed.agent.slug,
        feed=feed.pk,
        url=feed.url,
        error=feed.last_error,
        http_status=feed.last_http_status,
        day=day,
    )
    return _append(FEED_FAILED, chain_id=feed.agent.tenant_id, entity_id=feed.pk, actor=actor, payload=payload)


def digest_stored(*, digest: Digest, feeds: int, items_new: int, items_total: int, actor: Actor) -> AppendedEvent:
    payload = DigestStored(
        agent=digest.agent.slug,
        digest=digest.pk,
        day=digest.day.isoformat(),
        run=digest.runs,
        feeds=feeds,
        feeds_failed=digest.feeds_failed,
        items_new=items_new,
        items_total=items_total,
    )
    return _append(DIGEST_STORED, chain_id=digest.agent.tenant_id, entity_id=digest.pk, actor=actor, payload=payload)


def candidate_proposed(*, item: DigestItem, actor: Actor) -> AppendedEvent:
    payload = CandidateProposed(
        agent=item.agent.slug,
        digest=item.digest_id,
        item=item.pk,
        feed_url=item.feed_url,
        item_link=item.link[:2000],
        proposal=item.proposal_id,
    )
    caused_by = (
        LedgerEvent.objects.for_entity(item.agent.tenant_id, "digest", str(item.digest_id))
        .order_by("-seq")
        .values_list("seq", flat=True)
        .first()
    )
    return _append(
        CANDIDATE_PROPOSED,
        chain_id=item.agent.tenant_id,
        entity_id=item.pk,
        actor=actor,
        payload=payload,
        caused_by=caused_by,
    )
