from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from facade.errors import ApplicationError

from ...models import Tenant
from ...schemas import Actor
from ...services import tenant_time_zone_set


class Command(BaseCommand):
    help = (
        "Show or set the IANA time zone a tenant's days are counted in (the nightly review runs at 03:30 "
        "and observe at 05:00 there), e.g. `tenant_time_zone demo Asia/Shanghai`."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("tenant", help="tenant slug")
        parser.add_argument("time_zone", nargs="?", help="an IANA name such as Europe/Berlin")

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = Tenant.objects.filter(slug=options["tenant"]).first()
        if tenant is None:
            raise CommandError(f"no tenant {options['tenant']!r}")
        if options["time_zone"]:
            try:
                tenant = tenant_time_zone_set(
                    tenant=tenant, time_zone=options["time_zone"], actor=Actor.platform("manage.py tenant_time_zone")
                )
            except ApplicationError as exc:
                raise CommandError(exc.detail) from exc
        self.stdout.write(f"{tenant.slug}: {tenant.time_zone}")
