"""Owner-only management of an agent's peer keys."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from facade.api import error_response

from ..models import PeerCredential
from ..policy import AgentPolicy, NotFound
from ..schemas import Actor
from ..services import peer_key_create, peer_key_revoke


class PeerKeyIn(serializers.Serializer):
    name = serializers.CharField(max_length=100)


class PeerKeyOut(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    key_prefix = serializers.CharField()
    created_at = serializers.DateTimeField()
    revoked_at = serializers.DateTimeField(allow_null=True)


_ERRORS = {
    401: error_response("`not_authenticated`"),
    403: error_response("`forbidden` (CSRF)"),
    404: error_response("`not_found`: no such agent among those you own"),
}


@extend_schema(tags=["peer keys"])
class PeerKeyListView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="List an agent's peer keys", responses={200: PeerKeyOut(many=True), **_ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        agent = AgentPolicy.get_owned(request.user, slug)
        keys = PeerCredential.objects.filter(agent=agent).order_by("created_at")
        return Response(PeerKeyOut(keys, many=True).data)

    @extend_schema(
        summary="Issue a peer key (shown once)",
        request=PeerKeyIn,
        responses={
            201: inline_serializer(
                name="PeerKeyIssued",
                fields={"id": serializers.UUIDField(), "name": serializers.CharField(), "key": serializers.CharField()},
            ),
            400: error_response("`invalid_input`, `invalid_name`"),
            **_ERRORS,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        agent = AgentPolicy.get_owned(request.user, slug)
        payload = PeerKeyIn(data=request.data)
        payload.is_valid(raise_exception=True)
        issued = peer_key_create(
            agent=agent,
            name=payload.validated_data["name"],
            actor=Actor.human(request.user.pk),
            created_by=request.user,
        )
        return Response(
            {"id": issued.credential_id, "name": issued.name, "key": issued.key}, status=status.HTTP_201_CREATED
        )


@extend_schema(tags=["peer keys"])
class PeerKeyDetailView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="Revoke a peer key (it stops working at once)", responses={204: None, **_ERRORS})
    def delete(self, request: Request, slug: str, key_id: str) -> Response:
        agent = AgentPolicy.get_owned(request.user, slug)
        credential = PeerCredential.objects.filter(agent=agent, pk=key_id).first()
        if credential is None:
            raise NotFound(key_id)
        peer_key_revoke(credential=credential, actor=Actor.human(request.user.pk))
        return Response(status=status.HTTP_204_NO_CONTENT)
