from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ...models import Tenant
from ...schemas import Actor
from ...services import tenant_totp_require


class Command(BaseCommand):
    help = (
        "Require (or with --off stop requiring) a tenant's owners to sign in with a code from an "
        "authenticator app. Owners without one are sent to enrol before any owner page works."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("tenant", help="tenant slug")
        parser.add_argument("--off", action="store_true", help="stop requiring it")

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = Tenant.objects.filter(slug=options["tenant"]).first()
        if tenant is None:
            raise CommandError(f"no tenant {options['tenant']!r}")
        tenant = tenant_totp_require(
            tenant=tenant, required=not options["off"], actor=Actor.platform("manage.py tenant_require_totp")
        )
        state = "required" if tenant.owners_require_totp else "not required"
        self.stdout.write(f"{tenant.slug}: authenticator codes {state} for owners")
