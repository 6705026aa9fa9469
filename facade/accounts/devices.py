"""Reads of a user's authenticator (a django-otp TOTP device) and of whether they must have one."""

from __future__ import annotations

from typing import Any

from django_otp.plugins.otp_totp.models import TOTPDevice

from facade.tenancy.models import Membership, Role


def confirmed_device(user: Any) -> TOTPDevice | None:
    return TOTPDevice.objects.filter(user_id=user.pk, confirmed=True).order_by("pk").first()


def must_have_device(user: Any) -> bool:
    """An owner of a tenant that requires authenticator codes of its owners."""
    return Membership.objects.filter(user_id=user.pk, role=Role.OWNER, tenant__owners_require_totp=True).exists()
