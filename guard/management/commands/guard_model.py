"""`manage.py guard_model`: fit the guard's model on the corpus and store it.

The model (`guard/classifier.py`) is fitted with scikit-learn on `guard/corpus/` — the corpus
sentences and every folded round — and its weights are written to `guard/corpus/model.json.gz`
with the digest of the corpus they came from.  Run it after changing the corpus (folding a round
in, adding sentences); `tests/test_guard_model.py` fails while the stored model and the corpus
disagree.  `--check` writes nothing and exits 1 when the stored model is missing or stale.
Prints one line of JSON: the corpus digest, the file's size and how many sentences it was fitted on.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from guard.classifier import MODEL_FILE, corpus, corpus_digest, model_read, model_write, reader_reset, train


class Command(BaseCommand):
    help = "Fit the guard's model on guard/corpus/ and store it in guard/corpus/model.json.gz."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--check", action="store_true", help="only check that the stored model is up to date")
        parser.add_argument(
            "--calibrate",
            action="store_true",
            help="hold each folded round out in turn, fit on the rest, and print the whole check's recall and "
            "false blocks and the model's precision and recall per category at each threshold (writes nothing)",
        )

    def handle(self, *args: Any, check: bool = False, calibrate: bool = False, **options: Any) -> None:
        if calibrate:
            from guard.calibration import calibrate as measure
            from guard.calibration import readings

            found = readings()
            for line in measure(found, [t / 100 for t in range(50, 100, 5)]):
                self.stdout.write(json.dumps(line))
            return
        digest = corpus_digest()
        if check:
            shipped = model_read()
            if shipped is None or shipped[0] != digest:
                raise CommandError(
                    f"{MODEL_FILE} is missing or was fitted on another corpus: run manage.py guard_model"
                )
            self.stdout.write(json.dumps({"corpus": digest, "up_to_date": True}))
            return
        commitments, harmless = corpus()
        written = model_write(train(commitments, harmless))
        reader_reset()
        self.stdout.write(
            json.dumps(
                {
                    "corpus": written,
                    "bytes": MODEL_FILE.stat().st_size,
                    "commitments": len(commitments),
                    "harmless": len(harmless),
                }
            )
        )
