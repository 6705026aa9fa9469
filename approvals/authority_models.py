"""The decision authority's rows: one-time decision tokens and emailed-code challenges.

Both are bound to a change by its public id (`chg_…`) and to the proposal version, agent, owner
and decision they were issued for.  Neither row ever holds a secret in clear: the token and the
code are kept as HMAC-SHA256 digests under a server key (see approvals/authority.py)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

__all__ = ["Assurance", "ChallengeStatus", "Decision", "DecisionChallenge", "DecisionSignature", "DecisionToken"]


class Decision(models.TextChoices):
    APPROVE = "approve", "approve"
    REJECT = "reject", "reject"


class Assurance(models.TextChoices):
    CLICK = "click", "click"  # the owner's signed-in session and click (L1, L2)
    EMAIL_OTP = "email_otp", "email_otp"  # plus a code that came by e-mail (L3)
    # plus a code from the owner's authenticator app (L3 in a tenant that requires it)
    EMAIL_OTP_TOTP = "email_otp+totp", "email_otp+totp"


class DecisionToken(models.Model):
    """A one-time token authorising one decision on one version of one change."""

    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.PROTECT, related_name="+")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    change_id = models.CharField(max_length=64)
    version = models.PositiveIntegerField()
    decision = models.CharField(max_length=8, choices=Decision.choices)
    assurance = models.CharField(max_length=16, choices=Assurance.choices)
    token_hash = models.CharField(max_length=64, unique=True)
    authorization_id = models.CharField(max_length=40, unique=True)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["change_id"], name="approvals_token_change")]

    def __str__(self) -> str:
        return f"{self.authorization_id} {self.decision} {self.change_id} v{self.version}"


class ChallengeStatus(models.TextChoices):
    LIVE = "live", "live"  # sent; waiting for the code
    USED = "used", "used"  # the right code came; a token was issued
    DEAD = "dead", "dead"  # too many wrong codes
    REPLACED = "replaced", "replaced"  # a newer challenge for the same owner and change


class DecisionChallenge(models.Model):
    """A 6-digit code emailed to the owner to raise one decision to `email_otp` assurance."""

    challenge_id = models.CharField(max_length=40, unique=True)
    agent = models.ForeignKey("tenancy.AgentProfile", on_delete=models.PROTECT, related_name="+")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    change_id = models.CharField(max_length=64)
    version = models.PositiveIntegerField()
    decision = models.CharField(max_length=8, choices=Decision.choices)
    code_hash = models.CharField(max_length=64)
    sent_to = models.CharField(max_length=254)  # masked: o***@demo.test
    status = models.CharField(max_length=8, choices=ChallengeStatus.choices, default=ChallengeStatus.LIVE)
    failures = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["owner", "change_id", "created_at"], name="approvals_challenge_owner")]

    def __str__(self) -> str:
        return f"{self.challenge_id} {self.decision} {self.change_id} ({self.status})"


class DecisionSignature(models.Model):
    """One owner's approval of one version of an L3 change in a tenant that requires two owners:
    the first is recorded and the proposal stays pending; the second, by another owner, decides
    it (and is recorded too).  An edit bumps the version, so earlier signatures stop counting."""

    proposal = models.ForeignKey("approvals.ChangeProposal", on_delete=models.PROTECT, related_name="signatures")
    version = models.PositiveIntegerField()
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    authorization_id = models.CharField(max_length=40, unique=True)
    assurance = models.CharField(max_length=16, choices=Assurance.choices)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["proposal", "version", "owner"], name="approvals_signature_once")
        ]

    def __str__(self) -> str:
        return f"{self.authorization_id} signs {self.proposal_id} v{self.version}"
