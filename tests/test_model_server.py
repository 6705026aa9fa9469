"""The agent on a model server as strict as a real one (issue 29 §1): the run loop and the
OpenAI-compatible provider over a real socket to tests/llm_server.py, which refuses what
llama.cpp's server refuses; and what such servers answer, in their several dialects."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_server import Canned, LLMServer, completion, strict_refusal, text_reply, tool_call

from conftest import TenantWorld
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.base import ToolCall, ToolSpec
from facade.dialogue.runtime.providers.openai import OpenAICompatibleProvider, text_tool_calls, wire_messages
from facade.dialogue.services import session_open
from facade.tenancy.rules import Audience
from facade.tenancy.services import customer_create

SEARCH = ToolSpec(
    name="search_knowledge",
    description="Search the business's approved knowledge.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
HANDOFF = ToolSpec(name="request_handoff", description="Ask a person.", parameters={"type": "object"})
MESSAGES = [{"role": "system", "content": "You answer for a bakery."}, {"role": "user", "content": "Sunday?"}]


def customer_session(world: TenantWorld) -> Any:
    return session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer_create(tenant=world.tenant))


def provider(server: LLMServer) -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(server.url, "test-model", max_retries=2, backoff=0.0)


# --- what is sent ---------------------------------------------------------------------------------


def test_a_turn_with_a_tool_call_is_accepted_by_a_strict_server(world_a: TenantWorld) -> None:
    """The second model call of a turn carries the assistant's tool-call message: with content
    null llama.cpp's server answered 500 three times and the customer heard of a technical
    problem (issue 29)."""
    seen: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> Any:
        seen.append(body)
        if len(seen) == 1:
            return 200, {}, completion(text=None, tool_calls=[tool_call("c-1", "search_knowledge", '{"query":"x"}')])
        return 200, {}, completion(text="Let me ask the owner to check that for you.")

    with LLMServer(responder=respond) as server, provider(server) as model:
        result = turn_handle(session=customer_session(world_a), text="Do you open on Sunday?", provider=model)
        refused = server.refused
    assert refused == 0
    assert result.reply is not None and result.reply.text == "Let me ask the owner to check that for you."
    assert result.run is not None and result.run.stop_reason == ""
    assistant, answer = seen[-1]["messages"][-2:]
    assert assistant == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c-1", "type": "function", "function": {"name": "search_knowledge", "arguments": '{"query":"x"}'}}
        ],
    }
    assert answer["role"] == "tool" and answer["tool_call_id"] == "c-1" and isinstance(answer["content"], str)


def test_the_strict_server_refuses_as_llama_cpp_does() -> None:
    """The stand-in is only a proof if it refuses what the real server refuses."""
    body = {"model": "m", "messages": [*MESSAGES, {"role": "assistant", "content": None, "tool_calls": []}]}
    assert strict_refusal(body) == "messages[2].content: Input should be a valid string"
    with LLMServer([text_reply("never")]) as server:
        with pytest.raises(Exception) as caught, provider(server) as model:
            model._client.post(f"{server.url}/chat/completions", json=body).raise_for_status()
        assert "500" in str(caught.value) and server.refused == 1 and server.pending == 1
    orphan = {"model": "m", "messages": [*MESSAGES, {"role": "tool", "tool_call_id": "nope", "content": "{}"}]}
    assert strict_refusal(orphan) == "messages[2].tool_call_id: no tool call with this id came before"


def test_wire_messages_send_only_what_strict_servers_accept() -> None:
    messages = [
        {"role": "system", "content": "s", "name": "x"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": {}}}]},
        {"role": "tool", "tool_call_id": "a", "content": "{}", "name": "f"},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "tool_calls": []},
    ]
    wired = wire_messages(messages)
    assert wired == [
        {"role": "system", "content": "s"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        },
        {"role": "tool", "content": "{}", "tool_call_id": "a"},
        {"role": "assistant", "content": "ok"},
    ]
    assert strict_refusal({"model": "m", "messages": wired}) is None


# --- what is read ---------------------------------------------------------------------------------


def answer_of(server: LLMServer, body: dict[str, Any], tools: list[ToolSpec]) -> Any:
    server.push(Canned(body=body))
    with provider(server) as model:
        return model.complete(messages=MESSAGES, tools=tools, max_tokens=32, audience=Audience.CUSTOMER)


@pytest.mark.parametrize(
    ("said", "read"),
    [
        ("stop", "stop"),
        ("eos", "stop"),
        ("length", "length"),
        ("tool_calls", "tool_calls"),
        ("function_call", "tool_calls"),
        (None, ""),
        ("weird", ""),
    ],
)
def test_finish_reason_variants(llm_server: LLMServer, said: str | None, read: str) -> None:
    body = completion(text="hi", prompt_tokens=None)
    body["choices"][0]["finish_reason"] = said
    reply = answer_of(llm_server, body, [])
    assert (reply.text, reply.finish_reason, reply.prompt_tokens) == ("hi", read, 0)


def test_a_legacy_function_call_is_a_tool_call(llm_server: LLMServer) -> None:
    body = completion(text=None)
    body["choices"][0]["message"]["function_call"] = {"name": "search_knowledge", "arguments": {"query": "sunday"}}
    reply = answer_of(llm_server, body, [SEARCH])
    assert reply.tool_calls == [ToolCall(id="call_0", name="search_knowledge", arguments='{"query": "sunday"}')]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('functions.search_knowledge:\n{"query": "sunday"}', [("search_knowledge", '{"query": "sunday"}')]),
        ("functions.request_handoff:", [("request_handoff", "{}")]),
        (
            '<tool_call>\n{"name": "search_knowledge", "arguments": {"query": "a"}}\n</tool_call>',
            [("search_knowledge", '{"query": "a"}')],
        ),
        ('{"name": "search_knowledge", "parameters": {"query": "b"}}', [("search_knowledge", '{"query": "b"}')]),
        ('[TOOL_CALLS] [{"name": "request_handoff", "arguments": {}}]', [("request_handoff", "{}")]),
        # Not offered, or not all of the text: it stays text (and the malformed check keeps it back).
        ("functions.propose_change:", []),
        ('{"name": "propose_change", "arguments": {}}', []),
        ("We open at 9. functions.request_handoff:", []),
        ('{"name": "Ann", "age": 3}', []),
        ("Hello!", []),
    ],
)
def test_a_tool_call_written_as_text(text: str, expected: list[tuple[str, str]]) -> None:
    calls = text_tool_calls(text, frozenset({"search_knowledge", "request_handoff"}))
    assert [(c.name, c.arguments) for c in calls] == expected


def test_a_tool_call_written_as_text_is_read_as_a_call(llm_server: LLMServer) -> None:
    reply = answer_of(llm_server, completion(text="functions.request_handoff:\n{}"), [SEARCH, HANDOFF])
    assert reply.text == "" and [(c.name, c.arguments) for c in reply.tool_calls] == [("request_handoff", "{}")]
    assert json.loads(llm_server.requests[0].raw)["tool_choice"] == "auto"


# --- a model server that fails: the owners' banner, /healthz ------------------------------------


def test_a_failing_model_server_shows_owners_a_banner_and_healthz_a_model_line(
    world_a: TenantWorld, settings: Any
) -> None:
    from django.core.cache import cache
    from django.test import Client

    from facade import model_health

    settings.FACADE_LLM_PROVIDER = "openai"
    cache.delete(model_health.KEY)
    owner = Client()
    owner.force_login(world_a.owner)
    page = f"/owner/{world_a.agent.slug}/"

    def banner() -> bool:
        return 'id="model-outage"' in owner.get(page).content.decode()

    failing = Canned(status=503, body={"error": {"message": "loading model"}})
    with LLMServer(responder=lambda body: failing) as server, provider(server) as model:
        first = turn_handle(session=customer_session(world_a), text="Hello?", provider=model)
        assert first.run is not None and first.run.stop_reason == "provider_error"
        assert not banner()  # one failed call is not an outage
        turn_handle(session=customer_session(world_a), text="Anyone there?", provider=model)
        assert banner()
        health = Client().get("/healthz")
        body = health.json()
        assert health.status_code == 200 and body["status"] == "ok"  # the site is healthy without it
        assert (body["model"]["ok"], body["model"]["reason"], body["model"]["failures"]) == (False, "http_503", 2)
        server.responder = lambda body: Canned(body=completion(text="Hello, how can I help?"))
        answered = turn_handle(session=customer_session(world_a), text="Hello?", provider=model)
        assert answered.reply is not None and answered.reply.text == "Hello, how can I help?"
    assert not banner()
    assert Client().get("/healthz").json()["model"] == {
        "provider": "openai",
        "ok": True,
        "failures": 0,
        "since": None,
        "reason": "",
    }


def test_tool_schemas_go_without_string_length_bounds(llm_server: LLMServer) -> None:
    """llama-cpp-python's server died on a schema with maxLength (issue 29); the registry checks
    the arguments anyway."""
    bounded = ToolSpec(
        name="add_confirmed_knowledge",
        description="Add a fact.",
        parameters={
            "type": "object",
            "properties": {"title": {"type": "string", "maxLength": 200, "minLength": 1}},
            "required": ["title"],
        },
    )
    answer_of(llm_server, completion(text="ok"), [bounded])
    [sent] = llm_server.requests[0].json["tools"]
    assert sent["function"]["parameters"] == {
        "type": "object",
        "properties": {"title": {"type": "string"}},
        "required": ["title"],
    }
    assert bounded.parameters["properties"]["title"]["maxLength"] == 200  # the registry's own stays
