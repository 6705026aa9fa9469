"""The decision authority: one-time decision tokens and emailed codes (issue 12, DESIGN §5).

A decision stands on the owner's message, a one-time token and the decide call.  This module
issues and consumes the tokens and, for L3, runs the e-mail challenge whose right code earns a
token with `email_otp` assurance.  The HTTP endpoints (authorize / verify / decide) are built on
these services.

Secrets: a token is 256 random bits, a code 6 random digits, both from `secrets`; rows keep only
an HMAC-SHA256 of them under a key derived from SECRET_KEY (a database reader cannot test the
million codes against the digest).  The code is returned by nothing and written nowhere but the
e-mail body; refusals answer alike (`invalid_token`, `invalid_challenge`) while the ledger
records the precise reason.
"""

from __future__ import annotations

import hmac
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.mail import get_connection, send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone, translation
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext

from facade.errors import ApplicationError
from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor
from facade.tenancy.services import language_of_addresses

from . import authority_events as events
from .authority_events import ChallengeRefusal, TokenRefusal
from .authority_models import (
    Assurance,
    ChallengeStatus,
    Decision,
    DecisionChallenge,
    DecisionSignature,
    DecisionToken,
)
from .models import ChangeProposal, ProposalStatus

logger = logging.getLogger(__name__)

TOKEN_BYTES = 32  # 256 bits
MAX_TOKEN_CHARS = 128  # a longer string is not one of ours; refused without hashing it
CODE_DIGITS = 6


class AuthorityError(ApplicationError):
    """A refusal of the decision authority."""


@dataclass(frozen=True)
class IssuedToken:
    token: str
    expires_at: datetime
    authorization_id: str
    assurance: str = Assurance.CLICK


@dataclass(frozen=True)
class ConsumedToken:
    authorization_id: str
    assurance: str
    version: int


@dataclass(frozen=True)
class Challenge:
    challenge_id: str
    sent_to: str
    expires_at: datetime


def _digest(purpose: str, value: str) -> str:
    return salted_hmac(f"facade.approvals.{purpose}", value, algorithm="sha256").hexdigest()


def _decision(decision: str) -> str:
    if decision not in Decision.values:
        raise AuthorityError("invalid_decision", "decision must be approve or reject")
    return decision


def _actor(owner: Any) -> Actor:
    return Actor.human(owner.pk)


def _invalid_token() -> AuthorityError:
    return AuthorityError("invalid_token", "this token cannot authorise this decision", HTTPStatus.FORBIDDEN)


def _invalid_challenge() -> AuthorityError:
    return AuthorityError("invalid_challenge", "this challenge cannot be answered", HTTPStatus.FORBIDDEN)


# --- one-time tokens -----------------------------------------------------------------------


def token_issue(
    *,
    agent: AgentProfile,
    change_id: str,
    version: int,
    owner: Any,
    decision: str,
    assurance: str = Assurance.CLICK,
    now: datetime | None = None,
) -> IssuedToken:
    """A token for one decision of `owner` on version `version` of `change_id`, valid for
    FACADE_DECISION_TOKEN_SECONDS.  Whether the owner may decide this change at all is the
    caller's check (the proposal's services)."""
    decision = _decision(decision)
    if assurance not in Assurance.values:
        raise AuthorityError("invalid_assurance", "unknown assurance")
    now = now or timezone.now()
    token = secrets.token_urlsafe(TOKEN_BYTES)
    expires_at = now + timedelta(seconds=settings.FACADE_DECISION_TOKEN_SECONDS)
    with transaction.atomic():
        row = DecisionToken.objects.create(
            agent=agent,
            owner=owner,
            change_id=change_id,
            version=version,
            decision=decision,
            assurance=assurance,
            token_hash=_digest("token", token),
            authorization_id="auth_" + secrets.token_urlsafe(12),
            created_at=now,
            expires_at=expires_at,
        )
        events.authority_issued(
            agent=agent,
            change_id=change_id,
            version=version,
            decision=decision,
            assurance=assurance,
            authorization_id=row.authorization_id,
            owner_id=owner.pk,
            expires_at=expires_at.isoformat(),
            actor=_actor(owner),
        )
    return IssuedToken(token=token, expires_at=expires_at, authorization_id=row.authorization_id, assurance=assurance)


def _token_refusal(
    row: DecisionToken | None,
    *,
    agent: AgentProfile,
    change_id: str,
    owner: Any,
    decision: str,
    now: datetime,
    version: int | None = None,
) -> TokenRefusal:
    if row is None:
        return "unknown"
    if row.used_at is not None:
        return "used"
    if row.expires_at <= now:
        return "expired"
    if row.agent_id != agent.pk:
        return "agent"
    if row.change_id != change_id:
        return "change"
    if row.owner_id != owner.pk:
        return "owner"
    if version is not None and row.version != version:
        return "version"
    return "decision"


def token_consume(
    *,
    token: str,
    agent: AgentProfile,
    change_id: str,
    owner: Any,
    decision: str,
    now: datetime | None = None,
    version: int | None = None,
) -> ConsumedToken:
    """Use `token` for this decision, once; with `version`, only a token issued for that version
    of the change (an edit after authorising makes the token useless).  One conditional UPDATE
    takes it: of any number of concurrent callers exactly one sees a row changed.  Every refusal
    is `invalid_token` (403) to the caller and `authority.token_refused` with its reason in the ledger."""
    now = now or timezone.now()
    digest = _digest("token", token) if isinstance(token, str) and 0 < len(token) <= MAX_TOKEN_CHARS else ""
    with transaction.atomic():
        taken = 0
        if digest:
            usable = DecisionToken.objects.filter(
                token_hash=digest,
                used_at__isnull=True,
                expires_at__gt=now,
                agent=agent,
                change_id=change_id,
                owner=owner,
                decision=decision,
            )
            if version is not None:
                usable = usable.filter(version=version)
            taken = usable.update(used_at=now)
        if taken == 1:
            row = DecisionToken.objects.get(token_hash=digest)
            events.authority_token_consumed(
                agent=agent,
                change_id=change_id,
                version=row.version,
                decision=row.decision,
                assurance=row.assurance,
                authorization_id=row.authorization_id,
                owner_id=owner.pk,
                actor=_actor(owner),
            )
            return ConsumedToken(authorization_id=row.authorization_id, assurance=row.assurance, version=row.version)
        found = DecisionToken.objects.filter(token_hash=digest).first() if digest else None
        reason = _token_refusal(
            found, agent=agent, change_id=change_id, owner=owner, decision=decision, now=now, version=version
        )
        events.authority_token_refused(
            agent=agent,
            change_id=change_id,
            decision=str(decision),
            owner_id=owner.pk,
            reason=reason,
            # Another tenant's token is not named on this tenant's chain.
            authorization_id=found.authorization_id if found is not None and found.agent_id == agent.pk else "",
            actor=_actor(owner),
        )
    raise _invalid_token()


# --- a person who stops being an owner (issue 28) -----------------------------------------


def authority_void_for_owner(
    *, user: Any, agents: list[AgentProfile], reason: str, actor: Actor, now: datetime | None = None, **_: Any
) -> int:
    """`owner_authority_ended` receiver (facade/tenancy/signals.py), inside the transaction that
    removes `user`'s ownership of `agents`: their unspent decision tokens stop working, their live
    e-mailed codes die and their recorded approvals of pending changes (two-owner rule) are void,
    one `authority.approvals_voided` event per change concerned.  The number of changes."""
    now = now or timezone.now()
    reason = reason if reason in ("membership_revoked", "owner_role_changed", "agent_owner_removed") else ""
    if not reason:
        raise AuthorityError("invalid_reason", "unknown reason for voiding approvals")
    counted = 0
    for agent in agents:
        tokens = DecisionToken.objects.select_for_update().filter(
            agent=agent, owner=user, used_at__isnull=True, expires_at__gt=now
        )
        challenges = DecisionChallenge.objects.select_for_update().filter(
            agent=agent, owner=user, status=ChallengeStatus.LIVE
        )
        pending = ChangeProposal.objects.filter(agent=agent, status=ProposalStatus.PENDING).values("pk")
        signatures = DecisionSignature.objects.select_for_update().filter(owner=user, proposal__in=pending)
        per_change: dict[str, list[int]] = {}
        for change_id in tokens.values_list("change_id", flat=True):
            per_change.setdefault(change_id, [0, 0, 0])[0] += 1
        for change_id in challenges.values_list("change_id", flat=True):
            per_change.setdefault(change_id, [0, 0, 0])[1] += 1
        for change_id in signatures.values_list("proposal_id", flat=True):
            per_change.setdefault(change_id, [0, 0, 0])[2] += 1
        tokens.update(expires_at=now)
        challenges.update(status=ChallengeStatus.DEAD)
        signatures.delete()
        for change_id, (n_tokens, n_challenges, n_signatures) in sorted(per_change.items()):
            events.authority_approvals_voided(
                agent=agent,
                change_id=change_id,
                owner_id=user.pk,
                reason=reason,  # type: ignore[arg-type]  # checked above
                authorizations=n_tokens,
                challenges=n_challenges,
                approvals=n_signatures,
                actor=actor,
            )
        counted += len(per_change)
    return counted


# --- e-mailed codes ------------------------------------------------------------------------


def mask_address(address: str) -> str:
    """`owner@demo.test` → `o***@demo.test`: enough for the owner to recognise, not to harvest."""
    local, _, domain = address.rpartition("@")
    return f"{local[:1]}***@{domain}"


def _usable_address(owner: Any) -> str | None:
    address = (getattr(owner, "email", "") or "").strip()
    try:
        validate_email(address)
    except ValidationError:
        return None
    return address


def new_code() -> str:
    """Six decimal digits, uniformly from the CSPRNG (leading zeros kept)."""
    return f"{secrets.randbelow(10**CODE_DIGITS):0{CODE_DIGITS}d}"


def _send_code(*, address: str, code: str, agent: AgentProfile, change_id: str, decision: str, minutes: int) -> None:
    """The code's e-mail, in the language its owner reads the site in."""
    with translation.override(language_of_addresses([address])[address]):
        subject = gettext("Your confirmation code for %(agent)s") % {"agent": agent.name}
        if decision == Decision.APPROVE:
            what = gettext("You asked to approve change %(change)s of %(agent)s.")
        else:
            what = gettext("You asked to reject change %(change)s of %(agent)s.")
        valid = gettext("It is valid for %(minutes)s minutes. Type it into the change's card.") % {"minutes": minutes}
        body = "\n".join(
            [
                what % {"change": change_id, "agent": agent.name},
                "",
                gettext("Your code: %(code)s") % {"code": code},
                "",
                valid,
                gettext("Never tell it to anyone, nor write it in a chat."),
                gettext("If you did not ask for it, sign out everywhere and change your password."),
            ]
        )
    connection = get_connection(timeout=settings.FACADE_OTP_EMAIL_TIMEOUT)
    send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [address], connection=connection)


def _refuse_challenge(
    *, agent: AgentProfile, change_id: str, owner: Any, decision: str, reason: ChallengeRefusal, challenge: str = ""
) -> None:
    with transaction.atomic():
        events.authority_challenge_refused(
            agent=agent,
            change_id=change_id,
            decision=str(decision),
            owner_id=owner.pk,
            reason=reason,
            challenge=challenge,
            actor=_actor(owner),
        )


class _MailFailed(Exception):
    """Raised inside the challenge's transaction to roll it back when the mail did not go."""


def challenge_start(
    *, agent: AgentProfile, change_id: str, version: int, owner: Any, decision: str, now: datetime | None = None
) -> Challenge:
    """E-mail a fresh code to `owner` for this decision; the owner's earlier live challenges for
    the change stop working.  No usable address, or mail the SMTP server did not take within
    FACADE_OTP_EMAIL_TIMEOUT, leaves nothing usable and answers `email_unavailable` (503):
    there is no other way to the code.  More than FACADE_OTP_CHALLENGES starts per owner and
    change within FACADE_OTP_CHALLENGE_WINDOW_SECONDS answer `too_many_challenges` (429)."""
    decision = _decision(decision)
    now = now or timezone.now()
    address = _usable_address(owner)
    if address is None:
        _refuse_challenge(agent=agent, change_id=change_id, owner=owner, decision=decision, reason="email_unavailable")
        raise _email_unavailable()
    window = timedelta(seconds=settings.FACADE_OTP_CHALLENGE_WINDOW_SECONDS)
    try:
        # The mail goes out inside the transaction that creates the challenge: a challenge
        # exists only once the SMTP server took its code, and a failure leaves none behind.
        with transaction.atomic():
            # The owner's row serialises their challenge starts, so the rate limit counts right.
            get_user_model().objects.select_for_update().filter(pk=owner.pk).first()
            recent = list(
                DecisionChallenge.objects.filter(
                    owner=owner, change_id=change_id, created_at__gt=now - window
                ).values_list("created_at", flat=True)
            )
            if len(recent) >= settings.FACADE_OTP_CHALLENGES:
                retry_after = max(1, int((min(recent) + window - now).total_seconds()) + 1)
                row = None
            else:
                row = _challenge_create(
                    agent=agent,
                    change_id=change_id,
                    version=version,
                    owner=owner,
                    decision=decision,
                    address=address,
                    now=now,
                )
    except _MailFailed:
        _refuse_challenge(agent=agent, change_id=change_id, owner=owner, decision=decision, reason="email_unavailable")
        raise _email_unavailable() from None
    if row is None:
        _refuse_challenge(agent=agent, change_id=change_id, owner=owner, decision=decision, reason="rate_limited")
        raise AuthorityError(
            "too_many_challenges",
            "too many codes were asked for this change; wait before asking again",
            HTTPStatus.TOO_MANY_REQUESTS,
            retry_after=retry_after,
        )
    return Challenge(challenge_id=row.challenge_id, sent_to=row.sent_to, expires_at=row.expires_at)


def _email_unavailable() -> AuthorityError:
    return AuthorityError(
        "email_unavailable",
        "this decision needs a code sent by e-mail, and no e-mail could be sent to the owner; "
        "it cannot go ahead until the owner has a working e-mail address",
        HTTPStatus.SERVICE_UNAVAILABLE,
    )


def _challenge_create(
    *, agent: AgentProfile, change_id: str, version: int, owner: Any, decision: str, address: str, now: datetime
) -> DecisionChallenge:
    """Inside the caller's transaction: replace the owner's live challenges for the change,
    store the new one, record it and send its code (raising _MailFailed when that fails)."""
    code = new_code()
    challenge_id = "otp_" + secrets.token_urlsafe(16)
    replaced = DecisionChallenge.objects.filter(owner=owner, change_id=change_id, status=ChallengeStatus.LIVE).update(
        status=ChallengeStatus.REPLACED
    )
    row = DecisionChallenge.objects.create(
        challenge_id=challenge_id,
        agent=agent,
        owner=owner,
        change_id=change_id,
        version=version,
        decision=decision,
        code_hash=_digest("code", f"{challenge_id}:{code}"),
        sent_to=mask_address(address),
        created_at=now,
        expires_at=now + timedelta(seconds=settings.FACADE_OTP_CODE_SECONDS),
    )
    events.authority_code_sent(
        agent=agent,
        change_id=change_id,
        version=version,
        decision=decision,
        challenge=challenge_id,
        owner_id=owner.pk,
        sent_to=row.sent_to,
        replaced=replaced,
        actor=_actor(owner),
    )
    minutes = max(1, settings.FACADE_OTP_CODE_SECONDS // 60)
    try:
        _send_code(address=address, code=code, agent=agent, change_id=change_id, decision=decision, minutes=minutes)
    except Exception as exc:
        # What the mail backend raised may quote the conversation with the server: its type only.
        logger.warning("decision e-mail for change %s not sent: %s", change_id, type(exc).__name__)
        raise _MailFailed from None
    return row


class WrongCode(AuthorityError):
    """A wrong code for a live challenge; `remaining_attempts` tries are left (0: it is dead)."""

    def __init__(self, remaining_attempts: int) -> None:
        super().__init__(
            "wrong_code",
            f"the code is not right; {remaining_attempts} tries left",
            HTTPStatus.BAD_REQUEST,
            extra={"remaining_attempts": remaining_attempts},
        )
        self.remaining_attempts = remaining_attempts


def _challenge_refusal(
    row: DecisionChallenge | None, *, agent: AgentProfile, owner: Any, change_id: str, decision: str, now: datetime
) -> ChallengeRefusal | None:
    if row is None:
        return "unknown"
    if row.status == ChallengeStatus.USED:
        return "used"
    if row.status == ChallengeStatus.DEAD:
        return "dead"
    if row.status != ChallengeStatus.LIVE:
        return "replaced"
    if row.expires_at <= now:
        return "expired"
    if row.agent_id != agent.pk:
        return "agent"
    if row.owner_id != owner.pk:
        return "owner"
    if row.change_id != change_id:
        return "change"
    if row.decision != decision:
        return "decision"
    return None


def challenge_verify(
    *,
    agent: AgentProfile,
    challenge_id: str,
    code: str,
    owner: Any,
    change_id: str,
    decision: str,
    totp_device: Any = None,
    totp: object = None,
    now: datetime | None = None,
) -> IssuedToken:
    """Check the code the owner typed.  The right code on a live challenge bound to this agent,
    owner, change and decision uses the challenge and returns a token with `email_otp`
    assurance.  A wrong code counts under the challenge's row lock — FACADE_OTP_MAX_FAILURES of
    them and the challenge is dead — and raises WrongCode (400 `wrong_code`) with the tries
    left.  An unknown, expired, used, dead or replaced challenge, or one bound to something
    else, answers `invalid_challenge` (403) without looking at the code.

    With `totp_device` (the tenant requires an authenticator code for L3, see step_up.py) the
    right e-mailed code is not enough: `totp` must be a code the device accepts now (django-otp's
    verify_token with its throttle and its refusal of a code already used).  A wrong one answers
    400 `wrong_totp` and leaves the challenge live — whoever gets here already holds the e-mailed
    code, and the authenticator's own throttle and the owner's attempt limit bound the guesses —
    and the token then carries `email_otp+totp`."""
    now = now or timezone.now()
    if not isinstance(challenge_id, str) or len(challenge_id) > 40:
        challenge_id = ""
    offered = code if isinstance(code, str) and len(code) == CODE_DIGITS and code.isascii() and code.isdigit() else ""
    remaining = 0
    totp_wrong = False
    issued: IssuedToken | None = None
    with transaction.atomic():
        row = None
        if challenge_id:
            row = DecisionChallenge.objects.select_for_update().filter(challenge_id=challenge_id).first()
        refusal = _challenge_refusal(row, agent=agent, owner=owner, change_id=change_id, decision=decision, now=now)
        if refusal is None and row is not None:
            right = bool(offered) and hmac.compare_digest(
                _digest("code", f"{row.challenge_id}:{offered}"), row.code_hash
            )
            if right and totp_device is not None and not _totp_accepted(totp_device, totp):
                totp_wrong = True
                events.authority_attempt_refused(
                    agent=agent,
                    change_id=row.change_id,
                    step="verify",
                    decision=row.decision,
                    owner_id=owner.pk,
                    reason="wrong_totp",
                    actor=_actor(owner),
                )
            elif right:
                row.status, row.used_at = ChallengeStatus.USED, now
                row.save(update_fields=["status", "used_at"])
                issued = token_issue(
                    agent=agent,
                    change_id=row.change_id,
                    version=row.version,
                    owner=owner,
                    decision=row.decision,
                    assurance=Assurance.EMAIL_OTP if totp_device is None else Assurance.EMAIL_OTP_TOTP,
                    now=now,
                )
            else:
                remaining = _count_failure(row, agent=agent, owner=owner)
    if issued is not None:
        return issued
    if totp_wrong:
        raise AuthorityError(
            "wrong_totp", gettext("The code from your authenticator app is not right."), HTTPStatus.BAD_REQUEST
        )
    if refusal is not None:
        _refuse_challenge(
            agent=agent, change_id=change_id, owner=owner, decision=decision, reason=refusal, challenge=challenge_id
        )
        raise _invalid_challenge()
    raise WrongCode(remaining)


def _totp_accepted(device: Any, totp: object) -> bool:
    """Inside the caller's transaction: whether the owner's authenticator accepts `totp` now.
    The device row is locked so that one authenticator code cannot be spent twice at once."""
    if not (isinstance(totp, str) and len(totp) == CODE_DIGITS and totp.isascii() and totp.isdigit()):
        return False
    locked = type(device).objects.select_for_update().get(pk=device.pk)
    allowed, _ = locked.verify_is_allowed()
    return bool(allowed) and bool(locked.verify_token(totp))


def _count_failure(row: DecisionChallenge, *, agent: AgentProfile, owner: Any) -> int:
    """Inside the caller's transaction, with `row` locked: one more wrong code; the tries left."""
    row.failures += 1
    remaining = max(0, settings.FACADE_OTP_MAX_FAILURES - row.failures)
    if remaining == 0:
        row.status = ChallengeStatus.DEAD
    row.save(update_fields=["failures", "status"])
    events.authority_code_failed(
        agent=agent,
        change_id=row.change_id,
        challenge=row.challenge_id,
        owner_id=owner.pk,
        failures=row.failures,
        remaining=remaining,
        actor=_actor(owner),
    )
    if remaining == 0:
        events.authority_challenge_dead(
            agent=agent,
            change_id=row.change_id,
            challenge=row.challenge_id,
            owner_id=owner.pk,
            failures=row.failures,
            actor=_actor(owner),
        )
    return remaining
