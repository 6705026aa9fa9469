"""The team of a business (issue 32 §2): the members page where its owners see who belongs to it,
invite co-owners and auditors by e-mail, change roles and remove people; and the page an
invitation's link opens, where the invited person accepts — creating their account, or signed in
with the invited address.

Server-rendered; every write is a plain form POST (CSRF) through the one tenancy service that
also writes the ledger.  The members page answers 404 to anyone but the tenant's own owners —
platform operators included: they take a business on, its owners decide who belongs to it.
An invitation's secret travels mail → browser → this page, which keeps only the invitation's id
in the session and drops the secret from the address bar."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth import login as auth_login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import SetPasswordForm
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from facade.errors import ApplicationError
from facade.tenancy.models import Invitation, Membership, Role, Tenant
from facade.tenancy.policy import NotFound, TenantPolicy
from facade.tenancy.rules import INVITABLE_ROLES, InvitationVerdict, invitation_verdict
from facade.tenancy.schemas import Actor
from facade.tenancy.selectors import team_invitations, team_members
from facade.tenancy.services import (
    accounts_of_address,
    invitation_accept,
    invitation_cancel,
    invitation_create,
    invitation_find,
    member_role_set,
    membership_revoke,
)

ROLE_LABELS: dict[str, Promise] = {
    Role.OWNER: _("Owner"),
    Role.AUDITOR: _("Auditor"),
    Role.MEMBER: _("Member"),
}
ROLE_HELP: dict[str, Promise] = {
    Role.OWNER: _("Co-owner: runs the agents with you and decides changes"),
    Role.AUDITOR: _("Auditor: reads the ledger, changes nothing"),
}


def role_label(role: str) -> str:
    return str(ROLE_LABELS.get(role, role))


# --- the members page ----------------------------------------------------------------------


@dataclass
class MemberRow:
    membership: Membership
    role: str
    is_you: bool


@dataclass
class InvitationRow:
    invitation: Invitation
    role: str
    expired: bool


def _owned_tenant(request: HttpRequest, tenant_slug: str) -> Tenant:
    try:
        return TenantPolicy.get_as_member(request.user, tenant_slug, (Role.OWNER.value,))
    except NotFound as exc:
        raise Http404("no such business among those you own") from exc


def _back(tenant: Tenant, anchor: str = "") -> HttpResponseRedirect:
    return HttpResponseRedirect(reverse("team", args=[tenant.slug]) + anchor)


@require_safe
@login_required
def team_page(request: HttpRequest, tenant_slug: str) -> HttpResponse:
    tenant = _owned_tenant(request, tenant_slug)
    now = timezone.now()
    members = [
        MemberRow(membership=m, role=role_label(m.role), is_you=m.user_id == request.user.pk)
        for m in team_members(tenant)
    ]
    invitations = [
        InvitationRow(invitation=i, role=role_label(i.role), expired=i.expires_at <= now)
        for i in team_invitations(tenant)
    ]
    context: dict[str, Any] = {
        "tenant": tenant,
        "members": members,
        "invitations": invitations,
        "owners": sum(1 for m in members if m.membership.role == Role.OWNER),
        "roles": [(role, str(ROLE_HELP[role])) for role in INVITABLE_ROLES],
        "role_names": [(role, role_label(role)) for role in INVITABLE_ROLES],
    }
    return render(request, "accounts/team.html", context)


def _refused(request: HttpRequest, exc: ApplicationError) -> None:
    messages.error(request, exc.detail)


@require_POST
@login_required
def team_invite(request: HttpRequest, tenant_slug: str) -> HttpResponse:
    tenant = _owned_tenant(request, tenant_slug)
    email, role = request.POST.get("email", "")[:254], request.POST.get("role", "")[:16]
    try:
        invitation = invitation_create(
            tenant=tenant,
            email=email,
            role=role,
            invited_by=request.user,
            actor=Actor.human(request.user.pk),
            language=get_language(),
        )
    except ApplicationError as exc:
        _refused(request, exc)
        return _back(tenant, "#invite-h")
    messages.success(
        request,
        gettext("Invitation sent to %(address)s as %(role)s. The link in it works once, for that address only.")
        % {"address": invitation.email, "role": role_label(invitation.role)},
    )
    return _back(tenant, "#invitations-h")


def _member(tenant: Tenant, member_id: int) -> Membership:
    found = Membership.objects.select_related("user", "tenant").filter(tenant=tenant, pk=member_id).first()
    if found is None:
        raise Http404("no such member of this business")
    return found


@require_POST
@login_required
def team_member_role(request: HttpRequest, tenant_slug: str, member_id: int) -> HttpResponse:
    tenant = _owned_tenant(request, tenant_slug)
    membership = _member(tenant, member_id)
    try:
        membership = member_role_set(
            membership=membership, role=request.POST.get("role", "")[:16], actor=Actor.human(request.user.pk)
        )
    except ApplicationError as exc:
        _refused(request, exc)
    else:
        messages.success(
            request,
            gettext("%(address)s is now %(role)s.")
            % {"address": membership.user.email, "role": role_label(membership.role)},
        )
    return _back(tenant, f"#member-{membership.pk}")


@require_POST
@login_required
def team_member_remove(request: HttpRequest, tenant_slug: str, member_id: int) -> HttpResponse:
    tenant = _owned_tenant(request, tenant_slug)
    membership = _member(tenant, member_id)
    try:
        membership_revoke(tenant=tenant, user=membership.user, actor=Actor.human(request.user.pk))
    except ApplicationError as exc:
        _refused(request, exc)
        return _back(tenant, f"#member-{membership.pk}")
    messages.success(
        request, gettext("%(address)s was removed from the business.") % {"address": membership.user.email}
    )
    if membership.user_id == request.user.pk:
        return HttpResponseRedirect(reverse("home"))  # they removed themselves: the page is no longer theirs
    return _back(tenant)


@require_POST
@login_required
def team_invitation_cancel(request: HttpRequest, tenant_slug: str, invitation_id: int) -> HttpResponse:
    tenant = _owned_tenant(request, tenant_slug)
    invitation = Invitation.objects.filter(tenant=tenant, pk=invitation_id).first()
    if invitation is None:
        raise Http404("no such invitation of this business")
    try:
        invitation_cancel(invitation=invitation, actor=Actor.human(request.user.pk))
    except ApplicationError as exc:
        _refused(request, exc)
    else:
        messages.success(
            request, gettext("The invitation of %(address)s was cancelled.") % {"address": invitation.email}
        )
    return _back(tenant, "#invitations-h")


# --- accepting an invitation -----------------------------------------------------------------

SESSION_KEY = "facade_invitation"


class NewAccountForm(SetPasswordForm):
    """Django's set-password form (its validators and messages) for the account an invitation
    creates; the account itself is made by the service, not by the form."""


def _account_addresses(user: Any) -> tuple[str, ...] | None:
    if not user.is_authenticated:
        return None
    return (str(user.email or ""), str(user.get_username()))


@require_http_methods(["GET", "POST"])
def invitation_page(request: HttpRequest) -> HttpResponse:
    secret = request.GET.get("token")
    if secret is not None:
        found = invitation_find(secret[:200])
        if found is None:
            request.session.pop(SESSION_KEY, None)
            return render(request, "registration/invitation.html", {"unknown": True}, status=404)
        # The secret leaves the address bar (and the browser's history) at once; the session
        # remembers which invitation this browser opened, never the secret.
        request.session[SESSION_KEY] = found.pk
        return HttpResponseRedirect(reverse("invitation"))
    invitation_id = request.session.get(SESSION_KEY)
    invitation = (
        Invitation.objects.select_related("tenant", "invited_by").filter(pk=invitation_id).first()
        if isinstance(invitation_id, int)
        else None
    )
    if invitation is None:
        return render(request, "registration/invitation.html", {"unknown": True}, status=404)
    user = request.user
    form = NewAccountForm(get_user_model()(username=invitation.email, email=invitation.email))
    error = ""
    if request.method == "POST":
        try:
            if user.is_authenticated:
                invitation_accept(invitation_id=invitation.pk, user=user)
            else:
                form = NewAccountForm(get_user_model()(username=invitation.email, email=invitation.email), request.POST)
                if not form.is_valid():
                    raise _FormInvalid
                _membership, user = invitation_accept(
                    invitation_id=invitation.pk, password=form.cleaned_data["new_password1"]
                )
                auth_login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        except _FormInvalid:
            pass
        except ApplicationError as exc:
            error = exc.detail
        else:
            request.session.pop(SESSION_KEY, None)
            messages.success(
                request,
                gettext("Welcome to %(tenant)s: you are now %(role)s.")
                % {"tenant": invitation.tenant.name, "role": role_label(invitation.role)},
            )
            if invitation.role == Role.OWNER:
                return HttpResponseRedirect(reverse("team", args=[invitation.tenant.slug]))
            return HttpResponseRedirect(reverse("home"))
    verdict = invitation_verdict(
        status=invitation.status,
        expires_at=invitation.expires_at,
        now=timezone.now(),
        invited=invitation.email,
        account_addresses=_account_addresses(request.user),
    )
    context = {
        "invitation": invitation,
        "role": role_label(invitation.role),
        "inviter": getattr(invitation.invited_by, "email", "") or "",
        "verdict": verdict.value,
        "ok": verdict is InvitationVerdict.OK,
        "has_account": accounts_of_address(invitation.email).exists(),
        "form": form,
        "error": error,
        "login_url": f"{reverse('login')}?next={reverse('invitation')}",
    }
    statuses = {InvitationVerdict.OK: 200, InvitationVerdict.WRONG_ACCOUNT: 403}
    return render(request, "registration/invitation.html", context, status=statuses.get(verdict, 410))


class _FormInvalid(Exception):
    pass
