"""The ledger API for a chain's readers: verification, checkpoints and export.

The ledger knows chains, not tenants: which chain a caller may read comes from the project
(`ledger.chains`; in Facade the tenant named by `?tenant=`, for its owners and auditors), so
another tenant's ledger answers 404 like a tenant that does not exist.  The ledger needs nothing
else from the project: its own refusals are DRF exceptions carrying a code, which the project's
exception handler shapes like every other error.
"""

from __future__ import annotations

import base64

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .audit import chain_verify_and_checkpoint
from .chains import ChainRefused, NamedChain, chain_directory
from .models import LedgerEvent
from .selectors import ledger_verify
from .services import LedgerError


class LedgerApiError(exceptions.APIException):
    """A refusal of the ledger API with a machine-readable code (`error` in the body)."""

    def __init__(self, code: str, detail: str, http_status: int = status.HTTP_400_BAD_REQUEST) -> None:
        super().__init__(detail=detail, code=code)
        self.status_code = http_status


# The error body every API of the project answers with; described here rather than imported so
# that the ledger depends on nothing else in the project.
_ERROR_BODY = inline_serializer(
    name="LedgerErrorBody",
    fields={
        "error": serializers.CharField(help_text="machine-readable error code"),
        "detail": serializers.CharField(help_text="human-readable explanation"),
    },
)


def _error(description: str) -> OpenApiResponse:
    return OpenApiResponse(response=_ERROR_BODY, description=description)


_TENANT = OpenApiParameter("tenant", str, description="tenant slug (optional when you belong to exactly one)")
_ERRORS = {
    401: _error("`not_authenticated`"),
    400: _error("`tenant_required`: you read several tenants' ledgers; name one"),
    403: _error("`forbidden` (CSRF)"),
    404: _error("`not_found`: no such tenant among those you own or audit"),
}


def readable_chain(request: Request) -> NamedChain:
    try:
        return chain_directory().readable(user=request.user, label=request.query_params.get("tenant") or None)
    except ChainRefused as exc:
        raise LedgerApiError(exc.code, exc.detail, exc.http_status) from exc


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
        chain = readable_chain(request)
        return Response(ledger_verify(chain_id=chain.id).model_dump())


@extend_schema(tags=["ledger"], parameters=[_TENANT])
class LedgerCheckpointView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Verify the chain and, when it holds, sign a checkpoint of its head now",
        request=None,
        responses={
            201: CheckpointOut,
            409: _error("`chain_not_sound`: verification failed; nothing signed"),
            **_ERRORS,
        },
    )
    def post(self, request: Request) -> Response:
        chain = readable_chain(request)
        try:
            result, checkpoint = chain_verify_and_checkpoint(chain=chain)
        except LedgerError as exc:
            raise LedgerApiError("chain_not_sound", str(exc), status.HTTP_409_CONFLICT) from exc
        if checkpoint is None:
            raise LedgerApiError(
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
        chain = readable_chain(request)
        try:
            after = max(0, int(request.query_params.get("after", 0)))
            limit = min(10_000, max(1, int(request.query_params.get("limit", 1000))))
        except ValueError as exc:
            raise LedgerApiError("invalid_input", "after and limit must be integers") from exc
        rows = list(
            LedgerEvent.objects.filter(chain_id=chain.id, seq__gt=after)
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
