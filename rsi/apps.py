from django.apps import AppConfig


class RsiConfig(AppConfig):
    name = "rsi"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Register the daily review's ledger event types in the catalogue (see approvals/apps.py).
        from . import review_events  # noqa: F401
