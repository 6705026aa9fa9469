from django.apps import AppConfig


class RsiConfig(AppConfig):
    name = "rsi"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Register this app's ledger event types in the catalogue (see knowledge/apps.py).
        from . import observe_events  # noqa: F401
