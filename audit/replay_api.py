"""`GET /api/audit/replay`: an agent as it was at a moment, as JSON (audit/replay.py)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from facade.api import error_response
from facade.tenancy.models import AgentProfile
from facade.tenancy.policy import NotFound

from .access import api_tenant
from .replay import ReplayError, agent_state_at
from .services import access_record


class ContractAtOut(serializers.Serializer):
    version = serializers.IntegerField(allow_null=True, help_text="null: the live version with a change left out")
    event_seq = serializers.IntegerField()
    published_at = serializers.DateTimeField()
    rolled_back_to = serializers.IntegerField(allow_null=True)
    content = serializers.JSONField(help_text="mission, boundary_wording, wording, clarification_order, …")
    hash = serializers.CharField(help_text="the content hash the ledger recorded")
    hash_ok = serializers.BooleanField(help_text="the version row still holds what the ledger recorded")


class KnowledgeAtOut(serializers.Serializer):
    entry = serializers.IntegerField()
    kind = serializers.CharField()
    version = serializers.IntegerField()
    title = serializers.CharField()
    content_sha256 = serializers.CharField()
    hash_ok = serializers.BooleanField()
    event_seq = serializers.IntegerField()
    event_type = serializers.CharField()


class StateOut(serializers.Serializer):
    agent = serializers.CharField()
    at = serializers.DateTimeField()
    seq = serializers.IntegerField(help_text="the last event of the ledger at or before `at`")
    contract = ContractAtOut()
    knowledge = KnowledgeAtOut(many=True)
    mismatches = serializers.ListField(child=serializers.CharField())


class ReplayOut(serializers.Serializer):
    live = StateOut()
    left_out = inline_serializer(
        name="AuditReplayLeftOut",
        fields={
            "seq": serializers.IntegerField(),
            "event_type": serializers.CharField(),
            "kind": serializers.ChoiceField(choices=["contract", "knowledge"]),
            "contract_version": serializers.IntegerField(allow_null=True),
            "entry": serializers.IntegerField(allow_null=True),
            "events": serializers.ListField(child=serializers.IntegerField()),
        },
        allow_null=True,
    )
    without = StateOut(allow_null=True)
    diff = serializers.JSONField(allow_null=True, help_text="{contract: [{path, live, without}], knowledge: [...]}")


def _state(state: Any) -> dict[str, Any] | None:
    if state is None:
        return None
    return {**state.model_dump(mode="json"), "mismatches": state.mismatches()}


@extend_schema(tags=["audit"])
class ReplayApiView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="An agent's contract and approved knowledge as they were at a moment, optionally without one change",
        parameters=[
            OpenApiParameter("tenant", str, description="tenant slug (optional when you audit exactly one)"),
            OpenApiParameter("agent", str, required=True, description="the agent's slug"),
            OpenApiParameter(
                "at", str, required=True, description="ISO 8601 date and time; without an offset, the tenant's zone"
            ),
            OpenApiParameter("without", int, description="the seq of a contract or knowledge change to leave out"),
        ],
        responses={
            200: ReplayOut,
            400: error_response(
                "`invalid_at`, `at_in_future`, `agent_not_yet`, `invalid_without`, `without_unknown`, "
                "`without_after_at`, `without_other_agent`, `without_not_a_change`, `without_first_version`, "
                "`tenant_required`"
            ),
            401: error_response("`not_authenticated`"),
            404: error_response("`not_found`: no such tenant among those you audit, or no such agent in it"),
        },
    )
    def get(self, request: Request) -> Response:
        tenant = api_tenant(request.user, request.query_params.get("tenant") or None)
        agent = AgentProfile.objects.filter(tenant=tenant, slug=request.query_params.get("agent", "")).first()
        if agent is None:
            raise NotFound("agent")
        at = request.query_params.get("at", "")
        if not at.strip():
            raise ReplayError("invalid_at", gettext("Name the time: at=<ISO 8601 date and time>."))
        replay = agent_state_at(agent=agent, at=at, without=request.query_params.get("without") or None)
        access_record(tenant=tenant, reader=request.user, view="api.replay", params=dict(request.query_params.items()))
        body = {
            "live": _state(replay.live),
            "left_out": replay.left_out.model_dump(mode="json") if replay.left_out else None,
            "without": _state(replay.without),
            "diff": replay.diff.model_dump(mode="json") if replay.diff else None,
        }
        return Response(body)
