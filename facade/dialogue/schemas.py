"""Typed payloads of the dialogue app: the chat WebSocket's frames, in and out.

Frames in are validated here and nowhere else; anything that is not one of them is answered
with an `error` frame (`malformed_frame`) and the connection stays open.  Text length and
emptiness are the message service's to judge, so they get the same codes as over HTTP."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, TypeAdapter

# --- frames from the browser ----------------------------------------------------------------


class _In(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class MessageFrame(_In):
    """A message of the session's principal; a repeated client_message_id is answered with the
    reply already stored, never a second run."""

    type: Literal["message"]
    text: StrictStr
    client_message_id: StrictStr = ""


class CancelFrame(_In):
    """Stop the running turn before its next model or tool call."""

    type: Literal["cancel"]


class RateFrame(_In):
    """The customer's rating of the conversation (once per session)."""

    type: Literal["rate"]
    stars: StrictInt
    comment: StrictStr = ""


InFrame = Annotated[Union[MessageFrame, CancelFrame, RateFrame], Field(discriminator="type")]
in_frame: TypeAdapter[MessageFrame | CancelFrame | RateFrame] = TypeAdapter(InFrame)


# --- frames to the browser ------------------------------------------------------------------


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True)

    def frame(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class HistoryOut(_Out):
    """Sent once on connect, so that a reconnect resumes without duplicates."""

    type: Literal["history"] = "history"
    audience: str
    messages: list[dict[str, Any]]
    requests: list[dict[str, Any]]
    rated: bool
    status: str
    closed_reason: str = ""
    preview: bool = False


class ProgressOut(_Out):
    """What the running turn is doing: thinking, searching_knowledge, registering_request,
    handing_off, … and finally done."""

    type: Literal["progress"] = "progress"
    client_message_id: str
    state: str


class DeltaOut(_Out):
    """A piece of the reply.  Only already guarded text is ever streamed."""

    type: Literal["delta"] = "delta"
    client_message_id: str
    text: str


class ReplyOut(_Out):
    """The end of a turn: the stored principal message, the reply (None only when a duplicate's
    reply is not stored yet), the request the turn registered, if any."""

    type: Literal["reply"] = "reply"
    client_message_id: str
    message: dict[str, Any]
    reply: dict[str, Any] | None
    request: dict[str, Any] | None
    duplicate: bool


class CancelAckOut(_Out):
    type: Literal["cancelling"] = "cancelling"
    runs: int


class RatedOut(_Out):
    type: Literal["rated"] = "rated"
    stars: int


class OwnerReplyOut(_Out):
    """Pushed to the customer's open chat: the business's reply to one of the session's requests
    (stored first; it is in the history too), with the request as it stands."""

    type: Literal["owner_reply"] = "owner_reply"
    message: dict[str, Any]
    request: dict[str, Any]


class RequestUpdateOut(_Out):
    """Pushed to the customer's open chat when one of the session's requests moved."""

    type: Literal["request"] = "request"
    request: dict[str, Any]


class ErrorOut(_Out):
    """A refused frame.  `client_message_id` names the message it refused, when there is one."""

    type: Literal["error"] = "error"
    code: str
    detail: str
    client_message_id: str | None = None
    retry_after: int | None = None
    session: str | None = None  # `session_continued`: the session that continues this one

    def frame(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)
