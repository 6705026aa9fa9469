"""`GET /api/agents/<slug>/metrics?days=30`: the owner's metrics (rsi/metrics.py), owners only."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from facade.api import error_response
from facade.errors import ApplicationError
from facade.tenancy.policy import AgentPolicy

from ..metrics import DEFAULT_DAYS, MAX_DAYS, MIN_DAYS, Metrics, agent_metrics


def days_param(raw: str | None) -> int:
    """The `days` query parameter: a whole number from 1 to 90 (30 when absent)."""
    if raw is None or raw == "":
        return DEFAULT_DAYS
    if not raw.isascii() or not raw.isdigit() or not MIN_DAYS <= int(raw) <= MAX_DAYS:
        raise ApplicationError("invalid_input", f"days must be a whole number from {MIN_DAYS} to {MAX_DAYS}")
    return int(raw)


class MetricsView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="The agent's metrics per local day, the period's totals and the week over week",
        operation_id="agents_metrics",
        parameters=[OpenApiParameter("days", int, description=f"{MIN_DAYS}–{MAX_DAYS}, default {DEFAULT_DAYS}")],
        responses={
            200: Metrics,
            400: error_response("`invalid_input`: days out of range"),
            401: error_response("`not_authenticated`"),
            404: error_response("`not_found`: no such agent among those you own"),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        agent = AgentPolicy.get_owned(request.user, slug)
        days = days_param(request.query_params.get("days"))
        return Response(agent_metrics(agent, days=days).model_dump(mode="json"))
