"""The owner's Requests page and the owner's preview of the customer face.

Server-rendered; every write is a plain form POST (CSRF) that calls the one service that also
writes the ledger (`request_transition`, `request_reply`) and redirects back.  Always scoped to
an agent the signed-in user owns: anything else answers 404."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_POST, require_safe

from facade.errors import ApplicationError
from facade.tenancy.models import AgentProfile
from facade.tenancy.policy import AgentPolicy, NotFound
from facade.tenancy.schemas import Actor

from . import rules
from .labels import ACTOR_LABELS, KIND_LABELS, STATE_LABELS, label
from .models import CustomerRequest, Message
from .selectors import owner_requests
from .services import request_reply, request_transition

PAGE_SIZE = 30
# The fields the built-in clarification asks for, as the owner reads them.
FIELD_LABELS: dict[str, Promise] = {
    "need": _("What is needed"),
    "when": _("By when"),
    "contact": _("Contact"),
    # a discount, a special price or a promise the customer asked the owner to decide (issue 26 §3)
    "asked": _("Asked of you to decide"),
}
# What each target state's button says; a state not listed is named as written.
MOVE_LABELS: dict[str, Promise] = {
    "accepted": _("Accept"),
    "needs_info": _("Ask the customer for information"),
    "declined": _("Decline"),
    "cancelled": _("Cancel"),
    "in_progress": _("Start work"),
    "done": _("Mark as done"),
    "submitted": _("Back to submitted"),
    "withdrawn": _("Mark as withdrawn"),
}


@dataclass
class RequestRow:
    request: CustomerRequest
    kind: str
    state: str
    next_actor: str
    waiting_for_owner: bool
    fields: list[tuple[str, str]]
    moves: list[tuple[str, str]]
    replies: list[Message] = field(default_factory=list)


def _owned(request: HttpRequest, slug: str) -> AgentProfile:
    try:
        return AgentPolicy.get_owned(request.user, slug)
    except NotFound as exc:
        raise Http404("no such agent among those you own") from exc


def _row(item: CustomerRequest) -> RequestRow:
    states = (item.flow or {}).get("states") or {}
    targets = [str(t) for t in (states.get(item.state) or {}).get("to", [])]
    next_actor = str((states.get(item.state) or {}).get("next_actor", ""))
    return RequestRow(
        request=item,
        kind=label(KIND_LABELS, item.kind),
        state=label(STATE_LABELS, item.state),
        next_actor=label(ACTOR_LABELS, next_actor),
        waiting_for_owner=next_actor == "owner" and not item.session.simulated,
        fields=[(label(FIELD_LABELS, str(k)), str(v)) for k, v in (item.details or {}).items()],
        moves=[(to, label(MOVE_LABELS, to)) for to in targets if rules.request_can_move(item.flow, item.state, to)],
        replies=list(item.owner_replies.all()),
    )


@require_safe
@login_required
@ensure_csrf_cookie
def requests_page(request: HttpRequest, slug: str) -> HttpResponse:
    agent = _owned(request, slug)
    show = "all" if request.GET.get("show") == "all" else "open"
    items = owner_requests(agent=agent, open_only=show == "open")
    page = Paginator(items, PAGE_SIZE).get_page(request.GET.get("page"))
    context: dict[str, Any] = {
        "agent": agent,
        "show": show,
        "page": page,
        "rows": [_row(item) for item in page.object_list],
        "max_chars": settings.FACADE_MESSAGE_MAX_CHARS,
    }
    return render(request, "dialogue/owner_requests.html", context)


def _back(slug: str, request_id: int, request: HttpRequest) -> HttpResponseRedirect:
    show = "?show=all" if request.POST.get("show") == "all" else ""
    return HttpResponseRedirect(f"{reverse('owner-requests', args=[slug])}{show}#request-{request_id}")


def _owned_request(request: HttpRequest, slug: str, request_id: int) -> CustomerRequest:
    agent = _owned(request, slug)
    found = CustomerRequest.objects.filter(pk=request_id, agent=agent).first()
    if found is None:
        raise Http404("no such request of this agent")
    return found


@require_POST
@login_required
def request_move(request: HttpRequest, slug: str, request_id: int) -> HttpResponse:
    found = _owned_request(request, slug, request_id)
    to = request.POST.get("to", "")[:32]
    try:
        moved = request_transition(request=found, to=to, actor=Actor.human(request.user.pk))
    except ApplicationError:
        messages.error(request, gettext("Request #%(id)s cannot make that move now.") % {"id": found.pk})
    else:
        messages.success(
            request,
            gettext("Request #%(id)s is now: %(state)s.") % {"id": moved.pk, "state": label(STATE_LABELS, moved.state)},
        )
    return _back(slug, found.pk, request)


@require_POST
@login_required
def request_answer(request: HttpRequest, slug: str, request_id: int) -> HttpResponse:
    found = _owned_request(request, slug, request_id)
    try:
        request_reply(request=found, text=request.POST.get("text", ""), actor=Actor.human(request.user.pk))
    except ApplicationError as exc:
        problems = {
            "empty_message": gettext("Please write a reply first."),
            "message_too_long": gettext("Your reply is too long."),
        }
        messages.error(request, problems.get(exc.code, gettext("The reply could not be sent.")))
    else:
        messages.success(request, gettext("Your reply to request #%(id)s was sent to the customer.") % {"id": found.pk})
    return _back(slug, found.pk, request)


__all__ = ["requests_page", "request_move", "request_answer"]
