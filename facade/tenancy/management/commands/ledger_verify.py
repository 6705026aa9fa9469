from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ledger.schemas import Checkpoint

from ...audit import tenant_ledger_verify
from ...models import Tenant


class Command(BaseCommand):
    help = (
        "Verify tenants' ledgers (hash chain, column agreement and signed checkpoints) and sign a "
        "new checkpoint for each chain that holds. Prints one JSON object per tenant; exits 1 if "
        "any chain fails."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--tenant", help="slug of one tenant (default: all)")
        parser.add_argument(
            "--checkpoint",
            type=Path,
            help="a JSON-lines file of checkpoints held elsewhere, used instead of the local ones",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        tenants = Tenant.objects.order_by("pk")
        if options["tenant"]:
            tenants = tenants.filter(slug=options["tenant"])
            if not tenants.exists():
                raise CommandError(f"no tenant {options['tenant']!r}")
        held: list[Checkpoint] | None = None
        if options["checkpoint"]:
            try:
                lines = options["checkpoint"].read_text(encoding="utf-8").splitlines()
            except OSError as exc:
                raise CommandError(f"cannot read {options['checkpoint']}: {exc}") from exc
            held = [Checkpoint.model_validate_json(line) for line in lines if line.strip()]
        failed = False
        for tenant in tenants:
            mine = None if held is None else [c for c in held if c.chain == tenant.pk]
            result, checkpoint = tenant_ledger_verify(tenant=tenant, checkpoints=mine)
            failed = failed or not result.ok
            out = {
                "tenant": tenant.slug,
                **result.model_dump(),
                "checkpoint": checkpoint.model_dump() if checkpoint else None,
            }
            self.stdout.write(json.dumps(out))
        if failed:
            raise SystemExit(1)
