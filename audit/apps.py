from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = "Auditor console"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Register the console's own ledger events (every auditor view and export is recorded).
        from . import events  # noqa: F401
