from django.apps import AppConfig


class RsiConfig(AppConfig):
    name = "rsi"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Register the app's ledger event types in the catalogue (see approvals/apps.py): the daily
        # review's, observe's, governance's (the escalation budget) and the simulated week's.
        from . import governance_events, observe_events, review_events, schedule_events, simulate_events  # noqa: F401
