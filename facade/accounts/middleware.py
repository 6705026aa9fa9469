"""Holds a signed-in user to their two-step state before any page or API answers them, and
remembers the language they read the site in."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlencode

from django.contrib.auth import logout
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.urls import reverse
from django.utils.translation import gettext

from audit.access import is_auditor_only
from facade.tenancy.services import user_language_set

from .devices import confirmed_device, must_have_device
from .rules import TwoStep, TwoStepFacts, two_step

# What a user on their way to enrolling (or signing in again) may still reach.
EXEMPT_PREFIXES = ("/accounts/", "/static/", "/i18n/", "/healthz")


class TwoStepGate:
    """After django-otp's OTPMiddleware (which tells whether this session gave a code)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = request.user
        if not user.is_authenticated or request.path.startswith(EXEMPT_PREFIXES):
            return self.get_response(request)
        device = confirmed_device(user)
        facts = TwoStepFacts(
            has_device=device is not None,
            session_verified=bool(getattr(user, "is_verified", lambda: False)()),
            owner_of_requiring_tenant=device is None and must_have_device(user),
        )
        verdict = two_step(facts)
        if verdict is TwoStep.PASS:
            return self.get_response(request)
        api = request.path.startswith("/api/")
        if verdict is TwoStep.MUST_SIGN_IN_AGAIN:
            logout(request)
            if api:
                detail = gettext("Sign in again with your authenticator code.")
                return JsonResponse({"error": "two_step_required", "detail": detail}, status=401)
            return HttpResponseRedirect(f"{reverse('login')}?{urlencode({'next': request.get_full_path()})}")
        if api:
            detail = gettext("Your business requires an authenticator app: set it up first.")
            return JsonResponse({"error": "two_step_enrolment_required", "detail": detail}, status=403)
        return HttpResponseRedirect(f"{reverse('two-step')}?{urlencode({'next': request.get_full_path()})}")


class RememberLanguage:
    """After LocaleMiddleware and AuthenticationMiddleware: the language a signed-in person reads
    the site in is remembered for them (`user_language_set`), so that e-mails to them are written
    in it.  The session holds what was remembered last, so a page costs no write unless the
    language changed."""

    SESSION_KEY = "facade_language_remembered"

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        user = getattr(request, "user", None)
        language = getattr(request, "LANGUAGE_CODE", "")
        # An auditor changes nothing anywhere (audit/readonly.py), and nothing is e-mailed to one.
        if (
            user is not None
            and user.is_authenticated
            and request.method in ("GET", "HEAD")
            and response.status_code < 400
            and language
            and request.session.get(self.SESSION_KEY) != f"{user.pk}:{language}"
            and not is_auditor_only(user)
        ):
            user_language_set(user=user, language=language)
            request.session[self.SESSION_KEY] = f"{user.pk}:{language}"
        return response
