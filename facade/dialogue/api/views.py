"""Thin HTTP views for sessions: input → policy/selector → service → output."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from facade.api import ApiError, error_response
from facade.tenancy.identity import customer_for_request, set_customer_cookie
from facade.tenancy.api.audience import request_audience
from facade.tenancy.policy import AgentPolicy, NotFound
from facade.tenancy.rules import Audience, PostDecision, find_audience_key, first_audience_name, may_post

from ..models import DialogueSession, Message
from ..selectors import session_for_caller
from ..services import DialogueError, message_post, session_open


class SessionOut(serializers.Serializer):
    id = serializers.UUIDField()
    agent = serializers.CharField(source="agent.slug")
    audience = serializers.ChoiceField(choices=[a.value for a in Audience])
    principal = serializers.SerializerMethodField()
    status = serializers.CharField()
    created_at = serializers.DateTimeField()

    def get_principal(self, session: DialogueSession) -> dict[str, str]:
        return {"type": session.principal_type, "id": session.principal_id}


class MessageIn(serializers.Serializer):
    text = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=100_000)
    client_message_id = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)


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
            raise ApiError("audience_is_server_derived", f"the audience is derived by the server ({source} {found!r})")
    data: Any = request.data
    if hasattr(data, "lists"):
        data = {key: values for key, values in data.lists()}
    found = find_audience_key(data)
    if found is not None:
        raise ApiError("audience_is_server_derived", f"the audience is derived by the server (body {found!r})")


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
        403: error_response("`forbidden` (CSRF)"),
        404: error_response("`not_found`: no such agent"),
        415: error_response("`unsupported_media_type`"),
    },
    tags=["sessions"],
)
class SessionCreateView(APIView):
    def post(self, request: Request, slug: str) -> Response:
        refuse_audience_spoofing(request)
        agent = AgentPolicy.get_public(slug)
        audience, credential = request_audience(request, agent)
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
    summary="Read a session",
    responses={200: SessionOut, 401: error_response("`invalid_peer_key`"), 404: error_response("`not_found`")},
    tags=["sessions"],
)
class SessionDetailView(APIView):
    def get(self, request: Request, session_id: str) -> Response:
        session = session_for_caller(request=request, session_id=session_id)
        return Response(SessionOut(session).data)


@extend_schema(
    summary="Post a message in a session",
    description=(
        "Only the session's principal may post. An owner who has since been removed from the "
        "agent gets 403 `no_longer_owner`. A repeated `client_message_id` returns the stored "
        "message instead of a second one. The agent's reply arrives with the runtime (see README "
        "limits)."
    ),
    request=MessageIn,
    responses={
        201: inline_serializer(name="MessagePosted", fields={"message": MessageOut(), "duplicate": serializers.BooleanField()}),
        200: OpenApiResponse(description="the same client_message_id was already stored"),
        400: error_response("`empty_message`, `message_too_long`, `invalid_input`, `malformed_body`"),
        401: error_response("`invalid_peer_key`"),
        403: error_response("`no_longer_owner`, `forbidden` (CSRF)"),
        404: error_response("`not_found`"),
        409: error_response("`session_not_open`"),
    },
    tags=["sessions"],
)
class MessageCreateView(APIView):
    def post(self, request: Request, session_id: str) -> Response:
        session = session_for_caller(request=request, session_id=session_id)
        payload = MessageIn(data=request.data)
        payload.is_valid(raise_exception=True)
        decision = may_post(
            audience=session.audience,
            status=session.status,
            caller_still_owner=session.audience == Audience.OWNER and AgentPolicy.is_owner(request.user, session.agent),
        )
        if decision == PostDecision.NO_LONGER_OWNER:
            raise ApiError("no_longer_owner", "you are no longer an owner of this agent", status.HTTP_403_FORBIDDEN)
        if decision != PostDecision.ALLOWED:
            raise ApiError(decision.value, "this session does not accept messages", status.HTTP_409_CONFLICT)
        try:
            message, created = message_post(
                session=session,
                text=payload.validated_data["text"],
                client_message_id=payload.validated_data["client_message_id"],
            )
        except DialogueError as exc:
            raise ApiError(exc.code, exc.detail) from exc
        body = {"message": MessageOut(message).data, "duplicate": not created}
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


__all__ = ["SessionCreateView", "SessionDetailView", "MessageCreateView", "Message", "NotFound"]
