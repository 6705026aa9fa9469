"""The owner's inbox of change proposals and the demo's outbox, always scoped to an agent the
signed-in user owns (anything else answers 404):

- the inbox (`/owner/<slug>/inbox`): server-rendered cards, pending first, then the recently
  decided; `static/js/approvals.js` drives their buttons through the JSON API (authorize, the
  e-mailed code for L3, decide, re-base, roll back) and reloads a card from `…/inbox/<id>/card`
  after each step, so that the page never renders a proposal any other way than the server does;
- the owner chat shows the same card, loaded from the same fragment;
- the demo outbox (`/owner/<slug>/outbox`): the e-mails the file backend wrote to the signed-in
  owner's address, so a person trying the demo can read an L3 decision's code.  Only when DEBUG
  or FACADE_DEMO_OUTBOX is on and e-mail goes to files; 404 otherwise.

The URLs are in `approvals/urls.py`."""

from __future__ import annotations

from dataclasses import dataclass
from email import message_from_bytes, policy
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_safe

from facade.tenancy.models import AgentProfile
from facade.tenancy.policy import AgentPolicy, NotFound

from .cards import card_view
from .contract_models import AgentContract
from .outbox import outbox_enabled
from .selectors import pending_proposals, proposal_get, recently_decided

OUTBOX_FILES = 200  # the newest files read; the file backend writes one per connection
OUTBOX_SHOWN = 20


def _owned(request: HttpRequest, slug: str) -> AgentProfile:
    try:
        return AgentPolicy.get_owned(request.user, slug)
    except NotFound as exc:
        raise Http404("no such agent among those you own") from exc


def approvals_texts() -> dict[str, str]:
    """What the cards' script says, in the reader's language (a JSON data island)."""
    return {
        "working": gettext("Working…"),
        "sending_code": gettext("Sending the code…"),
        "sent_to": gettext("We e-mailed a 6-digit code to {address}. Type it here to confirm."),
        "waiting_code": gettext("Waiting for the code from the e-mail."),
        "code_format": gettext("The code is the 6 digits from the e-mail."),
        "wrong_code": gettext("That code is not right. Tries left: {n}."),
        "code_dead": gettext("Too many wrong codes. Ask for a new code."),
        "invalid_challenge": gettext("This code can no longer be used. Ask for a new code."),
        "too_many_challenges": gettext("Too many codes were asked for. Try again in {seconds} s."),
        "email_unavailable": gettext(
            "The code could not be e-mailed, so this change cannot be decided now. Try again later."
        ),
        "stale_base": gettext(
            "What this change was based on has changed since it was proposed. Re-base it to compare it with what "
            "is live now, then decide."
        ),
        "invalid_reason": gettext("The reason is too long: at most 200 characters."),
        "version_mismatch": gettext("This change was edited meanwhile. Read it again, then decide."),
        "not_pending": gettext("This change has already been decided."),
        "draft_unwritten": gettext(
            "This draft has no answer yet: write the answer in “Write the answer” above, save it, then approve."
        ),
        "saved": gettext("Saved. Read it again, then decide."),
        "invalid_token": gettext("The confirmation expired or was already used. Please decide again."),
        "assurance_required": gettext("This change needs the code we e-mail you."),
        "totp_required": gettext("This change also needs the code from your authenticator app."),
        "wrong_totp": gettext("The authenticator code is not right. Type the current one."),
        "totp_enrolment_required": gettext(
            "Your business requires an authenticator app for this change: set up two-step sign-in first."
        ),
        "reauthentication_required": gettext("For this change, please sign in again first, then decide."),
        "same_approver": gettext("You have approved this change already: another owner must approve it too."),
        "rate_limited": gettext("Too many attempts. Wait a few minutes, then try again."),
        "second_owner": gettext("Your approval is recorded. Another owner must approve it too."),
        "applied": gettext("Approved and applied."),
        "published": gettext("Approved and published as contract version {version}."),
        "live_contract": gettext("Live contract: version {version}"),
        "approved": gettext("Approved."),
        "rejected": gettext("Rejected."),
        "failed": gettext("Approved, but it could not be applied."),
        "rebased": gettext("Re-based on what is live now. Compare again, then decide."),
        "superseded": gettext("A later change replaced what this one set: roll that one back instead."),
        "rollback_pending": gettext("A roll-back of this change already waits for your decision."),
        "not_rollbackable": gettext("Only an applied change of the contract can be rolled back here."),
        "rolled_back": gettext("The roll-back is change {id}."),
        "other": gettext("Something went wrong. Please try again."),
    }


def _live_contract(agent: AgentProfile) -> int | None:
    return AgentContract.objects.filter(agent=agent, is_live=True).values_list("version", flat=True).first()


@require_safe
@login_required
@ensure_csrf_cookie
def owner_inbox(request: HttpRequest, slug: str) -> HttpResponse:
    agent = _owned(request, slug)
    # The latest daily review sits above the cards; rsi builds on approvals, so it is imported here.
    from rsi.review_inbox import inbox_review

    # `?review=YYYY-MM-DD` shows that day's report (the link at the end of a review's progress).
    context: dict[str, Any] = {
        "agent": agent,
        "review": inbox_review(agent, day=request.GET.get("review", "")),
        "pending": [card_view(p) for p in pending_proposals(agent=agent)],
        "decided": [card_view(p) for p in recently_decided(agent=agent)],
        "contract_version": _live_contract(agent),
        "texts": approvals_texts(),
    }
    return render(request, "approvals/owner_inbox.html", context)


@require_safe
@login_required
def owner_inbox_card(request: HttpRequest, slug: str, change_id: str) -> HttpResponse:
    """One card as an HTML fragment, for the inbox after a step and for the owner chat."""
    agent = _owned(request, slug)
    try:
        proposal = proposal_get(agent=agent, proposal_id=change_id)
    except NotFound as exc:
        raise Http404("no such proposal") from exc
    response = render(request, "approvals/_card.html", {"agent": agent, "card": card_view(proposal)})
    response["Cache-Control"] = "no-store"
    return response


@dataclass(frozen=True)
class Mail:
    subject: str
    sent: str
    body: str


def outbox_mails(address: str) -> list[Mail]:
    """The newest e-mails the file backend wrote to `address`, newest first."""
    folder = Path(getattr(settings, "EMAIL_FILE_PATH", "") or "")
    if not address or not folder.is_dir():
        return []
    files = sorted(folder.glob("*.log"), key=lambda f: f.stat().st_mtime, reverse=True)[:OUTBOX_FILES]
    found: list[Mail] = []
    for path in files:
        # The file backend writes each message followed by a line of 79 dashes.
        # Bytes, not text: a body in Chinese is 8-bit UTF-8, which the parser of a str would
        # hand back escaped ("\u60a8…") instead of decoding it.
        for raw in reversed(path.read_bytes().split(b"\n" + b"-" * 79 + b"\n")):
            if not raw.strip():
                continue
            mail = message_from_bytes(raw.lstrip(b"\n"), policy=policy.default)
            to = [a.strip().lower() for a in str(mail.get("To", "")).split(",")]
            if address.lower() not in to:
                continue
            part = mail.get_body(preferencelist=("plain",))
            body = part.get_content() if part is not None else ""
            found.append(Mail(str(mail.get("Subject", "")), str(mail.get("Date", "")), str(body)))
            if len(found) >= OUTBOX_SHOWN:
                return found
    return found


@require_safe
@login_required
def owner_outbox(request: HttpRequest, slug: str) -> HttpResponse:
    if not outbox_enabled():
        raise Http404("the demo outbox is off")
    agent = _owned(request, slug)
    address = str(getattr(request.user, "email", "") or "")
    response = render(
        request, "approvals/owner_outbox.html", {"agent": agent, "address": address, "mails": outbox_mails(address)}
    )
    response["Cache-Control"] = "no-store"
    return response
