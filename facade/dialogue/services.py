"""Writes of the dialogue app."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any, Literal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from facade.tenancy.models import AgentProfile, Customer, PeerCredential
from facade.tenancy.rules import Audience, PrincipalType
from facade.tenancy.schemas import Actor

from . import events, rules
from .models import CustomerRequest, DialogueSession, Message, Rating, SessionStatus, TrustChange


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
    events.session_opened(session=session, actor=session_actor(session))
    return session


def message_post(
    *,
    session: DialogueSession,
    text: str,
    client_message_id: str = "",
    on_stored: Callable[[Message], None] | None = None,
) -> tuple[Message, bool]:
    """Store a message from the session's principal.  A repeated client_message_id returns the
    message already stored instead of a second one.  A session idle for too long is marked
    expired (and stays so) before the message is refused.  `on_stored` runs inside the message's
    transaction, right after a new message is stored and before its ledger event: what it writes
    commits or rolls back with the message (the runtime starts the message's run there)."""
    idle = settings.FACADE_SESSION_IDLE_MINUTES
    if session.status == SessionStatus.OPEN and rules.is_idle(session.last_activity_at, timezone.now(), idle):
        # The copy in hand may be stale (a WebSocket holds it for long): decide under the lock.
        with transaction.atomic():
            locked = DialogueSession.objects.select_for_update().get(pk=session.pk)
            if locked.status == SessionStatus.OPEN and rules.is_idle(locked.last_activity_at, timezone.now(), idle):
                _expire(locked)
            session.status, session.last_activity_at = locked.status, locked.last_activity_at
    return _message_store(session=session, text=text, client_message_id=client_message_id, on_stored=on_stored)


@transaction.atomic
def _message_store(
    *, session: DialogueSession, text: str, client_message_id: str, on_stored: Callable[[Message], None] | None
) -> tuple[Message, bool]:
    if not text.strip():
        raise DialogueError("empty_message", "a message needs some text")
    limit = settings.FACADE_MESSAGE_MAX_CHARS
    if len(text) > limit:
        raise DialogueError("message_too_long", f"a message may have at most {limit} characters")
    if len(client_message_id) > 64:
        raise DialogueError("invalid_client_message_id", "client_message_id may have at most 64 characters")
    locked = DialogueSession.objects.select_for_update().get(pk=session.pk)
    if client_message_id:
        existing = Message.objects.filter(session=locked, client_message_id=client_message_id).first()
        if existing is not None:
            return existing, False
    if locked.status != SessionStatus.OPEN:
        raise DialogueError(
            f"session_{locked.status}", "this session does not accept messages any more; open a new one"
        )
    message = Message.objects.create(session=locked, role="principal", text=text, client_message_id=client_message_id)
    locked.last_activity_at = session.last_activity_at = timezone.now()
    locked.save(update_fields=["last_activity_at"])
    if on_stored is not None:
        on_stored(message)
    events.message_posted(session=locked, message=message, actor=session_actor(locked))
    return message, True


def _expire(session: DialogueSession) -> None:
    session.status = SessionStatus.EXPIRED
    session.save(update_fields=["status"])
    events.session_expired(session=session, idle_minutes=settings.FACADE_SESSION_IDLE_MINUTES)


def sessions_expire() -> int:
    """Mark every open session idle for longer than FACADE_SESSION_IDLE_MINUTES as expired (one
    transaction per session, so a busy session is never held up by the sweep)."""
    cutoff = timezone.now() - dt.timedelta(minutes=settings.FACADE_SESSION_IDLE_MINUTES)
    done = 0
    for pk in DialogueSession.objects.filter(status=SessionStatus.OPEN, last_activity_at__lte=cutoff).values_list(
        "pk", flat=True
    )[:5000]:
        with transaction.atomic():
            session = DialogueSession.objects.select_for_update().get(pk=pk)
            if session.status == SessionStatus.OPEN and rules.is_idle(
                session.last_activity_at, timezone.now(), settings.FACADE_SESSION_IDLE_MINUTES
            ):
                _expire(session)
                done += 1
    return done


# Each kind of request has its own event type (the auditor filters on them).
_SUBMITTED = {"request": events.request_submitted, "handoff": events.handoff_submitted}


@transaction.atomic
def request_submit(
    *,
    session: DialogueSession,
    summary: str,
    details: dict[str, str],
    kind: Literal["request", "handoff"] = "request",
    run: Any = None,
) -> CustomerRequest:
    """Register what a customer or peer wants done, in the first state of the agent's flow.
    Owners never submit requests (no ordering on a customer's behalf)."""
    submitted = _SUBMITTED[kind]
    if session.audience == Audience.OWNER:
        raise DialogueError("owners_do_not_submit", "owners cannot register requests on a customer's behalf")
    flow = session.agent.request_flow
    request = CustomerRequest.objects.create(
        tenant_id=session.tenant_id,
        agent_id=session.agent_id,
        session=session,
        run=run,
        kind=kind,
        state=str(flow["initial"]),
        summary=summary.strip()[:300] or "(no summary)",
        details={str(k)[:40]: str(v)[:500] for k, v in list(details.items())[:10]},
        flow=flow,
    )
    submitted(session=session, request=request, actor=session_actor(session))
    return request


@transaction.atomic
def request_transition(*, request: CustomerRequest, to: str, actor: Actor) -> CustomerRequest:
    locked = CustomerRequest.objects.select_for_update().select_related("session").get(pk=request.pk)
    if not rules.request_can_move(locked.flow, locked.state, to):
        raise DialogueError("invalid_transition", f"a request in state {locked.state!r} cannot move to {to!r}")
    before = locked.state
    locked.state = to
    locked.save(update_fields=["state", "updated_at"])
    events.request_transitioned(request=locked, before=before, actor=actor)
    if to == "done" and locked.session.customer_id is not None:
        trust_adjust(customer_id=locked.session.customer_id, reason="request_completed")
    return locked


@transaction.atomic
def trust_adjust(*, customer_id: Any, reason: str) -> int:
    customer = Customer.objects.select_for_update().get(pk=customer_id)
    score = rules.trust_after(customer.trust, reason)
    delta = score - customer.trust
    customer.trust = score
    customer.save(update_fields=["trust"])
    TrustChange.objects.create(tenant_id=customer.tenant_id, customer=customer, delta=delta, reason=reason, score=score)
    events.customer_trust_changed(customer=customer, reason=reason, delta=delta)
    return score


@transaction.atomic
def rating_record(*, session: DialogueSession, stars: int, comment: str = "") -> Rating:
    """The customer's rating of a conversation, once per session."""
    if session.audience != Audience.CUSTOMER:
        raise DialogueError("only_customers_rate", "only customers rate conversations")
    if not 1 <= int(stars) <= 5:
        raise DialogueError("invalid_rating", "a rating is a whole number from 1 to 5")
    if len(comment) > 2000:
        raise DialogueError("invalid_rating", "a comment may have at most 2000 characters")
    if Rating.objects.filter(session=session).exists():
        raise DialogueError("already_rated", "this conversation has been rated already")
    rating = Rating.objects.create(
        session=session, tenant_id=session.tenant_id, stars=int(stars), comment=comment.strip()
    )
    events.session_rated(session=session, rating=rating, actor=session_actor(session))
    return rating
