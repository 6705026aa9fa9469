"""Owner-only management of an agent's peer keys, of the tenant's auditor raw-text setting and of
its team (members, roles, invitations)."""

from __future__ import annotations

from http import HTTPStatus

from django.utils.translation import get_language, gettext
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from facade.api import error_response
from facade.errors import ApplicationError

from ..models import Invitation, Membership, PeerCredential, PeerTrust, Role, Tenant
from ..policy import AgentPolicy, NotFound, TenantPolicy, is_platform_operator
from ..rules import INVITABLE_ROLES
from ..schemas import Actor
from ..selectors import team_invitations, team_members
from ..services import (
    business_create,
    invitation_cancel,
    invitation_create,
    member_role_set,
    membership_revoke,
    peer_key_create,
    peer_key_revoke,
    peer_key_trust_set,
    tenant_audit_raw_text_set,
)


class PeerKeyIn(serializers.Serializer):
    name = serializers.CharField(max_length=100)


class PeerKeyOut(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    key_prefix = serializers.CharField()
    created_at = serializers.DateTimeField()
    revoked_at = serializers.DateTimeField(allow_null=True)
    trust = serializers.ChoiceField(choices=PeerTrust.choices)


class PeerTrustIn(serializers.Serializer):
    trust = serializers.ChoiceField(choices=PeerTrust.choices)


_ERRORS = {
    401: error_response("`not_authenticated`"),
    403: error_response("`forbidden` (CSRF)"),
    404: error_response("`not_found`: no such agent among those you own"),
}


@extend_schema(tags=["peer keys"])
class PeerKeyListView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="List an agent's peer keys", responses={200: PeerKeyOut(many=True), **_ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        agent = AgentPolicy.get_owned(request.user, slug)
        keys = PeerCredential.objects.filter(agent=agent).order_by("created_at")
        return Response(PeerKeyOut(keys, many=True).data)

    @extend_schema(
        summary="Issue a peer key (shown once)",
        request=PeerKeyIn,
        responses={
            201: inline_serializer(
                name="PeerKeyIssued",
                fields={"id": serializers.UUIDField(), "name": serializers.CharField(), "key": serializers.CharField()},
            ),
            400: error_response("`invalid_input`, `invalid_name`"),
            **_ERRORS,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        agent = AgentPolicy.get_owned(request.user, slug)
        payload = PeerKeyIn(data=request.data)
        payload.is_valid(raise_exception=True)
        issued = peer_key_create(
            agent=agent,
            name=payload.validated_data["name"],
            actor=Actor.human(request.user.pk),
            created_by=request.user,
        )
        return Response(
            {"id": issued.credential_id, "name": issued.name, "key": issued.key}, status=status.HTTP_201_CREATED
        )


@extend_schema(tags=["peer keys"])
class PeerKeyDetailView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Set how far a peer key is trusted: ask (questions only), requests, or paused",
        request=PeerTrustIn,
        responses={200: PeerKeyOut, 400: error_response("`invalid_input`, `key_revoked`"), **_ERRORS},
    )
    def patch(self, request: Request, slug: str, key_id: str) -> Response:
        agent = AgentPolicy.get_owned(request.user, slug)
        credential = PeerCredential.objects.filter(agent=agent, pk=key_id).first()
        if credential is None:
            raise NotFound(key_id)
        payload = PeerTrustIn(data=request.data)
        payload.is_valid(raise_exception=True)
        credential = peer_key_trust_set(
            credential=credential, trust=payload.validated_data["trust"], actor=Actor.human(request.user.pk)
        )
        return Response(PeerKeyOut(credential).data)

    @extend_schema(summary="Revoke a peer key (it stops working at once)", responses={204: None, **_ERRORS})
    def delete(self, request: Request, slug: str, key_id: str) -> Response:
        agent = AgentPolicy.get_owned(request.user, slug)
        credential = PeerCredential.objects.filter(agent=agent, pk=key_id).first()
        if credential is None:
            raise NotFound(key_id)
        peer_key_revoke(credential=credential, actor=Actor.human(request.user.pk))
        return Response(status=status.HTTP_204_NO_CONTENT)


class AuditRawTextIn(serializers.Serializer):
    allowed = serializers.BooleanField()


class AuditRawTextOut(serializers.Serializer):
    tenant = serializers.CharField(source="slug")
    allowed = serializers.BooleanField(source="auditors_read_raw_text")


@extend_schema(tags=["tenants"])
class TenantAuditRawTextView(APIView):
    """Whether the tenant's auditors may read customers' own words in the auditor console (off by
    default; each read is recorded).  The tenant's owners decide; anyone else gets 404."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Whether auditors may read customers' text",
        responses={200: AuditRawTextOut, **_ERRORS, 404: error_response("`not_found`: no such tenant among yours")},
    )
    def get(self, request: Request, tenant_slug: str) -> Response:
        tenant = TenantPolicy.get(request.user, tenant_slug, (Role.OWNER.value,))
        return Response(AuditRawTextOut(tenant).data)

    @extend_schema(
        summary="Allow or deny auditors reading customers' text (recorded in the ledger)",
        request=AuditRawTextIn,
        responses={
            200: AuditRawTextOut,
            400: error_response("`invalid_input`"),
            **_ERRORS,
            403: error_response("`forbidden` (CSRF), `read_only` (a signed-in auditor changes nothing)"),
            404: error_response("`not_found`: no such tenant among yours"),
        },
    )
    def put(self, request: Request, tenant_slug: str) -> Response:
        tenant = TenantPolicy.get(request.user, tenant_slug, (Role.OWNER.value,))
        payload = AuditRawTextIn(data=request.data)
        payload.is_valid(raise_exception=True)
        tenant = tenant_audit_raw_text_set(
            tenant=tenant, allowed=payload.validated_data["allowed"], actor=Actor.human(request.user.pk)
        )
        return Response(AuditRawTextOut(tenant).data)


# --- the team (issue 32 §2) ------------------------------------------------------------------

_TEAM_ERRORS = {
    401: error_response("`not_authenticated`"),
    403: error_response("`forbidden` (CSRF), `read_only` (a signed-in auditor changes nothing)"),
    404: error_response("`not_found`: no such tenant among those you own (or no such member of it)"),
}


class MemberOut(serializers.Serializer):
    id = serializers.IntegerField(help_text="the membership's id (the address of DELETE …/members/<id>)")
    user_id = serializers.IntegerField()
    email = serializers.CharField(source="user.email")
    role = serializers.ChoiceField(choices=Role.choices)
    joined_at = serializers.DateTimeField(source="created_at")


class MemberRoleIn(serializers.Serializer):
    role = serializers.ChoiceField(choices=[(r, r) for r in INVITABLE_ROLES])


class InvitationIn(serializers.Serializer):
    email = serializers.CharField(max_length=254)
    role = serializers.ChoiceField(choices=[(r, r) for r in INVITABLE_ROLES])


class InvitationOut(serializers.Serializer):
    id = serializers.IntegerField()
    email = serializers.CharField()
    role = serializers.ChoiceField(choices=Role.choices)
    status = serializers.CharField()
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()


def _owned_tenant(request: Request, tenant_slug: str) -> Tenant:
    """The tenant's own owners manage its team; platform operators do not (TenantPolicy.as_member)."""
    return TenantPolicy.get_as_member(request.user, tenant_slug, (Role.OWNER.value,))


def _member(tenant: Tenant, member_id: int) -> Membership:
    found = Membership.objects.select_related("user", "tenant").filter(tenant=tenant, pk=member_id).first()
    if found is None:
        raise NotFound(str(member_id))
    return found


@extend_schema(tags=["team"])
class MemberListView(APIView):
    """The tenant's members and their roles.  Its owners only (and platform operators)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(summary="List the tenant's members", responses={200: MemberOut(many=True), **_TEAM_ERRORS})
    def get(self, request: Request, tenant_slug: str) -> Response:
        return Response(MemberOut(team_members(_owned_tenant(request, tenant_slug)), many=True).data)


@extend_schema(tags=["team"])
class MemberDetailView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Change a member's role (owner or auditor); recorded as membership.role_changed",
        request=MemberRoleIn,
        responses={
            200: MemberOut,
            400: error_response("`invalid_input`"),
            409: error_response("`last_owner`: the tenant's last owner keeps the owner role"),
            **_TEAM_ERRORS,
        },
    )
    def patch(self, request: Request, tenant_slug: str, member_id: int) -> Response:
        tenant = _owned_tenant(request, tenant_slug)
        membership = _member(tenant, member_id)
        payload = MemberRoleIn(data=request.data)
        payload.is_valid(raise_exception=True)
        membership = member_role_set(
            membership=membership, role=payload.validated_data["role"], actor=Actor.human(request.user.pk)
        )
        return Response(MemberOut(membership).data)

    @extend_schema(
        summary="Remove a member: an owner's pending approvals, tokens and codes are void at once",
        responses={
            204: None,
            409: error_response("`last_owner`: the tenant's last owner cannot be removed"),
            **_TEAM_ERRORS,
        },
    )
    def delete(self, request: Request, tenant_slug: str, member_id: int) -> Response:
        tenant = _owned_tenant(request, tenant_slug)
        membership = _member(tenant, member_id)
        membership_revoke(tenant=tenant, user=membership.user, actor=Actor.human(request.user.pk))
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["team"])
class InvitationListView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="List the tenant's pending invitations", responses={200: InvitationOut(many=True), **_TEAM_ERRORS}
    )
    def get(self, request: Request, tenant_slug: str) -> Response:
        return Response(InvitationOut(team_invitations(_owned_tenant(request, tenant_slug)), many=True).data)

    @extend_schema(
        summary="Invite an e-mail address as a co-owner or an auditor (the one-time link goes only to that address)",
        request=InvitationIn,
        responses={
            201: InvitationOut,
            400: error_response("`invalid_input`, `invalid_email`"),
            409: error_response("`already_a_member`: change their role instead"),
            429: error_response("`rate_limited` (FACADE_RATE_INVITATIONS), with `retry_after`"),
            503: error_response("`email_unavailable`: the e-mail could not be sent, so nothing was made"),
            **_TEAM_ERRORS,
        },
    )
    def post(self, request: Request, tenant_slug: str) -> Response:
        tenant = _owned_tenant(request, tenant_slug)
        payload = InvitationIn(data=request.data)
        payload.is_valid(raise_exception=True)
        invitation = invitation_create(
            tenant=tenant,
            email=payload.validated_data["email"],
            role=payload.validated_data["role"],
            invited_by=request.user,
            actor=Actor.human(request.user.pk),
            language=get_language(),
        )
        return Response(InvitationOut(invitation).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["team"])
class InvitationDetailView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Cancel a pending invitation (its link stops working)",
        responses={204: None, 409: error_response("`not_pending`"), **_TEAM_ERRORS},
    )
    def delete(self, request: Request, tenant_slug: str, invitation_id: int) -> Response:
        tenant = _owned_tenant(request, tenant_slug)
        invitation = Invitation.objects.filter(tenant=tenant, pk=invitation_id).first()
        if invitation is None:
            raise NotFound(str(invitation_id))
        invitation_cancel(invitation=invitation, actor=Actor.human(request.user.pk))
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- a business joins (issue 32 §1) ------------------------------------------------------------


class NotAnOperator(ApplicationError):
    http_status = HTTPStatus.FORBIDDEN


def _operator(request: Request) -> None:
    if not is_platform_operator(request.user):
        raise NotAnOperator("not_an_operator", gettext("Only the platform's operators take on businesses."))


class BusinessAgentIn(serializers.Serializer):
    slug = serializers.CharField(max_length=64)
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


class BusinessIn(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    slug = serializers.CharField(max_length=64)
    time_zone = serializers.CharField(max_length=64)
    languages = serializers.ListField(child=serializers.CharField(max_length=16), min_length=1, max_length=8)
    agent = BusinessAgentIn()
    owner_email = serializers.CharField(max_length=254)


class BusinessOut(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    time_zone = serializers.CharField()
    languages = serializers.ListField(child=serializers.CharField())
    created_at = serializers.DateTimeField()


_OPERATOR_ERRORS = {
    401: error_response("`not_authenticated`"),
    403: error_response("`forbidden` (CSRF), `not_an_operator`"),
}


@extend_schema(tags=["businesses"])
class BusinessListView(APIView):
    """Businesses on the platform: its operators list them and take on new ones."""

    permission_classes = [IsAuthenticated]

    @extend_schema(summary="List the businesses", responses={200: BusinessOut(many=True), **_OPERATOR_ERRORS})
    def get(self, request: Request) -> Response:
        _operator(request)
        return Response(BusinessOut(Tenant.objects.order_by("slug"), many=True).data)

    @extend_schema(
        summary="Take on a business: its tenant, its first agent and its first owner's invitation",
        request=BusinessIn,
        responses={
            201: inline_serializer(
                name="BusinessCreated",
                fields={
                    "business": BusinessOut(),
                    "agent": serializers.CharField(),
                    "invitation": InvitationOut(),
                },
            ),
            400: error_response(
                "`invalid_input`, `invalid_name`, `invalid_slug`, `invalid_time_zone`, `invalid_languages`, "
                "`invalid_email`"
            ),
            409: error_response("`tenant_exists`, `agent_exists`: that address is taken"),
            429: error_response("`rate_limited` (FACADE_RATE_INVITATIONS), with `retry_after`"),
            503: error_response("`email_unavailable`: the invitation could not be sent, so nothing was made"),
            **_OPERATOR_ERRORS,
        },
    )
    def post(self, request: Request) -> Response:
        _operator(request)
        payload = BusinessIn(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        made = business_create(
            name=data["name"],
            slug=data["slug"],
            time_zone=data["time_zone"],
            languages=list(data["languages"]),
            agent_slug=data["agent"]["slug"],
            agent_name=data["agent"]["name"],
            owner_email=data["owner_email"],
            invited_by=request.user,
            actor=Actor.human(request.user.pk),
            language=get_language(),
        )
        body = {
            "business": BusinessOut(made.tenant).data,
            "agent": made.agent.slug,
            "invitation": InvitationOut(made.invitation).data,
        }
        return Response(body, status=status.HTTP_201_CREATED)
