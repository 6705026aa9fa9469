"""Issue 28 §6: customer words never reach the review input — proved field by field.  Each place
customer text can enter the day's rows gets a marker of its own, one place per test; the review
input is then built and every one of its fields (its keys and its values, nested) is searched
separately, so a leak names the place it came from and the field it reached.  The red line was
caught before only by a scan of the whole input at once (tests/test_review.py)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from facade.dialogue.models import CustomerRequest, Message, Rating, Run, Span
from facade.dialogue.services import session_open
from facade.tenancy.rules import Audience
from facade.tenancy.services import customer_create
from knowledge.models import KnowledgeMiss
from knowledge.services import knowledge_miss_record
from rsi.review_input import ReviewInput, local_today, review_input_build

pytestmark = pytest.mark.django_db

QUESTION = "do you offer gift wrapping for parcels"


def _session(world: Any, text: str, *, miss: bool = False, client_message_id: str = "", **metadata: str) -> Any:
    customer = customer_create(tenant=world.tenant)
    session = session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer)
    message = Message.objects.create(
        session=session, role="principal", text=text, client_message_id=client_message_id, metadata=dict(metadata)
    )
    run = Run.objects.create(tenant=world.tenant, session=session, message=message, status="completed")
    if miss:
        knowledge_miss_record(agent=world.agent, session_id=session.pk, query=text, asker=str(customer.pk))
    session.run = run
    return session


def _day(world: Any) -> None:
    """A day with a topic three customers asked (a shown topic), so every field has content."""
    for _ in range(3):
        _session(world, f"{QUESTION}?", miss=True)


def _message(world: Any, marker: str) -> None:
    _session(world, f"{marker} please call me back")


def _message_miss_one_asker(world: Any, marker: str) -> None:
    _session(world, f"{marker} opening hours on sunday", miss=True)  # asked once: never named


def _message_miss_shown_topic(world: Any, marker: str) -> None:
    # Three customers ask the shown topic with the marker in it: the topic is named (k askers)
    # and its label scrubbed of the marker (a number-like word).
    for _ in range(3):
        _session(world, f"{QUESTION} {marker}?", miss=True)


def _client_message_id(world: Any, marker: str) -> None:
    _session(world, "hello", client_message_id=marker)


def _message_metadata(world: Any, marker: str) -> None:
    _session(world, "hello", note=marker)


def _rating_comment(world: Any, marker: str) -> None:
    session = _session(world, "hello")
    Rating.objects.create(session=session, tenant=world.tenant, stars=1, comment=marker)


def _request_summary(world: Any, marker: str) -> None:
    session = _session(world, "I need a cake")
    CustomerRequest.objects.create(
        tenant=world.tenant, agent=world.agent, session=session, run=session.run, state="new", summary=marker, flow={}
    )


def _request_details(world: Any, marker: str) -> None:
    session = _session(world, "I need a cake")
    CustomerRequest.objects.create(
        tenant=world.tenant,
        agent=world.agent,
        session=session,
        run=session.run,
        state="new",
        summary="a cake",
        details={"note": marker, marker: "x"},
        flow={},
    )


def _span_name(world: Any, marker: str) -> None:
    # A tool name the model wrote (a customer may have put the words in its mouth).
    session = _session(world, "hello")
    Span.objects.create(
        tenant=world.tenant,
        run=session.run,
        kind="tool",
        name=marker[:64],
        outcome="unknown_tool",
        started_at=dt.datetime.now(dt.UTC),
        duration_ms=1.0,
    )


PLACES: dict[str, Callable[[Any, str], None]] = {
    "message text": _message,
    "a miss asked by one customer": _message_miss_one_asker,
    "a word of a shown topic": _message_miss_shown_topic,
    "client message id": _client_message_id,
    "message metadata": _message_metadata,
    "rating comment": _rating_comment,
    "request summary": _request_summary,
    "request details": _request_details,
    "tool span name": _span_name,
}


def _strings(value: Any) -> Iterator[str]:
    """Every key and every value of `value`, nested, as text."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)
    else:
        yield str(value)


def test_the_fields_searched_are_every_field_of_the_review_input() -> None:
    # A field added to the review input is searched too (the walk below goes over model_fields).
    assert set(ReviewInput.model_fields) >= {"figures", "sessions", "topics", "violations", "ratios", "agent"}


@pytest.mark.parametrize("place", sorted(PLACES))
def test_a_marker_in_each_place_reaches_no_field(world_a: Any, place: str) -> None:
    marker = f"qzxw{100 + sorted(PLACES).index(place)}mkz"  # one word, number-like: scrubbed from labels
    _day(world_a)
    PLACES[place](world_a, marker)
    built = review_input_build(agent=world_a.agent, day=local_today(world_a.tenant), partial=True)
    dumped = built.review_input.model_dump(mode="json")
    if place == "a word of a shown topic":  # the marker is in the topic's key: only the scrub keeps it out
        assert KnowledgeMiss.objects.filter(agent=world_a.agent, topic_key__contains=marker).count() == 3
    assert dumped["topics"], "the day's shown topic is in the input (the fields have content)"
    leaks = [
        field
        for field in ReviewInput.model_fields
        if any(marker in text.casefold() for text in _strings(dumped[field]))
    ]
    assert leaks == [], f"the marker put in the {place} reached the review input's fields {leaks}"
    shown = [text for text in _strings(built.labels) if marker in text.casefold()]
    assert shown == [], f"the marker put in the {place} reached a shown topic's label"
