"""The product's ASGI application plus a bare echo consumer at `ws/echo/` (bench only).

bench/chat.py runs this under daphne so that the chat and the echo consumer share one server
process, one event loop, the same origin check and the same auth middleware: the only
difference between the two loads is the consumer.  The echo answers each `message` frame with
a `reply` frame carrying the same text — no session, no database, no model.
"""

from __future__ import annotations

import json
from typing import Any

from channels.auth import AuthMiddlewareStack
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.security.websocket import AllowedHostsOriginValidator

from facade.asgi import application as product  # sets Django up before anything else

ECHO_PATH = "/ws/echo/"


class EchoConsumer(AsyncJsonWebsocketConsumer):
    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "message":
            cid = content.get("client_message_id", "")
            await self.send_json({"type": "reply", "client_message_id": cid, "reply": {"text": content.get("text", "")}})

    @classmethod
    async def encode_json(cls, content: Any) -> str:
        return json.dumps(content, ensure_ascii=False)  # as the chat consumer encodes its frames


# The same middleware facade/asgi.py puts in front of the chat's URL router.
echo = AllowedHostsOriginValidator(AuthMiddlewareStack(EchoConsumer.as_asgi()))


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "websocket" and scope["path"] == ECHO_PATH:
        await echo(scope, receive, send)
    else:
        await product(scope, receive, send)
