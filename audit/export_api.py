"""`GET /api/audit/export?tenant=&from=&to=`: a verifiable JSON Lines export of a time range of
the tenant's ledger (audit.export), streamed, and recorded as `audit.exported`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.views import APIView

from facade.api import error_response

from .access import api_tenant
from .export import export_lines, export_plan, parse_bound
from .services import export_record


async def _one_by_one(chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    """Under ASGI (daphne), Django reads a synchronous iterator into a list before sending any of
    it; handed an asynchronous one it sends each chunk as it comes.  Each chunk is still made by
    the synchronous generator, in the request's own thread (thread-sensitive: its database
    connection), one at a time."""
    pull = sync_to_async(_next_chunk, thread_sensitive=True)
    while (chunk := await pull(chunks)) is not None:
        yield chunk


def _next_chunk(chunks: Iterator[bytes]) -> bytes | None:
    return next(chunks, None)


class AuditExportView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        tags=["audit"],
        summary="Export a time range of the tenant's ledger, verifiable offline (JSON Lines)",
        description=(
            "A header line (the range, its first and last seq, the covering signed checkpoint), "
            "then one line per event with the exact canonical text that was hashed, then the events "
            "after the range up to the checkpoint's size (`in_range: false`). Check it with "
            "`tools/verify_export.py` (README, *Auditor console*). Recorded as `audit.exported`."
        ),
        parameters=[
            OpenApiParameter("tenant", str, description="tenant slug (optional when you audit exactly one)"),
            OpenApiParameter("from", str, description="UTC date or datetime, inclusive (default: the chain's start)"),
            OpenApiParameter("to", str, description="UTC datetime, exclusive; a date includes that day (default: now)"),
        ],
        responses={
            (200, "application/jsonl"): OpenApiResponse(response=OpenApiTypes.STR, description="JSON Lines"),
            400: error_response("`invalid_range`: from/to unreadable or from not before to; `tenant_required`"),
            401: error_response("`not_authenticated`"),
            404: error_response("`not_found`: no such tenant among those you audit"),
        },
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        tenant = api_tenant(request.user, request.query_params.get("tenant"))
        start = parse_bound(request.query_params.get("from"), name="from", end=False)
        end = parse_bound(request.query_params.get("to"), name="to", end=True)
        plan = export_plan(tenant=tenant, start=start, end=end)
        export_record(tenant=tenant, reader=request.user, plan=plan)
        lines = export_lines(plan)
        served_async = isinstance(request._request, ASGIRequest)
        content = _one_by_one(lines) if served_async else lines
        response = StreamingHttpResponse(content, content_type="application/jsonl; charset=utf-8")
        name = f"ledger-{tenant.slug}-{plan.first_seq or 0}-{plan.last_seq or 0}.jsonl"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        response["Cache-Control"] = "no-store"
        return response
