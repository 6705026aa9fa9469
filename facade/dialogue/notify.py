"""The e-mail that tells an agent's owners of a new request: what it is, the fields the request
flow collected and a link to the Requests page — never the conversation, nor the request's
summary (which may be the customer's or the model's wording beyond those fields)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.core.mail import send_mail
from django.db.models import Exists, OuterRef
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext

from facade.tenancy.models import AgentProfile, Membership, Role
from facade.tenancy.services import language_of_addresses

from .labels import ACTOR_LABELS, KIND_LABELS, STATE_LABELS, label
from .models import CustomerRequest


def owner_addresses(agent: AgentProfile) -> list[str]:
    """The e-mail addresses of the agent's owners who are owners still (listed on the agent,
    active, with the owner role in its tenant); platform operators are not written to."""
    owner_role = Membership.objects.filter(user_id=OuterRef("pk"), tenant_id=agent.tenant_id, role=Role.OWNER)
    owners = agent.owners.filter(is_active=True).filter(Exists(owner_role)).exclude(email="")
    return sorted(set(owners.values_list("email", flat=True)))


def requests_page_url(request: CustomerRequest) -> str:
    path = reverse("owner-requests", args=[request.agent.slug])
    return f"{settings.FACADE_PUBLIC_URL.rstrip('/')}{path}#request-{request.pk}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def request_email(request: CustomerRequest, language: str | None = None) -> tuple[str, str]:
    """The subject and body, in `language` (the recipient's; the site's default when not given)."""
    with translation.override(language or settings.LANGUAGE_CODE):
        agent = _one_line(request.agent.name)
        subject = gettext("New request #%(id)s for %(agent)s") % {"id": request.pk, "agent": agent}
        lines = [
            gettext("A customer registered request #%(id)s with %(agent)s.") % {"id": request.pk, "agent": agent},
            "",
            gettext("Kind: %(kind)s") % {"kind": label(KIND_LABELS, request.kind)},
            gettext("State: %(state)s") % {"state": label(STATE_LABELS, request.state)},
            gettext("Who acts next: %(actor)s") % {"actor": label(ACTOR_LABELS, request.next_actor)},
            "",
        ]
        if request.details:
            lines.append(gettext("What the customer gave:"))
            lines.extend(f"  {_one_line(k)}: {_one_line(str(v))}" for k, v in request.details.items())
        else:
            lines.append(gettext("The customer gave no details."))
        lines += ["", gettext("Open the Requests page to answer it:"), requests_page_url(request), ""]
        return subject, "\n".join(lines)


def request_notify_owners(request_id: int) -> int:
    """Send the new-request e-mail to the agent's owners; the number of addresses written to.
    A request that is gone, belongs to a preview or to a simulated customer sends nothing."""
    request = (
        CustomerRequest.objects.select_related("agent", "session")
        .filter(pk=request_id, session__preview=False, session__simulated=False)
        .first()
    )
    if request is None:
        return 0
    recipients = owner_addresses(request.agent)
    if not recipients:
        return 0
    return send_in_their_languages(recipients, lambda language: request_email(request, language))


def send_in_their_languages(recipients: list[str], write: Callable[[str], tuple[str, str]]) -> int:
    """One e-mail per language the recipients read the site in, each written by `write(language)`
    (subject, body) and sent to those who read it; the number of addresses written to."""
    by_language: dict[str, list[str]] = {}
    for address, language in language_of_addresses(recipients).items():
        by_language.setdefault(language, []).append(address)
    for language, addresses in sorted(by_language.items()):
        subject, body = write(language)
        send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, addresses)
    return len(recipients)


def notify_once(key: str, stamp: dt.datetime | None, send: Callable[[], int]) -> int:
    """Run `send` (an e-mail to owners) once per `key` and `stamp`, so a redelivered task sends
    nothing twice; what it returns is the number of addresses written to.  `stamp` is the object's
    own time (its creation, its opening): ids restart when a database is recreated, the cache may
    not.  None — the object is gone — sends nothing."""
    if stamp is None:
        return 0
    key = f"{key}:{stamp.timestamp():.6f}"
    if cache.get(key):
        return 0
    sent = send()
    cache.set(key, 1, timeout=7 * 24 * 3600)
    return sent
