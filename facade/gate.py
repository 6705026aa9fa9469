"""The gate in front of Django: what anonymous callers can make the server do is refused or
queued here, on the event loop, before Django builds a request.

Measured (bench/abuse.py): every HTTP request Django serves runs in a thread of its own, so
eight clients looping on refused requests held eight threads' share of the one interpreter lock
and a chatting customer's turn, waiting for its share, took four times as long.  Three things
are done here, each cheaper than a thread:

- a body whose declared length is over what its view takes (facade.bodylimit) is answered 413
  unread;
- a session open, a search or a message from a client address whose rate window is already
  spent (facade.ratelimit remembers the windows it refused, until they end) is answered 429
  without counting again — the window cannot turn over sooner, so the answer is the view's own.
  Requests that carry a session cookie or an Authorization header go on to the view: owners and
  peers are not counted by address, and only the view can tell them from a customer;
- session opens and searches (the public work anyone can ask for) wait for one of
  FACADE_PUBLIC_CONCURRENCY places, so however many arrive at once they share the interpreter
  with a customer's turn rather than crowd it out; over FACADE_PUBLIC_QUEUE waiting, 503
  `server_busy`.

Views declare what the gate does for them with a `gate` attribute (`Gate`)."""

from __future__ import annotations

import asyncio
import json
import time
import weakref
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.urls import Resolver404, resolve

from facade.bodylimit import body_limit, too_large_body
from facade.ratelimit import refused_until, scope_client_ip

Scope = dict[str, Any]


@dataclass(frozen=True)
class Gate:
    """What the gate does for a view's `methods`: refuse a client address whose `ip_scope`
    window (a facade.ratelimit scope) is spent, and, when `bounded`, hold the request to the
    places public work may take at once."""

    methods: frozenset[str]
    ip_scope: str
    bounded: bool = True
    what: str = "requests"  # for the refusal: "too many <what>"


@dataclass
class _Places:
    free: asyncio.Semaphore
    waiting: int = 0


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers") or []:
        if key.lower() == name:
            return bytes(value)
    return None


def _cookie_names(scope: Scope) -> set[str]:
    raw = b"; ".join(value for key, value in scope.get("headers") or [] if key.lower() == b"cookie")
    return {part.split(b"=", 1)[0].strip().decode("latin1") for part in raw.split(b";") if b"=" in part}


async def _answer(send: Any, status: int, body: dict[str, Any], extra: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    payload = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"x-frame-options", b"DENY"),
        (b"referrer-policy", b"same-origin"),
        (b"cross-origin-opener-policy", b"same-origin"),
        (b"cache-control", b"no-store"),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


class RequestGate:
    """ASGI middleware for the HTTP protocol (see the module's docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        # One set of places per event loop (a server has one; the test suite starts many).
        self._places: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Places] = weakref.WeakKeyDictionary()

    def places(self) -> _Places:
        loop = asyncio.get_running_loop()
        places = self._places.get(loop)
        if places is None:
            places = self._places[loop] = _Places(asyncio.Semaphore(max(1, settings.FACADE_PUBLIC_CONCURRENCY)))
        return places

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            match = resolve(scope["path"])
        except Resolver404:
            await self.app(scope, receive, send)
            return
        view_class = getattr(match.func, "cls", None) or getattr(match.func, "view_class", None)
        if view_class is None:
            await self.app(scope, receive, send)
            return
        if await self._refused_body(scope, view_class, send):
            return
        gate: Gate | None = getattr(view_class, "gate", None)
        if gate is None or scope.get("method", "GET") not in gate.methods:
            await self.app(scope, receive, send)
            return
        if await self._refused_address(scope, gate, send):
            return
        if not gate.bounded:
            await self.app(scope, receive, send)
            return
        await self._in_place(scope, receive, send)

    async def _refused_body(self, scope: Scope, view_class: type, send: Any) -> bool:
        from rest_framework.views import APIView

        if not issubclass(view_class, APIView):
            return False
        declared = _header(scope, b"content-length")
        if declared is None:
            return False  # chunked: BodyLimitMiddleware reads it up to the limit
        try:
            length = int(declared)
        except ValueError:
            return False
        content_type = (_header(scope, b"content-type") or b"").decode("latin1")
        limit = body_limit(view_class, content_type)
        if length <= limit:
            return False
        await _answer(send, HTTPStatus.REQUEST_ENTITY_TOO_LARGE, too_large_body(limit))
        return True

    async def _refused_address(self, scope: Scope, gate: Gate, send: Any) -> bool:
        if _header(scope, b"authorization") is not None or settings.SESSION_COOKIE_NAME in _cookie_names(scope):
            return False
        until = refused_until(gate.ip_scope, scope_client_ip(scope))
        now = time.time()
        if until is None or until <= now:
            return False
        wait = max(1, int(until - now + 0.999))
        body = {"error": "rate_limited", "detail": f"too many {gate.what}; try again in {wait} s", "retry_after": wait}
        await _answer(send, HTTPStatus.TOO_MANY_REQUESTS, body, ((b"retry-after", str(wait).encode()),))
        return True

    async def _in_place(self, scope: Scope, receive: Any, send: Any) -> None:
        places = self.places()
        if places.free.locked() and places.waiting >= settings.FACADE_PUBLIC_QUEUE:
            body = {"error": "server_busy", "detail": "the server is busy; try again in a moment", "retry_after": 1}
            await _answer(send, HTTPStatus.SERVICE_UNAVAILABLE, body, ((b"retry-after", b"1"),))
            return
        places.waiting += 1
        try:
            await places.free.acquire()
        finally:
            places.waiting -= 1
        try:
            await self.app(scope, receive, send)
        finally:
            places.free.release()
