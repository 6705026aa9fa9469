"""`manage.py ledger_verify`: verify chains and checkpoint the ones that hold.

Which chains there are comes from the project (`ledger.chains`); in Facade a chain is a tenant,
named by its slug, hence `--tenant` and the `tenant` key of each report line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ...audit import chain_verify_and_checkpoint
from ...chains import chain_directory
from ...schemas import Checkpoint


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
        directory = chain_directory()
        if options["tenant"]:
            named = directory.chain(options["tenant"])
            if named is None:
                raise CommandError(f"no tenant {options['tenant']!r}")
            chains = [named]
        else:
            chains = list(directory.chains())
        held: list[Checkpoint] | None = None
        if options["checkpoint"]:
            try:
                lines = options["checkpoint"].read_text(encoding="utf-8").splitlines()
            except OSError as exc:
                raise CommandError(f"cannot read {options['checkpoint']}: {exc}") from exc
            try:
                held = [Checkpoint.model_validate_json(line) for line in lines if line.strip()]
            except ValueError as exc:
                raise CommandError(f"{options['checkpoint']} holds a line that is no checkpoint") from exc
        failed = False
        for chain in chains:
            mine = None if held is None else [c for c in held if c.chain == chain.id]
            result, checkpoint = chain_verify_and_checkpoint(chain=chain, checkpoints=mine)
            failed = failed or not result.ok
            out = {
                "tenant": chain.label,
                **result.model_dump(),
                "checkpoint": checkpoint.model_dump() if checkpoint else None,
            }
            self.stdout.write(json.dumps(out))
        if failed:
            raise SystemExit(1)
