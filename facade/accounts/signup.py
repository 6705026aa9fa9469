"""Self-service sign-up of a business (issue 32 §1, FACADE_SIGNUP=open): a form, an e-mailed
link that proves the address before anything is created, and the page that link opens, where the
person chooses a password (or signs in with that address) and the business is made — through
the same service the operator's page uses.  With FACADE_SIGNUP=invite the page says businesses
join by the platform's invitation; with `off` (the default) it answers 404."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth import login as auth_login
from django.contrib.auth.forms import SetPasswordForm
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import get_language, gettext
from django.views.decorators.http import require_http_methods

from facade.accounts.operator import posted_business_form
from facade.errors import ApplicationError
from facade.ratelimit import request_client_ip
from facade.tenancy.rules import same_address
from facade.tenancy.services import (
    SignupRequest,
    accounts_of_address,
    business_signup,
    signup_link_read,
    signup_link_send,
)

SESSION_KEY = "facade_signup"
FIELDS = ("name", "slug", "time_zone", "agent_name", "agent_slug", "email")


def _mode() -> str:
    mode = str(settings.FACADE_SIGNUP)
    if mode not in ("invite", "open"):
        raise Http404("sign-up is off")
    return mode


@require_http_methods(["GET", "POST"])
def signup_page(request: HttpRequest) -> HttpResponse:
    mode = _mode()
    form: dict[str, Any] = {**dict.fromkeys(FIELDS, ""), "time_zone": settings.TIME_ZONE}
    form["languages"] = [settings.LANGUAGE_CODE]
    context: dict[str, Any] = {"mode": mode, "site_languages": list(settings.LANGUAGES), "form": form}
    if mode != "open" or request.method != "POST":
        return render(request, "registration/signup.html", context)
    form.update(posted_business_form(request, FIELDS))
    asked = SignupRequest(
        name=form["name"],
        slug=form["slug"],
        time_zone=form["time_zone"],
        languages=form["languages"],
        agent_slug=form["agent_slug"],
        agent_name=form["agent_name"],
        email=form["email"],
    )
    try:
        sent = signup_link_send(request=asked, client_ip=request_client_ip(request.META), language=get_language())
    except ApplicationError as exc:
        return render(request, "registration/signup.html", {**context, "error": exc.detail}, status=exc.http_status)
    return render(request, "registration/signup.html", {**context, "sent_to": sent.email})


@require_http_methods(["GET", "POST"])
def signup_verify(request: HttpRequest) -> HttpResponse:
    _mode()
    token = request.GET.get("token")
    if token is not None:
        read = signup_link_read(token[:4000])
        if read is None:
            request.session.pop(SESSION_KEY, None)
            return render(request, "registration/signup_verify.html", {"unknown": True}, status=404)
        asked, language = read
        # The link leaves the address bar at once; the session keeps what it asked for.
        request.session[SESSION_KEY] = {**asked.__dict__, "language": language}
        return HttpResponseRedirect(reverse("signup-verify"))
    stored = request.session.get(SESSION_KEY)
    if not isinstance(stored, dict):
        return render(request, "registration/signup_verify.html", {"unknown": True}, status=404)
    stored = dict(stored)
    stored.pop("language", None)
    asked = SignupRequest(**stored)
    user = request.user
    form = SetPasswordForm(get_user_model()(username=asked.email, email=asked.email))
    error, status = "", 200
    if request.method == "POST":
        try:
            if user.is_authenticated:
                made, _user = business_signup(request=asked, user=user)
            else:
                form = SetPasswordForm(get_user_model()(username=asked.email, email=asked.email), request.POST)
                if not form.is_valid():
                    raise _FormInvalid
                made, user = business_signup(request=asked, password=form.cleaned_data["new_password1"])
                auth_login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        except _FormInvalid:
            pass
        except ApplicationError as exc:
            error, status = exc.detail, int(exc.http_status)
        else:
            request.session.pop(SESSION_KEY, None)
            messages.success(
                request,
                gettext("%(name)s is on Facade: you are its owner. Invite your team here.")
                % {"name": made.tenant.name},
            )
            return HttpResponseRedirect(reverse("team", args=[made.tenant.slug]))
    context = {
        "asked": asked,
        "form": form,
        "error": error,
        "has_account": accounts_of_address(asked.email).exists(),
        "site_languages": list(settings.LANGUAGES),
        "wrong_account": user.is_authenticated
        and not any(same_address(asked.email, a) for a in (str(user.email or ""), user.get_username())),
        "login_url": f"{reverse('login')}?next={reverse('signup-verify')}",
    }
    return render(request, "registration/signup_verify.html", context, status=status)


class _FormInvalid(Exception):
    pass
