from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ...models import Tenant
from ...schemas import Actor
from ...services import tenant_audit_raw_text_set


class Command(BaseCommand):
    help = (
        "Show, allow (--allow) or deny (--deny) the tenant's auditors reading customers' own words in the "
        "auditor console.  The change is recorded in the tenant's ledger, and so is every such read."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--tenant", required=True, help="tenant slug")
        switch = parser.add_mutually_exclusive_group()
        switch.add_argument("--allow", action="store_true", help="auditors may read the conversations' text")
        switch.add_argument("--deny", action="store_true", help="auditors see pointers and figures only (default)")

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = Tenant.objects.filter(slug=options["tenant"]).first()
        if tenant is None:
            raise CommandError(f"no tenant {options['tenant']!r}")
        if options["allow"] or options["deny"]:
            tenant = tenant_audit_raw_text_set(
                tenant=tenant, allowed=bool(options["allow"]), actor=Actor.platform("manage.py tenant_audit_raw_text")
            )
        state = "allowed" if tenant.auditors_read_raw_text else "denied"
        self.stdout.write(f"{tenant.slug}: auditors reading customers' text {state}")
