"""Which web origins may talk to the product from a browser, matched exactly.

An origin is a scheme, a host and a port; two origins are the same only when all three are.
The site's own origins are configured: `FACADE_PUBLIC_URL` (where the site is served) plus every
entry of `CSRF_TRUSTED_ORIGINS` (other origins the site is reached through, e.g. behind a
proxy).  Host names alone are not enough: another port on the same machine, or plain http next
to https, is another site as far as the browser is concerned, and its pages carry the visitor's
cookies all the same.

Two edges ask:

- the chat WebSocket (`OriginValidator`, in front of every consumer): the handshake's Origin
  must be one of the configured origins, else the handshake is denied before any consumer runs;
- the HTTP API's state-changing customer endpoints (`CrossSiteWritesRefused`): an anonymous
  customer has no CSRF token, so a write is taken only as JSON (which no other site's page can
  send without a CORS preflight this server never answers), with no body at all, or from a
  matching Origin; a foreign Origin is refused whatever the body.  Peers (a Bearer key) are not
  browsers; signed-in users go through Django's CSRF check already.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from facade.errors import ApplicationError

Origin = tuple[str, str, int]  # scheme, host (lower case, IPv6 without brackets), port

DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(value: str, *, base_url: bool = False) -> Origin | None:
    """The origin a URL names, or None for anything that is not an http(s) origin.  A header
    must be a bare origin (`Origin: https://shop.example:8443`); a configured base URL may carry
    a path (`base_url=True`), which is not part of its origin."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:  # a port out of range or not a number, a broken IPv6 literal
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname or "@" in parts.netloc:
        return None
    if not base_url and (parts.path or parts.query or parts.fragment):
        return None
    return scheme, parts.hostname.lower(), port if port is not None else DEFAULT_PORTS[scheme]


def site_origins() -> frozenset[Origin]:
    """The configured origins of the site, read from the settings at each call (cheap, and a
    changed setting — in a test — takes effect at once)."""
    found = {origin_of(settings.FACADE_PUBLIC_URL, base_url=True)}
    found.update(origin_of(entry, base_url=True) for entry in settings.CSRF_TRUSTED_ORIGINS)
    return frozenset(origin for origin in found if origin is not None)


def origin_allowed(value: str | None, *, also: Origin | None = None) -> bool:
    """Whether an Origin header names one of the site's origins (or `also`, the origin the
    request itself was addressed to).  A missing or `null` Origin is no match."""
    if not value:
        return False
    origin = origin_of(value)
    return origin is not None and (origin in site_origins() or origin == also)


# --- the WebSocket edge --------------------------------------------------------------------


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


class OriginValidator:
    """ASGI middleware in front of the chat's consumers: a WebSocket handshake whose Origin is
    not exactly one of the site's origins is denied (an HTTP 403 to the browser) before any
    consumer, cookie or session is looked at."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not origin_allowed(_header(scope, b"origin")):
            return await WebsocketDenier.as_asgi()(scope, receive, send)
        return await self.application(scope, receive, send)


# --- the HTTP edge -------------------------------------------------------------------------


def request_origin(request: Request) -> Origin | None:
    """The origin the request was addressed to, as Django sees it (its Host is one of
    ALLOWED_HOSTS, its scheme https only when Django knows the request is secure)."""
    return origin_of(f"{request.scheme}://{request.get_host()}")


def _no_body(request: Request) -> bool:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0) == 0
    except ValueError:
        return False


class CrossSiteWritesRefused(BasePermission):
    """The default permission of the API: a state-changing request of an anonymous caller (a
    customer) is JSON or comes from a matching Origin; a foreign Origin is refused with 403
    `cross_site_request`.  Views with their own permission classes require a signed-in user, so
    they are covered by Django's CSRF check instead."""

    def has_permission(self, request: Request, view: Any) -> bool:
        if request.method in SAFE_METHODS or request.auth is not None:
            return True  # a read, or a peer's Bearer key: no browser holds one
        if request.user is not None and request.user.is_authenticated:
            return True  # SessionAuthentication has enforced CSRF
        origin = request.META.get("HTTP_ORIGIN")
        if origin is not None:
            if origin_allowed(origin, also=request_origin(request)):
                return True
            raise ApplicationError("cross_site_request", "this request comes from another site", 403)
        content_type = (request.content_type or "").split(";")[0].strip().lower()
        if content_type == "application/json":
            return True
        if not content_type and _no_body(request):
            return True  # a bare POST (`curl -X POST`): no browser sends one cross-site without an Origin
        raise ApplicationError(
            "cross_site_request", "a write without an Origin header must be sent as application/json", 403
        )
