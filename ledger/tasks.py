from __future__ import annotations

import logging

from celery import shared_task

from .audit import chain_verify_and_checkpoint
from .chains import chain_directory

log = logging.getLogger(__name__)


@shared_task(name="ledger.tasks.ledger_verify_all")
def ledger_verify_all() -> dict[str, bool]:
    """Verify every chain the project lists and checkpoint the ones that hold.  Harmless to run
    twice.  Keyed by the chain's label (in Facade: the tenant's slug)."""
    outcome: dict[str, bool] = {}
    for chain in chain_directory().chains():
        result, _ = chain_verify_and_checkpoint(chain=chain)
        outcome[chain.label] = result.ok
        if not result.ok:
            log.error(
                "ledger of tenant %s failed verification at seq %s (%s)",
                chain.label,
                result.first_bad_seq,
                result.reason,
            )
    return outcome
