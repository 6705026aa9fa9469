"""The guard breaker's API: `GET /api/agents/<slug>/guard-breaker` reads whether the agent's
breaker is open, `POST /api/agents/<slug>/guard-breaker/close` closes it — an owner's recorded
decision (`guard.breaker_closed`).  Owners of the agent only (anyone else: 404; an auditor's
write is refused `read_only`); a session's POST is CSRF-checked by DRF."""

from __future__ import annotations

import datetime as dt
from typing import cast

from drf_spectacular.utils import extend_schema
from pydantic import BaseModel, Field
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from facade.api import error_response
from facade.tenancy.policy import AgentPolicy

from ..breaker import breaker_close, breaker_current
from ..models import GuardBreaker


class BreakerOut(BaseModel):
    open: bool = Field(description="whether the agent's customer face composes in strict mode because of the breaker")
    openedAt: dt.datetime | None = Field(description="when it opened (the open one, or the one just closed)")
    closedAt: dt.datetime | None
    blocks: int | None = Field(description="blocked customer and peer replies in the hour that opened it")
    threshold: int | None


def breaker_view(breaker: GuardBreaker | None) -> dict[str, object]:
    if breaker is None:
        return BreakerOut(open=False, openedAt=None, closedAt=None, blocks=None, threshold=None).model_dump(mode="json")
    return BreakerOut(
        open=breaker.closed_at is None,
        openedAt=breaker.opened_at,
        closedAt=breaker.closed_at,
        blocks=breaker.blocks,
        threshold=breaker.threshold,
    ).model_dump(mode="json")


_ERRORS = {
    401: error_response("`not_authenticated`"),
    403: error_response("`forbidden` (CSRF), `read_only` (an auditor)"),
    404: error_response("`not_found`: no such agent among those you own"),
}


@extend_schema(tags=["guard"])
class BreakerView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="Whether the agent's guard breaker is open", responses={200: BreakerOut, **_ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        agent = AgentPolicy.get_owned(request.user, slug)
        return Response(breaker_view(breaker_current(agent)))


@extend_schema(tags=["guard"])
class BreakerCloseView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Close the agent's guard breaker: its customer face composes as its contract says again",
        request=None,
        responses={200: BreakerOut, 409: error_response("`breaker_not_open`"), **_ERRORS},
    )
    def post(self, request: Request, slug: str) -> Response:
        agent = AgentPolicy.get_owned(request.user, slug)
        return Response(breaker_view(breaker_close(agent=agent, user_id=cast(int, request.user.pk))))
