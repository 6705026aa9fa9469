"""The guard breaker's button on the owner overview: `POST /owner/<slug>/guard-breaker/close`
closes the agent's open breaker (the same service as the API) and goes back to the overview.
Owners of the agent only; anyone else gets a 404."""

from __future__ import annotations

from typing import cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from facade.errors import ApplicationError
from facade.tenancy.policy import AgentPolicy, NotFound

from .breaker import breaker_close


@require_POST
@login_required
def owner_breaker_close(request: HttpRequest, slug: str) -> HttpResponse:
    try:
        agent = AgentPolicy.get_owned(request.user, slug)
    except NotFound as exc:
        raise Http404("no such agent among those you own") from exc
    try:
        breaker_close(agent=agent, user_id=cast(int, request.user.pk))
    except ApplicationError as exc:
        if exc.code != "breaker_not_open":
            raise
        messages.info(request, gettext("The guard breaker was already closed."))
    else:
        messages.success(
            request, gettext("Guard breaker closed: the customer face composes as its contract says again.")
        )
    return HttpResponseRedirect(reverse("owner-overview", args=[slug]) + "#guard-breaker", status=303)
