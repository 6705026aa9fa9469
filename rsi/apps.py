from django.apps import AppConfig


class RsiConfig(AppConfig):
    name = "rsi"
    default_auto_field = "django.db.models.BigAutoField"
