"""What the tenancy app tells the rest of the platform, without knowing who listens (issue 28).

`owner_authority_ended` is sent inside the writing transaction whenever a person stops being an
owner of some of a tenant's agents: their membership is revoked (`membership_revoke`), their role
in the tenant changes from owner to another (`membership_grant`), or they are removed from an
agent's owners (`agent_owner_remove`).  The approvals app listens (connected in approvals/apps.py)
and voids at once, with its ledger events, that person's pending approvals, unspent decision
tokens and live e-mailed codes for those agents — tenancy stays below approvals in the dependency
direction and never imports it.  A receiver that raises rolls the whole write back: a removal
never happens with the removed person's approvals still standing."""

from __future__ import annotations

from django.dispatch import Signal

# Sent with sender=Membership and `tenant`, `user`, `agents` (the AgentProfiles concerned),
# `reason` ("membership_revoked", "owner_role_changed" or "agent_owner_removed") and `actor`.
owner_authority_ended = Signal()
