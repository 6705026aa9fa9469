"""The A2A 1.0 JSON-RPC binding's wire format: its errors and the parameters of the methods
served, as the specification defines them (section 9; the data model of `specification/a2a.proto`
in ProtoJSON: camelCase names, enum values by name).

Where the specification leaves a choice, this does what the official Python SDK (`a2a-sdk`)
does: errors are answered with HTTP 200 and a JSON-RPC error whose `data` is a list of typed
details led by a `google.rpc.ErrorInfo`; unknown fields are ignored; a missing `A2A-Version`
means 0.3, and any 1.x is served as 1.0 (same major version)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

PROTOCOL_VERSION = "1.0"
VERSION_HEADER = "A2A-Version"
BINDING = "JSONRPC"
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"
DOMAIN = "a2a-protocol.org"


class A2AError(Exception):
    """A JSON-RPC error of the binding: its code, the specification's reason and message."""

    code: ClassVar[int] = -32603
    reason: ClassVar[str] = "INTERNAL_ERROR"
    default_message: ClassVar[str] = "Internal error"
    http_status: int = 200

    def __init__(
        self,
        message: str | None = None,
        *,
        metadata: Mapping[str, str] | None = None,
        violations: list[tuple[str, str]] | None = None,
    ) -> None:
        self.message = message or self.default_message
        self.metadata = dict(metadata or {})
        self.violations = list(violations or [])
        self.headers: dict[str, str] = {}
        super().__init__(self.message)

    def body(self, request_id: Any) -> dict[str, Any]:
        details: list[dict[str, Any]] = [
            {"@type": ERROR_INFO, "reason": self.reason, "domain": DOMAIN, "metadata": self.metadata}
        ]
        if self.violations:
            details.append(
                {
                    "@type": BAD_REQUEST,
                    "fieldViolations": [{"field": f, "description": d} for f, d in self.violations],
                }
            )
        error = {"code": self.code, "message": self.message, "data": details}
        return {"jsonrpc": "2.0", "id": request_id, "error": error}


class JSONParseError(A2AError):
    code, reason, default_message = -32700, "PARSE_ERROR", "Invalid JSON payload"


class InvalidRequestError(A2AError):
    code, reason, default_message = -32600, "INVALID_REQUEST", "Request payload validation error"


class MethodNotFoundError(A2AError):
    code, reason, default_message = -32601, "METHOD_NOT_FOUND", "Method not found"


class InvalidParamsError(A2AError):
    code, reason, default_message = -32602, "INVALID_PARAMS", "Invalid parameters"


class InternalError(A2AError):
    code, reason, default_message = -32603, "INTERNAL_ERROR", "Internal error"


class TaskNotFoundError(A2AError):
    code, reason, default_message = -32001, "TASK_NOT_FOUND", "Task not found"


class TaskNotCancelableError(A2AError):
    code, reason, default_message = -32002, "TASK_NOT_CANCELABLE", "Task cannot be canceled"


class PushNotificationNotSupportedError(A2AError):
    code, reason, default_message = -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED", "Push Notification is not supported"


class UnsupportedOperationError(A2AError):
    code, reason, default_message = -32004, "UNSUPPORTED_OPERATION", "This operation is not supported"


class ContentTypeNotSupportedError(A2AError):
    code, reason, default_message = -32005, "CONTENT_TYPE_NOT_SUPPORTED", "Incompatible content types"


class VersionNotSupportedError(A2AError):
    code, reason, default_message = -32009, "VERSION_NOT_SUPPORTED", "Version not supported"


class UnauthenticatedError(A2AError):
    """No key, or one that does not work for this agent: HTTP 401 with a challenge naming the
    scheme (the specification's "JSON-RPC custom error" for authentication, section 3.3.2)."""

    code, reason, default_message = -32000, "UNAUTHENTICATED", "A peer API key of this agent is required"
    http_status = 401


class RateLimitedError(A2AError):
    """Too many messages or tasks for one key: HTTP 429 with Retry-After (section 3.3.2's
    system errors: "rate limit exceeded")."""

    code, reason, default_message = -32603, "RATE_LIMITED", "Rate limited"
    http_status = 429


# Push notifications and the extended card are not served (the card says so): the
# specification's capability validation answers their methods with its errors, not "method not
# found".
UNSUPPORTED_METHODS: dict[str, type[A2AError]] = {
    "GetExtendedAgentCard": UnsupportedOperationError,
    "CreateTaskPushNotificationConfig": PushNotificationNotSupportedError,
    "GetTaskPushNotificationConfig": PushNotificationNotSupportedError,
    "ListTaskPushNotificationConfigs": PushNotificationNotSupportedError,
    "DeleteTaskPushNotificationConfig": PushNotificationNotSupportedError,
}
STREAMING_METHODS = frozenset({"SendStreamingMessage", "SubscribeToTask"})
SERVED_METHODS = frozenset({"SendMessage", "GetTask", "ListTasks", "CancelTask"}) | STREAMING_METHODS


def version_supported(header: str | None) -> bool:
    """Whether the requested `A2A-Version` is served: empty means 0.3 (section 3.6.2), and a
    version is served when its major number is 1, as a2a-sdk's `validate_version` decides."""
    value = (header or "").strip() or "0.3"
    major, _, minor = value.partition(".")
    return major == "1" and (minor == "" or minor.split(".")[0].isdigit())


class Wire(BaseModel):
    """ProtoJSON in: camelCase names (the proto names are taken too), unknown fields ignored."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


MAX_PARTS = 16
MAX_ID = 64  # a message, task or context id; ours are UUIDs


class Part(Wire):
    text: str | None = None
    raw: str | None = None
    url: str | None = None
    data: Any = None
    metadata: dict[str, Any] | None = None
    filename: str = ""
    media_type: str = ""


class Message(Wire):
    message_id: str = Field(min_length=1, max_length=MAX_ID)
    context_id: str = Field(default="", max_length=MAX_ID)
    task_id: str = Field(default="", max_length=MAX_ID)
    role: Literal["ROLE_USER", "ROLE_AGENT", "ROLE_UNSPECIFIED", 0, 1, 2] = "ROLE_UNSPECIFIED"
    parts: list[Part] = Field(min_length=1, max_length=MAX_PARTS)
    metadata: dict[str, Any] | None = None
    extensions: list[str] = Field(default_factory=list, max_length=16)
    reference_task_ids: list[str] = Field(default_factory=list, max_length=16)

    @field_validator("role")
    @classmethod
    def _user(cls, role: Any) -> Any:
        if role in ("ROLE_AGENT", 2):
            raise ValueError("a client's message has the role ROLE_USER")
        return role


class SendMessageConfiguration(Wire):
    accepted_output_modes: list[str] = Field(default_factory=list, max_length=16)
    history_length: int | None = Field(default=None, ge=0)
    return_immediately: bool = False
    task_push_notification_config: dict[str, Any] | None = None


class SendMessageRequest(Wire):
    tenant: str = ""
    message: Message
    configuration: SendMessageConfiguration | None = None
    metadata: dict[str, Any] | None = None


class GetTaskRequest(Wire):
    tenant: str = ""
    id: str = Field(min_length=1, max_length=MAX_ID)
    history_length: int | None = Field(default=None, ge=0)


class SubscribeToTaskRequest(Wire):
    tenant: str = ""
    id: str = Field(min_length=1, max_length=MAX_ID)


class CancelTaskRequest(Wire):
    tenant: str = ""
    id: str = Field(min_length=1, max_length=MAX_ID)
    metadata: dict[str, Any] | None = None


TASK_STATES = (
    "TASK_STATE_UNSPECIFIED",
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_WORKING",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_REJECTED",
    "TASK_STATE_AUTH_REQUIRED",
)
MAX_PAGE = 100
DEFAULT_PAGE = 50


class ListTasksRequest(Wire):
    tenant: str = ""
    context_id: str = Field(default="", max_length=MAX_ID)
    status: str | int = "TASK_STATE_UNSPECIFIED"
    page_size: int | None = Field(default=None, ge=1, le=MAX_PAGE)
    page_token: str = Field(default="", max_length=200)
    history_length: int | None = Field(default=None, ge=0)
    status_timestamp_after: str | None = Field(default=None, max_length=40)
    include_artifacts: bool = False

    @field_validator("status")
    @classmethod
    def _state(cls, status: str | int) -> str:
        if isinstance(status, int) and 0 <= status < len(TASK_STATES):
            return TASK_STATES[status]
        if status in TASK_STATES:
            return str(status)
        raise ValueError("not a TaskState")


PARAMS: dict[str, type[Wire]] = {
    "SendMessage": SendMessageRequest,
    "SendStreamingMessage": SendMessageRequest,
    "SubscribeToTask": SubscribeToTaskRequest,
    "GetTask": GetTaskRequest,
    "ListTasks": ListTasksRequest,
    "CancelTask": CancelTaskRequest,
}


def parse_params(method: str, params: Any) -> Wire:
    """The method's parameters, or InvalidParamsError naming each field that failed."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidParamsError("params must be an object")
    try:
        return PARAMS[method].model_validate(params)
    except ValidationError as exc:
        violations = [(".".join(str(p) for p in e["loc"]) or "params", str(e["msg"])[:200]) for e in exc.errors()[:10]]
        raise InvalidParamsError(violations=violations) from None
