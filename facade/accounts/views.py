"""The sign-in pages: password, then (for an owner who enrolled one) a code from an
authenticator app; and the page where an owner enrols an authenticator."""

from __future__ import annotations

import base64
import time
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth import login as auth_login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render, resolve_url
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_http_methods
from django_otp import login as otp_login
from django_otp.plugins.otp_totp.models import TOTPDevice

from .devices import confirmed_device, must_have_device


def lockout_message() -> str:
    # "min" rather than a plural: the catalogue (and its test) keeps one form per sentence.
    return gettext("Too many failed sign-in attempts. Please try again in %(minutes)d min.") % {
        "minutes": settings.FACADE_LOGIN_COOLOFF_MINUTES
    }


def locked_out(request: HttpRequest, original_response: Any = None, credentials: Any = None) -> HttpResponse:
    """Axes' answer when a sign-in is locked out (AXES_LOCKOUT_CALLABLE): the sign-in page again,
    with the email kept, saying why and for how long, as 429.  Whether the password was right
    is not said."""
    form = SignInForm(request, initial={"username": request.POST.get("username", "")[:150]})
    context = {"form": form, "locked_out": lockout_message(), "next": request.POST.get("next", "")}
    return render(request, "registration/login.html", context, status=429)


# --- two-step sign-in ------------------------------------------------------------------------

# The session holds who gave the right password, and when, until the code step; never the code.
PENDING = "facade_two_step_pending"
PENDING_SECONDS = 300


class CodeForm(forms.Form):
    code = forms.CharField(max_length=8, strip=True)

    def clean_code(self) -> str:
        code = "".join(self.cleaned_data["code"].split())
        if not code.isdigit() or len(code) != 6:
            raise forms.ValidationError(gettext("Enter the 6-digit code from your authenticator app."))
        return code


def _safe_next(request: HttpRequest, candidate: str) -> str:
    allowed = url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return candidate if candidate and allowed else resolve_url(settings.LOGIN_REDIRECT_URL)


class SignInForm(AuthenticationForm):
    """Django's sign-in form, refusing in the words of this page: the field is an e-mail address
    (Django's own message names the user model's "username")."""

    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": _("That e-mail address and password do not match an account. Check both and try again."),
    }


class SignInView(auth_views.LoginView):
    """The password step.  A user with an authenticator is not signed in yet: the code step
    finishes it, so no session (HTTP or WebSocket) ever counts as theirs on the password alone."""

    authentication_form = SignInForm

    def form_valid(self, form: AuthenticationForm) -> HttpResponse:
        user = form.get_user()
        if confirmed_device(user) is None:
            return super().form_valid(form)
        self.request.session[PENDING] = {
            "user": user.pk,
            "backend": getattr(user, "backend", settings.AUTHENTICATION_BACKENDS[-1]),
            "at": int(time.time()),
        }
        query = urlencode({"next": self.get_redirect_url() or ""})
        return HttpResponseRedirect(f"{reverse('login-code')}?{query}")


def _pending_user(request: HttpRequest) -> tuple[Any, str] | None:
    pending = request.session.get(PENDING)
    if not isinstance(pending, dict) or time.time() - float(pending.get("at", 0)) > PENDING_SECONDS:
        request.session.pop(PENDING, None)
        return None
    user = get_user_model().objects.filter(pk=int(pending.get("user", 0)), is_active=True).first()
    return (user, str(pending["backend"])) if user is not None else None


@require_http_methods(["GET", "POST"])
def sign_in_code(request: HttpRequest) -> HttpResponse:
    """The code step of signing in."""
    pending = _pending_user(request)
    next_url = request.POST.get("next") or request.GET.get("next", "")
    if pending is None:
        return HttpResponseRedirect(f"{reverse('login')}?{urlencode({'next': next_url})}")
    user, backend = pending
    device = confirmed_device(user)
    form = CodeForm(request.POST if request.method == "POST" else None)
    error = ""
    if device is None:  # removed since the password step
        request.session.pop(PENDING, None)
        return HttpResponseRedirect(reverse("login"))
    if request.method == "POST" and form.is_valid():
        allowed, _ = device.verify_is_allowed()
        if not allowed:
            # django-otp's throttle: each wrong code doubles the wait before the next is checked.
            error = gettext("Too many wrong codes. Please wait a little and try again.")
        elif device.verify_token(form.cleaned_data["code"]):
            del request.session[PENDING]
            auth_login(request, user, backend=backend)
            otp_login(request, device)
            return HttpResponseRedirect(_safe_next(request, next_url))
        else:
            error = gettext("That code is not right. Codes change every 30 seconds.")
    return render(request, "registration/login_code.html", {"form": form, "error": error, "next": next_url})


# --- enrolling an authenticator -----------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def two_step_setup(request: HttpRequest) -> HttpResponse:
    """Where a signed-in user adds an authenticator app: the secret is shown as text and as an
    otpauth: link (no QR code: no QR library is installed, and nothing loads from another host);
    a first code confirms it, and from then on signing in asks for a code."""
    next_url = request.POST.get("next") or request.GET.get("next", "")
    context: dict[str, Any] = {"next": next_url, "required": must_have_device(request.user)}
    if confirmed_device(request.user) is not None:
        return render(request, "registration/two_step.html", {**context, "enrolled": True})
    # One pending authenticator per user, so the secret stays the same across reloads.
    device = TOTPDevice.objects.filter(user=request.user, confirmed=False).order_by(
        "pk"
    ).first() or TOTPDevice.objects.create(user=request.user, name="authenticator app", confirmed=False)
    form = CodeForm(request.POST if request.method == "POST" else None)
    error = ""
    if request.method == "POST" and form.is_valid():
        if device.verify_token(form.cleaned_data["code"]):
            device.confirmed = True
            device.save(update_fields=["confirmed"])
            otp_login(request, device)
            return HttpResponseRedirect(_safe_next(request, next_url))
        error = gettext("That code is not right. Codes change every 30 seconds.")
    secret = base64.b32encode(device.bin_key).decode()
    context.update(
        form=form,
        error=error,
        secret=" ".join(secret[i : i + 4] for i in range(0, len(secret), 4)),
        uri=device.config_url,
    )
    return render(request, "registration/two_step.html", context)
