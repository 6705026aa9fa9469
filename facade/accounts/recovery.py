"""A forgotten password and a changed e-mail address (issue 32 §2), in the site's layout and both
languages.  The password reset is Django's own flow (its token generator, views and forms); what
is added: a limit per address and per client on reset e-mails (FACADE_RATE_PASSWORD_RESET,
FACADE_RATE_PASSWORD_RESET_IP) whose refusal says nothing about the address, and the reset link's
token kept out of the access log (facade/server.py).  The page never says whether an address has
an account: the same "sent if it has one" answer either way.

An e-mail change: the signed-in person gives the new address and their password; a link valid
FACADE_EMAIL_CHANGE_HOURS goes to the new address (signed, nothing stored), and the address (the
user name too: people sign in with it) changes only when that link is opened by the same
account — the old address is told.  An address another account has is not said on the form; the
link's page says it, to the holder of that mailbox only."""

from __future__ import annotations

import hashlib
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model, update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordResetForm
from django.core import signing
from django.core.mail import send_mail
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_http_methods, require_safe

from facade.ratelimit import rate_check, request_client_ip
from facade.tenancy.services import TenancyError, accounts_of_address, normalised_address

from .devices import confirmed_device, must_have_device

# --- a forgotten password ----------------------------------------------------------------


class ResetForm(PasswordResetForm):
    email = forms.EmailField(label=_("Email"), max_length=254, widget=forms.EmailInput(attrs={"autocomplete": "email"}))


class PasswordResetView(auth_views.PasswordResetView):
    """Django's view; the e-mail's link points at FACADE_PUBLIC_URL, and it is rate-limited."""

    form_class = ResetForm
    email_template_name = "registration/password_reset_email.txt"
    subject_template_name = "registration/password_reset_subject.txt"

    def get_extra_email_context(self) -> dict[str, Any]:
        return {"base": settings.FACADE_PUBLIC_URL.rstrip("/")}

    def form_valid(self, form: PasswordResetForm) -> HttpResponse:
        address = form.cleaned_data["email"].strip().lower()
        limited = rate_check(
            [
                ("reset:address", hashlib.sha256(address.encode()).hexdigest(), settings.FACADE_RATE_PASSWORD_RESET),
                ("reset:ip", request_client_ip(self.request.META), settings.FACADE_RATE_PASSWORD_RESET_IP),
            ]
        )
        if limited is not None:
            # The same words whether or not the address has an account.
            error = gettext("Too many reset e-mails were asked for. Try again in %(minutes)d min.") % {
                "minutes": max(1, limited.retry_after // 60)
            }
            return self.render_to_response(self.get_context_data(form=form, limited=error), status=429)
        self.extra_email_context = self.get_extra_email_context()
        return super().form_valid(form)


# --- a changed e-mail address ------------------------------------------------------------

EMAIL_CHANGE_SALT = "facade.accounts.email_change"


class EmailChangeForm(forms.Form):
    email = forms.EmailField(label=_("New e-mail address"), max_length=254)
    password = forms.CharField(label=_("Your password"), widget=forms.PasswordInput, strip=False)

    def __init__(self, user: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_password(self) -> str:
        password = str(self.cleaned_data["password"])
        if not self.user.check_password(password):
            raise forms.ValidationError(gettext("That password is not right."))
        return password


def _change_link(user: Any, address: str) -> str:
    token = signing.dumps({"user": user.pk, "from": user.email, "to": address}, salt=EMAIL_CHANGE_SALT)
    return f"{settings.FACADE_PUBLIC_URL.rstrip('/')}{reverse('email-change-confirm')}?token={token}"


@login_required
@require_http_methods(["GET", "POST"])
def email_change(request: HttpRequest) -> HttpResponse:
    form = EmailChangeForm(request.user, request.POST if request.method == "POST" else None)
    context: dict[str, Any] = {"form": form}
    if request.method != "POST" or not form.is_valid():
        return render(request, "registration/email_change.html", context, status=400 if form.errors else 200)
    try:
        address = normalised_address(form.cleaned_data["email"])
    except TenancyError as exc:
        form.add_error("email", exc.detail)
        return render(request, "registration/email_change.html", context, status=400)
    limited = rate_check([("email-change:user", str(request.user.pk), settings.FACADE_RATE_PASSWORD_RESET)])
    if limited is not None:
        context["limited"] = gettext("Too many confirmation e-mails were asked for. Try again later.")
        return render(request, "registration/email_change.html", context, status=429)
    with translation.override(get_language()):
        subject = gettext("Confirm your new e-mail address on Facade")
        body = "\n".join(
            [
                gettext("You asked to sign in to Facade with this address from now on."),
                "",
                gettext("Open this link within %(hours)s hours, signed in, to confirm it:")
                % {"hours": settings.FACADE_EMAIL_CHANGE_HOURS},
                _change_link(request.user, address),
                "",
                gettext("If it was not you, ignore this e-mail: nothing changes."),
            ]
        )
    send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [address])
    context["sent_to"] = address
    return render(request, "registration/email_change.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def email_change_confirm(request: HttpRequest) -> HttpResponse:
    token = request.GET.get("token") or request.POST.get("token") or ""
    try:
        data = signing.loads(token[:2000], salt=EMAIL_CHANGE_SALT, max_age=settings.FACADE_EMAIL_CHANGE_HOURS * 3600)
    except signing.BadSignature:
        data = None
    user: Any = request.user  # signed in (login_required)
    valid = isinstance(data, dict) and data.get("user") == user.pk and data.get("from") == user.email
    if not valid:
        return render(request, "registration/email_change_confirm.html", {"invalid": True}, status=404)
    address = str(data["to"])
    taken = accounts_of_address(address).exclude(pk=user.pk).exists()
    context = {"address": address, "taken": taken, "token": token}
    if taken:
        return render(request, "registration/email_change_confirm.html", context, status=409)
    if request.method != "POST":
        return render(request, "registration/email_change_confirm.html", context)
    old = user.email
    with transaction.atomic():
        account = get_user_model().objects.select_for_update().get(pk=user.pk)
        if accounts_of_address(address).exclude(pk=user.pk).exists():
            return render(request, "registration/email_change_confirm.html", {**context, "taken": True}, status=409)
        account.email = account.username = address
        account.save(update_fields=["email", "username"])
    update_session_auth_hash(request, account)
    with translation.override(get_language()):
        send_mail(
            gettext("Your Facade e-mail address was changed"),
            gettext("Your account signs in with %(address)s from now on. If it was not you, tell the platform at once.")
            % {"address": address},
            settings.DEFAULT_FROM_EMAIL,
            [old],
        )
    messages.success(request, gettext("You sign in with %(address)s from now on.") % {"address": address})
    return HttpResponseRedirect(reverse("home"))


# --- the account's own settings ----------------------------------------------------------


@require_safe
@login_required
def account_settings(request: HttpRequest) -> HttpResponse:
    """A signed-in person's own settings: the address they sign in with (change it), their
    password (change it) and two-step sign-in (enrol an authenticator, or see that one is on)."""
    context = {
        "two_step_on": confirmed_device(request.user) is not None,
        "two_step_required": must_have_device(request.user),
    }
    return render(request, "registration/account_settings.html", context)
