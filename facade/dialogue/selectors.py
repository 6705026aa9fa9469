"""Reads of the dialogue app, always through the caller's identities."""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from facade.tenancy.identity import customer_from_request
from facade.tenancy.models import PeerCredential
from facade.tenancy.policy import NotFound

from .models import DialogueSession


def session_for_caller(*, request: Any, session_id: Any) -> DialogueSession:
    """The session, if the caller is its principal; otherwise NotFound, exactly as if the id
    did not exist.  A peer request is matched only by its key, never by cookies."""
    session = DialogueSession.objects.select_related("agent__tenant", "tenant").filter(pk=session_id).first()
    if session is None:
        raise NotFound(str(session_id))
    credential = request.auth if isinstance(getattr(request, "auth", None), PeerCredential) else None
    if credential is not None:
        mine = Q(peer=credential)
    else:
        mine = Q(pk__in=[])
        user = request.user
        if user.is_authenticated:
            mine |= Q(user=user)
        customer = customer_from_request(request, session.tenant)
        if customer is not None:
            mine |= Q(customer=customer)
    if not DialogueSession.objects.filter(mine, pk=session.pk).exists():
        raise NotFound(str(session_id))
    return session


def request_view(request: Any) -> dict[str, Any]:
    """A customer request as its principal sees it: what it is, where it stands, who acts next."""
    return {
        "id": request.pk,
        "kind": request.kind,
        "state": request.state,
        "next_actor": request.next_actor,
        "summary": request.summary,
    }


def session_history(session: DialogueSession) -> dict[str, Any]:
    """What the principal of a session sees again after a reload: its latest 500 messages,
    oldest first, and the requests it registered with who acts next."""
    from .models import CustomerRequest, Message, Rating

    messages = [
        {
            "id": m.pk,
            "role": m.role,
            "text": m.text,
            "client_message_id": m.client_message_id,
            "citations": m.citations,
            "stop_reason": m.stop_reason,
            "created_at": m.created_at.isoformat(),
        }
        for m in reversed(Message.objects.filter(session=session).order_by("-pk")[:500])
    ]
    requests = [request_view(r) for r in CustomerRequest.objects.filter(session=session).order_by("pk")]
    return {
        "messages": messages,
        "requests": requests,
        "rated": Rating.objects.filter(session=session).exists(),
        "status": session.status,
    }
