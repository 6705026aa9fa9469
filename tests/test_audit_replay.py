"""Point-in-time replay in the auditor console (issue 14): an agent's contract version and approved
knowledge at a moment, decided from the ledger, and the same state with one change left out.

A scripted scenario runs through the real API and services, each step at a known time
(time_machine): knowledge ingested, boundary wording changed through the owner's change and its
token, the owner's own greeting, a new knowledge version, a quarantine, a taboo from the owner's
chat approved with a token, then a rollback of the greeting and a restore of a knowledge entry.
The live state is captured after each step from the live tables, and the replay at each of those
times must equal it exactly.  "Without change X" must equal the state of a parallel scenario, run
on another tenant, that never made X."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from html import unescape
from typing import Any

import pytest
import time_machine
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from approvals.contract import live_contract
from approvals.contract_models import AgentContract
from approvals.models import ChangeProposal
from audit.replay import AgentState, ReplayError, agent_state_at, changed_places, content_with
from conftest import TenantWorld, build_tenant
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.offline import OfflineProvider
from facade.dialogue.services import session_open
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from facade.tenancy.services import tenant_time_zone_set
from knowledge.events import content_sha256
from knowledge.models import EntryVersion, KnowledgeEntry
from ledger.expressions import CanonicalField
from ledger.models import LedgerEvent

pytestmark = pytest.mark.django_db

HOUR = dt.timedelta(hours=1)
BOUNDARY = {"language": "en", "text": "Prices are confirmed by Alice in person, within a day."}
GREETING = {"language": "en", "situation": "greeting", "text": "Welcome to the workshop! Ask me anything."}
STEPS = ("knowledge", "boundary", "greeting", "hours_v2", "quarantine", "taboo", "rollbacks")


def owner_api(world: TenantWorld) -> APIClient:
    client = APIClient()
    client.force_login(world.owner)
    return client


def ingest(client: APIClient, world: TenantWorld, title: str, text: str, ref: str) -> dict[str, Any]:
    body = {"title": title, "text": text, "source": {"type": "owner_dialogue", "ref": ref}}
    response = client.post(f"/api/agents/{world.agent.slug}/knowledge/ingest", body, format="json")
    assert response.status_code == 201, response.content
    created = response.json()["created"]
    assert [c["status"] for c in created] == ["approved"], created
    return dict(created[0])


def change(client: APIClient, world: TenantWorld, kind: str, payload: Any) -> dict[str, Any]:
    base = f"/api/agents/{world.agent.slug}/changes"
    response = client.post(base, {"kind": kind, "payload": payload, "summary": "a change"}, format="json")
    assert response.status_code == 201, response.content
    return dict(response.json())


def decide(client: APIClient, world: TenantWorld, change_id: str) -> dict[str, Any]:
    base = f"/api/agents/{world.agent.slug}/changes/{change_id}"
    granted = client.post(f"{base}/authorize", {"decision": "approve"}, format="json")
    assert granted.status_code == 200, granted.content
    version = ChangeProposal.objects.get(pk=change_id).version
    body = {"token": granted.json()["token"], "decision": "approve", "expected_version": version}
    decided = client.post(f"{base}/decide", body, format="json")
    assert decided.status_code == 200, decided.content
    return dict(decided.json())


def live_state(world: TenantWorld) -> dict[str, Any]:
    """What the live tables say now: the live contract version and each entry's current version."""
    contract = live_contract(world.agent)
    assert contract is not None
    entries = (
        KnowledgeEntry.objects.filter(agent=world.agent, current_version__isnull=False)
        .select_related("current_version")
        .order_by("pk")
    )
    knowledge = [
        (e.pk, e.kind, e.current_version.number, e.current_version.title, content_sha256(e.current_version))
        for e in entries
        if e.current_version is not None
    ]
    return {"contract": (contract.version, contract.content()), "knowledge": knowledge}


def replayed(state: AgentState) -> dict[str, Any]:
    knowledge = [(k.entry, k.kind, k.version, k.title, k.content_sha256) for k in state.knowledge]
    assert all(k.hash_ok for k in state.knowledge) and state.contract.hash_ok
    return {"contract": (state.contract.version, state.contract.content), "knowledge": knowledge}


def without_ids(state: dict[str, Any]) -> dict[str, Any]:
    """A state compared across tenants: contract content, and knowledge by what it says (entry
    ids and contract version numbers necessarily differ between the two scenarios)."""
    return {"contract": state["contract"][1], "knowledge": sorted(k[1:] for k in state["knowledge"])}


@dataclass
class Scenario:
    world: TenantWorld
    base: dt.datetime
    times: dict[str, dt.datetime] = field(default_factory=dict)
    states: dict[str, dict[str, Any]] = field(default_factory=dict)
    seqs: dict[str, int] = field(default_factory=dict)
    before: dict[str, Any] = field(default_factory=dict)


def last_seq(world: TenantWorld, event_type: str) -> int:
    found = (
        LedgerEvent.objects.filter(chain_id=world.tenant.pk)
        .alias(_type=CanonicalField("event_type"))
        .filter(_type=event_type)
        .order_by("-seq")
        .values_list("seq", flat=True)
        .first()
    )
    assert found is not None, event_type
    return int(found)


def run(slug: str, base: dt.datetime, skip: frozenset[str] = frozenset()) -> Scenario:
    """The scripted scenario on a new tenant, step i at base + i hours (frozen while it runs)."""
    with time_machine.travel(base, tick=False):
        scenario = Scenario(world=build_tenant(slug), base=base)
        scenario.before["agent"] = live_state(scenario.world)
    world = scenario.world
    client = owner_api(world)
    refs: dict[str, Any] = {}
    for number, step in enumerate(STEPS, start=1):
        at = base + number * HOUR
        scenario.times[step] = at
        with time_machine.travel(at, tick=False):
            if step in skip:
                pass
            elif step == "knowledge":
                refs["hours"] = ingest(client, world, "Hours", "We open at nine.", "chat:hours")
                refs["returns"] = ingest(client, world, "Returns", "Bring the receipt when you return it.", "chat:ret")
            elif step == "boundary":
                proposed = change(client, world, "boundary_wording", BOUNDARY)
                assert proposed["status"] == "pending"
                assert decide(client, world, proposed["id"])["status"] == "applied"
                scenario.seqs["boundary_proposal"] = last_seq(world, "proposal.published")
                scenario.seqs["boundary"] = last_seq(world, "contract.published")
            elif step == "greeting":
                refs["greeting"] = change(client, world, "wording", GREETING)
                assert refs["greeting"]["status"] == "applied"
            elif step == "hours_v2":
                assert ingest(client, world, "Hours", "We open at ten.", "chat:hours")["version"] == 2
            elif step == "quarantine":
                body = {"source_ref": refs["returns"]["source"]["ref"]}
                quarantined = client.post(f"/api/agents/{world.agent.slug}/knowledge/quarantine", body, format="json")
                assert quarantined.json() == {"versions": 1}
                scenario.seqs["quarantine"] = last_seq(world, "knowledge.version_quarantined")
            elif step == "taboo":
                session = session_open(agent=world.agent, audience=Audience.OWNER, user=world.owner)
                turn_handle(session=session, text="we never say cheap", provider=OfflineProvider(world.agent))
                lesson = ChangeProposal.objects.filter(agent=world.agent, kind="lesson").latest("pk")
                decide(client, world, lesson.pk)
                scenario.seqs["taboo"] = last_seq(world, "proposal.applied")
            elif step == "rollbacks":
                undo = client.post(f"/api/agents/{world.agent.slug}/changes/{refs['greeting']['id']}/rollback")
                assert undo.status_code == 201 and undo.json()["status"] == "applied", undo.content
                entry = refs["hours"]["entry_id"]
                restored = client.post(
                    f"/api/agents/{world.agent.slug}/knowledge/entries/{entry}/restore", {"version": 1}, format="json"
                )
                assert restored.status_code == 201 and restored.json()["version"] == 3
            scenario.states[step] = live_state(world)
    return scenario


@pytest.fixture
def base() -> dt.datetime:
    """Two days ago on the hour: the scenario is in the past, so every replayed time is too."""
    return (timezone.now() - dt.timedelta(days=2)).replace(minute=0, second=0, microsecond=0)


def test_the_replay_at_each_time_equals_what_was_live_then(db: Any, base: dt.datetime) -> None:
    scenario = run("alpha", base)
    agent = scenario.world.agent
    states = scenario.states
    # The scenario moved what it was meant to.
    assert [s["contract"][0] for s in states.values()] == [1, 2, 3, 3, 3, 3, 4]
    assert [len(s["knowledge"]) for s in states.values()] == [2, 2, 2, 2, 1, 2, 2]
    assert states["taboo"]["knowledge"][-1][1] == "taboo"
    assert states["rollbacks"]["knowledge"][0][2:4] == (3, "Hours")

    assert replayed(agent_state_at(agent=agent, at=base + dt.timedelta(minutes=1)).live) == scenario.before["agent"]
    previous = scenario.before["agent"]
    for step, at in scenario.times.items():
        # At the step's own time its events count ("at or before"); a microsecond earlier they do not.
        assert replayed(agent_state_at(agent=agent, at=at).live) == states[step], step
        assert replayed(agent_state_at(agent=agent, at=at - dt.timedelta(microseconds=1)).live) == previous, step
        assert replayed(agent_state_at(agent=agent, at=at + 30 * dt.timedelta(minutes=1)).live) == states[step]
        previous = states[step]
    # Text in the tenant's zone means the same moment as UTC.
    tenant_time_zone_set(tenant=scenario.world.tenant, time_zone="Asia/Shanghai", actor=Actor.platform("tests"))
    agent.refresh_from_db()
    at = scenario.times["greeting"] + dt.timedelta(minutes=20)
    local = at.astimezone(dt.timezone(dt.timedelta(hours=8))).replace(tzinfo=None).isoformat()
    assert replayed(agent_state_at(agent=agent, at=local).live) == states["greeting"]
    assert replayed(agent_state_at(agent=agent, at=at.isoformat()).live) == states["greeting"]


def test_without_a_change_equals_a_scenario_that_never_made_it(db: Any, base: dt.datetime) -> None:
    full = run("alpha", base)
    agent, end = full.world.agent, full.times["rollbacks"] + dt.timedelta(minutes=30)
    for skipped, seq_names, slug in [
        ("boundary", ("boundary", "boundary_proposal"), "bravo"),
        ("quarantine", ("quarantine",), "charlie"),
        ("taboo", ("taboo",), "delta"),
    ]:
        parallel = run(slug, base, skip=frozenset({skipped}))
        never = without_ids(parallel.states["rollbacks"])
        live = without_ids(full.states["rollbacks"])
        assert never != live, skipped  # the change left a trace to take away
        for name in seq_names:
            replay = agent_state_at(agent=agent, at=end, without=full.seqs[name])
            assert replay.without is not None and replay.diff is not None and replay.left_out is not None
            assert without_ids(replayed(replay.without)) == never, (skipped, name)
            assert without_ids(replayed(replay.live)) == live
            # The diff names exactly what differs.
            if skipped == "boundary":
                assert [(d.path, d.live, d.without) for d in replay.diff.contract] == [
                    (["boundary_wording", "en"], BOUNDARY["text"], never["contract"]["boundary_wording"].get("en"))
                ]
                assert replay.diff.knowledge == [] and replay.left_out.kind == "contract"
            else:
                assert replay.diff.contract == [] and len(replay.diff.knowledge) == 1
                changed = replay.diff.knowledge[0]
                if skipped == "quarantine":
                    assert changed.live is None and changed.without is not None
                    assert changed.without.title == "Returns"
                else:
                    assert changed.without is None and changed.live is not None and changed.kind == "taboo"


def test_a_version_row_changed_after_the_fact_is_flagged(db: Any, base: dt.datetime) -> None:
    scenario = run("alpha", base, skip=frozenset(STEPS) - {"knowledge", "boundary"})
    agent, at = scenario.world.agent, scenario.times["rollbacks"]
    clean = agent_state_at(agent=agent, at=at).live
    assert clean.mismatches() == []
    EntryVersion.objects.filter(agent=agent, title="Hours").update(body="We open at midnight.")
    AgentContract.objects.filter(agent=agent, version=2).update(mission="Something else")
    tampered = agent_state_at(agent=agent, at=at).live
    hours = next(k for k in tampered.knowledge if k.title == "Hours")
    assert not hours.hash_ok and not tampered.contract.hash_ok
    assert tampered.mismatches() == ["contract v2", f"entry {hours.entry} v1"]
    # An earlier version the rows still hold as recorded is not flagged.
    assert agent_state_at(agent=agent, at=scenario.times["knowledge"] - HOUR / 2).live.contract.hash_ok
    page = auditor_page(scenario.world, {"agent": agent.slug, "at": at.isoformat()})
    assert "hash mismatch" in page and "contract v2" in page


@pytest.mark.parametrize(
    ("at", "code"),
    [
        ("yesterday at noon", "invalid_at"),
        ("2026-02-30T10:00", "invalid_at"),
        ("future", "at_in_future"),
        ("before", "agent_not_yet"),
    ],
)
def test_a_time_that_cannot_be_replayed_is_refused(db: Any, base: dt.datetime, at: str, code: str) -> None:
    scenario = run("alpha", base, skip=frozenset(STEPS))
    moments = {"future": timezone.now() + HOUR, "before": base - HOUR}
    asked = moments[at].isoformat() if at in moments else at
    with pytest.raises(ReplayError) as refused:
        agent_state_at(agent=scenario.world.agent, at=asked)
    assert refused.value.code == code
    response = auditor_api(scenario.world).get(
        "/api/audit/replay", {"tenant": "alpha", "agent": scenario.world.agent.slug, "at": asked}
    )
    assert (response.status_code, response.json()["error"]) == (400, code)
    assert auditor_api(scenario.world).get("/api/audit/replay", {"agent": scenario.world.agent.slug}).status_code == 400


def test_a_change_that_cannot_be_left_out_is_refused(db: Any, base: dt.datetime) -> None:
    scenario = run("alpha", base, skip=frozenset(STEPS) - {"knowledge", "boundary"})
    agent = scenario.world.agent
    at = scenario.times["knowledge"] + HOUR / 2
    first = LedgerEvent.objects.filter(chain_id=agent.tenant_id).order_by("seq")
    first_contract = next(e.seq for e in first if e.event_type == "contract.published")
    tenant_event = next(e.seq for e in first if e.event_type == "tenant.created")
    for without, code in [
        (scenario.seqs["boundary"], "without_after_at"),
        (first_contract, "without_first_version"),
        (tenant_event, "without_not_a_change"),
        (10_000, "without_unknown"),
        ("x", "invalid_without"),
    ]:
        with pytest.raises(ReplayError) as refused:
            agent_state_at(agent=agent, at=at, without=without)
        assert refused.value.code == code, without


def auditor_api(world: TenantWorld) -> APIClient:
    client = APIClient()
    client.force_login(world.auditor)
    return client


def auditor_page(world: TenantWorld, params: dict[str, str], status: int = 200) -> str:
    client = Client()
    client.force_login(world.auditor)
    response = client.get(f"/audit/{world.tenant.slug}/replay", params)
    assert response.status_code == status, response.content[:2000]
    return unescape(response.content.decode())


def viewed(world: TenantWorld) -> list[dict[str, Any]]:
    events = LedgerEvent.objects.filter(chain_id=world.tenant.pk).order_by("seq")
    return [e.payload for e in events if e.event_type == "audit.viewed"]


def test_the_page_and_the_api_show_the_state_and_record_the_reading(db: Any, base: dt.datetime) -> None:
    scenario = run("alpha", base)
    world = scenario.world
    at = scenario.times["rollbacks"] + HOUR / 2
    seq = scenario.seqs["boundary"]

    api = auditor_api(world)
    response = api.get("/api/audit/replay", {"agent": world.agent.slug, "at": at.isoformat(), "without": seq})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["live"]["contract"]["version"] == 4 and body["live"]["mismatches"] == []
    assert body["live"]["contract"]["content"]["boundary_wording"]["en"] == BOUNDARY["text"]
    assert [k["title"] for k in body["live"]["knowledge"]] == [k[3] for k in scenario.states["rollbacks"]["knowledge"]]
    assert body["left_out"]["kind"] == "contract" and body["left_out"]["events"] == [seq]
    assert body["diff"]["contract"][0]["path"] == ["boundary_wording", "en"]
    assert viewed(world)[-1] == {
        "view": "api.replay",
        "params": {"agent": world.agent.slug, "at": at.isoformat()[:64], "without": str(seq)},
    }

    # The page: the time entered in the tenant's zone, shown in it.
    tenant_time_zone_set(tenant=world.tenant, time_zone="Asia/Shanghai", actor=Actor.platform("tests"))
    local = at.astimezone(dt.timezone(dt.timedelta(hours=8))).strftime("%Y-%m-%dT%H:%M:%S")
    html = auditor_page(world, {"agent": world.agent.slug, "at": local, "without": str(seq)})
    assert f'value="{local}"' in html and "Asia/Shanghai" in html
    assert f"Decided by the ledger up to event #{body['live']['seq']}." in html
    assert "Contract version 4" in html and BOUNDARY["text"] in html and "Hours" in html
    assert f"Without event #{seq} (contract.published)" in html
    assert f'<option value="{seq}" selected>' in html
    assert viewed(world)[-1]["view"] == "replay" and viewed(world)[-1]["params"]["at"] == local
    # The bare page is the form; a bad time answers 400 and says why.
    assert 'name="at"' in auditor_page(world, {})
    assert "ISO 8601" in auditor_page(world, {"agent": world.agent.slug, "at": "soon"}, status=400)


def test_another_tenants_agent_is_not_found(world_a: TenantWorld, world_b: TenantWorld) -> None:
    now = timezone.now().isoformat()
    api = auditor_api(world_a)
    assert api.get("/api/audit/replay", {"tenant": "bravo", "agent": world_b.agent.slug, "at": now}).status_code == 404
    assert api.get("/api/audit/replay", {"tenant": "alpha", "agent": world_b.agent.slug, "at": now}).status_code == 404
    assert api.get("/api/audit/replay", {"tenant": "alpha", "agent": world_a.agent.slug, "at": now}).status_code == 200
    client = Client()
    client.force_login(world_a.auditor)
    assert client.get("/audit/bravo/replay", {"agent": world_b.agent.slug, "at": now}).status_code == 404
    assert client.get("/audit/alpha/replay", {"agent": world_b.agent.slug, "at": now}).status_code == 404
    member = Client()
    member.force_login(world_a.member)
    assert member.get("/audit/alpha/replay").status_code == 404
    assert not [p for p in viewed(world_b) if p["view"] in ("replay", "api.replay")]


def test_the_replay_reads_the_ledger_through_its_indexes(db: Any, base: dt.datetime) -> None:
    """Every query the replay sends to the ledger can be answered from an index (with sequential
    scans priced out, PostgreSQL still finds an index path for each), and none of them reads the
    chain from its first event: the small test chain would otherwise hide a fold."""
    scenario = run("alpha", base)
    agent = scenario.world.agent
    at = scenario.times["rollbacks"]
    with CaptureQueriesContext(connection) as captured:
        agent_state_at(agent=agent, at=at, without=scenario.seqs["quarantine"])
        agent_state_at(agent=agent, at=at, without=scenario.seqs["boundary"])
        agent_state_at(agent=agent, at=at, without=scenario.seqs["taboo"])
    ledger_queries = [q["sql"] for q in captured.captured_queries if '"ledger_event"' in q["sql"]]
    assert len(ledger_queries) >= 10
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        for sql in ledger_queries:
            cursor.execute("EXPLAIN " + sql)
            plan = "\n".join(row[0] for row in cursor.fetchall())
            assert "Seq Scan on ledger_event" not in plan, plan
            assert re.search(r"Index (Only )?Scan( Backward)? using (ledger_event_\w+) on ledger_event", plan), plan
            # The cut is one entry of the created_at index, never a sort of the chain up to it.
            if "created_at" in sql and "ORDER BY" in sql:
                assert "Sort" not in plan, plan


@pytest.mark.parametrize(
    ("before", "after", "changed"),
    [
        ({"wording": {}}, {"wording": {"en": {"greeting": "Hi"}}}, {("wording", "en", "greeting")}),
        (
            {"boundary_wording": {"en": "A", "zh-hans": "甲"}},
            {"boundary_wording": {"en": "B", "zh-hans": "甲"}},
            {("boundary_wording", "en")},
        ),
        ({"pricing": {"currency": "EUR", "items": []}}, {"pricing": {"currency": "USD", "items": []}}, {("pricing",)}),
        ({"skill_ids": ["a"]}, {"skill_ids": ["a"]}, set()),
    ],
)
def test_the_places_a_change_touched(before: dict[str, Any], after: dict[str, Any], changed: set[Any]) -> None:
    assert changed_places(before, after) == changed


def test_a_place_goes_back_and_an_emptied_language_goes_with_it() -> None:
    content = {"wording": {"en": {"greeting": "Hi"}, "zh-hans": {"greeting": "你好"}}, "mission": "m"}
    assert content_with(content, ("wording", "en", "greeting"), None, False) == {
        "wording": {"zh-hans": {"greeting": "你好"}},
        "mission": "m",
    }
    assert content_with(content, ("wording", "en", "greeting"), "Hello", True)["wording"]["en"] == {"greeting": "Hello"}
    assert content_with(content, ("mission",), "", True)["mission"] == ""
    assert content["wording"]["en"] == {"greeting": "Hi"}  # the input is not changed


def test_without_a_contract_rollback_is_the_version_it_undid(world_a: TenantWorld) -> None:
    from approvals.contract import contract_compile, contract_rollback

    owner = Actor.human(world_a.owner.pk)
    contract_compile(agent=world_a.agent, changes={"boundary_wording": {"en": "Ask Jo."}}, actor=owner)
    before_rollback = live_state(world_a)
    contract_rollback(agent=world_a.agent, to_version=1, actor=owner)
    rolled_back = last_seq(world_a, "contract.rolled_back")
    at = timezone.now()
    replay = agent_state_at(agent=world_a.agent, at=at, without=rolled_back)
    assert replay.live.contract.version == 3 and replay.live.contract.rolled_back_to == 1
    assert replay.without is not None and replay.left_out is not None
    assert replay.without.contract.content == before_rollback["contract"][1]
    assert replay.left_out.events == [rolled_back - 1, rolled_back]  # the publish and the rollback record
    assert agent_state_at(agent=world_a.agent, at=at, without=rolled_back - 1).without == replay.without
