"""Seeds the database of the server that tests/test_schemathesis.py runs schemathesis against, and
prints (as JSON on the last line) what each principal sends: the agent's slug, an owner's session
and CSRF cookies, a customer's cookie and a peer's Bearer key.

Run as a script with the server's own environment (DATABASE_URL, DJANGO_SETTINGS_MODULE), after
`manage.py migrate`; never imported by the suite."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "facade.test_settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY  # noqa: E402
from django.contrib.sessions.backends.db import SessionStore  # noqa: E402
from django.http import HttpResponse  # noqa: E402
from django.middleware.csrf import _get_new_csrf_string  # noqa: E402

from facade.tenancy.identity import customer_cookie_name, set_customer_cookie  # noqa: E402
from facade.tenancy.models import Role  # noqa: E402
from facade.tenancy.schemas import Actor  # noqa: E402
from facade.tenancy.services import (  # noqa: E402
    agent_create,
    agent_owner_add,
    customer_create,
    membership_grant,
    peer_key_create,
    tenant_create,
    user_ensure,
)


def signed_in(user: object) -> str:
    """A session of `user` as Django's login() leaves it (the model backend, the password hash)."""
    store = SessionStore()
    store[SESSION_KEY] = str(user.pk)  # type: ignore[attr-defined]
    store[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[-1]
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()  # type: ignore[attr-defined]
    store.create()
    return str(store.session_key)


def main() -> None:
    actor = Actor.platform("schemathesis seed")
    tenant = tenant_create(slug="fuzz", name="Fuzz", actor=actor)
    owner, _ = user_ensure(email="owner@fuzz.test", password="pw-fuzz-owner")
    membership_grant(tenant=tenant, user=owner, role=Role.OWNER, actor=actor)
    agent = agent_create(tenant=tenant, slug="fuzz-agent", name="Fuzz Agent", actor=actor)
    agent_owner_add(agent=agent, user=owner, actor=actor)
    peer = peer_key_create(agent=agent, name="schemathesis", actor=actor)
    customer = customer_create(tenant=tenant)
    csrf = _get_new_csrf_string()
    session = signed_in(owner)
    issued = HttpResponse()
    set_customer_cookie(issued, tenant, customer)
    customer_cookie = f"{customer_cookie_name(tenant)}={issued.cookies[customer_cookie_name(tenant)].value}"
    print(
        json.dumps(
            {
                "agent": agent.slug,
                "tenant": tenant.slug,
                "owner_cookie": f"{settings.SESSION_COOKIE_NAME}={session}; {settings.CSRF_COOKIE_NAME}={csrf}",
                "csrf": csrf,
                "customer_cookie": customer_cookie,
                "peer_key": peer.key,
            }
        )
    )


if __name__ == "__main__":
    main()
