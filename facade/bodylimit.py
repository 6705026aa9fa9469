"""Bounded request bodies: each API view takes a body of at most the size it declares, refused
with 413 `body_too_large` before anything reads or parses it."""

from __future__ import annotations

import io
from http import HTTPStatus
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponse, JsonResponse
from rest_framework.views import APIView

KiB = 1024
DEFAULT_BODY_LIMIT = 16 * KiB  # an API view that declares nothing: owner forms of a few fields


def body_limit(view_class: Any, content_type: str) -> int:
    """The largest body a view takes: its `max_upload_bytes` for a multipart body when it takes
    uploads, else its `max_body_bytes` (an int, or a function of nothing for limits that follow a
    setting), else DEFAULT_BODY_LIMIT."""
    upload = getattr(view_class, "max_upload_bytes", None)
    if upload is not None and content_type.split(";", 1)[0].strip().lower() == "multipart/form-data":
        return int(upload)
    limit = getattr(view_class, "max_body_bytes", DEFAULT_BODY_LIMIT)
    return int(limit() if callable(limit) else limit)


def too_large_body(limit: int) -> dict[str, str]:
    """The 413 answer's body (here and at the gate in front of Django, facade/gate.py)."""
    return {"error": "body_too_large", "detail": f"the request body may have at most {limit} bytes here"}


def _too_large(limit: int) -> JsonResponse:
    return JsonResponse(too_large_body(limit), status=HTTPStatus.REQUEST_ENTITY_TOO_LARGE)


class BodyLimitMiddleware:
    """Refuses an API request whose body is larger than its view takes, before anything reads or
    parses it: 413 `body_too_large`.

    DRF parses the whole stream it is given (Django's DATA_UPLOAD_MAX_MEMORY_SIZE is never asked),
    so the bound is set here, per view (`body_limit`).  A declared Content-Length over the limit
    is refused unread (under ASGI the gate in front of Django, facade/gate.py, already did).  A
    body sent without one (chunked) is read up to the limit and refused beyond it; under it, it
    is given the length it has, so DRF parses it as any other body (DRF would otherwise take it
    for no body at all).  Views outside the API keep Django's own limits.

    `process_view` is a coroutine so that under ASGI it costs no thread of its own; the body it
    may read is already in memory or a local temporary file (the server received it)."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        return self.get_response(request)

    async def process_view(self, request: HttpRequest, view_func: Any, args: Any, kwargs: Any) -> HttpResponse | None:
        view_class = getattr(view_func, "cls", None)
        if view_class is None or not issubclass(view_class, APIView):
            return None
        limit = body_limit(view_class, request.META.get("CONTENT_TYPE", ""))
        declared = request.META.get("CONTENT_LENGTH")
        try:
            length = int(declared) if declared else None
        except ValueError:
            length = None
        if length is not None and length >= 0:
            return _too_large(limit) if length > limit else None
        body = request.read(limit + 1)
        if len(body) > limit:
            return _too_large(limit)
        # What DRF and Django read from here on: the body, with its length.
        request._body = body
        request._stream = io.BytesIO(body)
        request.META["CONTENT_LENGTH"] = str(len(body))
        return None
