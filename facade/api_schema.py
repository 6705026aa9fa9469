"""The API's OpenAPI schema (drf-spectacular): every operation lists, besides what its view
declares, the refusals the edge makes for it (`EdgeAutoSchema`).

A module of its own: DRF imports the schema class named in its settings while its own views
module (and drf-spectacular's) is still being imported."""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema

from facade.api import ErrorSerializer
from facade.bodylimit import body_limit

# Refusals the edge makes for any operation, whatever its view declares: an Authorization header
# with a key that does not work, a signed-in user held to their two-step state, a refused CSRF
# token or cross-site write, a path value that does not match its converter, a body that cannot
# be parsed, is too large or of a type no parser takes.  Each is listed under an operation only
# when it can answer it (`EdgeAutoSchema.edge_errors`), unless the view already lists that status.
EDGE_ERRORS: dict[int, str] = {
    400: "`malformed_body` (a body that cannot be parsed), `invalid_input` (with `fields`), `too_many_fields`",
    401: "`invalid_peer_key` (an Authorization header whose Bearer key does not work), `not_authenticated`, "
    "`two_step_required`",
    403: "`forbidden` (CSRF, or not allowed), `cross_site_request`, `two_step_enrolment_required`",
    404: "`not_found` (also a path value of the wrong form)",
    413: "`body_too_large`",
    415: "`unsupported_media_type`",
    429: "`rate_limited` (with a Retry-After header)",
    503: "`temporarily_unavailable`: Redis or the database is briefly away — send the same request again "
    "after the Retry-After header (a message with the same client_message_id is answered once); "
    "`server_busy`: too many opens and searches wait at once (with a Retry-After header)",
}
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class EdgeAutoSchema(AutoSchema):
    """drf-spectacular's schema with the edge's refusals listed under every operation that can
    answer them, so a client (and schemathesis' status-code check) knows every status it may
    get.  The set is derived from what the operation is — its method, its path parameters, the
    gate in front of its view — not written out per view."""

    def edge_errors(self, operation: dict[str, Any]) -> list[int]:
        codes = [401, 403]  # every view reads a Bearer key; the two-step gate holds any signed-in user
        if any(p.get("in") == "path" for p in operation.get("parameters", [])):
            codes.append(404)
        if self.method in UNSAFE_METHODS:
            codes += [400, 413, 415]
        elif any(p.get("in") == "query" for p in operation.get("parameters", [])):
            codes.append(400)  # a query parameter of the wrong form is `invalid_input`
        gate = getattr(self.view, "gate", None)
        if gate is not None and self.method in gate.methods:
            codes.append(429)
        # Any operation may meet Redis or the database briefly away (`temporarily_unavailable`,
        # facade/api.py), and a bounded gate a full queue (`server_busy`).
        codes.append(503)
        return sorted(codes)

    def get_operation(
        self, path: str, path_regex: str, path_prefix: str, method: str, registry: Any
    ) -> dict[str, Any] | None:
        operation = super().get_operation(path, path_regex, path_prefix, method, registry)
        if operation is None:
            return None
        responses = operation.setdefault("responses", {})
        error_ref = self.resolve_serializer(ErrorSerializer, "response").ref
        for code in self.edge_errors(operation):
            description = self.body_limits() if code == 413 else EDGE_ERRORS[code]
            responses.setdefault(
                str(code), {"description": description, "content": {"application/json": {"schema": error_ref}}}
            )
        return operation

    def body_limits(self) -> str:
        """The 413's description, with the largest body this operation takes (facade.bodylimit)."""
        view_class = type(self.view)
        said = f"{EDGE_ERRORS[413]}: a body may have at most {body_limit(view_class, 'application/json')} bytes"
        if getattr(view_class, "max_upload_bytes", None) is not None:
            said += f" ({body_limit(view_class, 'multipart/form-data')} as an upload, multipart/form-data)"
        return said
