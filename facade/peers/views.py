"""The A2A edge: an agent's Agent Card and its JSON-RPC 2.0 endpoint (A2A 1.0, sections 8 and 9).

Everything this endpoint answers is a JSON-RPC response — a result, or an error with the
specification's code — never an HTML page and never a 500: a failure nobody foresaw is
`-32603 Internal error`.  As a2a-sdk's server does, errors go out with HTTP 200, except the two
the HTTP layer must see: 401 (no key, or not one of this agent) with a challenge naming the
header, and 429 (a key over its limits) with Retry-After."""

from __future__ import annotations

import json
import logging
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET

from facade.bodylimit import KiB
from facade.ratelimit import request_client_ip
from facade.tenancy.identity import PeerKeyInvalid, peer_from_authorization
from facade.tenancy.models import AgentProfile, PeerCredential
from facade.tenancy.rules import find_audience_key, first_audience_name

from . import listing, protocol, selectors, services, streaming
from .card import KEY_HEADER, agent_card, card_etag
from .protocol import (
    A2AError,
    ContentTypeNotSupportedError,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    JSONParseError,
    MethodNotFoundError,
    PushNotificationNotSupportedError,
    UnauthenticatedError,
    VersionNotSupportedError,
)

log = logging.getLogger(__name__)

CARD_MAX_AGE = 300  # seconds; a republished contract shows within five minutes
TEXT_TYPES = frozenset({"", "text/plain"})


def body_limit() -> int:
    """A message of FACADE_MESSAGE_MAX_CHARS written entirely in six-byte `\\u` escapes, and
    room for the envelope, ids and configuration."""
    return 6 * settings.FACADE_MESSAGE_MAX_CHARS + 8 * KiB


def _agent(slug: str) -> AgentProfile | None:
    return AgentProfile.objects.select_related("tenant").filter(slug=slug).first()


@require_GET
def card_view(request: HttpRequest, slug: str) -> HttpResponse:
    """The agent's Agent Card, public as the specification wants it (section 8.2), with the
    caching headers of section 8.6."""
    agent = _agent(slug)
    if agent is None:
        return JsonResponse({"error": "not_found", "detail": "no such agent"}, status=404)
    card = agent_card(agent)
    etag = card_etag(card)
    if etag in [t.strip() for t in request.headers.get("If-None-Match", "").split(",")]:
        response = HttpResponse(status=304)
    else:
        response = JsonResponse(card, json_dumps_params={"ensure_ascii": False})
    response["ETag"] = etag
    response["Cache-Control"] = f"public, max-age={CARD_MAX_AGE}"
    return response


@require_GET
def agents_view(request: HttpRequest) -> HttpResponse:
    """The platform's list of the agents whose owners opted in (peers/listing.py), public as
    the cards are, with the same caching."""
    response = JsonResponse({"agents": listing.listed_agents()}, json_dumps_params={"ensure_ascii": False})
    response["Cache-Control"] = f"public, max-age={CARD_MAX_AGE}"
    return response


def _answer(request_id: Any, result: Any) -> JsonResponse:
    return JsonResponse(
        {"jsonrpc": "2.0", "id": request_id, "result": result}, json_dumps_params={"ensure_ascii": False}
    )


def _refusal(request_id: Any, error: A2AError) -> JsonResponse:
    response = JsonResponse(error.body(request_id), status=error.http_status, json_dumps_params={"ensure_ascii": False})
    for name, value in error.headers.items():
        response[name] = value
    return response


def _credential(request: HttpRequest, agent: AgentProfile) -> PeerCredential:
    """The key's credential: sent in the card's header (`X-API-Key`), or as a Bearer token as
    over the peer HTTP API.  Both at once must be the same key."""
    sent = request.headers.get(KEY_HEADER, "").strip()
    bearer = request.headers.get("Authorization", "")
    why = None
    try:
        by_header = peer_from_authorization(f"Bearer {sent}") if sent else None
        by_bearer = peer_from_authorization(bearer) if bearer else None
    except PeerKeyInvalid as invalid:
        by_header = by_bearer = None
        why = str(invalid)  # unknown or revoked, or paused by the owner: never the key itself
    credential = by_header or by_bearer
    if credential is None or (by_header and by_bearer and by_header.pk != by_bearer.pk):
        if why is None and (sent or bearer):
            why = "the key is not a peer key of this agent" if credential is None else "two different keys were sent"
        refused = UnauthenticatedError(why, metadata={"header": KEY_HEADER})
        refused.headers["WWW-Authenticate"] = f'ApiKey header="{KEY_HEADER}"'
        raise refused
    if credential.agent_id != agent.pk:
        refused = UnauthenticatedError("this key belongs to another agent", metadata={"header": KEY_HEADER})
        refused.headers["WWW-Authenticate"] = f'ApiKey header="{KEY_HEADER}"'
        raise refused
    return credential


def _read_body(request: HttpRequest) -> bytes:
    limit = body_limit()
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or -1)
    except ValueError:
        declared = -1
    if declared > limit:
        raise InvalidRequestError("Payload too large", metadata={"maxBytes": str(limit)})
    body = request.read(limit + 1)
    if len(body) > limit:
        raise InvalidRequestError("Payload too large", metadata={"maxBytes": str(limit)})
    return body


def _envelope(body: bytes) -> tuple[Any, str, Any]:
    """The request's id, method and params; JSON-RPC 2.0's own refusals otherwise."""
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise JSONParseError() from None
    if isinstance(payload, list):
        raise InvalidRequestError("Batch requests are not supported")
    if not isinstance(payload, dict):
        raise InvalidRequestError()
    request_id = payload.get("id")
    if isinstance(request_id, bool) or not (request_id is None or isinstance(request_id, (str, int))):
        raise InvalidRequestError("id must be a string, an integer or null")
    if payload.get("jsonrpc") != "2.0":
        raise _with_id(InvalidRequestError("'jsonrpc' must be exactly '2.0'"), request_id)
    method = payload.get("method")
    if not isinstance(method, str) or not method:
        raise _with_id(InvalidRequestError("Method is required"), request_id)
    return request_id, method, payload.get("params")


class _Identified(Exception):
    def __init__(self, error: A2AError, request_id: Any) -> None:
        super().__init__(error.message)
        self.error, self.request_id = error, request_id


def _with_id(error: A2AError, request_id: Any) -> _Identified:
    return _Identified(error, request_id)


def _refuse_claimed_audience(request: HttpRequest, params: Any) -> None:
    """The audience is the server's to derive (red line 1): a header, query parameter or any key
    anywhere in the params (message or request metadata, a part's metadata, a data part) that
    names one is refused before anything is created, as the peer HTTP API refuses it."""
    found = first_audience_name(request.GET.keys()) or first_audience_name(request.headers.keys())
    if found is None:
        found = find_audience_key(params)
    if found is not None:
        log.warning("a2a: a peer named an audience; refused", extra={"field": found[:100]})
        raise InvalidParamsError(
            "the audience is derived by the server from your key",
            metadata={"refusal": "audience_is_server_derived"},
            violations=[(found[:200], "the audience is derived by the server")],
        )


def _text(request: protocol.SendMessageRequest) -> str:
    """The message's words: its text parts (plain text), in order.  Anything else is a content
    type this agent does not take (its card: `text/plain` in)."""
    config = request.configuration
    if config is not None and config.task_push_notification_config:
        raise PushNotificationNotSupportedError()
    accepted = [m.lower() for m in (config.accepted_output_modes if config else [])]
    if accepted and "text/plain" not in accepted and "text/*" not in accepted and "*/*" not in accepted:
        raise ContentTypeNotSupportedError("this agent answers in text/plain", metadata={"accepted": "text/plain"})
    words = []
    for index, part in enumerate(request.message.parts):
        if part.text is None or part.raw is not None or part.url is not None or part.data is not None:
            raise ContentTypeNotSupportedError(
                f"part {index}: this agent takes text parts only", metadata={"accepted": "text/plain"}
            )
        if part.media_type.split(";")[0].strip().lower() not in TEXT_TYPES:
            raise ContentTypeNotSupportedError(
                f"part {index}: media type {part.media_type[:60]!r} is not taken", metadata={"accepted": "text/plain"}
            )
        words.append(part.text)
    return "\n".join(words)


def _dispatch(
    request: HttpRequest, agent: AgentProfile, credential: PeerCredential, request_id: Any, method: str, params: Any
) -> Any:
    if method in protocol.UNSUPPORTED_METHODS:
        raise protocol.UNSUPPORTED_METHODS[method](f"{method} is not supported by this agent")
    if method not in protocol.SERVED_METHODS:
        raise MethodNotFoundError()
    parsed = protocol.parse_params(method, params)
    if not protocol.version_supported(request.headers.get(protocol.VERSION_HEADER) or request.GET.get("A2A-Version")):
        version = request.headers.get(protocol.VERSION_HEADER) or request.GET.get("A2A-Version") or "0.3 (no header)"
        raise VersionNotSupportedError(
            f"A2A version {version[:20]!r} is not supported; send the header A2A-Version: {protocol.PROTOCOL_VERSION}",
            metadata={"supported": protocol.PROTOCOL_VERSION},
        )
    tenant = getattr(parsed, "tenant", "")
    if tenant and tenant != agent.slug:
        raise InvalidParamsError(
            "tenant is not this agent's", violations=[("tenant", f"this endpoint is {agent.slug}")]
        )
    _refuse_claimed_audience(request, params)
    if isinstance(parsed, protocol.SendMessageRequest) and method == "SendStreamingMessage":
        text = _text(parsed)
        begun = services.task_begin(
            agent=agent, credential=credential, request=parsed, text=text, ip=request_client_ip(request.META)
        )
        return streaming.response(
            streaming.send_stream(
                request_id=request_id,
                begun=begun,
                credential=credential,
                text=text,
                message_id=parsed.message.message_id,
                history_length=parsed.configuration.history_length if parsed.configuration else None,
            )
        )
    if (
        isinstance(parsed, protocol.SendMessageRequest)
        and parsed.configuration
        and parsed.configuration.return_immediately
    ):
        # Non-blocking (§3.2.2): the task as soon as it exists; the turn goes on in a thread of its
        # own, and GetTask, ListTasks or SubscribeToTask follow it.
        text = _text(parsed)
        begun = services.task_begin(
            agent=agent, credential=credential, request=parsed, text=text, ip=request_client_ip(request.META)
        )
        if begun.task is None:  # task_begin(persist=True) writes it; never None here
            raise InternalError()
        if not begun.seen:
            streaming.answer_in_background(
                begun=begun, credential=credential, text=text, message_id=parsed.message.message_id
            )
        return {"task": selectors.task_view(begun.task, history_length=parsed.configuration.history_length)}
    if isinstance(parsed, protocol.SendMessageRequest):
        text = _text(parsed)
        task = services.task_send(
            agent=agent, credential=credential, request=parsed, text=text, ip=request_client_ip(request.META)
        )
        history = parsed.configuration.history_length if parsed.configuration else None
        return {"task": selectors.task_view(task, history_length=history)}
    if isinstance(parsed, protocol.SubscribeToTaskRequest):
        task = services.peer_task(credential=credential, task_id=parsed.id)
        streaming.refuse_ended(task)
        return streaming.response(streaming.subscribe_stream(request_id=request_id, task=task))
    if isinstance(parsed, protocol.GetTaskRequest):
        task = services.peer_task(credential=credential, task_id=parsed.id)
        return selectors.task_view(task, history_length=parsed.history_length)
    if isinstance(parsed, protocol.ListTasksRequest):
        return selectors.tasks_list(credential=credential, request=parsed)
    assert isinstance(parsed, protocol.CancelTaskRequest)
    return selectors.task_view(services.task_cancel(credential=credential, task_id=parsed.id))


@csrf_exempt  # no cookie is read here: a peer is its key, sent in a header no other site can set
def jsonrpc_view(request: HttpRequest, slug: str) -> HttpResponseBase:
    request_id: Any = None
    try:
        if request.method != "POST":
            refused = InvalidRequestError("JSON-RPC requests are POSTed")
            refused.http_status = 405
            refused.headers["Allow"] = "POST"
            raise refused
        agent = _agent(slug)
        if agent is None:
            raise UnauthenticatedError("no such agent")
        body = _read_body(request)
        credential = _credential(request, agent)
        request_id, method, params = _envelope(body)
        result = _dispatch(request, agent, credential, request_id, method, params)
        if isinstance(result, StreamingHttpResponse):
            return result
        return _answer(request_id, result)
    except _Identified as identified:
        return _refusal(identified.request_id, identified.error)
    except A2AError as error:
        return _refusal(request_id, error)
    except Exception:
        log.exception("a2a: unforeseen failure", extra={"agent": slug})
        return _refusal(request_id, InternalError())
