from django.apps import AppConfig


class GuardConfig(AppConfig):
    name = "guard"
    verbose_name = "Outgoing check"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Register the breaker's ledger event types in the catalogue.
        from . import events  # noqa: F401
