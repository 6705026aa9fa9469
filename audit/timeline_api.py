"""`GET /api/audit/events`: the timeline of a tenant's ledger as JSON (the filters and keyset
paging of the console's timeline page; see audit.timeline)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from facade.api import error_response

from .access import api_tenant
from .services import access_record
from .timeline import DEFAULT_LIMIT, MAX_LIMIT, parse_filters, parse_limit, parse_paging, timeline_page


class EventOut(serializers.Serializer):
    seq = serializers.IntegerField()
    event_type = serializers.CharField()
    label = serializers.CharField(help_text="the event type's description from the catalogue")  # type: ignore[assignment]
    entity_type = serializers.CharField()
    entity_id = serializers.CharField()
    entity_version = serializers.IntegerField(allow_null=True)
    actor_type = serializers.CharField()
    actor_id = serializers.CharField()
    created_at = serializers.CharField(help_text="UTC, as recorded (YYYY-MM-DDTHH:MM:SS.ffffffZ)")
    prev_hash = serializers.CharField(help_text="hex")
    hash = serializers.CharField(help_text="hex")
    payload = serializers.DictField(help_text="the event's payload (ids, counts, states; never customer text)")
    caused_by = serializers.IntegerField(allow_null=True, help_text="seq of the event that caused this one")
    caused = serializers.ListField(child=serializers.IntegerField(), help_text="the first events it caused (seqs)")
    caused_more = serializers.BooleanField(help_text="it caused more than those listed (filter caused_by=<seq>)")
    tampered = serializers.BooleanField(
        help_text="its hash is not SHA-256(prefix, prev_hash, canonical) or prev_hash is not the previous hash"
    )
    tamper_reason = serializers.CharField(allow_null=True, help_text="`hash_mismatch` or `broken_link`")


def _param(name: str, kind: type, description: str) -> OpenApiParameter:
    return OpenApiParameter(name, kind, description=description)


class AuditEventsView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        tags=["audit"],
        summary="The tenant's ledger events, newest first, filtered and paged by seq",
        operation_id="audit_events",
        parameters=[
            _param("tenant", str, "tenant slug (optional when you audit exactly one)"),
            _param("type", str, "an event type of the catalogue"),
            _param("entity_type", str, "the entity's type (e.g. knowledge_entry)"),
            _param("entity_id", str, "the entity's id (with entity_type)"),
            _param("actor", str, "the actor's id, exactly (e.g. user:5)"),
            _param("actor_type", str, "human, agent or platform"),
            _param("agent", str, "the agent slug the payload names"),
            _param("from", str, "ISO date or datetime, UTC: events from then on"),
            _param("to", str, "ISO date (the whole day) or datetime, UTC: events until then"),
            _param("caused_by", int, "events caused by this seq"),
            _param(
                "reads",
                str,
                "1: include the console's own records of who read what (audit.*), left out by default "
                "unless `type` or `entity_type` asks for them",
            ),
            _param("before", int, "older events: seq below this (the previous answer's next_before)"),
            _param("after", int, "newer events: seq above this (the previous answer's prev_after)"),
            _param("limit", int, f"at most this many events (default {DEFAULT_LIMIT}, 1–{MAX_LIMIT})"),
        ],
        responses={
            200: inline_serializer(
                name="AuditEvents",
                fields={
                    "events": EventOut(many=True),
                    "next_before": serializers.IntegerField(allow_null=True, help_text="`before` of the older page"),
                    "prev_after": serializers.IntegerField(allow_null=True, help_text="`after` of the newer page"),
                },
            ),
            400: error_response(
                "`unknown_event_type`, `unknown_actor_type`, `entity_type_required`, `invalid_time`, "
                "`invalid_range`, `invalid_seq`, `invalid_limit`, `invalid_paging`, `too_long`, `tenant_required`"
            ),
            401: error_response("`not_authenticated`"),
            403: error_response("`not_authenticated` (no session)"),
            404: error_response("`not_found`: no such tenant among those you audit"),
        },
    )
    def get(self, request: Request) -> Response:
        tenant = api_tenant(request.user, request.query_params.get("tenant") or None)
        params = {str(key): str(value) for key, value in request.query_params.items()}
        filters = parse_filters(params)
        before, after = parse_paging(params)
        limit = parse_limit(params.get("limit"))
        page = timeline_page(chain_id=tenant.pk, filters=filters, before=before, after=after, limit=limit)
        access_record(tenant=tenant, reader=request.user, view="api.events", params=params)
        return Response(page.as_json())
