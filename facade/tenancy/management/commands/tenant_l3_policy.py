from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ...models import Tenant
from ...schemas import Actor
from ...services import tenant_l3_policy_set

SWITCH = {"on": True, "off": False}


class Command(BaseCommand):
    help = (
        "Show or set what an L3 decision needs in a tenant beyond the e-mailed code: --totp on|off "
        "(a code from the owner's authenticator app too), --two-owners on|off (two different owners approve)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("tenant", help="tenant slug")
        parser.add_argument("--totp", choices=sorted(SWITCH), help="require an authenticator code for L3")
        parser.add_argument("--two-owners", choices=sorted(SWITCH), help="require two owners' approvals for L3")

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = Tenant.objects.filter(slug=options["tenant"]).first()
        if tenant is None:
            raise CommandError(f"no tenant {options['tenant']!r}")
        tenant = tenant_l3_policy_set(
            tenant=tenant,
            requires_totp=SWITCH.get(options["totp"] or ""),
            requires_two_owners=SWITCH.get(options["two_owners"] or ""),
            actor=Actor.platform("manage.py tenant_l3_policy"),
        )
        totp = "on" if tenant.l3_requires_totp else "off"
        two = "on" if tenant.l3_requires_two_owners else "off"
        self.stdout.write(f"{tenant.slug}: L3 authenticator code {totp}, two owners {two}")
