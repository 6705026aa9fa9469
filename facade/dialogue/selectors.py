"""Reads of the dialogue app, always through the caller's identities."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import connection

from facade.tenancy.identity import Principal
from facade.tenancy.policy import NotFound

from . import rules, turn_sql
from .models import DialogueSession, Message, Run


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


def message_view(message: Message) -> dict[str, Any]:
    """A stored message as the chat's frames carry it."""
    return {
        "id": message.pk,
        "role": message.role,
        "text": message.text,
        "client_message_id": message.client_message_id,
        "created_at": message.created_at.isoformat(),
    }


def reply_view(reply: Message | None) -> dict[str, Any] | None:
    """The agent's reply as both edges send it: its text, what it cited and why the run stopped."""
    if reply is None:
        return None
    return {
        "id": reply.pk,
        "text": reply.text,
        "citations": reply.citations,
        "stop_reason": reply.stop_reason,
        "cards": (reply.metadata or {}).get("cards", []),
    }


def request_view(request: Any) -> dict[str, Any]:
    """A customer request as its principal sees it: what it is, where it stands, who acts next."""
    return {
        "id": request.pk,
        "kind": request.kind,
        "state": request.state,
        "next_actor": request.next_actor,
        "summary": request.summary,
    }


def owner_message_view(message: Message) -> dict[str, Any]:
    """An owner's reply as the customer's chat shows it."""
    return {
        "id": message.pk,
        "role": message.role,
        "text": message.text,
        "client_message_id": "",
        "citations": [],
        "stop_reason": "",
        "created_at": message.created_at.isoformat(),
    }


CHAIN_MAX = 20  # how many sessions back a conversation's history is read


def conversation_session_ids(session: DialogueSession) -> list[Any]:
    """The session and those it continues (newest first): one conversation that publishes ended
    and new sessions took up (services.session_continue).  One read per session back; none for
    a session that continues nothing."""
    ids: list[Any] = [session.pk]
    previous = session.continues_id
    while previous is not None and len(ids) < CHAIN_MAX:
        ids.append(previous)
        previous = DialogueSession.objects.filter(pk=previous).values_list("continues_id", flat=True).first()
    return ids


def session_history(session: DialogueSession) -> dict[str, Any]:
    """What the principal of a session sees again after a reload: the conversation's latest 500
    messages (those of the sessions it continues included), oldest first, and the requests it
    registered with who acts next."""
    from .models import CustomerRequest, Rating

    chain = conversation_session_ids(session)

    messages = [
        {
            "id": m.pk,
            "role": m.role,
            "text": m.text,
            "client_message_id": m.client_message_id,
            "citations": m.citations,
            "stop_reason": m.stop_reason,
            "cards": (m.metadata or {}).get("cards", []),
            "created_at": m.created_at.isoformat(),
        }
        for m in reversed(Message.objects.filter(session_id__in=chain).order_by("-pk")[:500])
    ]
    requests = [request_view(r) for r in CustomerRequest.objects.filter(session=session).order_by("pk")]
    return {
        "messages": messages,
        "requests": requests,
        "rated": Rating.objects.filter(session=session).exists(),
        "status": session.status,
        # "contract_republished": a publish ended it, and the next message is answered with the
        # session that continues it (the page goes on there).
        "closed_reason": session.closed_reason,
        "preview": session.preview,
    }


def recent_messages(*, session: DialogueSession, limit: int) -> list[tuple[str, str]]:
    """The session's latest `limit` messages as (role, text), oldest first.  Read once per turn,
    so on PostgreSQL it is one prepared statement (facade/dialogue/turn_sql.py)."""
    if session.continues_id is not None:  # the sessions it continues are its history too
        chain = conversation_session_ids(session)
        rows = list(Message.objects.filter(session_id__in=chain).order_by("-pk").values_list("role", "text")[:limit])
    elif connection.vendor == "postgresql":
        rows = turn_sql.fetch(connection, turn_sql.HISTORY, {"session": session.pk, "limit": limit})
    else:
        rows = list(Message.objects.filter(session=session).order_by("-pk").values_list("role", "text")[:limit])
    return [(str(role), str(text)) for role, text in reversed(rows)]


OPEN_REQUESTS_SHOWN = 20
REQUESTS_SCANNED = 500


def open_requests_for_owner(*, agent: Any, limit: int = OPEN_REQUESTS_SHOWN) -> tuple[list[dict[str, Any]], int]:
    """The agent's requests that still wait for someone, newest first, as the owner face may see
    them: number, kind, state, who acts next and when — not the summary or the fields, which are
    the customer's words (the owner's Requests page shows those).  Also how many are open.
    An owner's previews of the customer face and `rsi_simulate`'s scripted customers are left
    out: they wait for nobody (the Requests page shows them, marked)."""
    from .models import CustomerRequest

    rows = (
        CustomerRequest.objects.filter(agent=agent, session__preview=False, session__simulated=False)
        .order_by("-pk")
        .only("pk", "kind", "state", "flow", "created_at")[:REQUESTS_SCANNED]
    )
    open_ = [r for r in rows if rules.request_is_open(r.flow, r.state)]
    shown = [
        {
            "id": r.pk,
            "kind": r.kind,
            "state": r.state,
            "next_actor": str(((r.flow.get("states") or {}).get(r.state) or {}).get("next_actor", "owner")),
            "created_at": r.created_at.isoformat(),
        }
        for r in open_[:limit]
    ]
    return shown, len(open_)


def _state_groups(agent: Any, *, with_previews: bool, with_simulated: bool = True) -> list[tuple[str, Any, int]]:
    """The agent's requests grouped by state and the flow they were created under, with their
    number: who acts next is a property of the pair, so a few groups answer for every request."""
    from django.db.models import Count

    from .models import CustomerRequest

    requests = CustomerRequest.objects.filter(agent=agent)
    if not with_previews:
        requests = requests.filter(session__preview=False)
    if not with_simulated:
        requests = requests.filter(session__simulated=False)
    return [
        (str(row["state"]), row["flow"], int(row["n"]))
        for row in requests.values("state", "flow").annotate(n=Count("id")).order_by()
    ]


def _next_actor(flow: Any, state: str) -> str:
    return str((((flow or {}).get("states") or {}).get(state) or {}).get("next_actor", ""))


def requests_waiting_for_owner(*, agent: Any) -> int:
    """How many of the agent's requests wait for the business (previews and simulated customers
    left out)."""
    groups = _state_groups(agent, with_previews=False, with_simulated=False)
    return sum(n for state, flow, n in groups if _next_actor(flow, state) == "owner")


def requests_simulated_for_owner(*, agent: Any) -> int:
    """How many of `rsi_simulate`'s scripted requests would wait for the business were they
    real: shown beside the count, never in it."""
    groups = _state_groups(agent, with_previews=False, with_simulated=True)
    every = sum(n for state, flow, n in groups if _next_actor(flow, state) == "owner")
    return every - requests_waiting_for_owner(agent=agent)


def owner_requests(*, agent: Any, open_only: bool) -> Any:
    """The agent's requests for its owners' Requests page, newest first, with the owners' replies;
    `open_only`: those someone still has to act on (a state that is not final in its flow)."""
    from django.db.models import Prefetch, Q

    from .models import CustomerRequest

    requests = (
        CustomerRequest.objects.filter(agent=agent)
        .select_related("session")
        .prefetch_related(Prefetch("owner_replies", queryset=Message.objects.order_by("pk")))
        .order_by("-pk")
    )
    if open_only:
        still_open = Q(pk__in=[])
        for state, flow, _ in _state_groups(agent, with_previews=True):
            if _next_actor(flow, state) not in ("", "nobody"):
                still_open |= Q(state=state, flow=flow)
        requests = requests.filter(still_open)
    return requests


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


STATUS_SHOWN = 3  # a status question without a number is answered for the session's latest requests


def requests_for_status(*, session: Any, principal_actor_id: str, request_id: int | None) -> list[dict[str, Any]]:
    """The session's requests as its principal may ask after them (issue 26 §3): request
    `request_id`, or the latest few, newest first — each a `request_view` with `owner_acted`
    (anyone of the business has acted on it).  Another session's request is not found."""
    from .models import CustomerRequest

    mine = CustomerRequest.objects.filter(session=session)
    found = list(mine.filter(pk=request_id)) if request_id is not None else list(mine.order_by("-pk")[:STATUS_SHOWN])
    return [
        {**request_view(r), "owner_acted": request_owner_acted(r, principal_actor_id=principal_actor_id)} for r in found
    ]


AUDIT_TRAIL_MESSAGES = 1000  # a session's trail in the auditor console shows at most this many messages


def audit_session_trail(*, tenant_id: int, session_id: uuid.UUID | str, with_text: bool) -> dict[str, Any]:
    """A session of the tenant as the auditor console shows it: pointers, sizes, times and the
    run of each turn (status, stop reason, guard category), and the messages' text only when
    `with_text` (the caller has decided the reader may read it: `audit.access.may_read_raw_text`).
    NotFound for a session of another tenant, as for one that does not exist."""
    from collections import Counter

    from .models import Run

    session = DialogueSession.objects.select_related("agent").filter(pk=session_id, tenant_id=tenant_id).first()
    if session is None:
        raise NotFound(str(session_id))
    rows = list(
        Message.objects.filter(session=session)
        .select_related("run")
        .order_by("created_at", "pk")[:AUDIT_TRAIL_MESSAGES]
    )
    messages = []
    for message in rows:
        run = getattr(message, "run", None)
        item: dict[str, Any] = {
            "id": message.pk,
            "role": message.role,
            "chars": len(message.text),
            "created_at": message.created_at,
            "reply_to": message.reply_to_id,
            "stop_reason": message.stop_reason,
            "citations": len(message.citations or []),
            "run": None
            if run is None
            else {
                "id": str(run.pk),
                "status": run.status,
                "stop_reason": run.stop_reason,
                "guard_category": run.guard_category,
                "llm_calls": run.llm_call_count,
                "tool_calls": run.tool_call_count,
            },
        }
        if with_text:
            item["text"] = message.text
        messages.append(item)
    categories = Run.objects.filter(session=session).exclude(guard_category="").values_list("guard_category", flat=True)
    return {
        "session": session,
        "messages": messages,
        "total_messages": Message.objects.filter(session=session).count(),
        "guard_blocks": sorted(Counter(categories).items()),
    }


def blocked_replies_since(*, agent: Any, since: Any) -> int:
    """The agent's customer and peer replies that were replaced by the boundary wording, of the
    runs started since `since` (previews left out: an owner trying the customer face).  Read by
    the guard breaker (guard/breaker.py) through the (tenant, started_at) index."""
    return (
        Run.objects.filter(
            tenant_id=agent.tenant_id,
            started_at__gte=since,
            session__agent_id=agent.pk,
            session__preview=False,
            session__audience__in=("customer", "peer"),
        )
        # A strict composer's refusal is not counted: strict mode is what the breaker switches to;
        # nor a reply that was no answer at all (malformed_reply, issue 29): it committed to nothing.
        .exclude(guard_category__in=("", "strict_refused", "malformed_reply"))
        .count()
    )
