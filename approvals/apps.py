from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    name = "approvals"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Register this app's ledger event types in the catalogue (see knowledge/apps.py): the
        # proposals' own in events.py, the decision authority's (tokens, emailed codes) in
        # authority_events.py.
        from . import (
            authority_events,  # noqa: F401
            contract_events,  # noqa: F401
            events,  # noqa: F401
        )
