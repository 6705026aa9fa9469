"""Thin HTTP views for change proposals: propose, list (the inbox), read, edit a pending payload,
and the decision: authorize (a token, or an e-mailed code for L3), verify the code, decide.
Owners only; DRF's session authentication enforces CSRF on every mutating call."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter, extend_schema
from pydantic import BaseModel, ConfigDict, Field, RootModel
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from facade.api import error_response
from facade.errors import ApplicationError
from facade.tenancy.models import AgentProfile
from facade.tenancy.policy import AgentPolicy
from facade.tenancy.schemas import Actor

from ..authority import Challenge, challenge_verify
from ..authority_events import AttemptStep
from ..models import ChangeProposal, ProposalStatus
from ..rules import Origin
from ..schemas import (
    BoundaryWording,
    ClarificationOrder,
    Delivery,
    KnowledgeDraft,
    Lesson,
    Pointer,
    Pricing,
    RollbackOf,
    SkillIds,
    StateContract,
    Wording,
)
from ..selectors import STATUSES, proposal_get, proposal_list
from ..services import (
    ProposalError,
    challenge_decision,
    proposal_authorize,
    proposal_create,
    proposal_decide,
    proposal_edit,
    proposal_rebase,
    proposal_rollback,
)
from ..step_up import Attempt, approvals_of, attempt_admit, verify_second_factor

AnyPayload = (
    KnowledgeDraft
    | Lesson
    | Wording
    | ClarificationOrder
    | BoundaryWording
    | SkillIds
    | Delivery
    | Pricing
    | StateContract
    | RollbackOf
)


class ChangeIn(BaseModel):
    """A proposal: the payload's shape is the one of its kind."""

    model_config = ConfigDict(extra="forbid")
    kind: str = Field(
        description="knowledge_draft | lesson | wording | clarification_order | boundary_wording | "
        "skill_ids | delivery | pricing | state_contract"
    )
    payload: AnyPayload
    summary: str = Field(min_length=1, max_length=300)
    evidence: list[Pointer] = Field(default_factory=list)


class ChangeEdit(BaseModel):
    model_config = ConfigDict(extra="forbid")
    payload: AnyPayload
    expected_version: int = Field(ge=1)


class ChangeOut(BaseModel):
    id: str = Field(description="chg_…")
    kind: str
    level: int = Field(ge=1, le=3, description="assigned by the platform")
    status: str
    version: int
    summary: str
    payload: AnyPayload
    requires: str = Field(description="owner_approval | owner_direct")
    origin: str
    base: str
    diff: dict[str, Any]
    evidence: list[Pointer]
    authorization_id: str
    decided_at: datetime | None
    decision_reason: str = Field(description="the owner's reason given with the decision, or empty")
    assurance: str = Field(description="click | email_otp | owner_session (the owner's own L2 change)")
    target: dict[str, Any] = Field(description='L2/L3: where it writes, {"field": …, "path": […]}')
    base_contract_version: int | None = Field(description="the live contract version it was made against")
    contract_version: int | None = Field(description="applied L2/L3: the contract version it published")
    failure_reasons: list[str] = Field(description="failed: the compiler's reasons (nothing was published)")
    rollback_of: str | None = Field(description="a rollback: the change it undoes")
    expires_at: datetime
    created_at: datetime


class ChangeList(RootModel[list[ChangeOut]]):
    """Proposals, newest first."""


def proposal_view(proposal: ChangeProposal) -> dict[str, Any]:
    return {
        "id": proposal.pk,
        "kind": proposal.kind,
        "level": proposal.level,
        "status": proposal.status,
        "version": proposal.version,
        "summary": proposal.summary,
        "payload": proposal.payload,
        "requires": proposal.requires,
        "origin": proposal.origin,
        "base": proposal.base,
        "diff": proposal.diff,
        "evidence": proposal.evidence,
        "authorization_id": proposal.authorization_id,
        "decided_at": proposal.decided_at.isoformat() if proposal.decided_at else None,
        "decision_reason": proposal.decision_reason,
        "assurance": proposal.assurance,
        "target": proposal.target,
        "base_contract_version": proposal.base_contract_version,
        "contract_version": proposal.contract_version,
        "failure_reasons": proposal.failure_reasons,
        "rollback_of": proposal.rollback_of_id,
        "expires_at": proposal.expires_at.isoformat(),
        "created_at": proposal.created_at.isoformat(),
    }


_OWNER_ERRORS = {
    401: error_response("`not_authenticated`"),
    403: error_response("`forbidden` (CSRF)"),
    404: error_response("`not_found`: no such agent among those you own, or no such proposal"),
}


def _owned(request: Request, slug: str) -> AgentProfile:
    return AgentPolicy.get_owned(request.user, slug)


def _body(request: Request) -> dict[str, Any]:
    if not isinstance(request.data, dict):
        raise ApplicationError("invalid_input", "send a JSON object")
    return request.data


@extend_schema(tags=["approvals"])
class ChangeListView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Propose a change (the owner's own; level and who decides are assigned by the platform)",
        request=ChangeIn,
        responses={
            201: ChangeOut,
            400: error_response(
                "`unknown_kind`, `invalid_payload`, `invalid_summary`, `invalid_evidence`, "
                "`unresolved_evidence`, `unknown_entry`"
            ),
            **_OWNER_ERRORS,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        agent = _owned(request, slug)
        body = _body(request)
        proposal = proposal_create(
            agent=agent,
            kind=str(body.get("kind", "")),
            payload=body.get("payload"),
            summary=str(body.get("summary", "")),
            evidence=body.get("evidence"),
            origin=Origin.OWNER_DIRECT,
            actor=Actor.human(request.user.pk),
            owner=request.user,
        )
        return Response(proposal_view(proposal), status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="The inbox: proposals, newest first",
        operation_id="agents_changes_list",
        parameters=[OpenApiParameter("status", str, enum=STATUSES)],
        responses={200: ChangeList, **_OWNER_ERRORS},
    )
    def get(self, request: Request, slug: str) -> Response:
        agent = _owned(request, slug)
        wanted = request.query_params.get("status") or None
        if wanted is not None and wanted not in STATUSES:
            raise ApplicationError("invalid_input", f"status must be one of: {', '.join(STATUSES)}")
        return Response([proposal_view(p) for p in proposal_list(agent=agent, status=wanted)])


@extend_schema(tags=["approvals"])
class ChangeDetailView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="One proposal", responses={200: ChangeOut, **_OWNER_ERRORS})
    def get(self, request: Request, slug: str, change_id: str) -> Response:
        agent = _owned(request, slug)
        return Response(proposal_view(proposal_get(agent=agent, proposal_id=change_id)))

    @extend_schema(
        summary="Edit a pending proposal's payload (compare-and-swap on `version`, which goes up)",
        request=ChangeEdit,
        responses={
            200: ChangeOut,
            400: error_response("`invalid_payload`, `invalid_input`"),
            409: error_response("`version_mismatch`, `not_pending`"),
            **_OWNER_ERRORS,
        },
    )
    def patch(self, request: Request, slug: str, change_id: str) -> Response:
        agent = _owned(request, slug)
        body = _body(request)
        expected = _expected(body)
        proposal_get(agent=agent, proposal_id=change_id)
        proposal = proposal_edit(
            proposal_id=change_id,
            agent=agent,
            payload=body.get("payload"),
            expected_version=expected,
            actor=Actor.human(request.user.pk),
        )
        return Response(proposal_view(proposal))


class AuthorizeIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    decision: str = Field(description="approve | reject")


class AuthorizeOut(BaseModel):
    """L1/L2: `token` and `expires_at`; L3: `challenge_id`, `sent_to` and `expires_at`."""

    token: str | None = Field(
        default=None, description="one-time, bound to agent + change + version + owner + decision"
    )
    challenge_id: str | None = Field(default=None, description="L3: the code went to `sent_to`")
    sent_to: str | None = Field(default=None, description="the owner's masked address, e.g. o***@demo.test")
    expires_at: datetime


class VerifyIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    challenge_id: str
    code: str = Field(description="the 6 digits from the e-mail")
    totp: str | None = Field(
        default=None, description="the 6 digits from the owner's authenticator app, where the tenant requires it"
    )


class VerifiedOut(BaseModel):
    token: str
    assurance: str = Field(description="email_otp | email_otp+totp")
    expires_at: datetime


class WrongCodeOut(BaseModel):
    error: str = Field(description="wrong_code")
    detail: str
    remaining_attempts: int


class DecideIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    token: str
    decision: str = Field(description="approve | reject")
    expected_version: int = Field(ge=1)
    reason: str | None = Field(
        default=None,
        max_length=200,
        description="optional: the owner's short reason (one line, at most 200 characters); kept with the "
        "decision and, for a proposal a model made, with its preference signal",
    )


class DecidedOut(BaseModel):
    status: str = Field(
        description="applied (approved and in effect) | failed (approved, but the compiler refused it: "
        "`failure_reasons`; nothing published) | rejected | pending (two-owner rule: a first L3 approval, recorded)"
    )
    authorization_id: str | None = None
    version: int
    contract_version: int | None = Field(default=None, description="L2/L3 applied: the contract version published")
    failure_reasons: list[str] = Field(default_factory=list)
    awaiting: str | None = Field(default=None, description="second_owner, when the status is pending")
    approvals: int | None = Field(default=None, description="owners' approvals so far, when pending")
    detail: str | None = None


class VersionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    expected_version: int = Field(ge=1)


def _expected(body: dict[str, Any]) -> int:
    expected = body.get("expected_version")
    if not isinstance(expected, int) or isinstance(expected, bool) or expected < 1:
        raise ProposalError("invalid_input", "expected_version must be a positive whole number")
    return expected


@extend_schema(tags=["approvals"])
class ChangeAuthorizeView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Ask to decide a pending proposal: a one-time token (L1/L2) or an e-mailed code (L3)",
        request=AuthorizeIn,
        responses={
            200: AuthorizeOut,
            400: error_response("`invalid_decision`, `invalid_input`"),
            403: error_response(
                "L3: `reauthentication_required` (the sign-in is older than FACADE_STEP_UP_FRESH_SECONDS), "
                "`totp_enrolment_required`, `same_approver` (two-owner rule), `not_a_tenant_owner` (a platform "
                "operator or a former owner); `forbidden` (CSRF)"
            ),
            409: error_response("`not_pending`"),
            429: error_response("`rate_limited` (the owner's attempts), `too_many_challenges`; with `retry_after`"),
            503: error_response("`email_unavailable`: L3 needs an e-mail that could not be sent (fail closed)"),
            **{k: v for k, v in _OWNER_ERRORS.items() if k != 403},
        },
    )
    def post(self, request: Request, slug: str, change_id: str) -> Response:
        agent = _owned(request, slug)
        change = proposal_get(agent=agent, proposal_id=change_id)
        body = _body(request)
        attempt = _attempt(request, agent, change_id, "authorize", body.get("decision"))
        attempt_admit(attempt, level=change.level, session=request.session)
        granted = proposal_authorize(
            agent=agent, proposal_id=change_id, owner=request.user, decision=body.get("decision")
        )
        if isinstance(granted, Challenge):
            return Response(
                {
                    "challenge_id": granted.challenge_id,
                    "sent_to": granted.sent_to,
                    "expires_at": granted.expires_at.isoformat(),
                }
            )
        return Response({"token": granted.token, "expires_at": granted.expires_at.isoformat()})


@extend_schema(tags=["approvals"])
class ChangeVerifyView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Answer an L3 challenge with the e-mailed code (and, where the tenant requires it, an authenticator "
        "code): a one-time token with `email_otp` (`email_otp+totp`) assurance; the session id rotates",
        request=VerifyIn,
        responses={
            200: VerifiedOut,
            400: WrongCodeOut,
            403: error_response(
                "`invalid_challenge`: unknown, expired, used, dead or someone else's — alike; "
                "`reauthentication_required`, `totp_enrolment_required`; `forbidden` (CSRF). "
                "Where the tenant requires an authenticator code: 400 `totp_required` (none sent), "
                "400 `wrong_totp` (the challenge stays live)"
            ),
            429: error_response("`rate_limited` (the owner's attempts), with `retry_after`"),
            **{k: v for k, v in _OWNER_ERRORS.items() if k != 403},
        },
    )
    def post(self, request: Request, slug: str, change_id: str) -> Response:
        agent = _owned(request, slug)
        proposal_get(agent=agent, proposal_id=change_id)
        body = _body(request)
        challenge_id = body.get("challenge_id")
        decision = challenge_decision(challenge_id)
        # Only L3 changes have challenges: the L3 checks apply whatever the change.
        attempt = _attempt(request, agent, change_id, "verify", decision)
        attempt_admit(attempt, level=3, session=request.session)
        device = verify_second_factor(attempt, totp=body.get("totp"))
        # A wrong code answers 400 `wrong_code` with `remaining_attempts` (authority.WrongCode).
        issued = challenge_verify(
            agent=agent,
            challenge_id=challenge_id,  # type: ignore[arg-type]  # anything not a string is unknown
            code=body.get("code"),  # type: ignore[arg-type]
            owner=request.user,
            change_id=change_id,
            decision=decision,
            totp_device=device,
            totp=body.get("totp"),
        )
        # The step-up raised what this session may do: a new session id, the owner still signed in.
        request.session.cycle_key()
        return Response(
            {"token": issued.token, "assurance": issued.assurance, "expires_at": issued.expires_at.isoformat()}
        )


@extend_schema(tags=["approvals"])
class ChangeDecideView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Decide a pending proposal with a one-time token (compare-and-swap on `version`)",
        request=DecideIn,
        responses={
            200: DecidedOut,
            400: error_response("`invalid_decision`, `invalid_input`, `invalid_reason` (over 200 characters)"),
            403: error_response(
                "`invalid_token`, `assurance_required`, `forbidden` (CSRF); L3: `reauthentication_required`, "
                "`totp_enrolment_required`, `same_approver`, `not_a_tenant_owner`"
            ),
            409: error_response(
                "`version_mismatch` (nothing applied), `not_pending`, `stale_base` (what it replaces changed "
                "since it was proposed — a contract value, or a knowledge version no longer pending or no longer "
                "its entry's latest: re-base a contract change; nothing applied, the token is not spent), "
                "`unknown_version`"
            ),
            429: error_response("`rate_limited` (the owner's attempts), with `retry_after`"),
            **{k: v for k, v in _OWNER_ERRORS.items() if k != 403},
        },
    )
    def post(self, request: Request, slug: str, change_id: str) -> Response:
        agent = _owned(request, slug)
        change = proposal_get(agent=agent, proposal_id=change_id)
        body = _body(request)
        attempt_admit(
            _attempt(request, agent, change_id, "decide", body.get("decision")),
            level=change.level,
            session=request.session,
        )
        expected = _expected(body)
        proposal = proposal_decide(
            agent=agent,
            proposal_id=change_id,
            owner=request.user,
            token=body.get("token"),
            decision=body.get("decision"),
            expected_version=expected,
            reason=body.get("reason"),
        )
        if proposal.status == ProposalStatus.PENDING:
            # Two-owner rule: this approval is recorded; another owner's decides the change.
            return Response(
                {
                    "status": proposal.status,
                    "awaiting": "second_owner",
                    "approvals": approvals_of(proposal),
                    "detail": gettext("Your approval is recorded. The change now needs the approval of another owner."),
                    "version": proposal.version,
                }
            )
        return Response(
            {
                "status": proposal.status,
                "authorization_id": proposal.authorization_id,
                "version": proposal.version,
                "contract_version": proposal.contract_version,
                "failure_reasons": proposal.failure_reasons,
            }
        )


@extend_schema(tags=["approvals"])
class ChangeRebaseView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Re-base a pending contract change on the live state (after `stale_base`); its version goes up",
        request=VersionIn,
        responses={
            200: ChangeOut,
            400: error_response("`invalid_input`"),
            409: error_response("`version_mismatch`, `not_pending`, `not_rebasable` (a knowledge proposal)"),
            **_OWNER_ERRORS,
        },
    )
    def post(self, request: Request, slug: str, change_id: str) -> Response:
        agent = _owned(request, slug)
        proposal = proposal_rebase(
            agent=agent,
            proposal_id=change_id,
            expected_version=_expected(_body(request)),
            actor=Actor.human(request.user.pk),
        )
        return Response(proposal_view(proposal))


@extend_schema(tags=["approvals"])
class ChangeRollbackView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Propose the rollback of an applied contract change (the owner's own L2 change rolls back at once)",
        request=None,
        responses={
            201: ChangeOut,
            409: error_response(
                "`not_rollbackable` (not an applied contract change), `superseded` (a later change replaced "
                "it), `rollback_pending`"
            ),
            **_OWNER_ERRORS,
        },
    )
    def post(self, request: Request, slug: str, change_id: str) -> Response:
        agent = _owned(request, slug)
        proposal = proposal_rollback(
            agent=agent, proposal_id=change_id, actor=Actor.human(request.user.pk), owner=request.user
        )
        return Response(proposal_view(proposal), status=status.HTTP_201_CREATED)


def _attempt(request: Request, agent: AgentProfile, change_id: str, step: AttemptStep, decision: object) -> Attempt:
    return Attempt(agent=agent, change_id=change_id, owner=request.user, step=step, decision=str(decision or "")[:16])
