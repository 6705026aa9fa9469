"""The daily review's API: `POST /api/agents/<slug>/reviews {"date"}` runs (or re-runs) the review
of one local day — idempotent per day — and `GET /api/agents/<slug>/reviews/<date>` reads its
report.  Owners of the agent only (anyone else: 404); a session's POST is CSRF-checked by DRF."""

from __future__ import annotations

import datetime as dt
from typing import Any

from drf_spectacular.utils import extend_schema
from pydantic import BaseModel, Field
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from facade.api import error_response
from facade.errors import ApplicationError
from facade.tenancy.policy import AgentPolicy

from ..review import ProposedAction, report_get, report_view, review_run
from ..weekly import WeeklyComparison


class ReviewIn(BaseModel):
    date: dt.date = Field(description="the agent's local day, YYYY-MM-DD; today gives a partial report")


class ReportOut(BaseModel):
    id: str
    day: dt.date
    status: str
    partial: bool
    runs: int
    inputDigest: str
    reviewer: str
    wins: list[dict[str, Any]]
    misses: list[dict[str, Any]]
    gaps: list[dict[str, Any]]
    proposals: list[ProposedAction] = Field(description='each with `"requires": "owner_approval"`')
    heldBack: int
    droppedClaims: int
    input: dict[str, Any] = Field(description="the ReviewInput: figures, ratios, pointers and shown topics")
    weekOverWeek: WeeklyComparison | None = Field(
        description="Monday's report (the review of a complete Sunday in the tenant's time zone): each metric of "
        "the seven days ending that Sunday against the seven before — values, change, direction and counts; "
        "null on other days"
    )


_ERRORS = {
    401: error_response("`not_authenticated`"),
    403: error_response("`forbidden` (CSRF)"),
    404: error_response("`not_found`: no such agent among those you own, or no review of that day"),
}


def _day(value: object) -> dt.date:
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError as exc:
        raise ApplicationError("invalid_input", "date is YYYY-MM-DD") from exc


@extend_schema(tags=["rsi"])
class ReviewRunView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Run the daily review of one local day (idempotent: the same report each time)",
        request=ReviewIn,
        responses={200: ReportOut, 400: error_response("`invalid_input`, `future_day`"), **_ERRORS},
    )
    def post(self, request: Request, slug: str) -> Response:
        agent = AgentPolicy.get_owned(request.user, slug)
        body = request.data if isinstance(request.data, dict) else {}
        if "date" not in body:
            raise ApplicationError("invalid_input", 'send {"date": "YYYY-MM-DD"}')
        report = review_run(agent_id=agent.pk, day=_day(body["date"]))
        return Response(report_view(report))


@extend_schema(tags=["rsi"])
class ReviewDetailView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="The report of one local day", responses={200: ReportOut, **_ERRORS})
    def get(self, request: Request, slug: str, day: str) -> Response:
        agent = AgentPolicy.get_owned(request.user, slug)
        report = report_get(agent, _day(day))
        if report is None:
            raise ApplicationError("not_found", "no review of that day", 404)
        return Response(report_view(report))
