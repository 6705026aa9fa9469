from django.apps import AppConfig


class DialogueConfig(AppConfig):
    name = "facade.dialogue"
    label = "dialogue"
    verbose_name = "Dialogue"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Register this app's ledger event types in the catalogue, so that ledger_append knows
        # them before anything is written and the docs list them.
        from . import events  # noqa: F401
