"""A real model's junk never reaches anyone as an answer (issue 29 §2): a tool call written as
text, a tool's name, the prompt's scaffolding, an empty reply, another language — blocked as
`malformed_reply`, recorded like any block, given the one rewrite, then replaced by an honest
"I don't have a good answer to that", and counted for the owner.  The model is reached through
the OpenAI-compatible provider over a real socket (tests/llm_server.py, strict)."""

from __future__ import annotations

from typing import Any

import pytest
from llm_server import LLMServer, completion

from conftest import TenantWorld
from facade.dialogue.models import Run, Span
from facade.dialogue.runtime.builtin_tools import registry
from facade.dialogue.runtime.loop import HONEST, turn_handle
from facade.dialogue.runtime.malformed import RULES, JunkCheck
from facade.dialogue.runtime.providers.openai import OpenAICompatibleProvider
from facade.dialogue.services import session_open
from facade.tenancy.rules import Audience
from facade.tenancy.services import customer_create
from ledger.models import LedgerEvent
from rsi.metrics import agent_metrics
from rsi.review_input import local_today, review_input_build

SYSTEM = "\n".join(
    [
        "You are the assistant of Example Bakery, talking with a customer.",
        "Answer only from what search_knowledge returns, and name the entries you used.",
        "  I can't confirm prices here.",
        "Mission: the best sourdough in town, baked every morning.",
        "Reply in English.",
    ]
)
HONEST_EN = "I don't have a good answer to that; shall I pass it to the owner?"
TECHNICAL = "technical problem"


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_each_rule_catches_its_examples_and_passes_the_others(rule: Any) -> None:
    check = JunkCheck.of(tool_names=registry.names(), system=SYSTEM, principal_said=["Hello, when do you open?"])
    for text in rule.catches:
        assert check(text) == rule.id, text
    for text in rule.passes:
        assert check(text) is None, text


def test_a_prompt_line_echoed_is_scaffolding_and_the_boundary_is_not() -> None:
    check = JunkCheck.of(tool_names=[], system=SYSTEM, principal_said=["price?"])
    assert check("Hi!  MISSION: the best sourdough in town,\nbaked every morning. Ask away.") == "scaffolding"
    assert check("We bake the best sourdough in town every morning.") is None
    assert check("I can't confirm prices here.") is None  # the boundary wording is meant to be said


def test_languages_the_principal_wrote_in() -> None:
    chinese = JunkCheck.of(tool_names=[], system="", principal_said=["你好，几点开门？"])
    assert chinese("我们九点开门。") is None and chinese("We open at nine.") == "language"
    both = JunkCheck.of(tool_names=[], system="", principal_said=["你好", "hello there"])
    assert both("We open at nine.") is None and both("我们九点开门。") is None
    assert both("Мы открываемся в девять.") == "language"
    assert JunkCheck.of(tool_names=[], system="", principal_said=["12345"])("OK, noted.") is None


# --- through the run loop ---------------------------------------------------------------------


def scripted(*texts: str) -> Any:
    replies = list(texts)

    def respond(body: dict[str, Any]) -> Any:
        return 200, {}, completion(text=replies.pop(0) if replies else "")

    return respond


def turn(world: TenantWorld, said: str, *answers: str, audience: Audience = Audience.CUSTOMER) -> Any:
    if audience == Audience.OWNER:
        session = session_open(agent=world.agent, audience=audience, user=world.owner)
    else:
        session = session_open(agent=world.agent, audience=audience, customer=customer_create(tenant=world.tenant))
    with LLMServer(responder=scripted(*answers)) as server:
        provider = OpenAICompatibleProvider(server.url, "test-model", max_retries=0)
        result = turn_handle(session=session, text=said, provider=provider)
        assert server.refused == 0
        result.calls = len(server.requests)
    return result


@pytest.mark.parametrize(
    "junk",
    [
        "Sure! functions.request_handoff:",
        "search_knowledge",
        "<|im_start|>assistant\nHello",
        '{"name": "propose_change", "arguments": {"summary": "cake"}}',
        "You are the assistant of alpha-agent, talking with a customer.",
        "",
        "   \n",
        "Здравствуйте, чем могу помочь вам сегодня?",
    ],
)
def test_junk_twice_gets_the_honest_reply_not_a_technical_problem(world_a: TenantWorld, junk: str) -> None:
    result = turn(world_a, "When do you open on Sunday?", junk, junk)
    assert result.reply.text == HONEST_EN and TECHNICAL not in result.reply.text
    assert result.calls == 2  # the one bounded rewrite, no more
    run = Run.objects.get(pk=result.run.pk)
    expected = "empty_reply" if not junk.strip() else "malformed_reply"
    assert (run.stop_reason, run.guard_category, run.status) == (expected, "malformed_reply", "waiting_input")
    [blocked] = LedgerEvent.objects.of_type("guard.blocked")
    assert blocked.payload["category"] == "malformed_reply" and blocked.payload["rule"]
    assert (
        Span.objects.filter(run=run, outcome="rewrite_blocked").count()
        + Span.objects.filter(run=run, outcome="rewrite_not_text").count()
        == 1
    )


def test_junk_then_a_real_answer_sends_the_answer(world_a: TenantWorld) -> None:
    result = turn(
        world_a,
        "When do you open on Sunday?",
        "functions.search_knowledge: sunday hours please",
        "Let me ask the owner.",
    )
    assert result.reply.text == "Let me ask the owner."
    assert (result.run.stop_reason, result.run.guard_category) == ("", "")


def test_an_empty_reply_then_an_answer(world_a: TenantWorld) -> None:
    result = turn(world_a, "Hello?", "", "Hello! How can I help?")
    assert result.reply.text == "Hello! How can I help?" and result.calls == 2


def test_the_honest_reply_in_chinese(world_a: TenantWorld) -> None:
    result = turn(world_a, "周日几点开门？", "好的 functions.request_handoff:", "")
    assert result.reply.text == HONEST["zh-hans"]["malformed_reply"] != HONEST_EN
    assert result.run.stop_reason == "malformed_reply"


def test_the_question_said_back_is_no_answer(world_a: TenantWorld) -> None:
    # What SmolLM2-135M wrote on the real server (tests/test_real_model.py): the customer's
    # question, then a line of nonsense.  Once: the rewrite's answer goes; twice: the honest reply.
    echoed = "蛋糕是无麸质的吗？\n\n我希望不在说一句。但是意"
    result = turn(world_a, "蛋糕是无麸质的吗？", echoed, "这个我不清楚，要我问问店主吗？")
    assert result.reply.text == "这个我不清楚，要我问问店主吗？" and result.calls == 2
    [asked] = LedgerEvent.objects.of_type("guard.rewrite_requested")
    assert (asked.payload["category"], asked.payload["rule"]) == ("malformed_reply", "echo")
    owner = turn(world_a, "有什么等我处理？", "有什么等我处理？:\n1. 要用于高级编辑工元", "", audience=Audience.OWNER)
    assert owner.reply.text == HONEST["zh-hans"]["malformed_owner"]
    # An answer that asks a question back, or restates the question inside a sentence, is sent.
    assert turn(world_a, "Is the cake gluten free?", "Is it gluten free? Let me ask the owner.").calls == 1


def test_the_owner_is_spared_junk_too(world_a: TenantWorld) -> None:
    result = turn(
        world_a, "What is waiting for me?", "functions.read_owner_inbox:", "read_owner_inbox", audience=Audience.OWNER
    )
    assert result.reply.text == HONEST["en"]["malformed_owner"]
    assert result.run.stop_reason == "malformed_reply"


def test_the_review_and_the_metrics_count_it(world_a: TenantWorld) -> None:
    turn(world_a, "When do you open on Sunday?", "read_owner_inbox", "read_owner_inbox")
    turn(world_a, "Hello?", "", "")
    day = local_today(world_a.tenant)
    figures = review_input_build(agent=world_a.agent, day=day, partial=True).review_input.figures
    assert figures["stop.malformed_reply"] == 1 and figures["stop.empty_reply"] == 1
    totals = agent_metrics(world_a.agent).totals
    assert (totals.malformed_replies, totals.empty_replies, totals.blocked_replies) == (1, 1, 0)
