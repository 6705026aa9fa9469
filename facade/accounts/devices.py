"""Reads of a user's authenticator (a django-otp TOTP device) and of whether they must have one."""

from __future__ import annotations

from typing import Any

from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.plugins.otp_totp.models import TOTPDevice

from facade.tenancy.models import Membership, Role

from .rules import TwoStep, TwoStepFacts, two_step


def confirmed_device(user: Any) -> TOTPDevice | None:
    return TOTPDevice.objects.filter(user_id=user.pk, confirmed=True).order_by("pk").first()


def must_have_device(user: Any) -> bool:
    """An owner of a tenant that requires authenticator codes of its owners."""
    return Membership.objects.filter(user_id=user.pk, role=Role.OWNER, tenant__owners_require_totp=True).exists()


def two_step_of(user: Any, session: Any) -> TwoStep:
    """Where a signed-in user stands with two-step sign-in, from their session as django-otp left
    it (the session names the device a code was given for).  For the WebSocket, whose scope has
    the user and the session but no OTPMiddleware; pages and the API ask TwoStepGate."""
    device = confirmed_device(user)
    verified = False
    if device is not None and session is not None:
        given = session.get(DEVICE_ID_SESSION_KEY)
        verified = bool(given) and given == device.persistent_id
    return two_step(
        TwoStepFacts(
            has_device=device is not None,
            session_verified=verified,
            owner_of_requiring_tenant=device is None and must_have_device(user),
        )
    )
