"""Server-issued identities: the signed customer cookie and peer API keys, and the principal
each edge (HTTP, WebSocket) builds from them."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse

from .models import Customer, PeerCredential, PeerTrust, Tenant
from .services import customer_create, peer_key_matches, split_peer_key

CUSTOMER_COOKIE_PREFIX = "facade_customer_"


def customer_cookie_name(tenant: Tenant) -> str:
    return f"{CUSTOMER_COOKIE_PREFIX}{tenant.pk}"


def _salt(tenant_id: int) -> str:
    # The tenant is part of the salt, so a cookie issued for one tenant is garbage to another.
    return f"facade.customer.{tenant_id}"


def signed_customer_id(cookies: Mapping[str, str], tenant_id: int) -> str | None:
    """The customer id the tenant's cookie carries, if its signature holds and it has not aged
    out; no database read."""
    raw = cookies.get(f"{CUSTOMER_COOKIE_PREFIX}{tenant_id}")
    if not raw:
        return None
    try:
        return str(signing.loads(raw, salt=_salt(tenant_id), max_age=settings.FACADE_CUSTOMER_COOKIE_AGE))
    except signing.BadSignature:
        return None


def customer_from_request(request: HttpRequest, tenant: Tenant) -> Customer | None:
    customer_id = signed_customer_id(request.COOKIES, tenant.pk)
    if customer_id is None:
        return None
    return Customer.objects.filter(pk=customer_id, tenant=tenant).first()


def customer_for_request(request: HttpRequest, tenant: Tenant) -> tuple[Customer, bool]:
    """The caller's customer identity in this tenant, created when the cookie is missing."""
    customer = customer_from_request(request, tenant)
    if customer is not None:
        return customer, False
    return customer_create(tenant=tenant), True


def set_customer_cookie(response: HttpResponse, tenant: Tenant, customer: Customer) -> None:
    response.set_cookie(
        customer_cookie_name(tenant),
        signing.dumps(str(customer.pk), salt=_salt(tenant.pk)),
        max_age=settings.FACADE_CUSTOMER_COOKIE_AGE,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


class PeerKeyInvalid(Exception):
    pass


def peer_from_authorization(header: str | None) -> PeerCredential | None:
    """None when no Bearer key is sent; raises PeerKeyInvalid for a key that does not work."""
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer":
        return None
    parts = split_peer_key(value.strip())
    if parts is None:
        raise PeerKeyInvalid("malformed peer key")
    prefix, secret = parts
    credential: Any = PeerCredential.objects.select_related("agent__tenant").filter(key_prefix=prefix).first()
    if credential is None or not peer_key_matches(credential, secret) or credential.revoked_at is not None:
        raise PeerKeyInvalid("unknown or revoked peer key")
    if credential.trust == PeerTrust.PAUSED:
        raise PeerKeyInvalid("this peer key is paused by the agent's owner")
    return credential


@dataclass(frozen=True)
class Principal:
    """Who is calling, as an edge established it from its own inputs: the HTTP API from the
    request (its peer key, else its signed-in user and cookies), the chat WebSocket from its
    scope (user and cookies; peers don't use it).  A caller with a peer key is that key and
    nothing else — cookies that come along never count for it.

    Customer cookies are kept as sent: each is signed for one tenant, so which customer the
    caller is can only be read once the tenant is known (see `is_principal`)."""

    user_id: int | None = None
    peer_id: uuid.UUID | None = None
    customer_cookies: Mapping[str, str] = field(default_factory=dict, hash=False)

    @classmethod
    def of(cls, *, user: Any = None, peer: PeerCredential | None = None, cookies: Mapping[str, str]) -> Principal:
        """From an authenticated (or anonymous) user, a peer credential and the request's
        cookies; only the customer cookies are kept."""
        if peer is not None:
            return cls(peer_id=peer.pk)
        user_id = user.pk if user is not None and user.is_authenticated else None
        customer = {name: value for name, value in cookies.items() if name.startswith(CUSTOMER_COOKIE_PREFIX)}
        return cls(user_id=user_id, customer_cookies=customer)

    def is_principal(
        self, *, tenant_id: int, user_id: int | None, customer_id: Any | None, peer_id: Any | None
    ) -> bool:
        """Whether this caller is the principal with these ids (one of them set) in a tenant."""
        if self.peer_id is not None:
            return peer_id is not None and peer_id == self.peer_id
        if user_id is not None:
            return user_id == self.user_id
        if customer_id is not None:
            return signed_customer_id(self.customer_cookies, tenant_id) == str(customer_id)
        return False
