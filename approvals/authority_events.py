"""The approvals app's ledger events for the decision authority (one-time tokens and emailed
codes): one payload model and one typed constructor per type.  None yet: issue 12 builds them."""

from __future__ import annotations

APP = "approvals"
