"""Reads of the dialogue app, always through the caller's identities."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import connection

from facade.tenancy.identity import Principal
from facade.tenancy.policy import NotFound

from . import turn_sql
from .models import DialogueSession, Message


def session_for_principal(*, principal: Principal, session_id: uuid.UUID | str) -> DialogueSession:
    """The session, if the caller is its principal; otherwise NotFound, exactly as if the id
    did not exist (both edges answer the two alike).  One read: the principal is matched against
    the session's own ids, and a customer cookie is checked by its signature alone — the session
    row itself proves that its customer exists in its tenant."""
    session = DialogueSession.objects.select_related("agent__tenant", "tenant").filter(pk=session_id).first()
    if session is None or not principal.is_principal(
        tenant_id=session.tenant_id, user_id=session.user_id, customer_id=session.customer_id, peer_id=session.peer_id
    ):
        raise NotFound(str(session_id))
    return session


def reply_view(reply: Message | None) -> dict[str, Any] | None:
    """The agent's reply as both edges send it: its text, what it cited and why the run stopped."""
    if reply is None:
        return None
    return {"id": reply.pk, "text": reply.text, "citations": reply.citations, "stop_reason": reply.stop_reason}


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
    from .models import CustomerRequest, Rating

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


def recent_messages(*, session: DialogueSession, limit: int) -> list[tuple[str, str]]:
    """The session's latest `limit` messages as (role, text), oldest first.  Read once per turn,
    so on PostgreSQL it is one prepared statement (facade/dialogue/turn_sql.py)."""
    if connection.vendor == "postgresql":
        rows = turn_sql.fetch(connection, turn_sql.HISTORY, {"session": session.pk, "limit": limit})
    else:
        rows = list(Message.objects.filter(session=session).order_by("-pk").values_list("role", "text")[:limit])
    return [(str(role), str(text)) for role, text in reversed(rows)]


def agent_text_before(*, session: DialogueSession, message_id: int) -> str:
    """What the principal's message `message_id` answers: the session's message right before it
    when that is the agent's, else "" (none, or another message of the principal's — two quick
    "yes" answer one summary once)."""
    row = Message.objects.filter(session=session, pk__lt=message_id).order_by("-pk").values_list("role", "text").first()
    return str(row[1]) if row is not None and row[0] == "agent" else ""


def request_owner_acted(request: Any, *, principal_actor_id: str) -> bool:
    """Whether anyone but the request's own principal (the owner moving it along or answering
    it, whatever the event) has written an event about the request: from then on the customer can
    no longer amend or withdraw it."""
    from ledger.models import LedgerEvent

    events = LedgerEvent.objects.for_entity(request.tenant_id, "request", str(request.pk))
    return any(event.actor_id != principal_actor_id for event in events)
