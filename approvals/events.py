"""The approvals app's ledger events for change proposals: one payload model and one typed
constructor per type (see ledger/catalogue.py).  None yet: the proposals arrive with issue 12."""

from __future__ import annotations

APP = "approvals"
