"""A verification run over one chain: verify, and sign a checkpoint when it holds (used by
`manage.py ledger_verify`, the nightly task and the checkpoint API)."""

from __future__ import annotations

from .chains import NamedChain
from .schemas import Checkpoint, VerifyResult
from .selectors import ledger_verify
from .services import LedgerError, checkpoint_issue


def chain_verify_and_checkpoint(
    *, chain: NamedChain, checkpoints: list[Checkpoint] | None = None
) -> tuple[VerifyResult, Checkpoint | None]:
    """Verify a chain; when it holds, sign a fresh checkpoint of it.  A chain that does not
    verify is never signed: a checkpoint must not bless a tampered history.  Never raises for a
    chain that is not sound: the refusal comes back as a failed result, so that a run over many
    chains reports each and checkpoints the others."""
    result = ledger_verify(chain_id=chain.id, checkpoints=checkpoints)
    if not result.ok:
        return result, None
    head = bytes.fromhex(result.head_hash)
    try:
        return result, checkpoint_issue(chain_id=chain.id, label=chain.label, size=result.checked, head=head)
    except LedgerError as exc:
        refused = result.model_copy(update={"ok": False, "reason": "checkpoint_refused", "detail": str(exc)})
        return refused, None
