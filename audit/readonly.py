"""Auditors change nothing: a signed-in user who is only a reader of ledgers (`is_auditor_only`:
an auditor of some tenant or a platform auditor, owning nothing, not an operator) is refused
every unsafe method (POST, PUT, PATCH, DELETE) on every route — `{"error": "read_only"}` on
`/api/`, the site's 403 page elsewhere — whatever the view behind it would have allowed.

The few exceptions are what a reader needs to come and go: sign in and out (the site's and the
admin's), the two-step flows, the language menu, accepting an invitation, the console's own "verify now"
(`/audit/<tenant>/verification/run`, which writes nothing but its `audit.verified` record) and
`POST /api/ledger/checkpoints` (verify the chain and sign a checkpoint of its head: a file outside
the database that records nothing new, which is how an auditor pins what they have verified).

This is a second wall, not the first: every view already refuses a caller who is no owner of
its agent.  It exists so that a route added later cannot forget auditors, and so that an auditor
who also carries a customer cookie cannot act as that customer while signed in — the customer
page tells them to sign out first (`facade.web.customer_page`), and the chat WebSocket refuses
their message, cancel and rating frames with the same code (`facade.dialogue.consumers`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext

from .access import is_auditor_only

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
# URL names (as the resolver matched them) an auditor may still POST to.
ALLOWED_NAMES = frozenset(
    {
        "login",
        "login-code",
        "two-step",
        "logout",
        "set_language",
        "admin:login",
        "admin:logout",
        "ledger-checkpoints",
        "audit-verify-run",  # the console's "verify now" (a record of the check, nothing more)
        "invitation",  # accepting an invitation to another tenant (the invitation governs it)
        # A reader's own account: a forgotten password, a changed e-mail address.
        "password_reset",
        "password_reset_confirm",
        "email-change",
        "email-change-confirm",
        "password_change",
    }
)


def read_only_allowed(request: HttpRequest) -> bool:
    """Whether an auditor's unsafe request to this route is one of the allowed few."""
    match = request.resolver_match
    return match is not None and match.view_name in ALLOWED_NAMES


def read_only_refusal(request: HttpRequest) -> HttpResponse:
    detail = gettext("You read ledgers as an auditor: auditors change nothing.")
    if request.path_info.startswith("/api/"):
        return JsonResponse({"error": "read_only", "detail": detail}, status=403)
    return render(request, "403.html", {"read_only": True}, status=403)


class AuditorReadOnly:
    """After AuthenticationMiddleware (it reads request.user); in process_view, so that the route
    is known and a path nothing serves still answers 404."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> HttpResponse | None:
        if request.method in SAFE_METHODS or not request.user.is_authenticated:
            return None
        if read_only_allowed(request) or not is_auditor_only(request.user):
            return None
        return read_only_refusal(request)
