"""Writes of the dialogue app."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from facade.errors import ApplicationError
from facade.tenancy.identity import Principal
from facade.tenancy.models import AgentProfile, Customer, PeerCredential
from facade.tenancy.policy import AgentPolicy
from facade.tenancy.rules import Audience, PostDecision, PrincipalType, may_post
from facade.tenancy.schemas import Actor
from ledger.services import ledger_append

from . import rules
from .models import CustomerRequest, DialogueSession, Message, Rating, SessionStatus, TrustChange
from .ratelimit import message_rate_check
from .selectors import session_for_principal


class DialogueError(ApplicationError):
    """A refusal of the dialogue services (400 unless the raiser says otherwise)."""


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


def message_admit(
    *,
    principal: Principal,
    session_id: uuid.UUID | str,
    text: str,
    client_message_id: str = "",
    ip: str | None = None,
) -> DialogueSession:
    """The one gate a message passes before its turn, asked alike by the HTTP API and the chat
    WebSocket; it returns the session as read now, and the turn goes on with that copy.  In order:

    - the session is the caller's — else 404 `not_found`, as for an id that does not exist;
    - its principal may still post in it — else 403 `no_longer_owner` (an owner since removed,
      asked of the database) or 409 `session_<status>`;
    - the message is one the session would store — else 400 `empty_message`,
      `message_too_long` or `invalid_client_message_id`;
    - the caller is within its rate limits (per customer and per IP, or per peer key) — else
      429 `rate_limited` with `retry_after`, and a customer who hits one loses some trust.

    Its cost is the turn's: one read of the session, one more for an owner session, and one
    round trip to the cache for every limit together.  A session that has been idle too long is
    still open here; storing the message expires it (`message_post`)."""
    session = session_for_principal(principal=principal, session_id=session_id)
    owner = session.audience == Audience.OWNER
    decision = may_post(
        audience=session.audience,
        status=session.status,
        caller_still_owner=owner
        and principal.user_id is not None
        and AgentPolicy.still_owns(user_id=principal.user_id, agent=session.agent),
    )
    if decision == PostDecision.NO_LONGER_OWNER:
        raise DialogueError("no_longer_owner", "you are no longer an owner of this agent", HTTPStatus.FORBIDDEN)
    if decision == PostDecision.SESSION_NOT_OPEN:
        raise _not_open(session.status)
    if decision != PostDecision.ALLOWED:
        raise DialogueError(decision.value, "this session does not accept messages", HTTPStatus.CONFLICT)
    _message_check(text=text, client_message_id=client_message_id)
    limited = message_rate_check(
        customer_id=str(session.customer_id) if session.customer_id else None,
        peer_id=str(session.peer_id) if session.peer_id else None,
        ip=None if session.peer_id else ip,  # a peer is counted by its key, wherever it calls from
    )
    if limited is not None:
        if session.customer_id is not None:
            trust_adjust(customer_id=session.customer_id, reason="rate_limited")
        raise DialogueError(
            "rate_limited",
            f"too many messages; try again in {limited.retry_after} s",
            HTTPStatus.TOO_MANY_REQUESTS,
            retry_after=limited.retry_after,
        )
    return session


def _not_open(status: str) -> DialogueError:
    return DialogueError(
        f"session_{status}", "this session does not accept messages any more; open a new one", HTTPStatus.CONFLICT
    )


def _message_check(*, text: str, client_message_id: str) -> None:
    if not text.strip():
        raise DialogueError("empty_message", "a message needs some text")
    limit = settings.FACADE_MESSAGE_MAX_CHARS
    if len(text) > limit:
        raise DialogueError("message_too_long", f"a message may have at most {limit} characters")
    if len(client_message_id) > 64:
        raise DialogueError("invalid_client_message_id", "client_message_id may have at most 64 characters")


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
    _message_check(text=text, client_message_id=client_message_id)
    locked = DialogueSession.objects.select_for_update().get(pk=session.pk)
    if client_message_id:
        existing = Message.objects.filter(session=locked, client_message_id=client_message_id).first()
        if existing is not None:
            return existing, False
    if locked.status != SessionStatus.OPEN:
        raise _not_open(locked.status)
    message = Message.objects.create(session=locked, role="principal", text=text, client_message_id=client_message_id)
    locked.last_activity_at = session.last_activity_at = timezone.now()
    locked.save(update_fields=["last_activity_at"])
    if on_stored is not None:
        on_stored(message)
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


def _expire(session: DialogueSession) -> None:
    session.status = SessionStatus.EXPIRED
    session.save(update_fields=["status"])
    ledger_append(
        chain_id=session.tenant_id,
        event_type="session.expired",
        entity_type="session",
        entity_id=session.pk,
        actor_type="platform",
        actor_id="sessions",
        payload={"idle_minutes": settings.FACADE_SESSION_IDLE_MINUTES},
    )


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


@transaction.atomic
def request_submit(
    *, session: DialogueSession, summary: str, details: dict[str, str], kind: str = "request", run: Any = None
) -> CustomerRequest:
    """Register what a customer or peer wants done, in the first state of the agent's flow.
    Owners never submit requests (no ordering on a customer's behalf)."""
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
    actor = session_actor(session)
    ledger_append(
        chain_id=session.tenant_id,
        event_type=f"{kind}.submitted",
        entity_type="request",
        entity_id=request.pk,
        actor_type=actor.type,
        actor_id=actor.id,
        payload={"session": str(session.pk), "state": request.state, "fields": sorted(request.details)},
    )
    return request


@transaction.atomic
def request_transition(*, request: CustomerRequest, to: str, actor: Actor) -> CustomerRequest:
    locked = CustomerRequest.objects.select_for_update().select_related("session").get(pk=request.pk)
    if not rules.request_can_move(locked.flow, locked.state, to):
        raise DialogueError("invalid_transition", f"a request in state {locked.state!r} cannot move to {to!r}")
    before = locked.state
    locked.state = to
    locked.save(update_fields=["state", "updated_at"])
    ledger_append(
        chain_id=locked.tenant_id,
        event_type="request.transitioned",
        entity_type="request",
        entity_id=locked.pk,
        actor_type=actor.type,
        actor_id=actor.id,
        payload={"from": before, "to": to},
    )
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
    ledger_append(
        chain_id=customer.tenant_id,
        event_type="customer.trust_changed",
        entity_type="customer",
        entity_id=customer.pk,
        actor_type="platform",
        actor_id="trust",
        payload={"reason": reason, "delta": delta, "score": score},
    )
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
        raise DialogueError("already_rated", "this conversation has been rated already", HTTPStatus.CONFLICT)
    rating = Rating.objects.create(
        session=session, tenant_id=session.tenant_id, stars=int(stars), comment=comment.strip()
    )
    actor = session_actor(session)
    ledger_append(
        chain_id=session.tenant_id,
        event_type="session.rated",
        entity_type="session",
        entity_id=session.pk,
        actor_type=actor.type,
        actor_id=actor.id,
        payload={"stars": rating.stars, "comment_chars": len(rating.comment)},
    )
    return rating
