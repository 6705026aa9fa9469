from django.apps import AppConfig


class TenancyConfig(AppConfig):
    name = "facade.tenancy"
    label = "tenancy"
    verbose_name = "Tenancy and identity"
    default_auto_field = "django.db.models.BigAutoField"
