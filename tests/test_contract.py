"""The versioned agent contract and its compiler (issue 12, L3 "Applying"): validation publishes
nothing on failure, a publish is one transaction (version+1, live flag, ledger; the sessions
relying on what it took away closed after it), requests in flight keep their flow, rollback is
a new version, the data migration makes version 1 from the profile, and the runtime (prompt
hash, offline model) reads the live version."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from django.apps import apps

from approvals import contract as contract_module
from approvals.contract import ContractInvalid, contract_compile, contract_rollback, live_terms
from approvals.contract_rules import content_hash
from approvals.models import AgentContract
from facade.dialogue.models import CustomerRequest, DialogueSession, Message, Run
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.services import request_transition, session_open
from facade.errors import ApplicationError
from facade.tenancy.models import AgentProfile, Customer, default_request_flow
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from ledger.models import LedgerEvent

pytestmark = pytest.mark.django_db

PRICING = {"currency": "EUR", "items": [{"name": "Birthday cake", "amount": "35.00"}]}
# A change that takes away what an open conversation relies on (issue 26 §2): a skill.
NO_HANDOFF = {"skill_ids": ["knowledge_answers", "request_intake"]}
WORDING = {"en": "Prices are set by Ana herself; she'll write to you.", "zh-hans": "价格由安娜本人确定，她会联系您。"}


def owner(world: Any) -> Actor:
    return Actor.human(world.owner.pk)


def customer_session(world: Any) -> DialogueSession:
    customer = Customer.objects.create(tenant=world.tenant)
    return session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer)


def live(world: Any) -> AgentContract:
    return AgentContract.objects.get(agent=world.agent, is_live=True)


def events(event_type: str) -> list[Any]:
    return list(LedgerEvent.objects.of_type(event_type))


def test_a_new_agent_has_version_one_from_its_profile(world_a: Any) -> None:
    [first] = AgentContract.objects.filter(agent=world_a.agent)
    assert (first.version, first.is_live, first.caused_by) == (1, True, "agent_created")
    assert first.request_flow == default_request_flow() and first.clarification_order == ["need", "when", "contact"]
    assert first.content_hash == content_hash(first.content())
    [published] = events("contract.published")
    assert published.payload["version"] == 1 and published.payload["previous_version"] is None


def test_a_publish_makes_version_two_live_with_its_ledger_events(world_a: Any) -> None:
    published = contract_compile(
        agent=world_a.agent, changes={"pricing": PRICING}, actor=owner(world_a), caused_by="chg_abc"
    )
    assert (published.version, published.is_live, published.pricing, published.caused_by) == (
        2,
        True,
        PRICING,
        "chg_abc",
    )
    assert list(AgentContract.objects.filter(agent=world_a.agent, is_live=True)) == [published]
    assert (
        published.content_hash == content_hash(published.content()) != AgentContract.objects.get(version=1).content_hash
    )
    event = events("contract.published")[-1]
    assert event.payload == {
        "agent": world_a.agent.slug,
        "version": 2,
        "previous_version": 1,
        "hash": published.content_hash,
        "caused_by": "chg_abc",
        "changed": ["pricing"],
    }
    assert event.actor_id == f"user:{world_a.owner.pk}" and event.entity_version == 2


@pytest.mark.parametrize(
    "changes, reason",
    [
        ({"pricing": {"currency": "XYZ", "items": []}}, "pricing: 'XYZ' is not an ISO 4217 currency code"),
        (
            {"pricing": {"currency": "EUR", "items": [{"name": "Cake", "amount": "-5"}]}},
            "pricing: the amount of 'Cake' is negative",
        ),
        ({"skill_ids": ["auto_refund"]}, "skill_ids: unknown skill auto_refund"),
        ({"delivery": [{"channel": "carrier_pigeon"}]}, "delivery: unknown channel carrier_pigeon"),
        (
            {"request_flow": {"initial": "a", "states": {"a": {"next_actor": "owner", "to": ["a"]}}}},
            "request_flow: needs at least one terminal state (one with no transitions)",
        ),
        (
            {
                "request_flow": {
                    "initial": "a",
                    "states": {"a": {"next_actor": "owner", "to": []}, "b": {"next_actor": "owner", "to": []}},
                }
            },
            "request_flow: state b cannot be reached from the initial state",
        ),
        ({"requires": "auto"}, "requires: unknown field"),
    ],
)
def test_an_invalid_change_publishes_nothing_and_says_why(world_a: Any, changes: dict[str, Any], reason: str) -> None:
    session = customer_session(world_a)
    with pytest.raises(ApplicationError) as refused:
        contract_compile(agent=world_a.agent, changes=changes, actor=owner(world_a), caused_by="chg_bad")
    assert refused.value.code == "contract_invalid" and isinstance(refused.value, ContractInvalid)
    assert reason in refused.value.reasons
    assert list(AgentContract.objects.filter(agent=world_a.agent).values_list("version", "is_live")) == [(1, True)]
    session.refresh_from_db()
    assert session.status == "open"
    [rejected] = events("contract.rejected")
    assert rejected.payload["reasons"] == refused.value.reasons and rejected.payload["live_version"] == 1
    assert len(events("contract.published")) == 1  # version 1 only


def test_a_failure_midway_leaves_the_previous_version_live(world_a: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    session = customer_session(world_a)

    def broken(**_: Any) -> int:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(contract_module.events, "contract_published", broken)
    with pytest.raises(RuntimeError):
        contract_compile(agent=world_a.agent, changes={"pricing": PRICING}, actor=owner(world_a))
    assert list(AgentContract.objects.filter(agent=world_a.agent).values_list("version", "is_live")) == [(1, True)]
    assert len(events("contract.published")) == 1 and not events("contract.sessions_closed")
    session.refresh_from_db()
    assert session.status == "open" and live_terms(world_a.agent).version == 1


def test_sessions_on_the_old_version_close_and_one_opened_after_stays_open(
    world_a: Any, world_b: Any, django_capture_on_commit_callbacks: Any
) -> None:
    before = customer_session(world_a)
    owners_own = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    elsewhere = customer_session(world_b)
    assert before.contract_version == 1
    with django_capture_on_commit_callbacks(execute=True):  # the batches run after the commit
        contract_compile(agent=world_a.agent, changes=NO_HANDOFF, actor=owner(world_a))
    after = customer_session(world_a)
    assert after.contract_version == 2
    for session in (before, owners_own, elsewhere, after):
        session.refresh_from_db()
    assert (before.status, before.closed_reason) == ("closed", "contract_republished")
    assert (after.status, owners_own.status, elsewhere.status) == ("open", "open", "open")
    [closed] = events("contract.sessions_closed")
    assert closed.payload == {"agent": world_a.agent.slug, "version": 2, "reason": "contract_republished", "count": 1}
    # The closed session takes no more messages: the refusal names the session that continues it.
    with pytest.raises(ApplicationError) as refused:
        turn_handle(session=before, text="hello again")
    assert refused.value.code == "session_continued"
    assert DialogueSession.objects.get(pk=refused.value.extra["session"]).continues_id == before.pk


def test_a_request_in_flight_keeps_the_flow_it_started_with(world_a: Any) -> None:
    session = customer_session(world_a)
    turn_handle(session=session, text="I'd like to order a birthday cake")
    turn_handle(session=session, text="next Friday")
    turn_handle(session=session, text="ana@example.com")
    turn_handle(session=session, text="yes")
    request = CustomerRequest.objects.get()
    old_flow = request.flow
    new_flow = {
        "initial": "new",
        "states": {"new": {"next_actor": "owner", "to": ["closed"]}, "closed": {"next_actor": "nobody", "to": []}},
    }
    contract_compile(agent=world_a.agent, changes={"request_flow": new_flow}, actor=owner(world_a))
    request_transition(request=request, to="accepted", actor=owner(world_a))  # a state only the old flow knows
    request.refresh_from_db()
    assert request.flow == old_flow and request.state == "accepted"
    assert live_terms(world_a.agent).request_flow == new_flow


def test_rollback_publishes_a_new_version_equal_to_the_target(world_a: Any) -> None:
    contract_compile(agent=world_a.agent, changes={"pricing": PRICING}, actor=owner(world_a))
    contract_compile(agent=world_a.agent, changes={"boundary_wording": WORDING}, actor=owner(world_a))
    back = contract_rollback(agent=world_a.agent, to_version=1, actor=owner(world_a))
    first = AgentContract.objects.get(agent=world_a.agent, version=1)
    assert (back.version, back.is_live, back.rolled_back_to) == (4, True, 1)
    assert back.content() == first.content() and back.content_hash == first.content_hash
    assert AgentContract.objects.filter(agent=world_a.agent).count() == 4  # nothing rewritten
    [rolled] = events("contract.rolled_back")
    assert rolled.payload == {"agent": world_a.agent.slug, "version": 4, "to_version": 1, "hash": first.content_hash}
    with pytest.raises(ApplicationError) as unknown:
        contract_rollback(agent=world_a.agent, to_version=9, actor=owner(world_a))
    assert unknown.value.code == "contract_version_unknown"


def test_the_data_migration_makes_version_one_from_the_profile_fields(world_a: Any) -> None:
    migration = importlib.import_module("approvals.migrations.0002_agentcontract")
    flow = {"initial": "new", "states": {"new": {"next_actor": "owner", "to": []}}}
    legacy = AgentProfile.objects.create(
        tenant=world_a.tenant,
        slug="legacy",
        name="Legacy",
        mission="Tune pianos in Leipzig.",
        boundary_wording={"en": "Ask Jo."},
        clarification_order=["need", "contact"],
        request_flow=flow,
    )
    migration.create_version_one(apps, None)
    [first] = AgentContract.objects.filter(agent=legacy)
    assert (first.version, first.is_live, first.published_by) == (1, True, "platform:migration")
    assert (first.mission, first.boundary_wording, first.clarification_order, first.request_flow) == (
        "Tune pianos in Leipzig.",
        {"en": "Ask Jo."},
        ["need", "contact"],
        flow,
    )
    assert first.content_hash == content_hash(first.content())
    migration.create_version_one(apps, None)  # running twice adds nothing
    assert AgentContract.objects.filter(agent__tenant=world_a.tenant).count() == 2


@pytest.mark.parametrize(
    "language, ask", [("en", "How much does a custom cake cost?"), ("zh-hans", "定制蛋糕多少钱？")]
)
def test_the_runtime_uses_the_live_wording_and_records_its_hash(world_a: Any, language: str, ask: str) -> None:
    first = turn_handle(session=customer_session(world_a), text=ask)
    assert first.reply is not None and WORDING[language] not in first.reply.text
    old_hash = Run.objects.get(message=first.message).context_hash
    contract_compile(agent=world_a.agent, changes={"boundary_wording": WORDING}, actor=owner(world_a))
    second = turn_handle(session=customer_session(world_a), text=ask)
    assert second.reply is not None and second.reply.text.startswith(WORDING[language])
    new_hash = Run.objects.get(message=second.message).context_hash
    assert new_hash != old_hash and len(new_hash) == 64
    # The hash follows the contract, not the time: a rollback to version 1 gives version 1's hash back.
    contract_rollback(agent=world_a.agent, to_version=1, actor=owner(world_a))
    third = turn_handle(session=customer_session(world_a), text=ask)
    assert Run.objects.get(message=third.message).context_hash == old_hash
    assert third.reply is not None and WORDING[language] not in third.reply.text


def test_a_session_of_the_old_version_refuses_at_once_before_the_batches_reach_it(world_a: Any) -> None:
    """The publish writes no session row: from its commit the old session's next message is
    refused (the turn compares versions) and that closes it, whether or not the batches ran."""
    session = customer_session(world_a)
    contract_compile(agent=world_a.agent, changes=NO_HANDOFF, actor=owner(world_a))
    session.refresh_from_db()
    assert session.status == "open"  # the batches run after the commit (not in this test)
    with pytest.raises(ApplicationError) as refused:
        turn_handle(session=session, text="hello again")
    assert refused.value.code == "session_continued"
    session.refresh_from_db()
    assert (session.status, session.closed_reason) == ("closed", "contract_republished")
    assert not Message.objects.filter(session=session).exists()


def test_the_batches_close_only_older_versions_and_count_them(world_a: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(contract_module, "SESSION_CLOSE_BATCH", 2)
    old = [customer_session(world_a) for _ in range(5)]
    contract_compile(agent=world_a.agent, changes={"pricing": PRICING}, actor=owner(world_a))
    newer = customer_session(world_a)  # opened under version 2
    contract_compile(agent=world_a.agent, changes={"mission": "Frames and maps."}, actor=owner(world_a))
    # The close for version 2 runs late (after version 3 is live): it leaves version 2's session.
    assert contract_module.stale_sessions_close(agent=world_a.agent, version=2, actor=owner(world_a)) == 5
    newer.refresh_from_db()
    assert newer.status == "open"
    assert all(DialogueSession.objects.get(pk=s.pk).closed_reason == "contract_republished" for s in old)
    assert contract_module.stale_sessions_close(agent=world_a.agent, version=3, actor=owner(world_a)) == 1
    assert [e.payload["count"] for e in events("contract.sessions_closed")] == [5, 1]
