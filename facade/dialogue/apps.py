from django.apps import AppConfig


class DialogueConfig(AppConfig):
    name = "facade.dialogue"
    label = "dialogue"
    verbose_name = "Dialogue"
    default_auto_field = "django.db.models.BigAutoField"
