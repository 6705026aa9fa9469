"""What a signed-in user's two-step state lets them do: pure, over plain facts."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class TwoStep(StrEnum):
    PASS = "pass"
    # A tenant they own requires an authenticator and they have none: enrol first.
    MUST_ENROL = "must_enrol"
    # They have an authenticator but this session never gave a code (it began before they
    # enrolled, e.g. in another browser): it no longer counts as signed in.
    MUST_SIGN_IN_AGAIN = "must_sign_in_again"


@dataclass(frozen=True)
class TwoStepFacts:
    has_device: bool
    session_verified: bool
    owner_of_requiring_tenant: bool


def two_step(facts: TwoStepFacts) -> TwoStep:
    if facts.has_device:
        return TwoStep.PASS if facts.session_verified else TwoStep.MUST_SIGN_IN_AGAIN
    if facts.owner_of_requiring_tenant:
        return TwoStep.MUST_ENROL
    return TwoStep.PASS
