"""The platform operator's Businesses page (issue 32 §1): the businesses on the platform and the
form that takes on a new one — its name and address, time zone, languages, first agent and the
e-mail of its first owner, who gets an invitation.  Server-rendered; the form posts to the one
service the API uses too (`business_create`).  Anyone but an operator gets 404."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import get_language, gettext
from django.views.decorators.http import require_POST, require_safe

from facade.errors import ApplicationError
from facade.tenancy.models import Tenant
from facade.tenancy.policy import is_platform_operator
from facade.tenancy.schemas import Actor
from facade.tenancy.services import business_create

FIELDS = ("name", "slug", "time_zone", "agent_name", "agent_slug", "owner_email")


def _operator_only(request: HttpRequest) -> None:
    if not is_platform_operator(request.user):
        raise Http404("no such page")


def _page(request: HttpRequest, form: dict[str, Any], error: str = "", status: int = 200) -> HttpResponse:
    context = {
        "businesses": Tenant.objects.order_by("slug").prefetch_related("agents"),
        "form": form,
        "error": error,
        "site_languages": [(code, name) for code, name in settings.LANGUAGES],
    }
    return render(request, "accounts/businesses.html", context, status=status)


def posted_business_form(request: HttpRequest, fields: tuple[str, ...]) -> dict[str, Any]:
    """A new business's form as posted, bounded: its text fields and its languages (the operator's
    page and self-service sign-up read the same form)."""
    form: dict[str, Any] = {name: request.POST.get(name, "")[:254].strip() for name in fields}
    form["languages"] = [code[:16] for code in request.POST.getlist("languages")[:8]]
    return form


def _blank() -> dict[str, Any]:
    return {**dict.fromkeys(FIELDS, ""), "time_zone": settings.TIME_ZONE, "languages": [settings.LANGUAGE_CODE]}


@require_safe
@login_required
def businesses_page(request: HttpRequest) -> HttpResponse:
    _operator_only(request)
    return _page(request, _blank())


@require_POST
@login_required
def business_new(request: HttpRequest) -> HttpResponse:
    _operator_only(request)
    form = posted_business_form(request, FIELDS)
    try:
        made = business_create(
            name=form["name"],
            slug=form["slug"],
            time_zone=form["time_zone"],
            languages=form["languages"],
            agent_slug=form["agent_slug"],
            agent_name=form["agent_name"],
            owner_email=form["owner_email"],
            invited_by=request.user,
            actor=Actor.human(request.user.pk),
            language=get_language(),
        )
    except ApplicationError as exc:
        return _page(request, form, error=exc.detail, status=int(exc.http_status))
    messages.success(
        request,
        gettext("%(name)s joined, with its agent %(agent)s. Its first owner, %(address)s, has an invitation.")
        % {"name": made.tenant.name, "agent": made.agent.slug, "address": form["owner_email"].lower()},
    )
    return HttpResponseRedirect(reverse("businesses") + f"#business-{made.tenant.slug}")
