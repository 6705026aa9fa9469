"""A real local HTTP server that speaks the OpenAI chat-completions protocol, for tests.

It listens on 127.0.0.1 (a free port) in a daemon thread and answers `POST /v1/chat/completions`
from a script: either a queue of canned responses, one per request, or a responder callable that
sees each request's JSON and decides.  Every request it receives is recorded (method, path,
headers, raw body and parsed JSON), so a test can check what the client sent.

In pytest, take the `llm_server` fixture as a parameter (the root conftest.py registers this
module as a plugin):

    from llm_server import text_reply

    def test_hello(llm_server):
        llm_server.push(text_reply("hello"))
        provider = OpenAICompatibleProvider(llm_server.url, "m")
        ...
        assert llm_server.requests[0].json["model"] == "m"

Outside pytest (a script, another fixture, a runtime test that drives the whole agent):

    with LLMServer(responder=lambda request: (200, {}, completion(text="hi"))) as server:
        ...  # server.url is "http://127.0.0.1:<port>/v1"

    url, stop = serve([text_reply("hi")])
    ...
    stop()

By default the server is as strict as llama.cpp's server (through llama-cpp-python) about what it
is sent: a request a strict server refuses — a message whose `content` is not a string (an
assistant's tool-call message with `content: null` included), an unknown role or field, a tool
result without the `tool_call_id` of a call made before it, tool-call arguments that are not JSON
text — is answered `500 {"error": {"message": "messages[2].content: Input should be a valid
string"}}` (the field and the complaint vary) and counted in `refused`, before any script is read.
`LLMServer(strict=False)` accepts anything.

A responder returns `(status, headers, body)` where body is a dict (sent as JSON) or bytes (sent
as they are), or a `Canned`.  With no response left in the queue and no responder the server
answers 500 and counts the request in `unscripted`.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"

Body = dict[str, Any] | bytes
Responder = Callable[[Any], "tuple[int, dict[str, str], Body] | Canned"]


@dataclass(frozen=True)
class Canned:
    """One scripted answer.  `delay` seconds pass before it is sent (a hang, when longer than
    the client's timeout); stopping the server cuts the delay short and sends nothing."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: Body = b""
    delay: float = 0.0


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    raw: bytes
    json: Any  # None when the body was not JSON


# -- canned responses ------------------------------------------------------------------------


def completion(
    *,
    text: str | None = "",
    tool_calls: list[dict[str, Any]] | None = None,
    prompt_tokens: int | None = 10,
    completion_tokens: int | None = 5,
    model: str = "test-model",
) -> dict[str, Any]:
    """A chat-completions body.  `None` token counts leave `usage` out altogether."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
    }
    if prompt_tokens is not None and completion_tokens is not None:
        body["usage"] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
    return body


def tool_call(call_id: str, name: str, arguments: str | dict[str, Any]) -> dict[str, Any]:
    """One entry of `message.tool_calls`; `arguments` is normally a JSON string, as OpenAI sends."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def text_reply(text: str, *, prompt_tokens: int | None = 10, completion_tokens: int | None = 5) -> Canned:
    return Canned(body=completion(text=text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens))


def tool_call_reply(*calls: dict[str, Any], text: str | None = None) -> Canned:
    return Canned(body=completion(text=text, tool_calls=list(calls)))


def malformed_tool_call_reply(name: str = "search_knowledge") -> Canned:
    """A tool call whose arguments are cut-off JSON, as small models sometimes produce."""
    return tool_call_reply(tool_call("call_bad", name, '{"query": "opening hours'))


def error_reply(status: int, *, headers: dict[str, str] | None = None, message: str = "error") -> Canned:
    return Canned(status=status, headers=headers or {}, body={"error": {"message": message, "type": "server_error"}})


def rate_limited_reply(retry_after: str = "0") -> Canned:
    return error_reply(429, headers={"Retry-After": retry_after}, message="rate limited")


def hang(seconds: float = 30.0, then: Canned | None = None) -> Canned:
    """Say nothing for `seconds`, then answer like `then` (a plain text reply by default)."""
    answer = then or text_reply("too late")
    return Canned(status=answer.status, headers=answer.headers, body=answer.body, delay=seconds)


def garbage_reply() -> Canned:
    return Canned(
        status=200, headers={"Content-Type": "text/html"}, body=b"<html><body>Bad gateway, maybe</body></html>"
    )


# -- what a strict server refuses ------------------------------------------------------------

_REQUEST_FIELDS = {
    "model",
    "messages",
    "tools",
    "tool_choice",
    "max_tokens",
    "response_format",
    "temperature",
    "stream",
}
_MESSAGE_FIELDS = {
    "system": {"role", "content"},
    "user": {"role", "content"},
    "assistant": {"role", "content", "tool_calls"},
    "tool": {"role", "content", "tool_call_id"},
}


def strict_refusal(body: Any) -> str | None:
    """What a strict OpenAI-compatible server (llama.cpp's, pydantic-validated) says is wrong with
    a chat-completions request body, in its words; None when it would accept it."""
    if not isinstance(body, dict):
        return "body: Input should be a valid dictionary"
    for name in sorted(set(body) - _REQUEST_FIELDS):
        return f"{name}: Extra inputs are not permitted"
    if not isinstance(body.get("model"), str):
        return "model: Input should be a valid string"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: Input should be a non-empty list"
    called: set[str] = set()
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, dict):
            return f"{where}: Input should be a valid dictionary"
        role = message.get("role")
        if role not in _MESSAGE_FIELDS:
            return f"{where}.role: Input should be 'system', 'user', 'assistant' or 'tool'"
        for name in sorted(set(message) - _MESSAGE_FIELDS[role]):
            return f"{where}.{name}: Extra inputs are not permitted"
        if not isinstance(message.get("content"), str):
            return f"{where}.content: Input should be a valid string"
        if role == "assistant" and "tool_calls" in message:
            calls = message["tool_calls"]
            if not isinstance(calls, list) or not calls:
                return f"{where}.tool_calls: Input should be a non-empty list"
            for number, call in enumerate(calls):
                place = f"{where}.tool_calls[{number}]"
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not call["id"]:
                    return f"{place}.id: Input should be a valid string"
                if call.get("type") != "function":
                    return f"{place}.type: Input should be 'function'"
                if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                    return f"{place}.function.name: Input should be a valid string"
                if not isinstance(function.get("arguments"), str):
                    return f"{place}.function.arguments: Input should be a valid string"
                called.add(call["id"])
        if role == "tool" and message.get("tool_call_id") not in called:
            return f"{where}.tool_call_id: no tool call with this id came before"
    return None


# -- the server ------------------------------------------------------------------------------


class LLMServer:
    """The server.  `start()`/`stop()` or use it as a context manager."""

    def __init__(
        self, responses: Iterable[Canned] = (), *, responder: Responder | None = None, strict: bool = True
    ) -> None:
        self.responder = responder
        self.strict = strict
        self.requests: list[RecordedRequest] = []
        self.unscripted = 0
        self.refused = 0  # requests a strict server refused (module docstring)
        self.abandoned = 0  # answers a stop() cut short while they were hanging
        self._hanging = 0
        self._queue: deque[Canned] = deque(responses)
        self._lock = threading.Lock()
        self._hangs_done = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # scripting

    def push(self, *responses: Canned) -> None:
        with self._lock:
            self._queue.extend(responses)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def url(self) -> str:
        """The base URL a client is configured with, ending in /v1."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the server is not running")
        return int(self._httpd.server_address[1])

    # life cycle

    def start(self) -> LLMServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        httpd.daemon_threads = True
        httpd.llm_server = self  # type: ignore[attr-defined]
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.name = f"llm-server-{self.port}"
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()  # wakes any handler that is hanging
        httpd.shutdown()
        httpd.server_close()
        # Handler threads are daemons nobody joins; wait for the hanging ones so that `abandoned`
        # is final when stop() returns (the bound only matters if a hang failed to wake).
        with self._hangs_done:
            self._hangs_done.wait_for(lambda: self._hanging == 0, timeout=5)
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # used by the handler

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _hang(self, seconds: float) -> bool:
        """Wait `seconds` or until stop(); whether the wait was cut short."""
        with self._lock:
            self._hanging += 1
        stopped = self._stopping.wait(seconds)
        with self._hangs_done:
            self._hanging -= 1
            self.abandoned += stopped
            self._hangs_done.notify_all()
        return stopped

    def _answer(self, request: RecordedRequest) -> Canned:
        refusal = strict_refusal(request.json) if self.strict else None
        if refusal is not None:
            with self._lock:
                self.refused += 1
            return error_reply(500, message=refusal)
        if self.responder is not None:
            answer = self.responder(request.json)
            if isinstance(answer, Canned):
                return answer
            status, headers, body = answer
            return Canned(status=status, headers=dict(headers), body=body)
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            self.unscripted += 1
        return error_reply(500, message="llm_server: no scripted response left")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do; every answer has a length
    timeout = 10  # an idle kept-alive connection does not hold its thread for ever
    server_version = "llm-test-server/1"

    def handle(self) -> None:
        try:
            super().handle()
        except (ConnectionError, TimeoutError):
            pass  # the client hung up or a kept-alive connection idled out: normal here

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # quiet: tests read `requests` instead

    def do_GET(self) -> None:  # noqa: N802
        self._record_and_answer()

    def do_POST(self) -> None:  # noqa: N802
        self._record_and_answer()

    def _record_and_answer(self) -> None:
        owner: LLMServer = self.server.llm_server  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        path = self.path.split("?", 1)[0]
        request = RecordedRequest(
            method=self.command,
            path=path,
            headers={name.lower(): value for name, value in self.headers.items()},
            raw=raw,
            json=parsed,
        )
        owner._record(request)
        if self.command != "POST" or path != CHAT_PATH:
            self._send(error_reply(404, message=f"no route for {self.command} {path}"))
            return
        answer = owner._answer(request)
        if answer.delay > 0 and owner._hang(answer.delay):
            self.close_connection = True
            return  # stopped while hanging: leave without a word
        self._send(answer)

    def _send(self, answer: Canned) -> None:
        if isinstance(answer.body, bytes):
            payload = answer.body
            content_type = "application/octet-stream"
        else:
            payload = json.dumps(answer.body).encode("utf-8")
            content_type = "application/json"
        try:
            self.send_response(answer.status)
            headers = {"Content-Type": content_type, **answer.headers}
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (its timeout); nothing to tell it


def serve(responses: Iterable[Canned] = (), *, responder: Responder | None = None) -> tuple[str, Callable[[], None]]:
    """Start a server; its base URL and a function that stops it."""
    server = LLMServer(responses, responder=responder).start()
    return server.url, server.stop


try:
    import pytest
except ImportError:  # pragma: no cover - the module also works where pytest is not installed
    pass
else:

    @pytest.fixture
    def llm_server() -> Iterator[LLMServer]:
        """A running `LLMServer` with an empty script; push responses onto it in the test."""
        with LLMServer() as server:
            yield server
