"""The guard breaker (issue 15 §5; the escalation budget of the responsibility-contract seed).

When more than FACADE_GUARD_BREAKER_THRESHOLD of an agent's customer and peer replies were
replaced by the boundary wording in a sliding hour, the breaker opens: the agent's customer face
composes in strict mode (`breaker_open`, read by the one function that decides the composition
mode), the owners are e-mailed, and it stays open until an owner closes it — a recorded
decision.  Opening it changes nothing else: no session is closed and no turn fails.

What is counted: the replies that were finally blocked (`Run.guard_category` set), not first
attempts that a rewrite made sendable — what a customer would have got is what the breaker
watches.  Blocks before the last close do not count again, so closing it is not undone by the
hour that opened it.
"""

from __future__ import annotations

import datetime as dt
import logging

from django.conf import settings
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext

from facade.dialogue.notify import owner_addresses, send_in_their_languages
from facade.dialogue.selectors import blocked_replies_since
from facade.errors import ApplicationError
from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor

from . import events
from .models import GuardBreaker

__all__ = ["WINDOW", "breaker_close", "breaker_current", "breaker_open", "breaker_trip"]

log = logging.getLogger(__name__)
WINDOW = dt.timedelta(hours=1)


def breaker_open(agent: AgentProfile) -> bool:
    """Whether the agent's guard breaker is open (its customer face composes in strict mode)."""
    return GuardBreaker.objects.filter(agent_id=agent.pk, closed_at__isnull=True).exists()


def breaker_current(agent: AgentProfile) -> GuardBreaker | None:
    """The agent's open breaker, if it has one."""
    return GuardBreaker.objects.filter(agent_id=agent.pk, closed_at__isnull=True).first()


def breaker_trip(*, agent: AgentProfile) -> GuardBreaker | None:
    """Called after a blocked customer or peer reply is recorded (its own transaction, after
    the turn's): open the breaker when the hour's blocks exceed the threshold.  Idempotent —
    concurrent trips open it once (the partial unique index on open rows): the breaker it
    opened, else None.  A threshold of 0 or less turns the breaker off."""
    threshold = settings.FACADE_GUARD_BREAKER_THRESHOLD
    if threshold <= 0 or breaker_open(agent):
        return None
    now = timezone.now()
    since = now - WINDOW
    last_closed = (
        GuardBreaker.objects.filter(agent_id=agent.pk, closed_at__isnull=False)
        .order_by("-closed_at")
        .values_list("closed_at", flat=True)
        .first()
    )
    if last_closed is not None and last_closed > since:
        since = last_closed
    blocks = blocked_replies_since(agent=agent, since=since)
    if blocks <= threshold:
        return None
    try:
        with transaction.atomic():
            breaker = GuardBreaker.objects.create(
                tenant_id=agent.tenant_id, agent=agent, opened_at=now, blocks=blocks, threshold=threshold
            )
            events.guard_breaker_opened(breaker=breaker, agent_slug=agent.slug, window_minutes=_minutes(WINDOW))
    except IntegrityError:
        return None  # another turn opened it first
    from .tasks import breaker_notify_owners_task

    transaction.on_commit(lambda: breaker_notify_owners_task.delay(breaker.pk))
    return breaker


def breaker_trip_quietly(*, agent: AgentProfile) -> None:
    """`breaker_trip` for the run loop: the turn has been answered and recorded already, and
    must not fail because the breaker could not be checked (it is checked again at the next
    blocked reply)."""
    try:
        breaker_trip(agent=agent)
    except Exception:  # noqa: BLE001 — logged; the customer's turn is already answered
        log.exception("guard breaker check failed for agent %s", agent.pk)


@transaction.atomic
def breaker_close(*, agent: AgentProfile, user_id: int) -> GuardBreaker:
    """An owner closes the agent's open breaker (the caller checked that `user_id` owns the
    agent): its customer face composes as its contract says again.  `breaker_not_open` (409)
    when there is none open."""
    breaker = GuardBreaker.objects.select_for_update().filter(agent_id=agent.pk, closed_at__isnull=True).first()
    if breaker is None:
        raise ApplicationError("breaker_not_open", gettext("The guard breaker of this agent is not open."), 409)
    breaker.closed_at, breaker.closed_by_id = timezone.now(), user_id
    breaker.save(update_fields=["closed_at", "closed_by"])
    events.guard_breaker_closed(breaker=breaker, agent_slug=agent.slug, actor=Actor.human(user_id))
    return breaker


def _minutes(delta: dt.timedelta) -> int:
    return int(delta.total_seconds() // 60)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def breaker_email(breaker: GuardBreaker, language: str | None = None) -> tuple[str, str]:
    """The subject and body, in `language` (the recipient's; the site's default when not given):
    counts and a link, no reply text."""
    agent = breaker.agent
    path = reverse("owner-overview", args=[agent.slug])
    url = f"{settings.FACADE_PUBLIC_URL.rstrip('/')}{path}#guard-breaker"
    with translation.override(language or settings.LANGUAGE_CODE):
        name = _one_line(agent.name)
        subject = gettext("%(agent)s now answers customers in strict mode") % {"agent": name}
        lines = [
            gettext(
                "In the last hour, %(blocks)s replies of %(agent)s to customers were blocked and replaced by its "
                "boundary wording (the limit is %(threshold)s)."
            )
            % {"blocks": breaker.blocks, "agent": name, "threshold": breaker.threshold},
            "",
            gettext(
                "Its guard breaker opened: its customer face now answers in strict mode, from your approved "
                "knowledge, its templates and request status lines only. Customers are still being served."
            ),
            gettext("It stays so until you close the breaker on the agent's overview:"),
            url,
            "",
        ]
        return subject, "\n".join(lines)


def breaker_notify_owners(breaker_id: int) -> int:
    """E-mail the agent's owners that its breaker opened; the number of addresses written to.
    A breaker already closed again sends nothing."""
    breaker = GuardBreaker.objects.select_related("agent").filter(pk=breaker_id, closed_at__isnull=True).first()
    if breaker is None:
        return 0
    recipients = owner_addresses(breaker.agent)
    if not recipients:
        return 0
    return send_in_their_languages(recipients, lambda language: breaker_email(breaker, language))
