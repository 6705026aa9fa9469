"""Ledger verification, checkpoints and export for a tenant's owners and auditors.

The ledger knows chains, not tenants; the tenant is resolved here through the tenant policy, so
another tenant's ledger answers 404 like a tenant that does not exist.
"""

from __future__ import annotations

import base64

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from facade.api import error_response
from facade.errors import ApplicationError
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify
from ledger.services import LedgerError

from ..audit import tenant_ledger_verify
from ..models import Tenant
from ..policy import LEDGER_READERS, TenantPolicy

_TENANT = OpenApiParameter("tenant", str, description="tenant slug (optional when you belong to exactly one)")
_ERRORS = {
    401: error_response("`not_authenticated`"),
    400: error_response("`tenant_required`: you read several tenants' ledgers; name one"),
    403: error_response("`forbidden` (CSRF)"),
    404: error_response("`not_found`: no such tenant among those you own or audit"),
}


def ledger_tenant(request: Request) -> Tenant:
    slug = request.query_params.get("tenant")
    if slug:
        return TenantPolicy.get(request.user, slug, LEDGER_READERS)
    tenants = list(TenantPolicy.with_roles(request.user, LEDGER_READERS)[:2])
    if len(tenants) == 1:
        return tenants[0]
    if not tenants:
        raise ApplicationError("not_found", "no ledger you may read", status.HTTP_404_NOT_FOUND)
    raise ApplicationError("tenant_required", "you read several tenants' ledgers: add ?tenant=<slug>")


class VerifyOut(serializers.Serializer):
    ok = serializers.BooleanField()
    checked = serializers.IntegerField()
    first_bad_seq = serializers.IntegerField(allow_null=True)
    reason = serializers.CharField(allow_null=True)
    checkpoints_checked = serializers.IntegerField()
    head_hash = serializers.CharField(help_text="hex hash of the last event that verified")


class CheckpointOut(serializers.Serializer):
    chain = serializers.IntegerField()
    label = serializers.CharField()  # type: ignore[assignment]  # a field named like Field.label
    size = serializers.IntegerField()
    head_hash = serializers.CharField()
    issued_at = serializers.CharField()
    key_id = serializers.CharField()
    public_key = serializers.CharField()
    signature = serializers.CharField()


class ExportEventOut(serializers.Serializer):
    seq = serializers.IntegerField()
    prev_hash = serializers.CharField(help_text="hex")
    hash = serializers.CharField(help_text="hex")
    canonical = serializers.CharField(help_text="base64 of the exact bytes that were hashed")


@extend_schema(tags=["ledger"], parameters=[_TENANT])
class LedgerVerifyView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Verify the tenant's chain against itself and its signed checkpoints",
        responses={200: VerifyOut, **_ERRORS},
    )
    def get(self, request: Request) -> Response:
        tenant = ledger_tenant(request)
        return Response(ledger_verify(chain_id=tenant.pk).model_dump())


@extend_schema(tags=["ledger"], parameters=[_TENANT])
class LedgerCheckpointView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Verify the chain and, when it holds, sign a checkpoint of its head now",
        request=None,
        responses={
            201: CheckpointOut,
            409: error_response("`chain_not_sound`: verification failed; nothing signed"),
            **_ERRORS,
        },
    )
    def post(self, request: Request) -> Response:
        tenant = ledger_tenant(request)
        try:
            result, checkpoint = tenant_ledger_verify(tenant=tenant)
        except LedgerError as exc:
            raise ApplicationError("chain_not_sound", str(exc), status.HTTP_409_CONFLICT) from exc
        if checkpoint is None:
            raise ApplicationError(
                "chain_not_sound",
                f"the chain fails verification at seq {result.first_bad_seq} ({result.reason}); nothing was signed",
                status.HTTP_409_CONFLICT,
            )
        return Response(checkpoint.model_dump(), status=status.HTTP_201_CREATED)


@extend_schema(
    tags=["ledger"],
    parameters=[
        _TENANT,
        OpenApiParameter("after", int, description="events with seq greater than this (default 0)"),
        OpenApiParameter("limit", int, description="at most this many events (default 1000, max 10000)"),
    ],
)
class LedgerExportView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Export events with the exact bytes that were hashed",
        responses={
            200: inline_serializer(
                name="LedgerExport",
                fields={"events": ExportEventOut(many=True), "next_after": serializers.IntegerField(allow_null=True)},
            ),
            **_ERRORS,
        },
    )
    def get(self, request: Request) -> Response:
        tenant = ledger_tenant(request)
        try:
            after = max(0, int(request.query_params.get("after", 0)))
            limit = min(10_000, max(1, int(request.query_params.get("limit", 1000))))
        except ValueError as exc:
            raise ApplicationError("invalid_input", "after and limit must be integers") from exc
        rows = list(
            LedgerEvent.objects.filter(chain_id=tenant.pk, seq__gt=after)
            .order_by("seq")
            .values_list("seq", "prev_hash", "hash", "canonical")[:limit]
        )
        events = [
            {
                "seq": seq,
                "prev_hash": bytes(prev).hex(),
                "hash": bytes(digest).hex(),
                "canonical": base64.b64encode(canonical.encode("utf-8")).decode(),
            }
            for seq, prev, digest, canonical in rows
        ]
        return Response({"events": events, "next_after": events[-1]["seq"] if len(events) == limit else None})
