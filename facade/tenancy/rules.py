"""Pure decisions about audiences and who may do what.  No ORM here: plain data in, typed
decisions out, and anything unknown is refused."""

from __future__ import annotations

import functools
import re
import zoneinfo
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Audience(StrEnum):
    OWNER = "owner"
    CUSTOMER = "customer"
    PEER = "peer"


class PrincipalType(StrEnum):
    USER = "user"
    CUSTOMER = "customer"
    PEER = "peer"


@dataclass(frozen=True)
class CallerFacts:
    """What the server established about a caller towards one agent."""

    has_valid_peer_key: bool
    is_authenticated: bool
    is_agent_owner: bool
    is_platform_operator: bool


def derive_audience(facts: CallerFacts) -> Audience:
    """The face a new session gets.  Only the server's own facts count: a peer key of this
    agent makes a peer; an owner (or an operator acting for the owner) makes an owner; anyone
    else is a customer."""
    if facts.has_valid_peer_key:
        return Audience.PEER
    if facts.is_authenticated and (facts.is_agent_owner or facts.is_platform_operator):
        return Audience.OWNER
    return Audience.CUSTOMER


_NAME_NOISE = re.compile(r"[^a-z]")


def names_audience(name: str) -> bool:
    """True for any spelling of a field or header that tries to name the audience:
    `audience`, `Audience`, `X-Audience`, `meta[audience]`, `client_audience` ..."""
    return "audience" in _NAME_NOISE.sub("", name.lower())


def find_audience_key(data: Any, path: str = "") -> str | None:
    """The path of the first key naming the audience anywhere in a parsed body, else None."""
    if isinstance(data, Mapping):
        for key, value in data.items():
            here = f"{path}.{key}" if path else str(key)
            if names_audience(str(key)):
                return here
            found = find_audience_key(value, here)
            if found is not None:
                return found
    elif isinstance(data, (list, tuple)):
        for index, value in enumerate(data):
            found = find_audience_key(value, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def first_audience_name(names: Iterable[str]) -> str | None:
    for name in names:
        if names_audience(name):
            return name
    return None


class PostDecision(StrEnum):
    ALLOWED = "allowed"
    NO_LONGER_OWNER = "no_longer_owner"
    SESSION_NOT_OPEN = "session_not_open"
    UNKNOWN_AUDIENCE = "unknown_audience"


def may_post(*, audience: str, status: str, caller_still_owner: bool) -> PostDecision:
    """Whether the principal of a session may still post in it."""
    if status != "open":
        return PostDecision.SESSION_NOT_OPEN
    if audience == Audience.OWNER:
        return PostDecision.ALLOWED if caller_still_owner else PostDecision.NO_LONGER_OWNER
    if audience in (Audience.CUSTOMER, Audience.PEER):
        return PostDecision.ALLOWED
    return PostDecision.UNKNOWN_AUDIENCE


def time_zone_problem(name: object) -> str | None:
    """Why `name` is not an IANA time zone the tenant's days can be counted in (None: it is).
    Only names of the IANA database (tzdata), not abbreviations or offsets ("CET" is one of the
    database's names and passes; "+08:00" and "China" do not)."""
    if not isinstance(name, str) or not 1 <= len(name) <= 64:
        return "a time zone is an IANA name such as Europe/Berlin"
    if name not in _zones():
        return f"{name[:64]!r} is not an IANA time zone name (e.g. Europe/Berlin, Asia/Shanghai)"
    return None


@functools.lru_cache(maxsize=1)
def _zones() -> frozenset[str]:
    """The IANA names of the installed time zone database (read once; `time_zones_reset`)."""
    return frozenset(zoneinfo.available_timezones())


def time_zones_reset() -> None:
    """Forget the time zone names read (the next check reads the database again)."""
    _zones.cache_clear()


# The contract's skills each trust a peer key may have leaves it (issue 33 §3): the peer face
# offers the contract's peer skills intersected with the key's trust.  An unknown trust grants
# nothing (fails closed).
TRUST_SKILLS: dict[str, frozenset[str]] = {
    "ask": frozenset({"knowledge_answers"}),
    "requests": frozenset({"knowledge_answers", "request_intake", "request_status", "handoff"}),
    "paused": frozenset(),
}


def skills_for_trust(trust: str, skill_ids: list[str]) -> list[str]:
    allowed = TRUST_SKILLS.get(trust, frozenset())
    return [skill for skill in skill_ids if skill in allowed]


# --- a business joins (issue 32 §1) --------------------------------------------------------

_SLUG = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")


def slug_problem(slug: object) -> str | None:
    """Why `slug` cannot be a business's or an agent's address (None: it can): lower-case letters,
    digits and hyphens, 1 to 64, not starting or ending with a hyphen."""
    if not isinstance(slug, str) or not _SLUG.fullmatch(slug):
        return "an address is 1 to 64 lower-case letters, digits and hyphens (e.g. rosa-bakery)"
    return None


def languages_problem(languages: object, site_languages: tuple[str, ...]) -> str | None:
    """Why `languages` is not a list of the site's languages a business may serve customers in."""
    if not isinstance(languages, list) or not languages:
        return "choose at least one language"
    if any(not isinstance(code, str) or code not in site_languages for code in languages):
        return f"languages are among: {', '.join(site_languages)}"
    if len(set(languages)) != len(languages):
        return "a language is named twice"
    return None


# --- the team (issue 32 §2) ----------------------------------------------------------------

# The roles an owner may invite or give: a co-owner or an auditor.  ("member" is a role the
# platform gives; nobody is invited to it.)
INVITABLE_ROLES = ("owner", "auditor")


class InvitationVerdict(StrEnum):
    OK = "ok"
    EXPIRED = "expired"
    USED = "used"
    CANCELLED = "cancelled"
    # Signed in (or signing up) as another address than the one invited.
    WRONG_ACCOUNT = "wrong_account"


def same_address(a: str, b: str) -> bool:
    """Whether two e-mail addresses name one mailbox, as far as this site tells them apart
    (case-insensitive, surrounding spaces ignored)."""
    return bool(a.strip()) and a.strip().casefold() == b.strip().casefold()


def invitation_verdict(
    *, status: str, expires_at: Any, now: Any, invited: str, account_addresses: tuple[str, ...] | None
) -> InvitationVerdict:
    """Whether an invitation may be accepted now by an account known by `account_addresses`
    (its e-mail and user name; None: nobody is signed in yet, so the address is not checked).
    Anything but a pending, unexpired invitation of that very address is refused; an unknown
    status is refused as cancelled."""
    if status == "accepted":
        return InvitationVerdict.USED
    if status != "pending":
        return InvitationVerdict.CANCELLED
    if now >= expires_at:
        return InvitationVerdict.EXPIRED
    if account_addresses is not None and not any(same_address(invited, a) for a in account_addresses):
        return InvitationVerdict.WRONG_ACCOUNT
    return InvitationVerdict.OK


def keeps_an_owner(*, role_now: str, role_after: str | None, other_owners: int) -> bool:
    """Whether a removal (`role_after` None) or a role change leaves the tenant an owner: the
    last owner can be neither removed nor made something else."""
    if role_now != "owner" or role_after == "owner":
        return True
    return other_owners > 0
