from django.apps import AppConfig


class PeersConfig(AppConfig):
    name = "facade.peers"
    label = "peers"
    verbose_name = "Peers (A2A)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Register this app's ledger event types before anything is written (see dialogue/apps.py).
        from . import events  # noqa: F401
