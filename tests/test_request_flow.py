"""Issue 11, point 1: the request flow no longer swallows whatever comes next.

Fields are checked for what they are (server-side, whatever model called the tool); a question
asked in the middle of the flow is answered and the flow resumes; "cancel" leaves it; the
customer confirms a summary before anything is registered — a scripted, adversarial model cannot
register without that yes; and a registered request can be amended or withdrawn by its customer
until the business acts on it (in chat and through the API), each a ledger event."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.cache import cache

from facade.dialogue.models import CustomerRequest
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.base import ModelReply, ToolCall
from facade.dialogue.runtime.providers.offline import QUESTIONS, TEXT
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.runtime.summary import SUMMARY, request_summary
from facade.dialogue.services import request_transition, session_open
from facade.tenancy.models import Customer
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from knowledge.schemas import SourceIn
from knowledge.services import entry_propose
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_rate_windows() -> None:
    cache.clear()


def teach(world: Any, title: str, body: str, ref: str = "chat:1") -> Any:
    return entry_propose(
        agent=world.agent,
        title=title,
        body=body,
        actor=Actor.human(world.owner.pk),
        source=SourceIn(type="owner_dialogue", ref=ref, version="1"),
    )


def customer_session(world: Any) -> Any:
    customer = Customer.objects.create(tenant=world.tenant)
    return session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer)


def say_turns(session: Any, *texts: str) -> list[Any]:
    return [turn_handle(session=session, text=text) for text in texts]


def reply(result: Any) -> str:
    assert result.reply is not None
    return str(result.reply.text)


def events(event_type: str) -> list[Any]:
    return list(LedgerEvent.objects.of_type(event_type))


# --- the offline model: the exact bug, in English and Chinese ---------------------------------


def test_a_question_mid_flow_is_answered_and_never_becomes_the_deadline_or_the_contact(world_a: Any) -> None:
    teach(world_a, "Gluten-free", "We bake gluten-free bread every Tuesday and Friday.")
    session = customer_session(world_a)
    en = QUESTIONS["en"]
    first, aside = say_turns(session, "I'd like to order a birthday cake", "Do you sell gluten-free bread?")
    assert reply(first).endswith(en["when"])
    # Answered from knowledge, then the open question is asked again; nothing was stored as the date.
    assert "gluten-free bread every Tuesday" in reply(aside) and reply(aside).endswith(en["when"])
    assert aside.reply.citations and aside.request is None
    when, person = say_turns(session, "next Friday", "Yes, please ask a person to follow up.")
    assert reply(when).endswith(en["contact"])
    assert reply(person) == f"{TEXT['en']['bad_contact']} {en['contact']}"
    summary, done = say_turns(session, "ana@example.com", "yes")
    assert summary.request is None and reply(summary).endswith(SUMMARY["en"]["closing"])
    assert "- When: next Friday" in reply(summary) and "- Contact: ana@example.com" in reply(summary)
    assert done.request is not None
    request = CustomerRequest.objects.get()
    assert request.details == {
        "need": "I'd like to order a birthday cake",
        "when": "next Friday",
        "contact": "ana@example.com",
    }
    [submitted] = events("request.submitted")
    assert submitted.payload["fields"] == ["contact", "need", "when"]
    assert ledger_verify(chain_id=world_a.tenant.pk).ok


def test_the_same_in_chinese(world_a: Any) -> None:
    teach(world_a, "营业时间", "我们每天早上八点开门，晚上六点关门。")
    session = customer_session(world_a)
    zh = QUESTIONS["zh-hans"]
    first, aside, bad = say_turns(session, "我想订一个生日蛋糕", "你们几点开门?", "好的，请找人联系我")
    assert reply(first).endswith(zh["when"])
    assert "八点开门" in reply(aside) and reply(aside).endswith(zh["when"]) and aside.request is None
    assert reply(bad) == f"{TEXT['zh-hans']['bad_when']}{zh['when']}" == "这看起来不像日期或时间。" + zh["when"]
    when, contact = say_turns(session, "明天下午三点", "好的，请找人联系我")
    assert reply(when).endswith(zh["contact"])
    assert reply(contact) == f"{TEXT['zh-hans']['bad_contact']}{zh['contact']}"
    summary = turn_handle(session=session, text="13800000000")
    assert reply(summary).endswith(SUMMARY["zh-hans"]["closing"]) and CustomerRequest.objects.count() == 0
    assert turn_handle(session=session, text="是的").request is not None
    assert CustomerRequest.objects.get().details == {
        "need": "我想订一个生日蛋糕",
        "when": "明天下午三点",
        "contact": "13800000000",
    }


def test_an_unanswered_question_mid_flow_still_resumes(world_a: Any) -> None:
    session = customer_session(world_a)
    _, aside = say_turns(session, "I want a custom cake", "Do you repair vintage typewriters?")
    assert reply(aside).startswith(TEXT["en"]["unknown_short"]) and reply(aside).endswith(QUESTIONS["en"]["when"])


def test_a_price_question_mid_flow_meets_the_boundary_and_the_flow_resumes(world_a: Any) -> None:
    session = customer_session(world_a)
    _, _, price = say_turns(session, "I want a custom cake", "Friday", "How much will it cost?")
    assert reply(price).startswith(world_a.agent.boundary("en")) and reply(price).endswith(QUESTIONS["en"]["contact"])


@pytest.mark.parametrize("leave", ["cancel", "never mind", "stop", "算了", "取消", "不用了"])
@pytest.mark.parametrize("at", ["when", "contact", "summary"])
def test_cancel_leaves_the_flow_and_registers_nothing(world_a: Any, leave: str, at: str) -> None:
    session = customer_session(world_a)
    steps = {"when": [], "contact": ["Friday"], "summary": ["Friday", "ana@example.com"]}[at]
    say_turns(session, "I'd like to order a cake", *steps)
    left = turn_handle(session=session, text=leave)
    assert reply(left) in {TEXT[lang]["cancelled"] for lang in TEXT} and left.run.needs_input is False
    after = turn_handle(session=session, text="yes")  # a yes after leaving registers nothing either
    assert after.request is None and CustomerRequest.objects.count() == 0 and events("request.submitted") == []


def test_no_to_the_summary_lets_the_customer_change_a_field_then_confirm(world_a: Any) -> None:
    session = customer_session(world_a)
    say_turns(session, "I'd like to order a cake", "Friday", "ana@example.com")
    change = turn_handle(session=session, text="no")
    assert reply(change) == TEXT["en"]["change"]
    asked = turn_handle(session=session, text="the contact")
    assert reply(asked) == QUESTIONS["en"]["contact"]
    again = turn_handle(session=session, text="+49 170 1234567")
    assert "- Contact: +49 170 1234567" in reply(again) and "- When: Friday" in reply(again)
    direct = turn_handle(session=session, text="no, change the date to Saturday 10am")
    assert "- When: Saturday 10am" in reply(direct) and reply(direct).endswith(SUMMARY["en"]["closing"])
    assert turn_handle(session=session, text="yes").request is not None
    assert CustomerRequest.objects.get().details["when"] == "Saturday 10am"
    assert CustomerRequest.objects.get().details["contact"] == "+49 170 1234567"


def test_a_question_while_the_summary_waits_is_answered_and_the_summary_shown_again(world_a: Any) -> None:
    teach(world_a, "Gluten-free", "We bake gluten-free bread every Tuesday and Friday.")
    session = customer_session(world_a)
    say_turns(session, "I'd like to order a cake", "Friday", "ana@example.com")
    aside = turn_handle(session=session, text="Do you sell gluten-free bread?")
    assert "Tuesday" in reply(aside) and reply(aside).endswith(SUMMARY["en"]["closing"]) and aside.request is None
    assert turn_handle(session=session, text="yes").request is not None


# --- server side: the tool refuses what the model should not have sent ------------------------


def call(name: str, arguments: Any) -> ModelReply:
    return ModelReply(tool_calls=[ToolCall(id=f"c-{name}", name=name, arguments=json.dumps(arguments))])


def say(text: str) -> ModelReply:
    return ModelReply(text=text)


def tool_answers(provider: ScriptedProvider) -> list[dict[str, Any]]:
    """What the tools answered in the provider's last call (each call sees the whole run so far)."""
    return [json.loads(m["content"]) for m in provider.calls[-1].messages if m["role"] == "tool"]


GOOD = {"summary": "a birthday cake", "details": {"when": "Friday", "contact": "ana@example.com"}}


@pytest.mark.parametrize(
    "details, problem",
    [
        ({"when": "Do you sell gluten-free bread?", "contact": "ana@example.com"}, "when: not_a_date_or_time"),
        ({"when": "Friday", "contact": "Yes, please ask a person to follow up."}, "contact: not_a_contact"),
        ({"when": "你们几点开门?", "contact": "13800000000"}, "when: not_a_date_or_time"),
        ({"when": "Friday"}, "contact: missing"),
    ],
)
def test_a_hosted_model_that_fills_fields_with_anything_is_refused(
    world_a: Any, details: dict[str, str], problem: str
) -> None:
    session = customer_session(world_a)
    arguments = {"summary": "a birthday cake", "details": details}
    provider = ScriptedProvider.of(call("submit_request", arguments), call("submit_request", arguments), say("Done."))
    turn_handle(session=session, text="yes", provider=provider)
    answers = tool_answers(provider)
    assert answers[0]["error"] == "invalid_fields" and problem in answers[0]["detail"]
    assert CustomerRequest.objects.count() == 0 and events("request.submitted") == []


def test_an_adversarial_model_cannot_register_without_the_customer_s_yes_to_the_summary(world_a: Any) -> None:
    session = customer_session(world_a)
    # 1. It registers at once, on a yes to something else: refused, the server hands it the summary.
    eager = ScriptedProvider.of(call("submit_request", GOOD), say("All done, registered!"))
    turn_handle(session=session, text="yes", provider=eager)
    [first] = tool_answers(eager)
    assert first["outcome"] == "needs_confirmation" and first["summary"].endswith(SUMMARY["en"]["closing"])
    # 2. It never showed the summary ("All done, registered!"), so the customer's next yes confirms nothing.
    again = ScriptedProvider.of(call("submit_request", GOOD), say("Registered."))
    turn_handle(session=session, text="yes", provider=again)
    assert tool_answers(again)[-1]["outcome"] == "needs_confirmation"
    # 3. It shows the summary, with a question after it that a yes would answer instead: not taken.
    summary = request_summary(summary=GOOD["summary"], details=GOOD["details"], language="en")
    turn_handle(session=session, text="hm", provider=ScriptedProvider.of(say(f"{summary} Want to see our cakes?")))
    tricked = ScriptedProvider.of(call("submit_request", GOOD), say("Registered."))
    turn_handle(session=session, text="yes", provider=tricked)
    assert tool_answers(tricked)[-1]["outcome"] == "needs_confirmation"
    # 4. It shows the summary; the customer says no; it submits anyway: refused.
    turn_handle(session=session, text="hm", provider=ScriptedProvider.of(say(summary)))
    pushy = ScriptedProvider.of(call("submit_request", GOOD), say("Registered."))
    turn_handle(session=session, text="no, not yet", provider=pushy)
    assert tool_answers(pushy)[-1]["outcome"] == "needs_confirmation"
    # 5. It shows the summary, the customer says yes, and it submits other fields than shown: refused.
    turn_handle(session=session, text="hm", provider=ScriptedProvider.of(say(summary)))
    other = {"summary": "a birthday cake", "details": {"when": "Friday", "contact": "mallory@example.com"}}
    swapped = ScriptedProvider.of(call("submit_request", other), say("Registered."))
    turn_handle(session=session, text="yes", provider=swapped)
    assert tool_answers(swapped)[-1]["outcome"] == "needs_confirmation"
    assert CustomerRequest.objects.count() == 0 and events("request.submitted") == []
    # 6. The summary shown last, a plain yes, the same fields: registered once, not twice.
    turn_handle(session=session, text="hm", provider=ScriptedProvider.of(say(summary)))
    honest = ScriptedProvider.of(call("submit_request", GOOD), call("submit_request", GOOD), say("Registered."))
    result = turn_handle(session=session, text="yes", provider=honest)
    assert [a["outcome"] for a in tool_answers(honest)] == ["ok", "failed"]
    assert tool_answers(honest)[-1]["error"] == "already_registered"
    assert result.request is not None and CustomerRequest.objects.count() == 1
    assert CustomerRequest.objects.get().details == {
        "need": "a birthday cake",
        "when": "Friday",
        "contact": "ana@example.com",
    }


# --- amending and withdrawing: in chat ---------------------------------------------------------


def registered(world: Any, session: Any) -> CustomerRequest:
    say_turns(session, "I'd like to order a cake", "Friday", "ana@example.com", "yes")
    return CustomerRequest.objects.filter(session=session).latest("pk")


def test_in_chat_the_customer_amends_then_withdraws_a_request(world_a: Any) -> None:
    session = customer_session(world_a)
    request = registered(world_a, session)
    changed = turn_handle(session=session, text=f"change the contact of request #{request.pk} to bob@example.com")
    assert reply(changed) == TEXT["en"]["amended"].format(id=request.pk)
    request.refresh_from_db()
    assert request.details["contact"] == "bob@example.com" and request.state == "submitted"
    bad = turn_handle(session=session, text=f"change the contact of request #{request.pk} to tomorrow")
    assert reply(bad) == TEXT["en"]["bad_contact"]
    withdrawn = turn_handle(session=session, text=f"cancel my request #{request.pk}")
    assert reply(withdrawn) == TEXT["en"]["withdrawn"].format(id=request.pk)
    assert withdrawn.request is not None and withdrawn.request["state"] == "withdrawn"
    assert withdrawn.request["next_actor"] == "nobody"
    [amended] = events("request.amended")
    assert amended.payload == {"state": "submitted", "fields": ["contact"]}
    assert amended.actor_id == f"customer:{session.customer_id}" and "bob" not in amended.canonical
    [gone] = events("request.withdrawn")
    assert gone.payload == {"from": "submitted", "to": "withdrawn"} and gone.entity_id == str(request.pk)
    again = turn_handle(session=session, text=f"cancel my request #{request.pk}")
    assert reply(again) == TEXT["en"]["already_withdrawn"].format(id=request.pk)
    assert ledger_verify(chain_id=world_a.tenant.pk).ok


def test_in_chinese_withdrawing_the_latest_request(world_a: Any) -> None:
    session = customer_session(world_a)
    say_turns(session, "我想订一个蛋糕", "周五", "13800000000", "好")
    request = CustomerRequest.objects.get()
    changed = turn_handle(session=session, text="把联系方式改成 wang@example.cn")
    assert reply(changed) == TEXT["zh-hans"]["amended"].format(id=request.pk)
    done = turn_handle(session=session, text="撤回请求")
    assert reply(done) == TEXT["zh-hans"]["withdrawn"].format(id=request.pk)
    request.refresh_from_db()
    assert (request.state, request.details["contact"]) == ("withdrawn", "wang@example.cn")


def test_once_the_owner_acted_the_customer_can_no_longer_change_it_in_chat(world_a: Any) -> None:
    session = customer_session(world_a)
    request = registered(world_a, session)
    request_transition(request=request, to="accepted", actor=Actor.human(world_a.owner.pk))
    refused = turn_handle(session=session, text=f"withdraw my request #{request.pk}")
    assert reply(refused) == TEXT["en"]["owner_has_acted"].format(id=request.pk)
    assert CustomerRequest.objects.get().state == "accepted" and events("request.withdrawn") == []


def test_another_session_s_request_is_not_found_in_chat(world_a: Any) -> None:
    request = registered(world_a, customer_session(world_a))
    other = customer_session(world_a)
    refused = turn_handle(session=other, text=f"cancel my request #{request.pk}")
    assert reply(refused) == TEXT["en"]["not_found"] and CustomerRequest.objects.get().state == "submitted"


# --- amending and withdrawing: the customer API -------------------------------------------------


def open_customer(client: Any, world: Any) -> str:
    response = client.post(f"/api/agents/{world.agent.slug}/sessions", {}, format="json")
    assert response.status_code == 201, response.content
    return str(response.json()["id"])


def api_registered(client: Any, world: Any) -> tuple[str, int]:
    sid = open_customer(client, world)
    for text in ("I'd like to order a cake", "Friday", "ana@example.com", "yes"):
        body = client.post(f"/api/sessions/{sid}/messages", {"text": text}, format="json").json()
    return sid, int(body["request"]["id"])


def test_the_customer_amends_and_withdraws_through_the_api(api: Any, world_a: Any) -> None:
    sid, rid = api_registered(api, world_a)
    url = f"/api/sessions/{sid}/requests/{rid}"
    bad = api.patch(url, {"details": {"contact": "Do you deliver?"}}, format="json")
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_fields" and "contact" in bad.json()["detail"]
    nothing = api.patch(url, {"details": {"when": "Friday"}}, format="json")
    assert nothing.status_code == 400 and nothing.json()["error"] == "nothing_to_change"
    amended = api.patch(url, {"summary": "a lemon cake", "details": {"when": "12月5日"}}, format="json")
    assert amended.status_code == 200, amended.content
    assert amended.json() == {
        "id": rid,
        "kind": "request",
        "state": "submitted",
        "next_actor": "owner",
        "summary": "a lemon cake",
    }
    assert CustomerRequest.objects.get().details["when"] == "12月5日"
    [event] = events("request.amended")
    assert event.payload == {"state": "submitted", "fields": ["summary", "when"]}
    withdrawn = api.post(f"{url}/withdraw", format="json")
    assert withdrawn.status_code == 200 and withdrawn.json()["state"] == "withdrawn"
    assert withdrawn.json()["next_actor"] == "nobody"
    assert api.get(f"/api/sessions/{sid}/messages").json()["requests"][0]["state"] == "withdrawn"
    again = api.post(f"{url}/withdraw", format="json")
    assert again.status_code == 409 and again.json()["error"] == "already_withdrawn"
    late = api.patch(url, {"details": {"when": "Saturday"}}, format="json")
    assert late.status_code == 409 and late.json()["error"] == "already_withdrawn"


def test_once_the_owner_acted_the_api_refuses_with_a_clear_error(api: Any, make_api: Any, world_a: Any) -> None:
    sid, rid = api_registered(api, world_a)
    owner = make_api()
    owner.force_login(world_a.owner)
    assert owner.post(f"/api/requests/{rid}/transition", {"to": "needs_info"}, format="json").status_code == 200
    assert owner.post(f"/api/requests/{rid}/transition", {"to": "submitted"}, format="json").status_code == 200
    # Back in its first state, but the business has acted: still refused.
    for response in (
        api.post(f"/api/sessions/{sid}/requests/{rid}/withdraw", format="json"),
        api.patch(f"/api/sessions/{sid}/requests/{rid}", {"details": {"when": "Monday"}}, format="json"),
    ):
        assert response.status_code == 409 and response.json()["error"] == "owner_has_acted"
        assert "acted" in response.json()["detail"]
    assert CustomerRequest.objects.get().state == "submitted" and events("request.withdrawn") == []


def test_only_the_session_s_own_customer_may_change_its_requests(api: Any, make_api: Any, world_a: Any) -> None:
    sid, rid = api_registered(api, world_a)
    stranger = make_api()
    other_sid = open_customer(stranger, world_a)
    for client, session_id in ((stranger, sid), (stranger, other_sid), (api, other_sid)):
        response = client.post(f"/api/sessions/{session_id}/requests/{rid}/withdraw", format="json")
        assert response.status_code == 404
        response = client.patch(f"/api/sessions/{session_id}/requests/{rid}", {"summary": "x"}, format="json")
        assert response.status_code == 404
    owner = make_api()
    owner.force_login(world_a.owner)
    assert owner.post(f"/api/sessions/{sid}/requests/{rid}/withdraw", format="json").status_code == 404
    owned = owner.post(f"/api/agents/{world_a.agent.slug}/sessions", {}, format="json").json()["id"]
    assert owner.post(f"/api/sessions/{owned}/requests/{rid}/withdraw", format="json").status_code == 404
    assert CustomerRequest.objects.get().state == "submitted"


def test_a_withdrawal_from_another_site_is_refused(api: Any, world_a: Any) -> None:
    sid, rid = api_registered(api, world_a)
    response = api.post(
        f"/api/sessions/{sid}/requests/{rid}/withdraw",
        "x=1",
        content_type="application/x-www-form-urlencoded",
        HTTP_ORIGIN="https://evil.example",
    )
    assert response.status_code == 403 and response.json()["error"] == "cross_site_request"
    assert CustomerRequest.objects.get().state == "submitted"


def test_stored_flows_without_the_withdrawn_state_get_it_from_the_data_migration(world_a: Any) -> None:
    import importlib

    from django.apps import apps

    from approvals.models import AgentContract
    from facade.tenancy.models import AgentProfile, default_request_flow

    migration = importlib.import_module("facade.dialogue.migrations.0004_request_flow_withdrawn")
    old = default_request_flow()
    del old["states"]["withdrawn"]  # type: ignore[attr-defined]
    AgentProfile.objects.filter(pk=world_a.agent.pk).update(request_flow=old)
    # Stored before contracts existed: the live contract (made from the profile) has it too.
    AgentContract.objects.filter(agent=world_a.agent).update(request_flow=old)
    world_a.agent.refresh_from_db()
    session = customer_session(world_a)
    request = registered(world_a, session)
    assert "withdrawn" not in request.flow["states"]
    refused = turn_handle(session=session, text="withdraw my request")
    assert reply(refused) == TEXT["en"]["failed"] and CustomerRequest.objects.get().state == "submitted"
    custom = {"initial": "new", "states": {"new": {"next_actor": "owner", "to": []}, "withdrawn": {"next_actor": "x"}}}
    other = build_agent(world_a, custom)
    migration.add_withdrawn(apps, None)
    world_a.agent.refresh_from_db()
    request.refresh_from_db()
    assert world_a.agent.request_flow == default_request_flow() and request.flow == default_request_flow()
    other.refresh_from_db()
    assert other.request_flow == custom  # a flow that names the state already is left alone
    done = turn_handle(session=session, text="withdraw my request")
    assert reply(done) == TEXT["en"]["withdrawn"].format(id=request.pk)


def build_agent(world: Any, flow: dict[str, Any]) -> Any:
    from facade.tenancy.services import agent_create

    agent = agent_create(tenant=world.tenant, slug="custom-flow", name="Custom", actor=Actor.human(world.owner.pk))
    type(agent).objects.filter(pk=agent.pk).update(request_flow=flow)
    return agent


def test_withdrawing_an_earlier_request_while_a_new_one_is_put_together(world_a: Any) -> None:
    session = customer_session(world_a)
    first = registered(world_a, session)
    say_turns(session, "I'd also like to order bread rolls")
    done = turn_handle(session=session, text=f"please cancel request #{first.pk}")
    assert reply(done).startswith(TEXT["en"]["withdrawn"].format(id=first.pk))
    assert reply(done).endswith(QUESTIONS["en"]["when"])  # the new one goes on
    left = turn_handle(session=session, text="cancel the request")  # without a number: this new one
    assert reply(left) == TEXT["en"]["cancelled"]
    assert list(CustomerRequest.objects.values_list("state", flat=True)) == ["withdrawn"]


def test_two_quick_yeses_register_one_request(world_a: Any) -> None:
    """A second "yes" sent before the first was answered answers no summary: the message right
    before it is the customer's own."""
    from facade.dialogue.services import run_start

    session = customer_session(world_a)
    say_turns(session, "I'd like to order a cake", "Friday", "ana@example.com")
    run_start(session=session, text="yes", provider="offline", context_hash="")  # the first, still running
    second = turn_handle(session=session, text="yes")
    assert second.request is None and CustomerRequest.objects.count() == 0
