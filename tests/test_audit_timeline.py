"""The auditor console's timeline and event pages and `/api/audit/events` (issue 14): every
filter alone and combined, keyset paging over a few hundred events in both directions, caused-by
in both directions, a tampered event shown with its seq, the access recorded, other tenants'
auditors and anonymous visitors kept out, and PostgreSQL's plan for a deep filtered page."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import pytest
import time_machine
from django.db import connection, transaction
from django.test import Client

from audit.timeline import TimelineFilters, matching
from conftest import TenantWorld
from ledger.catalogue import EventPayload, EventType, catalogue
from ledger.models import LedgerEvent
from ledger.services import ledger_append

pytestmark = pytest.mark.django_db


class Tick(EventPayload):
    agent: str
    session: str
    n: int
    tags: list[str]


class Note(EventPayload):
    n: int


TYPES = [
    EventType("audit_test.tick", "tests", "thing", Tick, "A tick of the timeline's tests."),
    EventType("audit_test.tock", "tests", "thing", Note, "A tock of the timeline's tests."),
    EventType("audit_test.widget", "tests", "widget", Note, "Something happened to a widget."),
    EventType("audit_test.entry", "tests", "knowledge_entry", Note, "Something happened to an entry."),
]


@pytest.fixture(autouse=True)
def _types() -> Any:
    with catalogue.extended(*TYPES):
        yield


def append(
    world: TenantWorld,
    event_type: str = "audit_test.tock",
    *,
    entity_id: str = "t1",
    actor: tuple[str, str] = ("human", "user:9005"),
    payload: dict[str, Any] | None = None,
    caused_by: int | None = None,
) -> int:
    entity_type = catalogue.get(event_type).entity_type  # type: ignore[union-attr]
    if payload is None:
        payload = {"n": 0}
    with transaction.atomic():
        return ledger_append(
            chain_id=world.tenant.pk,
            event_type=event_type,
            entity_type=entity_type,
            entity_id=entity_id,
            actor_type=actor[0],
            actor_id=actor[1],
            payload=payload,
            caused_by=caused_by,
        ).seq


def tick(world: TenantWorld, n: int, *, agent: str = "alpha-agent", session: str = "s-1", **kw: Any) -> int:
    return append(
        world, "audit_test.tick", payload={"agent": agent, "session": session, "n": n, "tags": ["a", "b"]}, **kw
    )


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def events(client: Client, **params: Any) -> dict[str, Any]:
    response = client.get("/api/audit/events", {"tenant": "alpha", **params})
    assert response.status_code == 200, response.content
    return response.json()


def seqs(client: Client, **params: Any) -> list[int]:
    return [event["seq"] for event in events(client, limit=200, **params)["events"]]


def last_view(world: TenantWorld) -> dict[str, Any]:
    row = (
        LedgerEvent.objects.filter(chain_id=world.tenant.pk)
        .of_type("audit.viewed")
        .order_by("-seq")
        .values_list("canonical", flat=True)
        .first()
    )
    assert row is not None
    return json.loads(row)


# --- filters --------------------------------------------------------------------------------


def test_each_filter_alone_and_combined(world_a: TenantWorld) -> None:
    a = tick(world_a, 1, entity_id="t1", actor=("human", "user:9005"))
    b = tick(world_a, 2, entity_id="t2", actor=("agent", "peer:9"), agent="other-agent")
    c = append(world_a, "audit_test.tock", entity_id="t1", actor=("platform", "tests"))
    d = append(world_a, "audit_test.widget", entity_id="t1", actor=("human", "user:9005"))
    e = tick(world_a, 3, entity_id="t1", actor=("human", "user:90055"))
    mine = {a, b, c, d, e}
    client = signed_in(world_a.auditor)

    def ours(**params: Any) -> list[int]:
        return [seq for seq in seqs(client, **params) if seq in mine]

    assert ours() == [e, d, c, b, a]  # newest first
    assert seqs(client, type="audit_test.tick") == [e, b, a]
    assert seqs(client, type="audit_test.widget") == [d]
    # An entity is a type and an id: widget t1 is not thing t1.
    assert seqs(client, entity_type="thing", entity_id="t1") == [e, c, a]
    assert seqs(client, entity_type="widget", entity_id="t1") == [d]
    assert ours(entity_type="thing") == [e, c, b, a]
    # The actor id is matched exactly (user:5 is not user:55).
    assert seqs(client, actor="user:9005") == [d, a]
    assert seqs(client, actor_type="agent") == [b]
    assert ours(actor_type="human") == [e, d, a]
    assert ours(agent="alpha-agent") == [e, a]
    assert seqs(client, agent="other-agent") == [b]
    # Combined.
    assert seqs(client, type="audit_test.tick", actor="user:9005") == [a]
    assert seqs(client, type="audit_test.tick", entity_type="thing", entity_id="t1", agent="alpha-agent") == [e, a]
    assert seqs(client, actor_type="human", entity_type="thing", entity_id="t1", type="audit_test.tick") == [e, a]
    assert seqs(client, type="audit_test.tock", actor="user:9005") == []
    # The timeline page shows the same.
    page = client.get("/audit/alpha/", {"type": "audit_test.tick", "actor": "user:9005"}).content.decode()
    assert f'href="/audit/alpha/events/{a}"' in page
    assert f'href="/audit/alpha/events/{e}"' not in page and f'href="/audit/alpha/events/{b}"' not in page


def test_a_time_range_in_utc_is_a_seq_range(world_a: TenantWorld) -> None:
    # Days after the tenant was set up, so stamps grow with seq as they do on a live chain.
    at: dict[str, int] = {}
    for day in ("2030-01-04", "2030-01-05", "2030-01-06"):
        with time_machine.travel(dt.datetime.fromisoformat(f"{day}T12:00:00+00:00"), tick=False):
            at[day] = tick(world_a, int(day[-2:]))
        with time_machine.travel(dt.datetime.fromisoformat(f"{day}T23:30:00+00:00"), tick=False):
            at[day + "late"] = append(world_a)
    # An event stamped out of order (a backdated demo day) after them.
    with time_machine.travel(dt.datetime(2030, 1, 3, 6, tzinfo=dt.timezone.utc), tick=False):
        at["backdated"] = append(world_a)
    mine = set(at.values())

    def ours(**params: Any) -> list[int]:
        return [seq for seq in seqs(client, **params) if seq in mine]

    five, five_late, six, six_late = at["2030-01-05"], at["2030-01-05late"], at["2030-01-06"], at["2030-01-06late"]
    # The reads are recorded in the chain too: stamped after the events above, as they would be.
    with time_machine.travel(dt.datetime(2030, 2, 1, tzinfo=dt.timezone.utc), tick=True):
        client = signed_in(world_a.auditor)
        assert ours(**{"from": "2030-01-05", "to": "2030-01-05"}) == [five_late, five]  # a date: the whole day
        assert ours(**{"from": "2030-01-05T13:00:00Z", "to": "2030-01-06T12:00:00Z"}) == [six, five_late]
        # A datetime with an offset is converted to UTC: 01:00+02:00 on the 6th is 23:00 on the 5th.
        assert ours(**{"from": "2030-01-06T01:00:00+02:00", "to": "2030-01-06"}) == [six_late, six, five_late]
        assert ours(**{"to": "2030-01-04T12:00:00"}) == [at["2030-01-04"]]  # naive means UTC
        assert seqs(client, **{"from": "2031-01-01"}) == []
        # Inside the seq range from the 6th on, but stamped the 3rd: not an event of that time.
        assert ours(**{"from": "2030-01-06"}) == [six_late, six]
        assert seqs(client, type="audit_test.tick", **{"from": "2030-01-05", "to": "2030-01-06"}) == [six, five]


@pytest.mark.parametrize(
    "params, code",
    [
        ({"type": "no.such_type"}, "unknown_event_type"),
        ({"actor_type": "robot"}, "unknown_actor_type"),
        ({"entity_id": "t1"}, "entity_type_required"),
        ({"from": "yesterday"}, "invalid_time"),
        ({"from": "2030-01-06", "to": "2030-01-05"}, "invalid_range"),
        ({"before": "x"}, "invalid_seq"),
        ({"after": "0"}, "invalid_seq"),
        ({"caused_by": "-3"}, "invalid_seq"),
        ({"before": "5", "after": "2"}, "invalid_paging"),
        ({"limit": "0"}, "invalid_limit"),
        ({"limit": "201"}, "invalid_limit"),
        ({"actor": "u" * 65}, "too_long"),
    ],
)
def test_bad_input_is_a_400_with_a_code(world_a: TenantWorld, params: dict[str, str], code: str) -> None:
    client = signed_in(world_a.auditor)
    response = client.get("/api/audit/events", {"tenant": "alpha", **params})
    assert response.status_code == 400
    assert response.json()["error"] == code and response.json()["detail"]
    page = client.get("/audit/alpha/", params)
    assert page.status_code == 400
    assert code in page.content.decode()


def test_an_unknown_type_is_named_on_the_page(world_a: TenantWorld) -> None:
    page = signed_in(world_a.auditor).get("/audit/alpha/", {"type": "no.such_type"})
    assert page.status_code == 400
    assert "no.such_type is not an event type of the catalogue." in page.content.decode()


# --- keyset paging --------------------------------------------------------------------------


def walk(client: Client, direction: str, start: dict[str, Any], **params: Any) -> list[list[int]]:
    """Follow next_before (older) or prev_after (newer) links from `start` to the end."""
    pages = []
    answer = events(client, **start, **params)
    while True:
        pages.append([event["seq"] for event in answer["events"]])
        link = answer["next_before" if direction == "older" else "prev_after"]
        if link is None:
            return pages
        answer = events(client, **{"before" if direction == "older" else "after": link}, **params)


def test_keyset_paging_walks_a_long_chain_both_ways(world_a: TenantWorld) -> None:
    for n in range(300):
        if n % 3 == 0:
            tick(world_a, n)
        else:
            append(world_a, payload={"n": n})
    client = signed_in(world_a.auditor)
    head = LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).count()

    # Unfiltered, older and older from the newest: every seq once, descending, none missing.
    pages = walk(client, "older", {}, limit=37)
    walked = [seq for page in pages for seq in page]
    assert walked[:head] == list(range(head, 0, -1))
    assert len(walked) == len(set(walked)) == head and all(len(page) == 37 for page in pages[:-1])

    # Filtered both ways: older from the newest, then newer from the oldest page.
    wanted = list(
        LedgerEvent.objects.filter(chain_id=world_a.tenant.pk)
        .of_type("audit_test.tick")
        .order_by("-seq")
        .values_list("seq", flat=True)
    )
    assert len(wanted) == 100
    older = walk(client, "older", {}, type="audit_test.tick", limit=15)
    assert [seq for page in older for seq in page] == wanted
    assert [len(page) for page in older] == [15] * 6 + [10]
    newer = walk(client, "newer", {"before": older[-2][-1]}, type="audit_test.tick", limit=15)
    assert newer[0] == older[-1]
    assert [seq for page in reversed(newer) for seq in page] == wanted
    first = events(client, type="audit_test.tick", limit=15)
    assert first["prev_after"] is None and first["next_before"] == wanted[14]

    # The page's own links walk the same way.
    html = signed_in(world_a.auditor).get("/audit/alpha/", {"type": "audit_test.tick", "limit": 15}).content.decode()
    older_link = re.search(r'href="([^"]+)" rel="next"', html)
    assert older_link is not None
    assert f"before={wanted[14]}" in older_link.group(1) and "type=audit_test.tick" in older_link.group(1)
    html = signed_in(world_a.auditor).get(older_link.group(1).replace("&amp;", "&")).content.decode()
    shown = [int(seq) for seq in re.findall(r'<a class="seq" href="/audit/alpha/events/(\d+)">', html)]
    assert shown == wanted[15:30]
    assert f"after={wanted[15]}" in html


# --- caused by ------------------------------------------------------------------------------


def test_caused_by_in_both_directions(world_a: TenantWorld) -> None:
    cause = tick(world_a, 1)
    effects = [append(world_a, payload={"n": n}, caused_by=cause) for n in range(4)]
    lone = append(world_a, caused_by=effects[0])
    client = signed_in(world_a.auditor)
    by_seq = {event["seq"]: event for event in events(client, limit=200)["events"]}
    assert by_seq[cause]["caused"] == effects[:3] and by_seq[cause]["caused_more"] is True
    assert by_seq[effects[0]]["caused_by"] == cause and by_seq[effects[0]]["caused"] == [lone]
    assert by_seq[effects[0]]["caused_more"] is False
    assert seqs(client, caused_by=cause) == effects[::-1]
    assert seqs(client, caused_by=cause, type="audit_test.tick") == []

    page = client.get(f"/audit/alpha/events/{cause}").content.decode()
    for effect in effects:  # the event's page lists everything it caused
        assert f'href="/audit/alpha/events/{effect}"' in page
    page = client.get(f"/audit/alpha/events/{effects[0]}").content.decode()
    assert f'href="/audit/alpha/events/{cause}"' in page and f'href="/audit/alpha/events/{lone}"' in page
    timeline = client.get("/audit/alpha/").content.decode()
    assert f"/audit/alpha/?caused_by={cause}" in timeline  # "all" of the four
    filtered = client.get("/audit/alpha/", {"caused_by": cause}).content.decode()
    assert f"Events caused by event #{cause}." in filtered


# --- tampering ------------------------------------------------------------------------------


def attack(statement: str, params: list[Any]) -> None:
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE ledger_event DISABLE TRIGGER ledger_event_append_only")
        cursor.execute(statement, params)


def test_a_tampered_event_is_shown_with_its_seq(world_a: TenantWorld) -> None:
    made = [tick(world_a, n) if n % 2 else append(world_a, payload={"n": n}) for n in range(6)]
    victim, linked = made[2], made[4]
    canonical = LedgerEvent.objects.get(chain_id=world_a.tenant.pk, seq=victim).canonical
    attack(
        "UPDATE ledger_event SET canonical = %s WHERE chain_id = %s AND seq = %s",
        [canonical.replace('"n":2', '"n":7'), world_a.tenant.pk, victim],
    )
    # A second kind: a rewritten hash breaks its own check and the next event's link.
    attack(
        "UPDATE ledger_event SET hash = %s WHERE chain_id = %s AND seq = %s",
        [b"\x01" * 32, world_a.tenant.pk, linked],
    )
    client = signed_in(world_a.auditor)
    by_seq = {event["seq"]: event for event in events(client)["events"]}
    assert by_seq[victim]["tampered"] is True and by_seq[victim]["tamper_reason"] == "hash_mismatch"
    assert by_seq[victim]["payload"]["n"] == 7
    assert by_seq[linked]["tamper_reason"] == "hash_mismatch"
    assert by_seq[linked + 1]["tamper_reason"] == "broken_link"
    assert [seq for seq, event in by_seq.items() if event["tampered"]] == sorted(
        [victim, linked, linked + 1], reverse=True
    )
    # Filtered so that the event before it is not listed: still checked against it.
    alone = events(client, type="audit_test.tock")["events"]
    assert {event["seq"]: event["tampered"] for event in alone}[victim] is True

    page = client.get("/audit/alpha/").content.decode()
    assert f"Tampered: event #{victim}" in page and f"Tampered: event #{linked + 1}" in page
    assert f"Tampered: event #{made[3]}" not in page
    detail = client.get(f"/audit/alpha/events/{victim}").content.decode()
    assert f"Tampered: event #{victim}" in detail


# --- the event page -------------------------------------------------------------------------


def test_the_event_page_shows_the_event_in_full(world_a: TenantWorld) -> None:
    seq = tick(world_a, 4, session="0b6c7c3e-1111-4222-8333-444455556666")
    client = signed_in(world_a.auditor)
    response = client.get(f"/audit/alpha/events/{seq}")
    assert response.status_code == 200
    page = response.content.decode()
    row = LedgerEvent.objects.get(chain_id=world_a.tenant.pk, seq=seq)
    assert bytes(row.hash).hex() in page and bytes(row.prev_hash).hex() in page
    assert "A tick of the timeline&#x27;s tests." in page  # the catalogue's description
    assert "&quot;event_type&quot;: &quot;audit_test.tick&quot;" in page  # the pretty canonical text
    # The payload in the catalogue's order, lists compact; the session links to its page.
    keys = re.findall(r'<dt class="pkey"><code>(\w+)</code>', page)
    assert keys[:4] == ["agent", "session", "n", "tags"]
    assert "<code>[&quot;a&quot;,&quot;b&quot;]</code>" in page
    assert "/audit/alpha/sessions/0b6c7c3e-1111-4222-8333-444455556666" in page
    assert "/audit/alpha/?entity_type=thing&amp;entity_id=t1" in page  # timeline of this entity
    assert "/lineage?" not in page  # a thing has no lineage
    assert client.get("/audit/alpha/events/99999").status_code == 404


def test_the_event_page_links_lineage_for_the_entities_it_rebuilds(world_a: TenantWorld) -> None:
    seq = append(world_a, "audit_test.entry", entity_id="42")
    page = signed_in(world_a.auditor).get(f"/audit/alpha/events/{seq}").content.decode()
    assert 'href="/audit/alpha/lineage?entity_type=knowledge_entry&amp;entity_id=42"' in page


# --- who may read, and the record of reading -------------------------------------------------


def test_each_access_is_recorded_with_its_filters(world_a: TenantWorld) -> None:
    seq = tick(world_a, 1)
    client = signed_in(world_a.auditor)
    events(client, type="audit_test.tick", agent="alpha-agent", limit=5)
    viewed = last_view(world_a)
    assert viewed["actor_id"] == f"user:{world_a.auditor.pk}" and viewed["entity_id"] == str(world_a.auditor.pk)
    assert viewed["payload"] == {
        "view": "api.events",
        "params": {"agent": "alpha-agent", "limit": "5", "tenant": "alpha", "type": "audit_test.tick"},
    }
    client.get("/audit/alpha/", {"actor": "user:5", "from": "2030-01-01"})
    assert last_view(world_a)["payload"] == {
        "view": "timeline",
        "params": {"actor": "user:5", "from": "2030-01-01"},
    }
    client.get(f"/audit/alpha/events/{seq}")
    assert last_view(world_a)["payload"] == {"view": "event", "params": {"seq": str(seq)}}
    # A refused request is not a view of the ledger.
    before = last_view(world_a)["seq"]
    client.get("/api/audit/events", {"tenant": "alpha", "type": "no.such_type"})
    assert last_view(world_a)["seq"] == before


def test_another_tenants_auditor_gets_404(world_a: TenantWorld, world_b: TenantWorld) -> None:
    seq = tick(world_a, 1)
    client = signed_in(world_b.auditor)
    assert client.get("/audit/alpha/").status_code == 404
    assert client.get(f"/audit/alpha/events/{seq}").status_code == 404
    response = client.get("/api/audit/events", {"tenant": "alpha"})
    assert response.status_code == 404 and response.json()["error"] == "not_found"
    # Their own ledger answers, and holds none of alpha's events.
    own = client.get("/api/audit/events").json()["events"]
    assert own and all(event["event_type"] != "audit_test.tick" for event in own)
    # A member of alpha (not an auditor or owner) is kept out too.
    assert signed_in(world_a.member).get("/audit/alpha/").status_code == 404
    assert signed_in(world_a.owner).get("/audit/alpha/").status_code == 200


def test_anonymous_is_sent_to_sign_in(world_a: TenantWorld) -> None:
    response = Client().get("/audit/alpha/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert Client().get("/audit/alpha/events/1").status_code == 302
    api = Client().get("/api/audit/events", {"tenant": "alpha"})
    assert api.status_code in (401, 403) and api.json()["error"] == "not_authenticated"


def test_the_page_offers_filters_from_the_catalogue_and_the_tenants_agents(world_a: TenantWorld) -> None:
    page = signed_in(world_a.auditor).get("/audit/alpha/").content.decode()
    assert '<optgroup label="tests">' in page and '<optgroup label="knowledge">' in page
    assert '<option value="knowledge.version_created"' in page
    assert '<option value="alpha-agent">' in page


# --- the plan -------------------------------------------------------------------------------


def test_a_deep_type_filtered_page_walks_the_type_index(world_a: TenantWorld) -> None:
    """On a chain of a few thousand events, analysed, a page of a rare type below a seq bound
    is read from (chain, event_type, seq) backwards: no sort of the chain, no scan of it."""
    base = LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).count()
    with transaction.atomic():
        for n in range(3000):
            rare = n % 40 == 0
            ledger_append(
                chain_id=world_a.tenant.pk,
                event_type="audit_test.widget" if rare else "audit_test.tock",
                entity_type="widget" if rare else "thing",
                entity_id=str(n % 97),
                actor_type="platform",
                actor_id="tests",
                payload={"n": n},
            )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE ledger_event")
    events_ = matching(world_a.tenant.pk, TimelineFilters(event_type="audit_test.widget"))
    assert events_ is not None
    page = events_.filter(seq__lt=1500).order_by("-seq").values_list("seq", "canonical", "prev_hash", "hash")[:51]
    plan = page.explain()
    assert "ledger_event_type_seq" in plan, plan
    assert "Sort" not in plan and "Seq Scan" not in plan, plan
    rare = [base + 1 + n for n in range(0, 3000, 40) if base + 1 + n < 1500]
    assert [seq for seq, *_ in page] == rare[::-1][:51]
    # With a time range too: the range becomes a seq bound and the type index still leads.
    since = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1)
    timed = matching(world_a.tenant.pk, TimelineFilters(event_type="audit_test.widget", time_from=since))
    assert timed is not None
    plan = timed.filter(seq__lt=1500).order_by("-seq").values_list("seq")[:51].explain()
    assert "ledger_event_type_seq" in plan and "Sort" not in plan, plan


# --- a real conversation --------------------------------------------------------------------


def test_a_real_conversation_is_followed_by_its_session_and_no_text_is_shown(api: Any, world_a: TenantWorld) -> None:
    from django.core.cache import cache

    from facade.tenancy.schemas import Actor
    from knowledge.schemas import SourceIn
    from knowledge.services import entry_propose

    cache.clear()  # no rate window spent by another test
    version = entry_propose(
        agent=world_a.agent,
        title="Gift wrapping",
        body="Gift wrapping is available for every order.",
        actor=Actor.human(world_a.owner.pk),
        source=SourceIn(type="owner_dialogue", ref="chat:1", version="1"),
    )
    opened = api.post(f"/api/agents/{world_a.agent.slug}/sessions", {}, format="json")
    assert opened.status_code == 201, opened.content
    sid = str(opened.json()["id"])
    said = "Do you offer gift wrapping for my aunt Philomena?"
    reply = api.post(f"/api/sessions/{sid}/messages", {"text": said, "client_message_id": "c-1"}, format="json")
    assert reply.status_code == 201, reply.content
    answered = reply.json()["reply"]["text"]

    client = signed_in(world_a.auditor)
    timeline = client.get("/audit/alpha/").content.decode()
    run = events(client, type="run.finished")["events"][0]
    assert run["payload"]["session"] == sid
    # The run's session pointer leads to the conversation's page, and from there to its timeline.
    assert f"/audit/alpha/sessions/{sid}" in timeline
    conversation = client.get(f"/audit/alpha/sessions/{sid}").content.decode()
    assert f"/audit/alpha/?entity_type=session&amp;entity_id={sid}" in conversation
    of_session = client.get("/audit/alpha/", {"entity_type": "session", "entity_id": sid}).content.decode()
    assert "session.opened" in of_session and "message.posted" in of_session
    # A knowledge entry's event links to its lineage.
    created = events(
        client, type="knowledge.version_created", entity_id=str(version.entry_id), entity_type="knowledge_entry"
    )
    seq = created["events"][0]["seq"]
    detail = client.get(f"/audit/alpha/events/{seq}").content.decode()
    assert f"/audit/alpha/lineage?entity_type=knowledge_entry&amp;entity_id={version.entry_id}" in detail
    # Never the customer's words or the agent's reply, anywhere the console shows.
    shown = [timeline, of_session, json.dumps(events(client, limit=200))]
    shown += [
        client.get(f"/audit/alpha/events/{e['seq']}").content.decode() for e in events(client, limit=30)["events"]
    ]
    for text in shown:
        assert "Philomena" not in text and answered not in text


def test_the_consoles_own_reads_are_left_out_unless_asked_for(world_a: Any) -> None:
    """Every page an auditor opens is recorded; the timeline leaves those records out by default
    (else each view tops the timeline with itself) and shows them when asked."""
    client = signed_in(world_a.auditor)
    for _ in range(3):
        assert client.get("/audit/alpha/").status_code == 200
    shown = {e["event_type"] for e in events(client, limit=200)["events"]}
    assert shown and not any(t.startswith("audit.") for t in shown), shown
    with_reads = [e["event_type"] for e in events(client, limit=200, reads="1")["events"]]
    assert with_reads.count("audit.viewed") >= 3
    assert {e["event_type"] for e in events(client, type="audit.viewed")["events"]} == {"audit.viewed"}
    assert events(client, entity_type="auditor", entity_id=str(world_a.auditor.pk))["events"]
    page = client.get("/audit/alpha/").content.decode()
    card = '">audit.viewed</code>'  # an event's card (the type filter lists the type as an option)
    assert 'name="reads"' in page and card not in page
    assert client.get("/audit/alpha/", {"reads": "1"}).content.decode().count(card) >= 3
