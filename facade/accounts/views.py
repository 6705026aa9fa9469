"""The sign-in pages: password, then (for an owner who enrolled one) a code from an
authenticator app; and the page where an owner enrols an authenticator."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext


def lockout_message() -> str:
    # "min" rather than a plural: the catalogue (and its test) keeps one form per sentence.
    return gettext("Too many failed sign-in attempts. Please try again in %(minutes)d min.") % {
        "minutes": settings.FACADE_LOGIN_COOLOFF_MINUTES
    }


def locked_out(request: HttpRequest, original_response: Any = None, credentials: Any = None) -> HttpResponse:
    """Axes' answer when a sign-in is locked out (AXES_LOCKOUT_CALLABLE): the sign-in page again,
    with the email kept, saying why and for how long, as 429.  Whether the password was right
    is not said."""
    form = AuthenticationForm(request, initial={"username": request.POST.get("username", "")[:150]})
    context = {"form": form, "locked_out": lockout_message(), "next": request.POST.get("next", "")}
    return render(request, "registration/login.html", context, status=429)
