from django.apps import AppConfig


class TenancyConfig(AppConfig):
    name = "facade.tenancy"
    label = "tenancy"
    verbose_name = "Tenancy and identity"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Register this app's ledger event types in the catalogue, so that ledger_append knows
        # them before anything is written and the docs list them.
        from . import events  # noqa: F401
