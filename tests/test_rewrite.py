"""One bounded rewrite of a blocked customer or peer reply (issue 15 §5): the model is told the
category that was blocked - never the rule or the words - and may answer once more, within the
same budgets; a second block sends the boundary wording."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from facade.dialogue.models import DailyUsage, Run, RunStatus, Span
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.base import ModelReply, ProviderError, ToolCall
from facade.dialogue.runtime.providers.offline import OfflineProvider
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.services import session_open
from facade.tenancy.models import Customer
from facade.tenancy.rules import Audience
from ledger.models import LedgerEvent

pytestmark = pytest.mark.django_db

PROMISE = "It costs only ¥99, order now!"
CLEAN = "I can't name a price here; shall I ask the owner to confirm it with you?"


def say(text: str) -> ModelReply:
    return ModelReply(text=text, prompt_tokens=10, completion_tokens=5)


def customer_session(world: Any) -> Any:
    customer = Customer.objects.create(tenant=world.tenant)
    return session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer)


def events(event_type: str) -> list[Any]:
    return list(LedgerEvent.objects.of_type(event_type))


def test_a_blocked_reply_gets_one_rewrite_and_the_clean_rewrite_is_sent(world_a: Any) -> None:
    provider = ScriptedProvider.of(say(PROMISE), say(CLEAN))
    result = turn_handle(session=customer_session(world_a), text="how much?", provider=provider)
    assert result.reply is not None and result.reply.text == CLEAN
    run = Run.objects.get(pk=result.run.pk if result.run else None)
    assert (run.llm_call_count, run.guard_category, run.status) == (2, "", RunStatus.WAITING_INPUT)
    assert run.prompt_tokens + run.completion_tokens == 30  # the rewrite counts in the turn's budget
    [requested] = events("guard.rewrite_requested")
    assert requested.payload == {
        "category": "price",
        "check": "guard",
        "rule": "price.en.money",
        "audience": "customer",
        "outcome": "sent",
    }
    assert events("guard.blocked") == []
    assert [s.outcome for s in Span.objects.filter(run=run, kind="model").order_by("pk")] == ["text", "rewrite_sent"]
    [finished] = events("run.finished")
    assert finished.payload["llm_calls"] == 2


def test_the_rewrite_note_names_the_category_and_nothing_of_the_rule_or_the_words(world_a: Any) -> None:
    provider = ScriptedProvider.of(say(PROMISE), say(CLEAN))
    turn_handle(session=customer_session(world_a), text="how much?", provider=provider)
    first, second = provider.calls
    assert second.messages[: len(first.messages)] == first.messages  # the conversation so far
    assert second.messages[-2] == {"role": "assistant", "content": PROMISE}
    note = second.messages[-1]
    assert note["role"] == "system" and "not sent because it stated a price" in note["content"]
    assert "offer to ask the owner" in note["content"]
    for leak in ("¥", "99", "order now", "rule", "guard", "pattern"):
        assert leak not in note["content"], leak
    assert not re.search(r"\w\.\w", note["content"])  # no dotted rule id such as quote.applied
    assert second.tools == []  # the rewrite is text: no tools offered


def test_a_second_block_sends_the_boundary_wording(world_a: Any) -> None:
    provider = ScriptedProvider.of(say(PROMISE), say("Fine: it is 99 yuan, delivered within 3 days."))
    result = turn_handle(session=customer_session(world_a), text="how much?", provider=provider)
    assert result.reply is not None and result.reply.text.startswith(world_a.agent.boundary("en"))
    assert "99" not in result.reply.text
    run = Run.objects.get(pk=result.run.pk if result.run else None)
    assert run.llm_call_count == 2 and run.guard_category != ""
    [requested] = events("guard.rewrite_requested")
    assert (requested.payload["category"], requested.payload["outcome"]) == ("price", "blocked")
    [blocked] = events("guard.blocked")
    assert blocked.payload["category"] == run.guard_category
    assert "99" not in json.dumps([requested.payload, blocked.payload])
    assert len(provider.calls) == 2  # exactly one rewrite


def test_a_rewrite_that_asks_for_tools_is_not_executed(world_a: Any) -> None:
    tool = ModelReply(tool_calls=[ToolCall("t1", "search_knowledge", '{"query": "price"}')], prompt_tokens=5)
    provider = ScriptedProvider.of(say(PROMISE), tool)
    result = turn_handle(session=customer_session(world_a), text="how much?", provider=provider)
    assert result.reply is not None and result.reply.text.startswith(world_a.agent.boundary("en"))
    run = Run.objects.get(pk=result.run.pk if result.run else None)
    assert run.llm_call_count == 2 and run.tool_call_count == 0
    assert not Span.objects.filter(run=run, kind="tool").exists()
    [requested] = events("guard.rewrite_requested")
    assert requested.payload["outcome"] == "not_text"


def test_a_provider_error_in_the_rewrite_sends_the_boundary_wording(world_a: Any) -> None:
    provider = ScriptedProvider.of(say(PROMISE), ProviderError("timeout"))
    result = turn_handle(session=customer_session(world_a), text="how much?", provider=provider)
    assert result.reply is not None and result.reply.text.startswith(world_a.agent.boundary("en"))
    assert result.run is not None and result.run.stop_reason == "" and result.run.llm_call_count == 2
    [requested] = events("guard.rewrite_requested")
    assert requested.payload["outcome"] == "provider_error"


def test_the_offline_provider_gets_no_rewrite(world_a: Any, monkeypatch: Any) -> None:
    calls: list[Any] = []

    def promising(self: Any, **kwargs: Any) -> ModelReply:
        calls.append(kwargs)
        return say(PROMISE)

    monkeypatch.setattr(OfflineProvider, "complete", promising)
    provider = OfflineProvider(world_a.agent)
    assert provider.rewrites is False
    result = turn_handle(session=customer_session(world_a), text="how much?", provider=provider)
    assert result.reply is not None and result.reply.text.startswith(world_a.agent.boundary("en"))
    assert len(calls) == 1 and result.run is not None and result.run.llm_call_count == 1
    assert events("guard.rewrite_requested") == [] and len(events("guard.blocked")) == 1


def test_no_rewrite_when_the_daily_budget_is_spent(world_a: Any, settings: Any) -> None:
    settings.FACADE_DAILY_MODEL_CALLS = 1
    provider = ScriptedProvider.of(say(PROMISE), say(CLEAN))
    result = turn_handle(session=customer_session(world_a), text="how much?", provider=provider)
    assert result.reply is not None and result.reply.text.startswith(world_a.agent.boundary("en"))
    assert len(provider.calls) == 1 and result.run is not None and result.run.llm_call_count == 1
    assert DailyUsage.objects.get(tenant=world_a.tenant).model_calls == 1
    assert events("guard.rewrite_requested") == [] and len(events("guard.blocked")) == 1


def test_no_rewrite_when_the_turn_token_budget_is_spent(world_a: Any, settings: Any) -> None:
    settings.FACADE_TURN_TOKEN_LIMIT = 100
    provider = ScriptedProvider.of(ModelReply(text=PROMISE, prompt_tokens=90, completion_tokens=10), say(CLEAN))
    result = turn_handle(session=customer_session(world_a), text="how much?", provider=provider)
    assert result.reply is not None and result.reply.text.startswith(world_a.agent.boundary("en"))
    assert len(provider.calls) == 1 and result.run is not None and result.run.llm_call_count == 1


def test_the_owner_face_is_never_rewritten(world_a: Any) -> None:
    session = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    provider = ScriptedProvider.of(say(PROMISE), say(CLEAN))
    result = turn_handle(session=session, text="what do we charge?", provider=provider)
    assert result.reply is not None and result.reply.text == PROMISE and len(provider.calls) == 1


def test_an_unsourced_figure_is_named_as_such_to_the_model(world_a: Any) -> None:
    provider = ScriptedProvider.of(say("It'll take our carpenter 4 days."), say(CLEAN))
    result = turn_handle(session=customer_session(world_a), text="how long?", provider=provider)
    assert result.reply is not None and result.reply.text == CLEAN
    note = provider.calls[1].messages[-1]["content"]
    assert "a figure" in note and "4" not in note and "carpenter" not in note
    [requested] = events("guard.rewrite_requested")
    assert (requested.payload["category"], requested.payload["check"]) == ("unsourced_figure", "grounding")


def test_a_rewrite_of_a_run_cancelled_meanwhile_is_not_sent(world_a: Any) -> None:
    from facade.dialogue.runtime.loop import run_cancel

    session = customer_session(world_a)
    provider = ScriptedProvider.of(say(PROMISE), say(CLEAN))
    complete = provider.complete

    def cancelling(**kwargs: Any) -> ModelReply:
        reply = complete(**kwargs)
        if len(provider.calls) == 2:
            run_cancel(session=session)  # the customer pressed Stop while the model rewrote
        return reply

    provider.complete = cancelling  # type: ignore[method-assign]
    result = turn_handle(session=session, text="how much?", provider=provider)
    assert result.reply is not None and result.reply.text.startswith(world_a.agent.boundary("en"))
    assert CLEAN not in result.reply.text
    [requested] = events("guard.rewrite_requested")
    assert requested.payload["outcome"] == "cancelled"
