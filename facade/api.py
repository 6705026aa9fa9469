"""The HTTP edge shared by every API: one error shape, `{"error": code, "detail": text}`.

Services raise :class:`facade.errors.ApplicationError` with the status they mean; the handler
below is the only place it becomes an HTTP response.  DRF's own exceptions (bad JSON, CSRF,
serializer validation …) get codes of the same shape here too."""

from __future__ import annotations

import io
import re
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.views import defaults
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.parsers import JSONParser
from rest_framework.response import Response

from facade import dependencies
from facade.errors import ApplicationError
from facade.ratelimit import UNREACHABLE, temporarily_unavailable_error


def _code_for(exc: exceptions.APIException) -> str:
    if isinstance(exc, exceptions.ParseError):
        return "malformed_body"
    if isinstance(exc, exceptions.UnsupportedMediaType):
        return "unsupported_media_type"
    if isinstance(exc, exceptions.NotAuthenticated):
        return "not_authenticated"
    if isinstance(exc, exceptions.AuthenticationFailed):
        codes = exc.get_codes()
        return codes if isinstance(codes, str) else "authentication_failed"
    if isinstance(exc, exceptions.PermissionDenied):
        return "forbidden"
    if isinstance(exc, exceptions.NotFound):
        return "not_found"
    if isinstance(exc, exceptions.MethodNotAllowed):
        return "method_not_allowed"
    if isinstance(exc, exceptions.Throttled):
        return "rate_limited"
    if isinstance(exc, exceptions.ValidationError):
        return "invalid_input"
    # An app that needs nothing from the project (the ledger) raises DRF's own exception with an
    # explicit code; a code that is only the class default says nothing more than "error".
    codes = exc.get_codes()
    if isinstance(codes, str) and codes != type(exc).default_code:
        return codes
    return "error"


# PostgreSQL's transient conflicts: deadlock_detected and serialization_failure.  The transaction
# that got one was rolled back whole; the same request a moment later succeeds (issue 28 §4).
TRANSIENT_SQLSTATES = frozenset({"40P01", "40001"})
TRANSIENT_RETRY_AFTER = 1


def transient_conflict(exc: BaseException) -> bool:
    """Whether `exc` (Django's database error, or what it wraps) is a deadlock or a
    serialization failure the database resolved by rolling this transaction back."""
    seen: BaseException | None = exc
    for _depth in range(5):
        if seen is None:
            return False
        if getattr(seen, "sqlstate", None) in TRANSIENT_SQLSTATES:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def transient_conflict_error() -> ApplicationError:
    return ApplicationError(
        "conflict_retry",
        "the request met another one changing the same things at the same moment; nothing was saved — send it again",
        503,
        retry_after=TRANSIENT_RETRY_AFTER,
    )


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    # Imported here: DRF's views module reads the parser setting, which names this module.
    from rest_framework.views import exception_handler as drf_exception_handler
    from rest_framework.views import set_rollback

    if isinstance(exc, UNREACHABLE):
        # Redis away (the cache, the channel layer): an expected condition, answered as one.
        dependencies.note_down(dependencies.REDIS)
        exc = temporarily_unavailable_error("this request")
    if transient_conflict(exc):
        # A deadlock or serialization failure: PostgreSQL rolled the transaction back.  A retry,
        # never a 500 (the loser of a lock cycle has done nothing wrong).
        exc = transient_conflict_error()
    if isinstance(exc, ApplicationError):
        # The status is the raiser's; `retry_after` goes in the body and the header.
        set_rollback()  # as DRF does for its own exceptions, should requests ever be atomic
        body: dict[str, Any] = {**exc.extra, "error": exc.code, "detail": exc.detail}
        if exc.retry_after is not None:
            body["retry_after"] = exc.retry_after
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else None
        return Response(body, status=exc.http_status, headers=headers)
    response = drf_exception_handler(exc, context)
    if response is None or not isinstance(exc, exceptions.APIException):
        return response
    shaped: dict[str, Any] = {"error": _code_for(exc)}
    if isinstance(exc, exceptions.ValidationError):
        shaped["detail"] = "the request is not valid"
        shaped["fields"] = exc.detail
    else:
        shaped["detail"] = str(exc.detail)
    response.data = shaped
    return response


ErrorSerializer = inline_serializer(
    name="Error",
    fields={
        "error": serializers.CharField(help_text="machine-readable error code"),
        "detail": serializers.CharField(help_text="human-readable explanation"),
    },
)


# The schema's pattern for text a service takes (dialogue `rules.text_problem`, `empty_message`):
# no NUL anywhere and something besides spaces.  (JSON Schema's regular expressions are ECMA's:
# `\u0000` is the NUL there and in Python's `re`, which the services and schemathesis use.)
PLAIN_TEXT_PATTERN = r"^[^\u0000]*[^\s\u0000][^\u0000]*$"


def error_response(description: str) -> OpenApiResponse:
    """An OpenAPI response entry for an error, listing its codes in the description."""
    return OpenApiResponse(response=ErrorSerializer, description=description)


# --- bounded bodies --------------------------------------------------------------------------

MAX_JSON_DEPTH = 32  # no payload of this API nests more than a few levels

# JSON strings (escapes included) and the brackets left once they are gone; an unrolled loop, so
# the scan stays linear on long strings.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_JSON_BRACKET = re.compile(rb"[\[\]{}]")


def json_too_deep(raw: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether `raw` opens more than `limit` arrays or objects inside each other, found without
    parsing it (brackets inside strings do not count)."""
    depth = 0
    for bracket in _JSON_BRACKET.finditer(_JSON_STRING.sub(b"", raw)):
        if bracket[0] in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


class BoundedJSONParser(JSONParser):
    """JSON nested deeper than MAX_JSON_DEPTH is malformed input, refused before it is parsed
    (the size of the body is bounded before any parser runs: `facade.bodylimit`)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        raw = stream.read() if stream is not None else b""
        if json_too_deep(raw):
            raise exceptions.ParseError(f"JSON nested more than {MAX_JSON_DEPTH} levels deep")
        try:
            return super().parse(io.BytesIO(raw), media_type, parser_context)
        except RecursionError as exc:  # deep but under the scan's count can't happen; kept as a net
            raise exceptions.ParseError("JSON nested too deeply") from exc


def _bad_request_code(exception: Exception) -> str:
    if isinstance(exception, TooManyFieldsSent | TooManyFilesSent):
        return "too_many_fields"
    if isinstance(exception, RequestDataTooBig):
        return "too_large"
    if isinstance(exception, MultiPartParserError):
        return "malformed_body"
    return "bad_request"


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's own 400 (a body it refused to parse before any view ran, a bad Host …) in the
    API's error shape on `/api/` paths, so a client of the API always gets JSON; pages keep
    Django's HTML page.  The exception's text is not echoed: it may quote the request."""
    if not request.path_info.startswith("/api/"):
        return defaults.bad_request(request, exception)
    code = _bad_request_code(exception)
    details = {
        "too_many_fields": "the body has more fields or files than the server accepts",
        "too_large": "the body is larger than the server accepts",
        "malformed_body": "the multipart body could not be parsed (is its boundary missing?)",
        "bad_request": "the request could not be understood",
    }
    return JsonResponse({"error": code, "detail": details[code]}, status=400)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """An unknown `/api/` path answers in the API's error shape, like every other API refusal;
    pages get the site's own page (templates/404.html)."""
    if not request.path_info.startswith("/api/"):
        return defaults.page_not_found(request, exception)
    return JsonResponse({"error": "not_found", "detail": "no such endpoint"}, status=404)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A refusal Django raised outside DRF (`PermissionDenied` in a page view): JSON on `/api/`
    paths, the site's own page (templates/403.html) elsewhere."""
    if not request.path_info.startswith("/api/"):
        return defaults.permission_denied(request, exception)
    return JsonResponse({"error": "forbidden", "detail": "you may not do this"}, status=403)


def server_error(request: HttpRequest) -> HttpResponse:
    """An unhandled exception: JSON on `/api/` paths, the site's own page (templates/500.html,
    rendered without the request, as Django does, so that a broken context cannot fail it)."""
    if not request.path_info.startswith("/api/"):
        return defaults.server_error(request)
    return JsonResponse({"error": "server_error", "detail": "the server failed; try again later"}, status=500)


# --- every /api/ answer is JSON ----------------------------------------------------------------

_CODE_FOR_STATUS = {
    400: "bad_request",
    401: "not_authenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
    500: "server_error",
    503: "temporarily_unavailable",
}
_REPLACED_HEADERS = frozenset({"content-type", "content-length", "content-encoding", "content-disposition"})


def json_error_for(response: HttpResponse) -> HttpResponse:
    """An error answered on an `/api/` path in anything but JSON, in the API's error shape with
    the same status and headers (security headers, Allow, Retry-After …) but for those that
    describe the body.  A DRF refusal that a view rendered in HTML (the reference page's) keeps
    its shaped body; any other body is not echoed."""
    status = response.status_code
    data = getattr(response, "data", None)  # a DRF refusal rendered as HTML: its shaped body
    if isinstance(data, dict) and "error" in data and "detail" in data:
        # (less the `status_code` DRF's HTML renderer adds to it for its template)
        body = {key: value for key, value in data.items() if isinstance(key, str) and key != "status_code"}
    else:
        detail = (response.reason_phrase or "the request failed").lower()
        body = {"error": _CODE_FOR_STATUS.get(status, "error"), "detail": detail}
    shaped = JsonResponse(body, status=status)
    for header, value in response.items():
        if header.lower() not in _REPLACED_HEADERS:
            shaped[header] = value
    shaped.cookies = response.cookies
    return shaped


def _needs_json(request: HttpRequest, response: HttpResponse) -> bool:
    if response.status_code < 400 or not request.path_info.startswith("/api/"):
        return False
    content_type = response.get("Content-Type", "").split(";", 1)[0].strip().lower()
    return content_type != "application/json"


class TransientConflictAnswer:
    """A deadlock or serialization failure that escapes a view (a page's form, a plain Django
    view on /api/) answers 503 with Retry-After — JSON on /api/, the site's "try again" page
    elsewhere — never the 500 page (issue 28 §4).  DRF views answer it in their handler above."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> Any:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not transient_conflict(exception):
            return None
        error = transient_conflict_error()
        if request.path_info.startswith("/api/"):
            response: HttpResponse = JsonResponse(
                {"error": error.code, "detail": error.detail, "retry_after": error.retry_after}, status=503
            )
        else:
            from django.shortcuts import render

            response = render(request, "503.html", status=503)
        response["Retry-After"] = str(error.retry_after)
        response["Cache-Control"] = "no-store"
        return response


class ApiErrorsInJson:
    """The outermost middleware: every error on an `/api/` path leaves as JSON — Django's own
    technical 404 and 500 pages under DEBUG, a bare `HttpResponseNotAllowed` of a decorated view,
    anything a view or middleware answers in HTML.  (With DEBUG off the handlers above already
    answer in JSON; this holds whatever the settings say.)"""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        response = self.get_response(request)
        return json_error_for(response) if _needs_json(request, response) else response

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        response = await self.get_response(request)
        return json_error_for(response) if _needs_json(request, response) else response
