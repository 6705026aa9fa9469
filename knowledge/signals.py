"""What the knowledge app tells the rest of the platform, without knowing who listens.

`version_pending` is sent inside the writing transaction whenever a version is left waiting for
the owner: the L1 rule held a new version (`entry_propose`), or releasing a quarantine put a
version back to pending (`knowledge_unquarantine`).  The approvals app listens (connected in
approvals/apps.py) and files the L1 change proposal whose decision is the only way the version
becomes approved — knowledge stays below approvals in the dependency direction and never imports
it.  A receiver that raises rolls the whole write back: a pending version never exists without
its proposal."""

from __future__ import annotations

from django.dispatch import Signal

# Sent with sender=EntryVersion and `version` (the pending EntryVersion, its entry loaded).
version_pending = Signal()
