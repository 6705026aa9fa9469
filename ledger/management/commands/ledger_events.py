from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand

from ledger.catalogue import as_markdown, as_records, catalogue


class Command(BaseCommand):
    help = (
        "List the ledger's event types from the event catalogue: type, app, entity, payload fields and "
        "description. Plain text by default (one type per line, tab-separated); --markdown prints the "
        "README's table, --json the same as data (e.g. an auditor console's filter list)."
    )

    def add_arguments(self, parser: Any) -> None:
        form = parser.add_mutually_exclusive_group()
        form.add_argument("--markdown", action="store_true", help="a markdown table (the README's)")
        form.add_argument("--json", action="store_true", help="a JSON list of objects")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["markdown"]:
            self.stdout.write(as_markdown(catalogue), ending="")
        elif options["json"]:
            self.stdout.write(json.dumps(as_records(catalogue), indent=2, ensure_ascii=False))
        else:
            for event_type in catalogue:
                fields = " ".join(f"{key}:{kind}" for key, kind in event_type.fields())
                line = "\t".join(
                    (event_type.name, event_type.app, event_type.entity_type, fields, event_type.description)
                )
                self.stdout.write(line)
