"""`GET /api/audit/lineage`: one entity's lineage as JSON for tools (the structure the lineage
page shows; see audit.lineage).  Read-only; each call is recorded as `audit.viewed`
(view `api.lineage`)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from facade.api import error_response

from .access import api_tenant
from .lineage import ENTITY_TYPES, entity_lineage
from .services import access_record


class LineageOut(serializers.Serializer):
    entity_type = serializers.CharField()
    entity_id = serializers.CharField()
    field = serializers.CharField(help_text="the contract field in focus, or empty")
    agent = serializers.CharField(help_text="the agent's slug")
    mismatches = serializers.ListField(
        child=serializers.IntegerField(), help_text="versions whose content no longer matches the ledger's hash"
    )
    versions = serializers.ListField(
        child=serializers.DictField(),
        help_text="oldest first: version, published (seq, event_type, at, actor), diff (unified diff lines), "
        "content_hash, recorded_hash, hash_ok, rollback, proposal (id, kind, level, origin, evidence, decisions, "
        "started), decision (who, when, authorization_id, assurance: click | email_otp), started (review_report "
        "with its claim's evidence pointers, owner_dialogue with its session, owner_direct, rollback)",
    )
    proposal = serializers.DictField(required=False, help_text="for a change proposal: its summary")


@extend_schema(
    tags=["audit"],
    parameters=[
        OpenApiParameter("tenant", str, description="tenant slug (optional when you audit exactly one)"),
        OpenApiParameter("entity_type", str, required=True, enum=list(ENTITY_TYPES)),
        OpenApiParameter(
            "entity_id", str, required=True, description="agent slug (contract), entry id, or change id (chg_…)"
        ),
        OpenApiParameter("field", str, description="a contract: one field to follow (e.g. boundary_wording)"),
    ],
)
class LineageView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Who changed an entity, when, and because of which decision, proposal and review",
        responses={
            200: LineageOut,
            400: error_response("`unknown_entity_type`, `unknown_field`, `tenant_required`"),
            401: error_response("`not_authenticated`"),
            404: error_response("`not_found`: no such tenant among those you audit, or no such entity in it"),
        },
    )
    def get(self, request: Request) -> Response:
        params = request.query_params
        tenant = api_tenant(request.user, params.get("tenant") or None)
        lineage = entity_lineage(
            tenant=tenant,
            entity_type=params.get("entity_type", ""),
            entity_id=params.get("entity_id", ""),
            field=params.get("field", ""),
        )
        access_record(tenant=tenant, reader=request.user, view="api.lineage", params=dict(params.items()))
        return Response(lineage)
