"""`manage.py ledger_public_key`: the public key that signs the ledger's checkpoints.

An auditor verifies an export against a key they got from the operator outside the system they
audit (a checkpoint names its own key, which proves nothing): this prints it to hand over."""

from __future__ import annotations

import base64
from typing import Any

from django.core.management.base import BaseCommand

from ...keys import ledger_keys


class Command(BaseCommand):
    help = "Print the ledger's Ed25519 public key (base64) and its key id, to hand to auditors out of band."

    def handle(self, *args: Any, **options: Any) -> None:
        keys = ledger_keys()
        self.stdout.write(f"public key: {base64.b64encode(keys.public_raw).decode()}")
        self.stdout.write(f"key id:     {keys.key_id}")
