"""A provider for any server that speaks the OpenAI chat-completions protocol.

That covers OpenAI itself and the usual self-hosted servers (vLLM, llama.cpp's server, Ollama,
LM Studio, LiteLLM …).  One call of `complete` is one `POST {base_url}/chat/completions`
(`base_url` ends in `/v1`), non-streaming, with the conversation, the allowed tools in OpenAI's
`{"type": "function", ...}` shape (`tool_choice: "auto"`; both left out when there are none) and
`max_tokens`.  The messages go as strict servers accept them (`wire_messages`): `content` always a
string (`""` on an assistant's tool-call message, never null), tool results as `role: tool` with
their `tool_call_id`, no other field.  An `Authorization: Bearer` header is sent only when an API key is configured.
In strict composition (`composition="strict"`, runtime/strict.py) the request also carries
`response_format: {"type": "json_schema", ...}` with the schema of the structured choice
(`strict.response_schema`, an object holding the list of parts); the answer's text is returned as
it came, and the server's composer parses it with pydantic and refuses what does not validate.

What comes back:
- `choices[0].message.content` becomes the text (null means no text; a list of `{"type": "text"}`
  parts, which some servers send, is joined);
- each `choices[0].message.tool_calls[*]` becomes a `ToolCall` whose `arguments` stay the raw
  string the model wrote, malformed JSON included: checking them is the tool registry's job.
  A server that sends the arguments as an object gets them re-encoded with `json.dumps`; a
  missing id becomes `call_<index>` so the run loop can still pair results with calls;
- a legacy `message.function_call` is read as one tool call; a content that is nothing but a
  tool call written as text (`functions.NAME:` + JSON, `<tool_call>…</tool_call>`, a bare
  `{"name", "arguments"}`, `[TOOL_CALLS] […]`) naming an offered tool is read as that call
  (`text_tool_calls`) — anything else written like a call stays text, for the run loop's
  malformed-reply check;
- `finish_reason` is read as `stop`, `length`, `tool_calls`, `content_filter` or "" (`_FINISH`);
- `usage.prompt_tokens` / `usage.completion_tokens` are counted, 0 when the server leaves them out.

Failures.  429, 5xx, connection failures and timeouts are retried, at most `max_retries` extra
attempts, after an exponential pause (`backoff`, 2×, 4× … capped at 10 s) or the server's numeric
`Retry-After` if that is longer (also capped at 10 s).  Other statuses are not retried.  What is
left raises `ProviderError` with one of these reasons:

    rate_limited   429 on the last attempt
    http_<code>    a 5xx on the last attempt, or any other non-2xx status at once (http_400 …)
    timeout        connecting, or waiting for the answer, took longer than `timeout`
    unreachable    could not connect, or the connection broke before a whole answer arrived
    bad_response   a 2xx whose body is not JSON, has no choices, has the wrong shapes or is huge

`timeout` bounds each attempt: connecting, every wait for data, and reading the whole answer.

Secrets and content stay out of errors and logs: messages carry reasons, status codes, attempt
counts, byte sizes and exception class names, never the API key, the URL (it may carry
credentials), the prompt or what the server answered.  Errors are raised without a chained
httpx exception, which would hold the request and its headers.

One `httpx.Client` (and its connection pool) lives as long as the provider; `close()` it, or use
the provider as a context manager, when done.  It is safe to share between threads.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import httpx
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from facade import model_health
from facade.tenancy.rules import Audience

from ..strict import STRICT, response_schema
from .base import ModelReply, Provider, ProviderError, ToolCall, ToolSpec

logger = logging.getLogger(__name__)

# Longest pause between attempts, whatever the backoff or the server's Retry-After asks for.
MAX_RETRY_DELAY = 10.0
# A chat completion is a few kilobytes; anything near this is not an answer worth parsing.
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
# Error bodies are read only to keep the connection reusable; past this much it is not worth it.
MAX_ERROR_BYTES = 64 * 1024
# Visible ASCII only: anything else in a header value fails deep in httpx/h11 with an error that
# carries (and may print) the value, i.e. the key.
_HEADER_SAFE = re.compile(r"[\x21-\x7e]+")


@dataclass(frozen=True)
class _Failure:
    """One attempt went wrong; `retryable` says whether another attempt may help."""

    reason: str
    detail: str = ""
    retryable: bool = False
    retry_after: float | None = None


class OpenAICompatibleProvider(Provider):
    """The model behind an OpenAI-compatible `/chat/completions` endpoint."""

    name = "openai"
    remote = True
    rewrites = True

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str = "",
        timeout: float = 30.0,
        max_retries: int = 2,
        backoff: float = 0.5,
        max_tokens: int = 0,
    ) -> None:
        base_url = (base_url or "").strip().rstrip("/")
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("base_url must be an http(s) URL such as http://127.0.0.1:8000/v1")
        if not (model or "").strip():
            raise ValueError("model must be set")
        api_key = (api_key or "").strip()
        if api_key and not _HEADER_SAFE.fullmatch(api_key):
            raise ValueError("api_key contains characters that cannot go into an HTTP header")
        if not (timeout > 0 and math.isfinite(timeout)):
            raise ValueError("timeout must be a positive number of seconds")
        if max_tokens < 0:
            raise ValueError("max_tokens must be 0 (no cap of its own) or more")
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        if not (backoff >= 0 and math.isfinite(backoff)):
            raise ValueError("backoff must be 0 or more seconds")

        self.base_url = base_url
        self.model = model.strip()
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        self.max_tokens = int(max_tokens)  # a cap on each call's completion tokens; 0: none
        self._endpoint = f"{base_url}/chat/completions"
        headers = {"Accept": "application/json", "Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        # Proxies from the environment (HTTPS_PROXY, NO_PROXY) are honoured; redirects are not
        # followed, so a 3xx is a plain http_3xx failure.
        # A kept-alive connection idle for 2 s is not reused: uvicorn (llama-cpp-python's, vLLM's
        # server) closes one after 5 s, httpx's own expiry is 5 s, and a request sent on a
        # connection the server is closing breaks off (`unreachable`, issue 29).
        self._client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(self.timeout),
            follow_redirects=False,
            limits=httpx.Limits(keepalive_expiry=2.0),
        )

    @classmethod
    def from_settings(cls) -> OpenAICompatibleProvider:
        """The provider the FACADE_LLM_* settings describe."""
        try:
            return cls(
                settings.FACADE_LLM_BASE_URL,
                settings.FACADE_LLM_MODEL,
                api_key=settings.FACADE_LLM_API_KEY,
                timeout=float(settings.FACADE_LLM_TIMEOUT),
                max_retries=int(settings.FACADE_LLM_MAX_RETRIES),
                max_tokens=int(settings.FACADE_LLM_MAX_TOKENS),
            )
        except ValueError as exc:
            raise ImproperlyConfigured(f"FACADE_LLM_* settings for the openai provider: {exc}") from None

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAICompatibleProvider:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<OpenAICompatibleProvider model={self.model!r}>"

    def complete(
        self,
        *,
        messages: list[dict[str, Any]],
        tools: list[ToolSpec],
        max_tokens: int,
        audience: Audience,
        composition: str = "guarded",
    ) -> ModelReply:
        # `audience` is not sent: the prompt the run loop built already addresses the model to it.
        payload: dict[str, Any] = {"model": self.model, "messages": wire_messages(messages)}
        if tools:
            payload["tools"] = [_for_the_model(spec.as_openai()) for spec in tools]
            payload["tool_choice"] = "auto"
        payload["max_tokens"] = min(max_tokens, self.max_tokens) if self.max_tokens else max_tokens
        if composition == STRICT:
            # The schema is not `strict` in OpenAI's sense: that needs every object closed, and
            # the slots are an open map.  The composer validates the answer either way.
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "strict_reply", "schema": response_schema(), "strict": False},
            }
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")

        attempts = self.max_retries + 1
        for attempt in range(1, attempts + 1):
            outcome = self._attempt(body)
            if isinstance(outcome, bytes):
                try:
                    reply = _parse(outcome, offered=frozenset(spec.name for spec in tools))
                except ProviderError as exc:
                    model_health.note_failure(exc.reason)
                    raise
                model_health.note_answer()
                logger.debug(
                    "openai provider: %d bytes sent, %d bytes received, %d tool call(s), tokens %d+%d",
                    len(body),
                    len(outcome),
                    len(reply.tool_calls),
                    reply.prompt_tokens,
                    reply.completion_tokens,
                )
                return reply
            if not outcome.retryable or attempt == attempts:
                model_health.note_failure(outcome.reason)  # the owners' banner, /healthz (issue 29)
                raise ProviderError(outcome.reason, _join(outcome.detail, f"attempts={attempt}"))
            delay = self._delay(attempt, outcome.retry_after)
            logger.warning(
                "openai provider: attempt %d/%d failed (%s), retrying in %.2fs",
                attempt,
                attempts,
                outcome.reason,
                delay,
            )
            if delay > 0:
                time.sleep(delay)
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def _attempt(self, body: bytes) -> bytes | _Failure:
        """One POST: the body of a 2xx answer, or why there is none.

        Failures are returned, not raised, so nothing that is raised later keeps a reference to
        an httpx exception (and through it to the request and its Authorization header)."""
        try:
            return self._post(body)
        except httpx.TimeoutException as exc:
            failure = _Failure("timeout", type(exc).__name__, retryable=True)
        except httpx.DecodingError as exc:
            failure = _Failure("bad_response", type(exc).__name__)
        except httpx.TransportError as exc:
            failure = _Failure("unreachable", type(exc).__name__, retryable=True)
        return failure

    def _post(self, body: bytes) -> bytes | _Failure:
        deadline = time.monotonic() + self.timeout
        with self._client.stream("POST", self._endpoint, content=body) as response:
            status = response.status_code
            if not 200 <= status < 300:
                _drain(response)
                if status == 429:
                    return _Failure("rate_limited", retryable=True, retry_after=_retry_after(response.headers))
                if status >= 500:
                    return _Failure(f"http_{status}", retryable=True, retry_after=_retry_after(response.headers))
                return _Failure(f"http_{status}")
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    return _Failure("bad_response", f"body larger than {MAX_RESPONSE_BYTES} bytes")
                # httpx bounds each wait for data; this bounds a server that trickles.
                if time.monotonic() > deadline:
                    return _Failure("timeout", "answer still arriving", retryable=True)
                chunks.append(chunk)
            return b"".join(chunks)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        delay = self.backoff * (2 ** (attempt - 1))
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, MAX_RETRY_DELAY)


def _drain(response: httpx.Response) -> None:
    """Read (and drop) a short error body so the connection can be reused; a long one is left
    unread and the connection is closed instead."""
    size = 0
    for chunk in response.iter_raw():
        size += len(chunk)
        if size > MAX_ERROR_BYTES:
            return


def _retry_after(headers: httpx.Headers) -> float | None:
    """Seconds from a numeric Retry-After header; the HTTP-date form is ignored."""
    value = headers.get("retry-after", "").strip()
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _join(*parts: str) -> str:
    return ", ".join(part for part in parts if part)


def _bad(detail: str) -> ProviderError:
    return ProviderError("bad_response", detail)


_NOT_JSON = object()


def _parse(raw: bytes, offered: frozenset[str] = frozenset()) -> ModelReply:
    """The reply in a chat-completions body.  Details name fields and types, never values.
    `offered`: the tools the request offered, the only names a call written as text may name."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        # Raised below, outside this block: a JSONDecodeError keeps the whole body as context.
        data = _NOT_JSON
    if data is _NOT_JSON:
        raise _bad(f"body is not JSON ({len(raw)} bytes)")
    if not isinstance(data, dict):
        raise _bad(f"body is a JSON {type(data).__name__}, not an object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise _bad("no choices")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise _bad("choices[0].message is not an object")

    text = _text(message.get("content"))
    raw_calls = message.get("tool_calls")
    if raw_calls is None:
        raw_calls = []
    if not isinstance(raw_calls, list):
        raise _bad("message.tool_calls is not a list")
    tool_calls = [_tool_call(index, item) for index, item in enumerate(raw_calls)]
    legacy = message.get("function_call")
    if not tool_calls and isinstance(legacy, dict):
        # The pre-tools protocol (one `function_call`), still answered by some servers.
        tool_calls = [_tool_call(0, {"function": legacy})]
    if not tool_calls and text:
        written = text_tool_calls(text, offered)
        if written:
            text, tool_calls = "", written

    usage = data.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    return ModelReply(
        text=text,
        tool_calls=tool_calls,
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        finish_reason=_finish_reason(choice.get("finish_reason")),
    )


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces = []
        for part in content:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                pieces.append(part["text"])
            else:
                raise _bad("message.content has a part that is not text")
        return "".join(pieces)
    raise _bad(f"message.content is a {type(content).__name__}")


def _tool_call(index: int, item: Any) -> ToolCall:
    if not isinstance(item, dict):
        raise _bad(f"tool_calls[{index}] is not an object")
    function = item.get("function")
    if not isinstance(function, dict):
        raise _bad(f"tool_calls[{index}].function is not an object")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise _bad(f"tool_calls[{index}].function.name is missing")
    call_id = item.get("id")
    if call_id is None or call_id == "":
        call_id = f"call_{index}"
    elif not isinstance(call_id, str):
        raise _bad(f"tool_calls[{index}].id is a {type(call_id).__name__}")
    arguments = function.get("arguments")
    if arguments is None:
        arguments = "{}"
    elif not isinstance(arguments, str):
        # Some servers send the arguments decoded; give the registry the text it expects.
        arguments = json.dumps(arguments, ensure_ascii=False)
    return ToolCall(id=call_id, name=name, arguments=arguments)


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return 0
    return int(value)


# What servers write in `finish_reason`, read as one of four words: `stop` (the model finished),
# `length` (cut off at max_tokens or the context), `tool_calls`, `content_filter`; anything else
# (null, an unknown word) is "".
_FINISH = {
    "stop": "stop",
    "eos": "stop",
    "eos_token": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "length": "length",
    "max_tokens": "length",
    "model_length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "tool_use": "tool_calls",
    "content_filter": "content_filter",
}


def _finish_reason(value: Any) -> str:
    return _FINISH.get(value.strip().lower(), "") if isinstance(value, str) else ""


# -- what is sent ----------------------------------------------------------------------------

_ROLES = ("system", "user", "assistant", "tool")


def wire_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as every common OpenAI-compatible server accepts it: each message with
    only the fields its role has, `content` always a string — an assistant's tool-call message
    carries `""`, never null (llama.cpp's server refuses null with a 500: "messages[2].content:
    Input should be a valid string"; OpenAI, vLLM and Ollama accept "") — tool calls with their
    `arguments` as JSON text, and tool results as `role: tool` with their `tool_call_id`."""
    wired: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role not in _ROLES:
            raise ValueError(f"a message with role {role!r}")
        content = message.get("content")
        item: dict[str, Any] = {"role": role, "content": content if isinstance(content, str) else _text(content)}
        if role == "assistant" and message.get("tool_calls"):
            item["tool_calls"] = [_wire_call(call) for call in message["tool_calls"]]
        elif role == "tool":
            item["tool_call_id"] = str(message.get("tool_call_id") or "")
        wired.append(item)
    return wired


def _wire_call(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
    return {
        "id": str(call.get("id") or ""),
        "type": "function",
        "function": {"name": function.get("name"), "arguments": arguments},
    }


# -- a tool call written as text -------------------------------------------------------------

# The forms small and self-hosted models write a call in when the server does not turn it into
# `tool_calls`: llama-cpp-python's chatml-function-calling prompt (`functions.NAME:` and the JSON
# arguments on the next line), Hermes/Qwen (`<tool_call>{"name", "arguments"}</tool_call>`),
# Llama 3 (a bare `{"name", "parameters"}`) and Mistral (`[TOOL_CALLS] [{…}]`).
_FUNCTIONS_DOT = re.compile(r"\A\s*functions\.([A-Za-z_][A-Za-z0-9_]*)\s*:?\s*(.*?)\s*\Z", re.S)
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.S)


def text_tool_calls(text: str, offered: frozenset[str]) -> list[ToolCall]:
    """The tool calls `text` consists of, when all of it is one of the usual written forms of a
    call and every call names a tool the request offered; otherwise [] (the text stays text, and
    the run loop's check for malformed replies keeps it from anyone).  Arguments stay raw text
    for the tool registry to check, as with a real `tool_calls`."""
    stripped = text.strip()
    if not stripped or not offered:
        return []
    found: list[tuple[str, Any]] = []
    dotted = _FUNCTIONS_DOT.match(stripped)
    if dotted:
        found.append((dotted.group(1), dotted.group(2) or "{}"))
    elif stripped.startswith("<tool_call>"):
        for body in _TAGGED.findall(stripped):
            found.extend(_json_calls(body))
        if _TAGGED.sub("", stripped).strip():
            return []
    else:
        found.extend(_json_calls(stripped.removeprefix("[TOOL_CALLS]").strip()))
    if not found or any(name not in offered for name, _ in found):
        return []
    return [
        ToolCall(
            id=f"call_text_{index}",
            name=name,
            arguments=arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False),
        )
        for index, (name, arguments) in enumerate(found)
    ]


def _json_calls(body: str) -> list[tuple[str, Any]]:
    """`(name, arguments)` of a JSON call object or a list of them; [] when `body` is not that."""
    if not body.startswith(("{", "[")):
        return []
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return []
    items = value if isinstance(value, list) else [value]
    calls: list[tuple[str, Any]] = []
    for item in items:
        if not isinstance(item, dict):
            return []
        name = item.get("name")
        if isinstance(item.get("function"), dict):  # {"type": "function", "function": {...}}
            name, item = item["function"].get("name"), item["function"]
        arguments = item.get("arguments", item.get("parameters", {}))
        if not isinstance(name, str) or set(item) - {"name", "arguments", "parameters", "type", "id"}:
            return []
        calls.append((name, arguments if arguments is not None else {}))
    return calls


# Bounds on a string's length in a tool's schema: llama-cpp-python 0.3.36 (chatml-function-calling)
# turns `maxLength` into a grammar too large to parse, falls back to free JSON and then dies
# mid-answer (the real-model test lost its server on `add_confirmed_knowledge`, issue 29).  The
# model is not held to the schema anyway: the tool registry validates every call's arguments.
_LENGTH_BOUNDS = frozenset({"maxLength", "minLength"})


def _for_the_model(value: Any) -> Any:
    """A tool's description as sent: its schema without string length bounds."""
    if isinstance(value, dict):
        return {key: _for_the_model(item) for key, item in value.items() if key not in _LENGTH_BOUNDS}
    if isinstance(value, list):
        return [_for_the_model(item) for item in value]
    return value
