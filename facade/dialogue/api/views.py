"""Thin HTTP views for sessions: input → policy/selector → service → output."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.validators import ProhibitNullCharactersValidator
from django.db import transaction
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.validators import ProhibitSurrogateCharactersValidator
from rest_framework.views import APIView

from facade.api import PLAIN_TEXT_PATTERN, error_response
from facade.bodylimit import KiB
from facade.errors import ApplicationError
from facade.gate import Gate
from facade.ratelimit import request_client_ip
from facade.tenancy.api.audience import refuse_over_limit, request_audience, request_principal
from facade.tenancy.identity import customer_for_request, set_customer_cookie
from facade.tenancy.policy import AgentPolicy, NotFound
from facade.tenancy.rules import Audience, find_audience_key, first_audience_name
from facade.tenancy.schemas import Actor

from ..models import CustomerRequest, DialogueSession
from ..runtime.loop import run_cancel, turn_handle
from ..selectors import reply_view, request_view, session_for_principal, session_history
from ..services import (
    message_admit,
    rating_record,
    request_amend,
    request_transition,
    request_withdraw,
    session_open,
)


class SessionOut(serializers.Serializer):
    id = serializers.UUIDField()
    agent = serializers.CharField(source="agent.slug")
    audience = serializers.ChoiceField(choices=[a.value for a in Audience])
    principal = serializers.SerializerMethodField()
    status = serializers.CharField()
    preview = serializers.BooleanField()
    created_at = serializers.DateTimeField()

    def get_principal(self, session: DialogueSession) -> dict[str, str]:
        return {"type": session.principal_type, "id": session.principal_id}


class ServiceText(serializers.CharField):
    """Text whose characters the dialogue services judge (`services.text_check`: no NUL, no lone
    surrogate) rather than DRF's own validators, so that HTTP and the WebSocket refuse the same
    text with the same code, `invalid_text`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.validators = [
            v
            for v in self.validators
            if not isinstance(v, (ProhibitNullCharactersValidator, ProhibitSurrogateCharactersValidator))
        ]


class MessageText(ServiceText):
    """A message's text.  The serializer takes up to 100,000 characters so that the service, not
    DRF, refuses a longer one than FACADE_MESSAGE_MAX_CHARS (`message_too_long`, as over the
    WebSocket) or one of only spaces (`empty_message`); the schema states those limits
    (`MessageTextSchema`)."""


class MessageTextSchema(OpenApiSerializerFieldExtension):
    target_class = MessageText

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        limit = settings.FACADE_MESSAGE_MAX_CHARS  # read when the schema is made
        text = {"type": "string", "minLength": 1, "maxLength": limit, "pattern": PLAIN_TEXT_PATTERN}
        # Inside allOf: drf-spectacular would otherwise offer "" as well, the field being blank-able.
        return {"allOf": [text], "description": f"1 to {limit} characters (FACADE_MESSAGE_MAX_CHARS), not only spaces"}


@extend_schema_field({"type": "string", "maxLength": 64, "pattern": "^[^\\u0000]*$"})
class ClientMessageId(ServiceText):
    """Taken up to 200 characters so that the service refuses one over 64 with its own code
    (`invalid_client_message_id`, services._message_check); the schema states 64."""


class MessageIn(serializers.Serializer):
    text = MessageText(allow_blank=True, trim_whitespace=False, max_length=100_000)
    client_message_id = ClientMessageId(required=False, allow_blank=True, default="", max_length=200)


class MessageOut(serializers.Serializer):
    id = serializers.IntegerField()
    role = serializers.CharField()
    text = serializers.CharField()
    client_message_id = serializers.CharField()
    created_at = serializers.DateTimeField()


def refuse_audience_spoofing(request: Request) -> None:
    """The audience is the server's to derive.  Naming it anywhere — body (JSON or form, any
    depth, any case), query string or a header — is refused before anything is created."""
    for source, names in (
        ("query", request.query_params.keys()),
        ("header", [key[5:].replace("_", "-") for key in request.META if key.startswith("HTTP_")]),
    ):
        found = first_audience_name(names)
        if found is not None:
            raise ApplicationError(
                "audience_is_server_derived", f"the audience is derived by the server ({source} {found!r})"
            )
    data: Any = request.data
    if hasattr(data, "lists"):
        data = {key: values for key, values in data.lists()}
    found = find_audience_key(data)
    if found is not None:
        raise ApplicationError("audience_is_server_derived", f"the audience is derived by the server (body {found!r})")


@extend_schema(
    summary="Open a session with an agent",
    description=(
        "The server derives the audience: owner (a signed-in owner of the agent, or a platform "
        "operator), peer (a valid Bearer key of this agent), otherwise customer. Any `audience` "
        "field, query parameter or header is refused."
    ),
    request=inline_serializer(name="SessionCreate", fields={}),
    responses={
        201: SessionOut,
        400: error_response("`audience_is_server_derived`, `malformed_body`"),
        401: error_response("`invalid_peer_key`"),
        403: error_response("`forbidden` (CSRF), `cross_site_request`"),
        404: error_response("`not_found`: no such agent"),
        413: error_response("`body_too_large`"),
        415: error_response("`unsupported_media_type`"),
        429: error_response("`rate_limited` (with a Retry-After header)"),
        503: error_response("`server_busy`: too many opens and searches wait at once (with a Retry-After header)"),
    },
    tags=["sessions"],
)
class SessionCreateView(APIView):
    max_body_bytes = 2 * KiB  # the body carries nothing; it is read only to refuse a named audience
    gate = Gate(frozenset({"POST"}), "session:ip", what="sessions opened")

    def post(self, request: Request, slug: str) -> Response:
        refuse_audience_spoofing(request)
        agent = AgentPolicy.get_public(slug)
        audience, credential = request_audience(request, agent)
        refuse_over_limit(request, agent, audience, credential, action="session")  # before anything is created
        user = request.user
        new_customer = None
        with transaction.atomic():
            if audience == Audience.PEER:
                session = session_open(agent=agent, audience=audience, peer=credential)
            elif audience == Audience.OWNER:
                session = session_open(agent=agent, audience=audience, user=user)
            else:
                customer, created = customer_for_request(request, agent.tenant)
                new_customer = customer if created else None
                session = session_open(agent=agent, audience=audience, customer=customer)
        response = Response(SessionOut(session).data, status=status.HTTP_201_CREATED)
        if new_customer is not None:
            set_customer_cookie(response, agent.tenant, new_customer)
        return response


@extend_schema(
    summary="Open a preview of the customer face (the agent's owners)",
    description=(
        "A customer session whose principal is the signed-in owner: the agent answers exactly as it "
        "answers customers, and the session is marked `preview: true` and left out of every metric "
        "and review input (no knowledge misses or hits, no rating, no trust changes; its requests "
        "send no e-mail and are not counted). Anyone but an owner of the agent gets 404."
    ),
    request=inline_serializer(name="PreviewSessionCreate", fields={}),
    responses={
        201: SessionOut,
        400: error_response("`audience_is_server_derived`, `malformed_body`"),
        403: error_response("`forbidden` (CSRF), `cross_site_request`"),
        404: error_response("`not_found`: no such agent among those you own"),
    },
    tags=["sessions"],
)
class PreviewSessionCreateView(APIView):
    max_body_bytes = 2 * KiB

    def post(self, request: Request, slug: str) -> Response:
        refuse_audience_spoofing(request)
        agent = AgentPolicy.get_owned(request.user, slug)
        session = session_open(agent=agent, audience=Audience.CUSTOMER, user=request.user, preview=True)
        return Response(SessionOut(session).data, status=status.HTTP_201_CREATED)


@extend_schema(
    summary="Read a session",
    responses={200: SessionOut, 401: error_response("`invalid_peer_key`"), 404: error_response("`not_found`")},
    tags=["sessions"],
)
class SessionDetailView(APIView):
    def get(self, request: Request, session_id: str) -> Response:
        session = session_for_principal(principal=request_principal(request), session_id=session_id)
        return Response(SessionOut(session).data)


class CitationOut(serializers.Serializer):
    entry_id = serializers.IntegerField(
        allow_null=True, help_text="the knowledge entry quoted; null for a published price list or delivery options"
    )
    version = serializers.IntegerField(help_text="the entry's version, or the contract version that published the part")
    title = serializers.CharField()
    published = serializers.ChoiceField(
        choices=["pricing", "delivery"],
        required=False,
        help_text="present when the citation is the live contract's price list or delivery options",
    )


class ReplyOut(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField()
    citations = CitationOut(many=True)
    stop_reason = serializers.CharField()
    cards = serializers.ListField(
        child=serializers.DictField(), help_text="owner face: the change proposals shown with the reply"
    )


class RequestOut(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    state = serializers.CharField()
    next_actor = serializers.CharField()
    summary = serializers.CharField()


class HistoryItem(serializers.Serializer):
    id = serializers.IntegerField()
    role = serializers.CharField()
    text = serializers.CharField()
    client_message_id = serializers.CharField()
    citations = CitationOut(many=True)
    stop_reason = serializers.CharField()
    cards = serializers.ListField(
        child=serializers.DictField(), help_text="owner face: the change proposals shown with the reply"
    )
    created_at = serializers.DateTimeField()


def client_ip(request: Request) -> str:
    return request_client_ip(request.META)


def message_body_limit() -> int:
    """Room for the longest message a principal may send with every character written as a
    six-byte JSON `\\u` escape, and its client_message_id."""
    return 6 * settings.FACADE_MESSAGE_MAX_CHARS + 2 * KiB


class MessagesView(APIView):
    max_body_bytes = staticmethod(message_body_limit)
    gate = Gate(frozenset({"POST"}), "ip", bounded=False, what="messages")  # a turn is not public work

    @extend_schema(
        summary="The messages of a session, oldest first, and its requests",
        responses={
            200: inline_serializer(
                name="History",
                fields={
                    "messages": HistoryItem(many=True),
                    "requests": RequestOut(many=True),
                    "rated": serializers.BooleanField(),
                    "status": serializers.CharField(),
                    "closed_reason": serializers.CharField(
                        help_text="`contract_republished`: a change of the agent's contract ended the session; "
                        "the next message is answered 409 `session_continued`, naming the session that continues it"
                    ),
                    "preview": serializers.BooleanField(),
                },
            ),
            401: error_response("`invalid_peer_key`"),
            404: error_response("`not_found`"),
        },
        tags=["sessions"],
    )
    def get(self, request: Request, session_id: str) -> Response:
        session = session_for_principal(principal=request_principal(request), session_id=session_id)
        return Response(session_history(session))

    @extend_schema(
        summary="Post a message in a session and get the agent's reply",
        description=(
            "Only the session's principal may post. The agent answers in the same request: "
            "`reply` holds the (guarded) text, the knowledge it cited and why the run stopped "
            "(empty when it finished normally); `request` is the customer request the turn "
            "registered, if any. A repeated `client_message_id` returns the stored message and its "
            "reply instead of running again. An owner who has since been removed gets 403 "
            "`no_longer_owner`."
        ),
        request=MessageIn,
        responses={
            201: inline_serializer(
                name="MessagePosted",
                fields={
                    "message": MessageOut(),
                    "duplicate": serializers.BooleanField(),
                    "reply": ReplyOut(allow_null=True),
                    "request": RequestOut(allow_null=True),
                },
            ),
            200: OpenApiResponse(
                description="the same client_message_id was already stored: the stored message and reply"
            ),
            400: error_response(
                "`empty_message`, `message_too_long`, `invalid_text`, `invalid_client_message_id`, "
                "`invalid_input`, `malformed_body`"
            ),
            401: error_response("`invalid_peer_key`"),
            403: error_response("`no_longer_owner`, `forbidden` (CSRF), `cross_site_request`"),
            404: error_response("`not_found`"),
            409: error_response(
                "`session_expired`, `session_closed`; `session_continued`: a change of the agent's contract took "
                "away what this conversation relied on and ended the session — `session` names the session that "
                "continues it (its messages and requests are there): send the message again there"
            ),
            413: error_response("`body_too_large`"),
            429: error_response("`rate_limited` (with a Retry-After header)"),
        },
        tags=["sessions"],
    )
    def post(self, request: Request, session_id: str) -> Response:
        principal = request_principal(request)
        payload = MessageIn(data=request.data)
        if not payload.is_valid():
            # Someone else's session answers 404 whatever the body, as everywhere; the lookup is
            # made here only on this path, since message_admit reads the session anyway.
            session_for_principal(principal=principal, session_id=session_id)
            raise serializers.ValidationError(payload.errors)
        text, client_message_id = payload.validated_data["text"], payload.validated_data["client_message_id"]
        session = message_admit(
            principal=principal,
            session_id=session_id,
            text=text,
            client_message_id=client_message_id,
            ip=client_ip(request),
        )
        result = turn_handle(session=session, text=text, client_message_id=client_message_id)
        body = {
            "message": MessageOut(result.message).data,
            "duplicate": result.duplicate,
            "reply": reply_view(result.reply),
            "request": result.request,
        }
        return Response(body, status=status.HTTP_200_OK if result.duplicate else status.HTTP_201_CREATED)


@extend_schema(
    summary="Cancel the session's running turn",
    description="No model or tool call starts after this; the turn ends with stop reason `cancelled`.",
    request=None,
    responses={
        200: inline_serializer(name="Cancelled", fields={"cancelled": serializers.IntegerField()}),
        403: error_response("`forbidden` (CSRF), `cross_site_request`"),
        404: error_response("`not_found`"),
    },
    tags=["sessions"],
)
class CancelView(APIView):
    max_body_bytes = 1 * KiB

    def post(self, request: Request, session_id: str) -> Response:
        session = session_for_principal(principal=request_principal(request), session_id=session_id)
        return Response({"cancelled": run_cancel(session=session)})


class RatingIn(serializers.Serializer):
    stars = serializers.IntegerField(min_value=1, max_value=5)
    comment = ServiceText(required=False, allow_blank=True, default="", max_length=2000)


@extend_schema(
    summary="Rate the conversation (customers, once per session)",
    request=RatingIn,
    responses={
        201: inline_serializer(name="Rated", fields={"stars": serializers.IntegerField()}),
        400: error_response("`invalid_input`, `invalid_rating`, `invalid_text`, `only_customers_rate`"),
        403: error_response("`forbidden` (CSRF), `cross_site_request`"),
        404: error_response("`not_found`"),
        409: error_response("`already_rated`"),
    },
    tags=["sessions"],
)
class RatingView(APIView):
    max_body_bytes = 16 * KiB  # a comment of 2,000 characters, escaped

    def post(self, request: Request, session_id: str) -> Response:
        session = session_for_principal(principal=request_principal(request), session_id=session_id)
        payload = RatingIn(data=request.data)
        payload.is_valid(raise_exception=True)
        rating = rating_record(
            session=session, stars=payload.validated_data["stars"], comment=payload.validated_data["comment"]
        )
        return Response({"stars": rating.stars}, status=status.HTTP_201_CREATED)


class TransitionIn(serializers.Serializer):
    to = serializers.CharField(max_length=32)


@extend_schema(
    summary="Move a customer request along the agent's request flow (the agent's owners)",
    request=TransitionIn,
    responses={
        200: RequestOut,
        400: error_response("`invalid_transition`, `invalid_input`"),
        404: error_response("`not_found`"),
    },
    tags=["requests"],
)
class RequestTransitionView(APIView):
    def post(self, request: Request, request_id: int) -> Response:
        found = CustomerRequest.objects.select_related("agent").filter(pk=request_id).first()
        if found is None or not AgentPolicy.is_owner(request.user, found.agent):
            raise NotFound(str(request_id))
        payload = TransitionIn(data=request.data)
        payload.is_valid(raise_exception=True)
        moved = request_transition(request=found, to=payload.validated_data["to"], actor=Actor.human(request.user.pk))
        return Response(request_view(moved))


class AmendIn(serializers.Serializer):
    summary = ServiceText(required=False, allow_blank=False, max_length=300)
    details = serializers.DictField(child=ServiceText(max_length=500, allow_blank=False), required=False, default=dict)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("summary") and not attrs.get("details"):
            raise serializers.ValidationError("give a summary or some details to change")
        return attrs


_CHANGE_ERRORS = {
    404: error_response("`not_found`: no such request in this session, or not the session's customer"),
    409: error_response(
        "`owner_has_acted` (the business moved or answered the request), `already_withdrawn`, `withdrawal_not_in_flow`"
    ),
    403: error_response("`forbidden` (CSRF), `cross_site_request`"),
}


@extend_schema(
    summary="Change a request of this session (its customer, before the business acts)",
    description=(
        "Only while the request is in its flow's first state and nobody of the business has acted on "
        "it. `details` are merged into the request's fields; each is checked for what it is (a contact "
        "must be an e-mail address or a phone number, a date or time a date or time)."
    ),
    request=AmendIn,
    responses={
        200: RequestOut,
        400: error_response("`invalid_fields`, `nothing_to_change`, `invalid_input`, `invalid_text`"),
        **_CHANGE_ERRORS,
    },
    tags=["requests"],
)
class RequestAmendView(APIView):
    def patch(self, request: Request, session_id: str, request_id: int) -> Response:
        session = session_for_principal(principal=request_principal(request), session_id=session_id)
        payload = AmendIn(data=request.data)
        if not payload.is_valid():
            raise serializers.ValidationError(payload.errors)
        amended = request_amend(
            session=session,
            request_id=request_id,
            summary=payload.validated_data.get("summary"),
            details=dict(payload.validated_data.get("details") or {}),
        )
        return Response(request_view(amended))


@extend_schema(
    summary="Withdraw a request of this session (its customer, before the business acts)",
    request=None,
    responses={200: RequestOut, **_CHANGE_ERRORS},
    tags=["requests"],
)
class RequestWithdrawView(APIView):
    max_body_bytes = 1 * KiB

    def post(self, request: Request, session_id: str, request_id: int) -> Response:
        session = session_for_principal(principal=request_principal(request), session_id=session_id)
        return Response(request_view(request_withdraw(session=session, request_id=request_id)))


__all__ = [
    "SessionCreateView",
    "PreviewSessionCreateView",
    "SessionDetailView",
    "MessagesView",
    "CancelView",
    "RatingView",
    "RequestTransitionView",
    "RequestAmendView",
    "RequestWithdrawView",
    "NotFound",
]
