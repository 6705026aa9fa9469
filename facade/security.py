"""The Content-Security-Policy middleware: django-csp's, plus this host's WebSocket origin.

CSP Level 3 lets `'self'` cover ws:/wss: of the page's own host, but browsers that predate it
would block the chat's socket; naming the origin explicitly works everywhere.  The host comes
from `request.get_host()`, which Django has already checked against ALLOWED_HOSTS."""

from __future__ import annotations

from csp.middleware import CSPMiddleware, PolicyParts
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest
from django.http.response import HttpResponseBase


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    def get_policy_parts(
        self, request: HttpRequest, response: HttpResponseBase, report_only: bool = False
    ) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        if report_only:
            return parts
        try:
            host = request.get_host()
        except DisallowedHost:  # the response is Django's 400 for that host: 'self' is enough
            return parts
        scheme = "wss" if request.is_secure() else "ws"
        parts.update = {**(parts.update or {}), "connect-src": [f"{scheme}://{host}"]}
        return parts
