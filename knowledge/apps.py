from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Register this app's ledger event types in the catalogue, so that ledger_append knows
        # them before anything is written and the docs list them.
        from . import (
            checks,  # noqa: F401  (registers the search-index check)
            events,  # noqa: F401
        )
