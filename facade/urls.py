from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from approvals.api import views as approvals
from facade import api_docs, contract_web, health, web
from facade.accounts import operator, recovery, signup, team
from facade.accounts import views as accounts
from facade.dialogue import web as dialogue_web
from facade.dialogue.api import views as dialogue
from facade.peers import views as a2a
from facade.peers import web as peers_web
from facade.tenancy.api import views as tenancy
from guard import web as guard_web
from guard.api import views as guard
from knowledge.api import views as knowledge
from ledger import api as ledger
from rsi import metrics_web
from rsi.api import metrics as rsi_metrics
from rsi.api import observe_views as observe
from rsi.api import review_views as rsi_reviews

api = [
    path("api/agents/<slug:slug>/sessions", dialogue.SessionCreateView.as_view(), name="session-create"),
    path(
        "api/agents/<slug:slug>/preview-sessions",
        dialogue.PreviewSessionCreateView.as_view(),
        name="preview-session-create",
    ),
    path("api/sessions/<uuid:session_id>", dialogue.SessionDetailView.as_view(), name="session-detail"),
    path("api/sessions/<uuid:session_id>/messages", dialogue.MessagesView.as_view(), name="message-create"),
    path("api/sessions/<uuid:session_id>/cancel", dialogue.CancelView.as_view(), name="session-cancel"),
    path("api/sessions/<uuid:session_id>/rating", dialogue.RatingView.as_view(), name="session-rating"),
    path(
        "api/sessions/<uuid:session_id>/requests/<int:request_id>",
        dialogue.RequestAmendView.as_view(),
        name="request-amend",
    ),
    path(
        "api/sessions/<uuid:session_id>/requests/<int:request_id>/withdraw",
        dialogue.RequestWithdrawView.as_view(),
        name="request-withdraw",
    ),
    path(
        "api/requests/<int:request_id>/transition", dialogue.RequestTransitionView.as_view(), name="request-transition"
    ),
    path("api/agents/<slug:slug>/peer-keys", tenancy.PeerKeyListView.as_view(), name="peer-keys"),
    path("api/agents/<slug:slug>/peer-keys/<uuid:key_id>", tenancy.PeerKeyDetailView.as_view(), name="peer-key"),
    path(
        "api/tenants/<slug:tenant_slug>/audit-raw-text",
        tenancy.TenantAuditRawTextView.as_view(),
        name="tenant-audit-raw-text",
    ),
    path("api/businesses", tenancy.BusinessListView.as_view(), name="businesses-api"),
    path("api/tenants/<slug:tenant_slug>/members", tenancy.MemberListView.as_view(), name="tenant-members"),
    path(
        "api/tenants/<slug:tenant_slug>/members/<int:member_id>",
        tenancy.MemberDetailView.as_view(),
        name="tenant-member",
    ),
    path("api/tenants/<slug:tenant_slug>/invitations", tenancy.InvitationListView.as_view(), name="tenant-invitations"),
    path(
        "api/tenants/<slug:tenant_slug>/invitations/<int:invitation_id>",
        tenancy.InvitationDetailView.as_view(),
        name="tenant-invitation",
    ),
    path("api/ledger/verify", ledger.LedgerVerifyView.as_view(), name="ledger-verify"),
    path("api/ledger/checkpoints", ledger.LedgerCheckpointView.as_view(), name="ledger-checkpoints"),
    path("api/ledger/events", ledger.LedgerExportView.as_view(), name="ledger-events"),
    path("api/agents/<slug:slug>/changes", approvals.ChangeListView.as_view(), name="changes"),
    path("api/agents/<slug:slug>/reviews", rsi_reviews.ReviewRunView.as_view(), name="reviews"),
    path("api/agents/<slug:slug>/reviews/<str:day>", rsi_reviews.ReviewDetailView.as_view(), name="review"),
    path("api/agents/<slug:slug>/changes/<str:change_id>", approvals.ChangeDetailView.as_view(), name="change"),
    path(
        "api/agents/<slug:slug>/changes/<str:change_id>/authorize",
        approvals.ChangeAuthorizeView.as_view(),
        name="change-authorize",
    ),
    path(
        "api/agents/<slug:slug>/changes/<str:change_id>/authorize/verify",
        approvals.ChangeVerifyView.as_view(),
        name="change-verify",
    ),
    path(
        "api/agents/<slug:slug>/changes/<str:change_id>/decide",
        approvals.ChangeDecideView.as_view(),
        name="change-decide",
    ),
    path(
        "api/agents/<slug:slug>/changes/<str:change_id>/rebase",
        approvals.ChangeRebaseView.as_view(),
        name="change-rebase",
    ),
    path(
        "api/agents/<slug:slug>/changes/<str:change_id>/rollback",
        approvals.ChangeRollbackView.as_view(),
        name="change-rollback",
    ),
    path("api/agents/<slug:slug>/knowledge/ingest", knowledge.IngestView.as_view(), name="knowledge-ingest"),
    path("api/agents/<slug:slug>/knowledge/uploads", knowledge.UploadView.as_view(), name="knowledge-uploads"),
    path("api/agents/<slug:slug>/knowledge/jobs/<int:job_id>", knowledge.JobView.as_view(), name="knowledge-job"),
    path("api/agents/<slug:slug>/knowledge/search", knowledge.SearchView.as_view(), name="knowledge-search"),
    path("api/agents/<slug:slug>/knowledge/entries", knowledge.EntryListView.as_view(), name="knowledge-entries"),
    path(
        "api/agents/<slug:slug>/knowledge/entries/<int:entry_id>",
        knowledge.EntryDetailView.as_view(),
        name="knowledge-entry",
    ),
    path(
        "api/agents/<slug:slug>/knowledge/entries/<int:entry_id>/restore",
        knowledge.RestoreView.as_view(),
        name="knowledge-restore",
    ),
    path(
        "api/agents/<slug:slug>/knowledge/regulated-terms",
        knowledge.RegulatedTermsView.as_view(),
        name="knowledge-terms",
    ),
    path(
        "api/agents/<slug:slug>/knowledge/quarantine", knowledge.QuarantineView.as_view(), name="knowledge-quarantine"
    ),
    path(
        "api/agents/<slug:slug>/knowledge/unquarantine",
        knowledge.UnquarantineView.as_view(),
        name="knowledge-unquarantine",
    ),
    path("api/agents/<slug:slug>/feeds", observe.FeedListView.as_view(), name="observe-feeds"),
    path("api/agents/<slug:slug>/digests/<str:day>", observe.DigestView.as_view(), name="observe-digest"),
    path("api/agents/<slug:slug>/metrics", rsi_metrics.MetricsView.as_view(), name="agent-metrics"),
    path("api/agents/<slug:slug>/guard-breaker", guard.BreakerView.as_view(), name="guard-breaker"),
    path("api/agents/<slug:slug>/guard-breaker/close", guard.BreakerCloseView.as_view(), name="guard-breaker-close"),
    path("api/audit/", include("audit.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", api_docs.api_docs, name="api-docs"),
    path("api/docs/redoc.js", api_docs.redoc_script, name="api-docs-script"),
]

urlpatterns = [
    path("", web.home, name="home"),
    path("healthz", health.healthz, name="healthz"),
    path("favicon.ico", web.favicon, name="favicon"),
    path("c/<slug:slug>/", web.customer_page, name="customer-page"),
    path("owner/<slug:slug>/", metrics_web.owner_overview, name="owner-overview"),
    # owner-knowledge, owner-knowledge-new, owner-unanswered, owner-unanswered-attach
    path("owner/<slug:slug>/", include("knowledge.urls")),
    # owner-inbox, owner-inbox-card, owner-outbox
    path("owner/<slug:slug>/", include("approvals.urls")),
    # owner-feeds, owner-feeds-add, owner-feeds-run, owner-feed-toggle, owner-candidate-propose
    path("owner/<slug:slug>/", include("rsi.observe_urls")),
    # owner-review-run, owner-review, owner-review-status
    path("owner/<slug:slug>/", include("rsi.review_urls")),
    path("owner/<slug:slug>/contract", contract_web.owner_contract, name="owner-contract"),
    path("owner/<slug:slug>/contract/change", contract_web.owner_contract_change, name="owner-contract-change"),
    path("owner/<slug:slug>/chat", web.owner_chat, name="owner-chat"),
    path("owner/<slug:slug>/guard-breaker/close", guard_web.owner_breaker_close, name="owner-guard-breaker-close"),
    path("owner/<slug:slug>/preview", web.owner_preview, name="owner-preview"),
    path("owner/<slug:slug>/requests", dialogue_web.requests_page, name="owner-requests"),
    path("owner/<slug:slug>/peers", peers_web.peers_page, name="owner-peers"),
    path("owner/<slug:slug>/peers/issue", peers_web.peer_issue, name="owner-peers-issue"),
    path("owner/<slug:slug>/peers/listing", peers_web.peer_listing, name="owner-peers-listing"),
    path("owner/<slug:slug>/peers/<uuid:key_id>/trust", peers_web.peer_trust, name="owner-peer-trust"),
    path("owner/<slug:slug>/peers/<uuid:key_id>/revoke", peers_web.peer_revoke, name="owner-peer-revoke"),
    path("owner/<slug:slug>/requests/<int:request_id>/move", dialogue_web.request_move, name="owner-request-move"),
    path("owner/<slug:slug>/requests/<int:request_id>/reply", dialogue_web.request_answer, name="owner-request-reply"),
    # The platform operator takes on businesses (issue 32 §1).
    path("platform/businesses/", operator.businesses_page, name="businesses"),
    path("platform/businesses/new", operator.business_new, name="business-new"),
    # The team of a business (issue 32 §2): its owners' members page and its forms.
    path("team/<slug:tenant_slug>/", team.team_page, name="team"),
    path("team/<slug:tenant_slug>/invite", team.team_invite, name="team-invite"),
    path("team/<slug:tenant_slug>/members/<int:member_id>/role", team.team_member_role, name="team-member-role"),
    path("team/<slug:tenant_slug>/members/<int:member_id>/remove", team.team_member_remove, name="team-member-remove"),
    path(
        "team/<slug:tenant_slug>/invitations/<int:invitation_id>/cancel",
        team.team_invitation_cancel,
        name="team-invitation-cancel",
    ),
    path("audit/", include("audit.urls")),
    # A2A 1.0 (issue 33): each agent's Agent Card under its own base URL, and its JSON-RPC binding.
    path("a2a/agents", a2a.agents_view, name="a2a-agents"),
    path("a2a/<slug:slug>/.well-known/agent-card.json", a2a.card_view, name="a2a-card"),
    path("a2a/<slug:slug>/jsonrpc", a2a.jsonrpc_view, name="a2a-jsonrpc"),
    path("accounts/login/", accounts.SignInView.as_view(), name="login"),
    path("accounts/login/code/", accounts.sign_in_code, name="login-code"),
    path("accounts/two-step/", accounts.two_step_setup, name="two-step"),
    path("accounts/invitation/", team.invitation_page, name="invitation"),
    # A forgotten password (Django's own flow) and a changed e-mail address (issue 32 §2).
    path("accounts/password/reset/", recovery.PasswordResetView.as_view(), name="password_reset"),
    path("accounts/password/reset/sent/", auth_views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path(
        "accounts/password/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "accounts/password/reset/done/", auth_views.PasswordResetCompleteView.as_view(), name="password_reset_complete"
    ),
    path("accounts/settings/", recovery.account_settings, name="account-settings"),
    path(
        "accounts/password/change/",
        auth_views.PasswordChangeView.as_view(success_url="/accounts/settings/?changed=password"),
        name="password_change",
    ),
    path("accounts/email/", recovery.email_change, name="email-change"),
    path("accounts/email/confirm/", recovery.email_change_confirm, name="email-change-confirm"),
    path("signup/", signup.signup_page, name="signup"),
    path("signup/verify/", signup.signup_verify, name="signup-verify"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("i18n/", include("django.conf.urls.i18n")),
    *api,
]

# Django's own error pages answer in the API's JSON error shape on /api/ paths and in the site's
# layout elsewhere (templates/404.html, 403.html, 500.html); the CSRF refusal is in settings.
handler400 = "facade.api.bad_request"
handler403 = "facade.api.permission_denied"
handler404 = "facade.api.not_found"
handler500 = "facade.api.server_error"
