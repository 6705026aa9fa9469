"""Who an actor id is, for the console's readers.

The ledger records a person as `user:<id>` (never a name or an address: those change, and the
chain is hashed).  The console shows them as the person — their name and e-mail address — to
those it serves, who may read the tenant's ledger anyway (its owners and auditors, and platform
auditors: `audit.web.audit_page`).  A customer (`customer:<id>`), a platform job or an agent is
shown as its id; so is a user who no longer exists."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth import get_user_model

_USER = re.compile(r"^user:(\d{1,18})$")


@dataclass(frozen=True)
class ActorShown:
    """One actor as a page shows it: `name` and `email` for a person, else only the id."""

    id: str
    name: str = ""
    email: str = ""

    @property
    def person(self) -> bool:
        return bool(self.email or self.name)

    @property
    def text(self) -> str:
        if self.name and self.email:
            return f"{self.name} <{self.email}>"
        return self.name or self.email or self.id


def user_id_of(actor_id: str) -> int | None:
    found = _USER.match(actor_id or "")
    return int(found.group(1)) if found else None


def actors_shown(actor_ids: Iterable[str]) -> dict[str, ActorShown]:
    """Each of `actor_ids` (from one tenant's ledger) as the page shows it, in one query."""
    wanted = {str(a) for a in actor_ids if a}
    users = {user_id_of(a): a for a in wanted if user_id_of(a) is not None}
    shown = {a: ActorShown(a) for a in wanted}
    rows = get_user_model().objects.filter(pk__in=list(users)).values_list("pk", "first_name", "last_name", "email")
    for pk, first, last, email in rows:
        actor = users[pk]
        shown[actor] = ActorShown(actor, name=" ".join(f"{first} {last}".split()), email=str(email or ""))
    return shown
