from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the search-index check)
