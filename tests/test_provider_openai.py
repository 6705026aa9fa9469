"""The OpenAI-compatible provider against a real local HTTP server (tests/llm_server.py)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import pytest
from django.core.exceptions import ImproperlyConfigured
from llm_server import (
    Canned,
    LLMServer,
    completion,
    error_reply,
    garbage_reply,
    hang,
    malformed_tool_call_reply,
    rate_limited_reply,
    serve,
    text_reply,
    tool_call,
    tool_call_reply,
)

from facade.dialogue.runtime.providers.base import ModelReply, ProviderError, ToolCall, ToolSpec
from facade.dialogue.runtime.providers.openai import OpenAICompatibleProvider
from facade.tenancy.rules import Audience

API_KEY = "sk-test-SECRET-4f9d2c"
CUSTOMER = Audience.CUSTOMER  # not sent: test_text_reply_with_usage checks the whole request body
MESSAGES = [
    {"role": "system", "content": "You answer for Example Bakery."},
    {"role": "user", "content": "When do you open on Sunday?"},
]
SEARCH = ToolSpec(
    name="search_knowledge",
    description="Search the business's approved knowledge.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)


def make(server: LLMServer, **overrides: object) -> OpenAICompatibleProvider:
    options: dict[str, object] = {"api_key": API_KEY, "timeout": 5.0, "max_retries": 2, "backoff": 0.0}
    options.update(overrides)
    return OpenAICompatibleProvider(server.url, "test-model", **options)  # type: ignore[arg-type]


def failure(provider: OpenAICompatibleProvider, tools: list[ToolSpec] | None = None) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        provider.complete(messages=MESSAGES, tools=tools or [], max_tokens=64, audience=CUSTOMER)
    return caught.value


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port nothing listens on: bound (so no one else takes it) but never listening."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def test_text_reply_with_usage(llm_server: LLMServer) -> None:
    llm_server.push(text_reply("We open at 9.", prompt_tokens=31, completion_tokens=7))
    with make(llm_server) as provider:
        reply = provider.complete(messages=MESSAGES, tools=[], max_tokens=64, audience=CUSTOMER)

    assert reply == ModelReply(
        text="We open at 9.", tool_calls=[], prompt_tokens=31, completion_tokens=7, finish_reason="stop"
    )
    [request] = llm_server.requests
    assert request.method == "POST" and request.path == "/v1/chat/completions"
    assert request.json == {"model": "test-model", "messages": MESSAGES, "max_tokens": 64}  # no tools, no tool_choice
    assert request.headers["content-type"] == "application/json"


def test_tool_calls_parsed_and_request_carries_tools_model_and_key(llm_server: LLMServer) -> None:
    llm_server.push(
        tool_call_reply(
            tool_call("call_1", "search_knowledge", '{"query": "sunday hours"}'),
            tool_call("call_2", "search_knowledge", '{"query":"holidays"}'),
        )
    )
    with make(llm_server) as provider:
        reply = provider.complete(messages=MESSAGES, tools=[SEARCH], max_tokens=128, audience=CUSTOMER)

    assert reply.text == ""
    assert reply.tool_calls == [
        ToolCall(id="call_1", name="search_knowledge", arguments='{"query": "sunday hours"}'),
        ToolCall(id="call_2", name="search_knowledge", arguments='{"query":"holidays"}'),
    ]
    [request] = llm_server.requests
    assert request.json["model"] == "test-model"
    assert request.json["max_tokens"] == 128
    assert request.json["tool_choice"] == "auto"
    assert request.json["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "search_knowledge",
                "description": SEARCH.description,
                "parameters": SEARCH.parameters,
            },
        }
    ]
    assert request.headers["authorization"] == f"Bearer {API_KEY}"


def test_no_authorization_header_without_a_key(llm_server: LLMServer) -> None:
    llm_server.push(text_reply("hi"))
    with make(llm_server, api_key="") as provider:
        provider.complete(messages=MESSAGES, tools=[], max_tokens=16, audience=CUSTOMER)
    assert "authorization" not in llm_server.requests[0].headers


def test_malformed_tool_arguments_come_back_raw(llm_server: LLMServer) -> None:
    llm_server.push(malformed_tool_call_reply("search_knowledge"))
    with make(llm_server) as provider:
        reply = provider.complete(messages=MESSAGES, tools=[SEARCH], max_tokens=64, audience=CUSTOMER)
    assert reply.tool_calls == [ToolCall(id="call_bad", name="search_knowledge", arguments='{"query": "opening hours')]


def test_arguments_sent_as_an_object_are_encoded_and_missing_usage_counts_zero(llm_server: LLMServer) -> None:
    body = completion(
        text="Let me look.", tool_calls=[tool_call("c9", "search_knowledge", {"query": "π"})], prompt_tokens=None
    )
    llm_server.push(Canned(body=body))
    with make(llm_server) as provider:
        reply = provider.complete(messages=MESSAGES, tools=[SEARCH], max_tokens=64, audience=CUSTOMER)
    assert reply.text == "Let me look."
    assert [(c.id, c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("c9", "search_knowledge", {"query": "π"})
    ]
    assert (reply.prompt_tokens, reply.completion_tokens) == (0, 0)


def test_429_then_success_after_exactly_two_requests(llm_server: LLMServer) -> None:
    llm_server.push(rate_limited_reply("0"), text_reply("ok"))
    with make(llm_server) as provider:
        reply = provider.complete(messages=MESSAGES, tools=[], max_tokens=16, audience=CUSTOMER)
    assert reply.text == "ok"
    assert len(llm_server.requests) == 2


def test_500_then_success(llm_server: LLMServer) -> None:
    llm_server.push(error_reply(500), text_reply("ok"))
    with make(llm_server) as provider:
        assert provider.complete(messages=MESSAGES, tools=[], max_tokens=16, audience=CUSTOMER).text == "ok"
    assert len(llm_server.requests) == 2


def test_persistent_500_gives_up_after_max_retries(llm_server: LLMServer) -> None:
    llm_server.push(error_reply(500), error_reply(500), error_reply(500))
    with make(llm_server, max_retries=2) as provider:
        error = failure(provider)
    assert error.reason == "http_500"
    assert len(llm_server.requests) == 3
    assert llm_server.unscripted == 0


def test_persistent_429_is_rate_limited(llm_server: LLMServer) -> None:
    llm_server.push(rate_limited_reply("0"), rate_limited_reply("0"))
    with make(llm_server, max_retries=1) as provider:
        assert failure(provider).reason == "rate_limited"
    assert len(llm_server.requests) == 2


def test_400_is_not_retried(llm_server: LLMServer) -> None:
    llm_server.push(error_reply(400, message="context length exceeded"), text_reply("never sent"))
    with make(llm_server) as provider:
        error = failure(provider)
    assert error.reason == "http_400"
    assert len(llm_server.requests) == 1
    assert "context length" not in str(error)  # the server's words stay out of the error


def test_retry_after_is_honoured(llm_server: LLMServer) -> None:
    llm_server.push(rate_limited_reply("0.3"), text_reply("ok"))
    with make(llm_server) as provider:
        started = time.monotonic()
        provider.complete(messages=MESSAGES, tools=[], max_tokens=16, audience=CUSTOMER)
    assert time.monotonic() - started >= 0.3


def test_hang_times_out(llm_server: LLMServer) -> None:
    llm_server.push(hang(30))
    with make(llm_server, timeout=0.5, max_retries=0) as provider:
        error = failure(provider)
    # Had the client waited out the hang it would have got the server's late reply, not a timeout.
    assert error.reason == "timeout"
    assert len(llm_server.requests) == 1


def test_timeouts_are_retried(llm_server: LLMServer) -> None:
    llm_server.push(hang(30), text_reply("second time lucky"))
    with make(llm_server, timeout=0.5, max_retries=1) as provider:
        assert (
            provider.complete(messages=MESSAGES, tools=[], max_tokens=16, audience=CUSTOMER).text == "second time lucky"
        )
    assert len(llm_server.requests) == 2


def test_connection_refused_is_unreachable(closed_port: int) -> None:
    provider = OpenAICompatibleProvider(
        f"http://127.0.0.1:{closed_port}/v1/", "m", api_key=API_KEY, max_retries=1, backoff=0
    )
    with provider:
        error = failure(provider)
    assert error.reason == "unreachable"
    assert "attempts=2" in error.detail


def test_garbage_body_is_bad_response(llm_server: LLMServer) -> None:
    llm_server.push(garbage_reply())
    with make(llm_server) as provider:
        error = failure(provider)
    assert error.reason == "bad_response"
    assert len(llm_server.requests) == 1  # a well-formed HTTP answer is not retried
    assert "Bad gateway" not in str(error)


@pytest.mark.parametrize(
    "body",
    [
        {"choices": []},
        {"error": {"message": "overloaded"}},
        {"choices": [{"message": "hi"}]},
        {"choices": [{"message": {"content": 42}}]},
        {"choices": [{"message": {"content": None, "tool_calls": {"id": "x"}}}]},
        {"choices": [{"message": {"content": None, "tool_calls": [{"id": "x", "function": {"arguments": "{}"}}]}}]},
        [1, 2, 3],
    ],
    ids=[
        "no-choices",
        "error-object",
        "message-not-object",
        "content-number",
        "tool-calls-not-list",
        "no-name",
        "array",
    ],
)
def test_wrong_shapes_are_bad_response(llm_server: LLMServer, body: object) -> None:
    llm_server.push(Canned(body=json.dumps(body).encode()))
    with make(llm_server) as provider:
        assert failure(provider).reason == "bad_response"


def test_api_key_and_prompt_never_in_errors(llm_server: LLMServer, closed_port: int) -> None:
    llm_server.push(error_reply(401), garbage_reply(), hang(30), error_reply(503))
    errors = []
    with make(llm_server, timeout=0.5, max_retries=0) as provider:
        errors += [failure(provider, [SEARCH]) for _ in range(4)]
    with OpenAICompatibleProvider(
        f"http://127.0.0.1:{closed_port}/v1", "m", api_key=API_KEY, max_retries=0
    ) as provider:
        errors.append(failure(provider))
    assert [e.reason for e in errors] == ["http_401", "bad_response", "timeout", "http_503", "unreachable"]
    for error in errors:
        text = str(error) + repr(error) + repr(error.__cause__) + repr(error.__context__)
        assert API_KEY not in text
        assert "Sunday" not in text


def test_api_key_never_logged(llm_server: LLMServer, caplog: pytest.LogCaptureFixture) -> None:
    llm_server.push(error_reply(502), rate_limited_reply("0"), text_reply("fine"))
    with caplog.at_level("DEBUG"), make(llm_server) as provider:
        provider.complete(messages=MESSAGES, tools=[SEARCH], max_tokens=16, audience=CUSTOMER)
    assert "retrying" in caplog.text
    assert API_KEY not in caplog.text
    assert "Sunday" not in caplog.text and "fine" not in caplog.text


def test_from_settings(settings: object) -> None:
    settings.FACADE_LLM_BASE_URL = "http://llm.internal:8000/v1/"  # type: ignore[attr-defined]
    settings.FACADE_LLM_MODEL = "qwen2.5-7b-instruct"  # type: ignore[attr-defined]
    settings.FACADE_LLM_API_KEY = ""  # type: ignore[attr-defined]
    settings.FACADE_LLM_TIMEOUT = 12  # type: ignore[attr-defined]
    settings.FACADE_LLM_MAX_RETRIES = 1  # type: ignore[attr-defined]
    with OpenAICompatibleProvider.from_settings() as provider:
        assert provider.name == "openai"
        assert (provider.base_url, provider.model) == ("http://llm.internal:8000/v1", "qwen2.5-7b-instruct")
        assert (provider.timeout, provider.max_retries) == (12.0, 1)

    settings.FACADE_LLM_BASE_URL = ""  # type: ignore[attr-defined]
    with pytest.raises(ImproperlyConfigured):
        OpenAICompatibleProvider.from_settings()


def test_bad_api_key_is_refused_without_echoing_it() -> None:
    with pytest.raises(ValueError) as caught:
        OpenAICompatibleProvider("http://127.0.0.1:1/v1", "m", api_key="sk-ünïcode-secret")
    assert "secret" not in str(caught.value)


def test_server_usable_outside_pytest_with_a_responder() -> None:
    seen: list[str] = []

    def responder(request: dict) -> tuple[int, dict[str, str], dict]:
        seen.append(request["messages"][-1]["content"])
        return 200, {}, completion(text=f"echo: {request['messages'][-1]['content']}")

    url, stop = serve(responder=responder)
    try:
        with OpenAICompatibleProvider(url, "m", backoff=0) as provider:
            reply = provider.complete(
                messages=[{"role": "user", "content": "ping"}], tools=[], max_tokens=8, audience=CUSTOMER
            )
    finally:
        stop()
    assert reply.text == "echo: ping"
    assert seen == ["ping"]


def test_stopping_the_server_interrupts_a_hang() -> None:
    server = LLMServer([hang(60)]).start()
    provider = OpenAICompatibleProvider(server.url, "m", timeout=0.3, max_retries=0)
    with provider:
        assert failure(provider).reason == "timeout"
    server.stop()
    # stop() returns once the hanging handler has woken; it left without sending the late reply.
    assert server.abandoned == 1


def test_lenient_where_servers_differ(llm_server: LLMServer) -> None:
    """Content as a list of text parts, a tool call without an id, usage of the wrong type."""
    body = {
        "choices": [
            {
                "message": {
                    "content": [{"type": "text", "text": "One "}, {"type": "text", "text": "moment."}],
                    "tool_calls": [{"type": "function", "function": {"name": "search_knowledge", "arguments": None}}],
                }
            }
        ],
        "usage": {"prompt_tokens": "12", "completion_tokens": 3},
    }
    llm_server.push(Canned(body=body))
    with make(llm_server) as provider:
        reply = provider.complete(messages=MESSAGES, tools=[SEARCH], max_tokens=64, audience=CUSTOMER)
    assert reply == ModelReply(
        text="One moment.",
        tool_calls=[ToolCall(id="call_0", name="search_knowledge", arguments="{}")],
        prompt_tokens=0,
        completion_tokens=3,
    )


def test_max_tokens_cap(llm_server: LLMServer, settings: object) -> None:
    """FACADE_LLM_MAX_TOKENS caps each call's completion tokens (a small local server, issue 29)."""
    llm_server.push(text_reply("a"), text_reply("b"))
    with make(llm_server, max_tokens=40) as provider:
        provider.complete(messages=MESSAGES, tools=[], max_tokens=800, audience=CUSTOMER)
        provider.complete(messages=MESSAGES, tools=[], max_tokens=12, audience=CUSTOMER)
    assert [r.json["max_tokens"] for r in llm_server.requests] == [40, 12]
    settings.FACADE_LLM_MAX_TOKENS = 64  # type: ignore[attr-defined]
    settings.FACADE_LLM_BASE_URL, settings.FACADE_LLM_MODEL = llm_server.url, "m"  # type: ignore[attr-defined]
    with OpenAICompatibleProvider.from_settings() as configured:
        assert configured.max_tokens == 64
