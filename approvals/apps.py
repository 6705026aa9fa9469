from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    name = "approvals"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Register this app's ledger event types in the catalogue (see knowledge/apps.py): the
        # proposals' own in events.py, the decision authority's (tokens, emailed codes) in
        # authority_events.py.
        from django.contrib.auth.signals import user_logged_in

        from facade.tenancy.signals import owner_authority_ended
        from knowledge.signals import version_pending

        from . import (
            authority_events,  # noqa: F401
            contract_events,  # noqa: F401
            events,  # noqa: F401
        )
        from .authority import authority_void_for_owner
        from .knowledge_proposals import proposal_for_pending_version
        from .step_up import mark_signed_in

        # The session remembers when its user signed in: an L3 decision needs a recent one.
        user_logged_in.connect(mark_signed_in, dispatch_uid="approvals.step_up.mark_signed_in")

        # Every knowledge version the L1 rule leaves pending gets its L1 proposal in the same
        # transaction (knowledge_proposals.py says why this is a signal and not call sites).
        version_pending.connect(proposal_for_pending_version, dispatch_uid="approvals.pending_knowledge")

        # A person who stops being an owner of an agent loses their pending approvals, unspent
        # tokens and live codes for it in the same transaction (issue 28, tenancy/signals.py).
        owner_authority_ended.connect(authority_void_for_owner, dispatch_uid="approvals.authority.void_for_owner")
