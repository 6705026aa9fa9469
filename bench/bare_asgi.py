"""The floor under bench/abuse.py: an ASGI application that answers every HTTP request 429 at
once, with no Django and no gate.  Served by the same daphne, flooded by the same abusers, it
shows what the server itself spends on a request before any of the product's code runs."""

from __future__ import annotations

from typing import Any

BODY = b'{"error": "rate_limited", "detail": "too many requests", "retry_after": 60}'


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": BODY})
