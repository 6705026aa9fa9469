"""How many wrong passwords lock a sign-in out: per account and address, and per account."""

from __future__ import annotations

from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest


class LoginThrottle(AxesDatabaseHandler):
    """Axes counts failures for each entry of AXES_LOCKOUT_PARAMETERS and locks at the highest
    count; here the two entries have limits of their own.  An address that keeps guessing one
    account is locked out of that account only (others behind the same address, a shared office
    or proxy, still sign in), and an account guessed at from many addresses is locked for all of
    them once FACADE_LOGIN_ACCOUNT_FAILURE_LIMIT failures add up."""

    def get_failures(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> int:
        pair, account = (
            qs.aggregate(n=Sum("failures_since_start"))["n"] or 0 for qs in self.get_user_attempts(request, credentials)
        )
        account_limit = settings.FACADE_LOGIN_ACCOUNT_FAILURE_LIMIT
        if account_limit and account >= account_limit:
            # Axes compares the answer with the pair's limit: report the account as at it.
            return max(pair, settings.FACADE_LOGIN_FAILURE_LIMIT)
        return int(pair)


def client_address(request: HttpRequest) -> str | None:
    """The address the lock-out counts a sign-in attempt from (see facade.ratelimit); None when
    the request has none (a test client's forced sign-in), as axes itself would answer."""
    import ipaddress

    from facade.ratelimit import request_client_ip

    address = request_client_ip(request.META)
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return None
