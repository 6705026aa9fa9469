"""Server-issued identities: the signed customer cookie and peer API keys."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse

from .models import Customer, PeerCredential, Tenant
from .services import customer_create, peer_key_matches, split_peer_key


def customer_cookie_name(tenant: Tenant) -> str:
    return f"facade_customer_{tenant.pk}"


def _salt(tenant: Tenant) -> str:
    # The tenant is part of the salt, so a cookie issued for one tenant is garbage to another.
    return f"facade.customer.{tenant.pk}"


def customer_from_request(request: HttpRequest, tenant: Tenant) -> Customer | None:
    raw = request.COOKIES.get(customer_cookie_name(tenant))
    if not raw:
        return None
    try:
        customer_id = signing.loads(raw, salt=_salt(tenant), max_age=settings.FACADE_CUSTOMER_COOKIE_AGE)
    except signing.BadSignature:
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
        signing.dumps(str(customer.pk), salt=_salt(tenant)),
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
    return credential
