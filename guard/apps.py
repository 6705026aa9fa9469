from django.apps import AppConfig


class GuardConfig(AppConfig):
    name = "guard"
    verbose_name = "Outgoing check"
    default_auto_field = "django.db.models.BigAutoField"
