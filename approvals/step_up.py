"""What an authorisation attempt needs besides the token and the e-mailed code (issue 12, "Email
OTP for L3"): the owner's attempt limit, a fresh signed-in session for L3, the authenticator code
a tenant may require for L3, and the two-owner rule a tenant may set for L3 approvals.

E-mail is a weak factor alone, so an L3 decision is a transaction confirmation on top of a
recent sign-in: the session records when its user signed in (`mark_signed_in`, on Django's
`user_logged_in`), and authorize, verify and decide of an L3 change refuse a session older than
FACADE_STEP_UP_FRESH_SECONDS — or one that never recorded it — with 403
`reauthentication_required`.  After a verified code the session id rotates (the API view).

Every refusal here is an `authority.attempt_refused` event with its reason (the token's and the
code's own refusals are recorded by authority.py).  A refusal is written in its own transaction,
so it stays recorded while the request fails."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from facade.accounts.devices import confirmed_device
from facade.errors import ApplicationError
from facade.ratelimit import rate_check
from facade.tenancy.models import AgentProfile, Membership, Role, Tenant
from facade.tenancy.policy import AgentPolicy
from facade.tenancy.schemas import Actor

from . import authority_events as events
from .authority import ConsumedToken
from .authority_events import AttemptRefusal, AttemptStep
from .authority_models import Assurance, Decision, DecisionSignature
from .models import ChangeProposal

SIGNED_IN_AT = "facade_signed_in_at"  # Unix time of the session's sign-in; never a secret
TWO_OWNERS = 2


class StepUpError(ApplicationError):
    """A refusal of an authorisation attempt beside the token and the code."""


def mark_signed_in(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    """`user_logged_in` receiver: the session remembers when its user signed in (after the
    authenticator code, for a user who has one: django's login is called only then)."""
    session = getattr(request, "session", None)
    if session is not None:
        session[SIGNED_IN_AT] = int(time.time())


@dataclass(frozen=True)
class Attempt:
    """One call of authorize, verify or decide by `owner` on `change_id` of `agent`."""

    agent: AgentProfile
    change_id: str
    owner: Any
    step: AttemptStep
    decision: str

    def refuse(self, reason: AttemptRefusal, error: ApplicationError) -> ApplicationError:
        """Record the refusal and return the error to raise.  Outside a transaction the record
        commits at once; inside proposal_decide's it commits with it (that one raises after)."""
        with transaction.atomic():
            events.authority_attempt_refused(
                agent=self.agent,
                change_id=self.change_id,
                step=self.step,
                decision=self.decision,
                owner_id=self.owner.pk,
                reason=reason,
                actor=Actor.human(self.owner.pk),
            )
        return error


def _tenant(agent: AgentProfile) -> Tenant:
    # Read afresh: the policy may have changed since the agent row was loaded.
    return Tenant.objects.get(pk=agent.tenant_id)


def attempt_admit(attempt: Attempt, *, level: int, session: Any) -> None:
    """Count the attempt against the owner's limit (FACADE_RATE_AUTHORITY; refused attempts
    count too) — over it 429 `rate_limited`; then, for an L3 change, the session must be fresh
    (403 `reauthentication_required`) and, in a tenant that requires an authenticator code for
    L3, the owner must have one (403 `totp_enrolment_required`); and an owner who already
    approved under the two-owner rule may not approve again (403 `same_approver`)."""
    # While Redis is away the attempt is refused (503 `temporarily_unavailable`), not counted per
    # process: a limit on guessing codes must hold across processes.
    limited = rate_check(
        [("authority:owner", str(attempt.owner.pk), settings.FACADE_RATE_AUTHORITY)], when_unreachable="refuse"
    )
    if limited is not None:
        raise attempt.refuse(
            "rate_limited",
            StepUpError(
                "rate_limited",
                gettext("Too many attempts to authorise decisions. Try again in %(seconds)s s.")
                % {"seconds": limited.retry_after},
                HTTPStatus.TOO_MANY_REQUESTS,
                retry_after=limited.retry_after,
            ),
        )
    if level != 3:
        return
    tenant_owner_require(attempt)
    session_fresh_require(attempt, session=session)
    tenant = _tenant(attempt.agent)
    if tenant.l3_requires_totp:
        totp_device_require(attempt)
    if tenant.l3_requires_two_owners and attempt.decision == Decision.APPROVE and attempt.step != "verify":
        proposal = ChangeProposal.objects.filter(pk=attempt.change_id, agent=attempt.agent).first()
        if proposal is not None and _signed(proposal, attempt.owner):
            raise attempt.refuse("same_approver", _same_approver())


def tenant_owner_require(attempt: Attempt) -> None:
    """An L3 decision (approve or reject) is for the tenant's own owners (issue 28): a platform
    operator, who may act for owners elsewhere, is not an owner of a tenant's commitments, and
    someone removed from the tenant or from the agent's owners no longer is one either.  Else
    403 `not_a_tenant_owner`, recorded."""
    if not AgentPolicy.is_tenant_owner(attempt.owner.pk, attempt.agent):
        raise attempt.refuse("not_a_tenant_owner", _not_a_tenant_owner())


def _not_a_tenant_owner() -> StepUpError:
    return StepUpError(
        "not_a_tenant_owner",
        gettext(
            "Only the business's own owners can decide a change to its commitments; "
            "platform operators and former owners cannot."
        ),
        HTTPStatus.FORBIDDEN,
    )


def session_fresh_require(attempt: Attempt, *, session: Any, now: float | None = None) -> None:
    now = time.time() if now is None else now
    signed_in_at = session.get(SIGNED_IN_AT) if session is not None else None
    window = settings.FACADE_STEP_UP_FRESH_SECONDS
    if isinstance(signed_in_at, int) and 0 <= now - signed_in_at <= window:
        return
    raise attempt.refuse(
        "reauthentication_required",
        StepUpError(
            "reauthentication_required",
            gettext(
                "This decision needs a recent sign-in: sign out, sign in again and decide within %(minutes)s minutes."
            )
            % {"minutes": max(1, window // 60)},
            HTTPStatus.FORBIDDEN,
        ),
    )


def totp_device_require(attempt: Attempt) -> Any:
    """The owner's confirmed authenticator (django-otp TOTP device); without one 403
    `totp_enrolment_required`: such an owner cannot decide L3 in a tenant that requires it."""
    device = confirmed_device(attempt.owner)
    if device is None:
        raise attempt.refuse(
            "totp_not_enrolled",
            StepUpError(
                "totp_enrolment_required",
                gettext(
                    "Your business requires a code from an authenticator app for this decision: "
                    "set one up at /accounts/two-step/ first."
                ),
                HTTPStatus.FORBIDDEN,
            ),
        )
    return device


def verify_second_factor(attempt: Attempt, *, totp: object) -> Any:
    """For verify: the authenticator the code must come from when the tenant requires one for L3
    (None when it does not).  A request without a six-digit `totp` answers 400 `totp_required`
    before the e-mailed code is looked at (no try of the challenge is spent on it)."""
    if not _tenant(attempt.agent).l3_requires_totp:
        return None
    device = totp_device_require(attempt)
    if not (isinstance(totp, str) and len(totp) == 6 and totp.isascii() and totp.isdigit()):
        raise attempt.refuse(
            "totp_missing",
            StepUpError(
                "totp_required",
                gettext("Enter the 6-digit code from your authenticator app as well as the e-mailed code."),
            ),
        )
    return device


def l3_assurances(tenant: Tenant) -> frozenset[str]:
    """The token assurances that may decide an L3 change in this tenant."""
    if tenant.l3_requires_totp:
        return frozenset({Assurance.EMAIL_OTP_TOTP})
    return frozenset({Assurance.EMAIL_OTP, Assurance.EMAIL_OTP_TOTP})


def _signed(proposal: ChangeProposal, owner: Any) -> bool:
    return DecisionSignature.objects.filter(proposal=proposal, version=proposal.version, owner=owner).exists()


def _same_approver() -> StepUpError:
    return StepUpError(
        "same_approver",
        gettext("You already approved this change; it needs the approval of another owner."),
        HTTPStatus.FORBIDDEN,
    )


@dataclass(frozen=True)
class DecideGate:
    """What `proposal_decide` does after the token was consumed: refuse (`refused`), record a
    first approval and leave the proposal pending (`awaiting_second_owner`), or decide."""

    refused: ApplicationError | None = None
    awaiting_second_owner: bool = False


def decide_gate(
    *,
    proposal: ChangeProposal,
    owner: Any,
    consumed: ConsumedToken,
    decision: str,
    now: datetime | None = None,
) -> DecideGate:
    """Inside proposal_decide's transaction, with the proposal locked and the token consumed.
    L1/L2 and rejections go ahead.  An L3 approval needs a token whose assurance the tenant
    accepts (`l3_assurances`; else `assurance_required`, the token spent).  Under the two-owner
    rule an L3 approval is a signature: the first owner's is recorded and the proposal stays
    pending; the same owner again is `same_approver`; another owner's decides.  A rejection,
    by either owner, decides at once."""
    if proposal.level != 3:
        return DecideGate()
    attempt = Attempt(agent=proposal.agent, change_id=proposal.pk, owner=owner, step="decide", decision=decision)
    # Membership is re-checked now, at the moment the decision would apply (issue 28).
    if not AgentPolicy.is_tenant_owner(owner.pk, proposal.agent):
        return DecideGate(refused=attempt.refuse("not_a_tenant_owner", _not_a_tenant_owner()))
    tenant = _tenant(proposal.agent)
    if consumed.assurance not in l3_assurances(tenant):
        return DecideGate(refused=attempt.refuse("assurance_required", _assurance_required()))
    if decision != Decision.APPROVE or not tenant.l3_requires_two_owners:
        return DecideGate()
    if _signed(proposal, owner):
        return DecideGate(refused=attempt.refuse("same_approver", _same_approver()))
    DecisionSignature.objects.create(
        proposal=proposal,
        version=proposal.version,
        owner=owner,
        authorization_id=consumed.authorization_id,
        assurance=consumed.assurance,
        created_at=now or timezone.now(),
    )
    approvals = approvals_of(proposal)
    events.authority_signature_recorded(
        agent=proposal.agent,
        change_id=proposal.pk,
        version=proposal.version,
        owner_id=owner.pk,
        authorization_id=consumed.authorization_id,
        assurance=consumed.assurance,
        approvals=approvals,
        required=TWO_OWNERS,
        actor=Actor.human(owner.pk),
    )
    return DecideGate(awaiting_second_owner=approvals < TWO_OWNERS)


def owners_lock(agent: AgentProfile) -> None:
    """Inside proposal_decide's transaction, with the proposal locked and before its token is
    consumed: lock the tenant's owner memberships (in id order), so that a removal of an owner
    (`membership_revoke`, a role change: each locks or updates the person's membership row and
    then voids their approvals) and this L3 decision happen one after the other, never
    interleaved — the decision's membership checks then see the removal, or the removal voids
    what the decision recorded."""
    list(
        Membership.objects.select_for_update()
        .filter(tenant_id=agent.tenant_id, role=Role.OWNER)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def approvals_of(proposal: ChangeProposal) -> int:
    """Owners' approvals recorded for the proposal's current version (two-owner rule), counting
    only approvers who are still the tenant's own owners of the agent at this moment (issue 28):
    a removal voids approvals when it happens, and this re-check holds even so."""
    owners = AgentPolicy.tenant_owners(proposal.agent).values("pk")
    return DecisionSignature.objects.filter(proposal=proposal, version=proposal.version, owner__in=owners).count()


def _assurance_required() -> StepUpError:
    return StepUpError(
        "assurance_required",
        "this change needs the code sent by e-mail before it can be decided",
        HTTPStatus.FORBIDDEN,
    )
