"""DRF authentication for peers: `Authorization: Bearer fpk_<prefix>_<secret>`."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from ..identity import PeerKeyInvalid, peer_from_authorization


class PeerKeyAuthentication(BaseAuthentication):
    """A peer is never a user: request.user stays anonymous and request.auth is the credential."""

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        try:
            credential = peer_from_authorization(request.META.get("HTTP_AUTHORIZATION"))
        except PeerKeyInvalid as exc:
            raise AuthenticationFailed(detail=str(exc), code="invalid_peer_key") from exc
        if credential is None:
            return None
        return AnonymousUser(), credential

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="facade-peer"'


class PeerKeyScheme(OpenApiAuthenticationExtension):
    target_class = "facade.tenancy.api.auth.PeerKeyAuthentication"
    name = "peerKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "A peer API key issued by the agent's owner."}
