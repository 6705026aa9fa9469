"""Owner-only management of an agent's peer keys, and of the tenant's auditor raw-text setting."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from facade.api import error_response

from ..models import PeerCredential, PeerTrust, Role
from ..policy import AgentPolicy, NotFound, TenantPolicy
from ..schemas import Actor
from ..services import peer_key_create, peer_key_revoke, peer_key_trust_set, tenant_audit_raw_text_set


class PeerKeyIn(serializers.Serializer):
    name = serializers.CharField(max_length=100)


class PeerKeyOut(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    key_prefix = serializers.CharField()
    created_at = serializers.DateTimeField()
    revoked_at = serializers.DateTimeField(allow_null=True)
    trust = serializers.ChoiceField(choices=PeerTrust.choices)


class PeerTrustIn(serializers.Serializer):
    trust = serializers.ChoiceField(choices=PeerTrust.choices)


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

    @extend_schema(
        summary="Set how far a peer key is trusted: ask (questions only), requests, or paused",
        request=PeerTrustIn,
        responses={200: PeerKeyOut, 400: error_response("`invalid_input`, `key_revoked`"), **_ERRORS},
    )
    def patch(self, request: Request, slug: str, key_id: str) -> Response:
        agent = AgentPolicy.get_owned(request.user, slug)
        credential = PeerCredential.objects.filter(agent=agent, pk=key_id).first()
        if credential is None:
            raise NotFound(key_id)
        payload = PeerTrustIn(data=request.data)
        payload.is_valid(raise_exception=True)
        credential = peer_key_trust_set(
            credential=credential, trust=payload.validated_data["trust"], actor=Actor.human(request.user.pk)
        )
        return Response(PeerKeyOut(credential).data)

    @extend_schema(summary="Revoke a peer key (it stops working at once)", responses={204: None, **_ERRORS})
    def delete(self, request: Request, slug: str, key_id: str) -> Response:
        agent = AgentPolicy.get_owned(request.user, slug)
        credential = PeerCredential.objects.filter(agent=agent, pk=key_id).first()
        if credential is None:
            raise NotFound(key_id)
        peer_key_revoke(credential=credential, actor=Actor.human(request.user.pk))
        return Response(status=status.HTTP_204_NO_CONTENT)


class AuditRawTextIn(serializers.Serializer):
    allowed = serializers.BooleanField()


class AuditRawTextOut(serializers.Serializer):
    tenant = serializers.CharField(source="slug")
    allowed = serializers.BooleanField(source="auditors_read_raw_text")


@extend_schema(tags=["tenants"])
class TenantAuditRawTextView(APIView):
    """Whether the tenant's auditors may read customers' own words in the auditor console (off by
    default; each read is recorded).  The tenant's owners decide; anyone else gets 404."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Whether auditors may read customers' text",
        responses={200: AuditRawTextOut, **_ERRORS, 404: error_response("`not_found`: no such tenant among yours")},
    )
    def get(self, request: Request, tenant_slug: str) -> Response:
        tenant = TenantPolicy.get(request.user, tenant_slug, (Role.OWNER.value,))
        return Response(AuditRawTextOut(tenant).data)

    @extend_schema(
        summary="Allow or deny auditors reading customers' text (recorded in the ledger)",
        request=AuditRawTextIn,
        responses={
            200: AuditRawTextOut,
            400: error_response("`invalid_input`"),
            **_ERRORS,
            403: error_response("`forbidden` (CSRF), `read_only` (a signed-in auditor changes nothing)"),
            404: error_response("`not_found`: no such tenant among yours"),
        },
    )
    def put(self, request: Request, tenant_slug: str) -> Response:
        tenant = TenantPolicy.get(request.user, tenant_slug, (Role.OWNER.value,))
        payload = AuditRawTextIn(data=request.data)
        payload.is_valid(raise_exception=True)
        tenant = tenant_audit_raw_text_set(
            tenant=tenant, allowed=payload.validated_data["allowed"], actor=Actor.human(request.user.pk)
        )
        return Response(AuditRawTextOut(tenant).data)
