"""Frames sent to a session's open chat WebSockets from outside the connection — an owner's reply
to a request, a request that moved — through the channel layer, after the write commits.

Every chat connection joins its session's group (`consumers.ChatConsumer`).  A push is a
convenience: what it carries is stored first, and a browser that was not connected finds it in
the session's history when it comes back."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

log = logging.getLogger(__name__)

# The channel-layer message type; Channels calls the consumer's `session_push` with it.
PUSH_TYPE = "session.push"


def session_group(session_id: uuid.UUID | str) -> str:
    """The channel-layer group of a session's connections (ASCII, well under 100 characters)."""
    return f"session.{session_id}"


def session_push_on_commit(*, session_id: uuid.UUID | str, frame: dict[str, Any]) -> None:
    """Send `frame` to the session's open connections once the current transaction commits."""
    transaction.on_commit(lambda: session_push(session_id=session_id, frame=frame))


def session_push(*, session_id: uuid.UUID | str, frame: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(session_group(session_id), {"type": PUSH_TYPE, "frame": frame})
    except Exception:  # the frame's content is stored: the customer sees it in the history
        log.warning("push to a session's chat failed", exc_info=True, extra={"session": str(session_id)})
