"""Writes of the dialogue app."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from facade.tenancy.models import AgentProfile, Customer, PeerCredential
from facade.tenancy.rules import Audience, PrincipalType
from facade.tenancy.schemas import Actor
from ledger.services import ledger_append

from .models import DialogueSession, Message

MAX_MESSAGE_CHARS = 4000


class DialogueError(ValueError):
    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


def session_actor(session: DialogueSession) -> Actor:
    if session.principal_type == PrincipalType.USER:
        return Actor.human(session.user_id)
    if session.principal_type == PrincipalType.CUSTOMER:
        return Actor.customer(session.customer_id)
    return Actor.peer(session.peer_id)


@transaction.atomic
def session_open(
    *,
    agent: AgentProfile,
    audience: Audience,
    user: Any | None = None,
    customer: Customer | None = None,
    peer: PeerCredential | None = None,
) -> DialogueSession:
    """Open a session whose audience the caller (the view) derived on the server."""
    if audience == Audience.OWNER and user is not None:
        principal_type = PrincipalType.USER
    elif audience == Audience.CUSTOMER and customer is not None and customer.tenant_id == agent.tenant_id:
        principal_type = PrincipalType.CUSTOMER
    elif audience == Audience.PEER and peer is not None and peer.agent_id == agent.pk:
        principal_type = PrincipalType.PEER
    else:
        raise DialogueError("principal_mismatch", "the principal does not fit the audience")
    session = DialogueSession.objects.create(
        tenant_id=agent.tenant_id,
        agent=agent,
        audience=audience.value,
        principal_type=principal_type.value,
        user=user if principal_type == PrincipalType.USER else None,
        customer=customer if principal_type == PrincipalType.CUSTOMER else None,
        peer=peer if principal_type == PrincipalType.PEER else None,
    )
    actor = session_actor(session)
    ledger_append(
        chain_id=agent.tenant_id,
        event_type="session.opened",
        entity_type="session",
        entity_id=session.pk,
        actor_type=actor.type,
        actor_id=actor.id,
        payload={"agent": agent.slug, "audience": audience.value, "principal_type": principal_type.value},
    )
    return session


@transaction.atomic
def message_post(*, session: DialogueSession, text: str, client_message_id: str = "") -> tuple[Message, bool]:
    """Store a message from the session's principal.  A repeated client_message_id returns the
    message already stored instead of a second one."""
    if not text.strip():
        raise DialogueError("empty_message", "a message needs some text")
    if len(text) > MAX_MESSAGE_CHARS:
        raise DialogueError("message_too_long", f"a message may have at most {MAX_MESSAGE_CHARS} characters")
    if len(client_message_id) > 64:
        raise DialogueError("invalid_client_message_id", "client_message_id may have at most 64 characters")
    locked = DialogueSession.objects.select_for_update().get(pk=session.pk)
    if client_message_id:
        existing = Message.objects.filter(session=locked, client_message_id=client_message_id).first()
        if existing is not None:
            return existing, False
    message = Message.objects.create(session=locked, role="principal", text=text, client_message_id=client_message_id)
    locked.last_activity_at = timezone.now()
    locked.save(update_fields=["last_activity_at"])
    actor = session_actor(locked)
    ledger_append(
        chain_id=locked.tenant_id,
        event_type="message.posted",
        entity_type="session",
        entity_id=locked.pk,
        actor_type=actor.type,
        actor_id=actor.id,
        payload={"message_id": message.pk, "chars": len(text)},
    )
    return message, True
