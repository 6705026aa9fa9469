from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    name = "approvals"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Register this app's ledger event types in the catalogue (see knowledge/apps.py): the
        # proposals' own in events.py, the decision authority's (tokens, emailed codes) in
        # authority_events.py.
        from knowledge.signals import version_pending

        from . import (
            authority_events,  # noqa: F401
            contract_events,  # noqa: F401
            events,  # noqa: F401
        )
        from .knowledge_proposals import proposal_for_pending_version

        # Every knowledge version the L1 rule leaves pending gets its L1 proposal in the same
        # transaction (knowledge_proposals.py says why this is a signal and not call sites).
        version_pending.connect(proposal_for_pending_version, dispatch_uid="approvals.pending_knowledge")
