from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ...models import AgentProfile, PeerCredential
from ...schemas import Actor
from ...services import TenancyError, peer_key_create, peer_key_revoke


class Command(BaseCommand):
    help = "Create, list or revoke an agent's peer API keys. A new key is printed once and never stored."

    def add_arguments(self, parser: Any) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="issue a key")
        create.add_argument("agent", help="agent slug")
        create.add_argument("name", help="what the key is for")
        listing = sub.add_parser("list", help="list keys (never their secrets)")
        listing.add_argument("agent", help="agent slug")
        revoke = sub.add_parser("revoke", help="revoke a key at once")
        revoke.add_argument("agent", help="agent slug")
        revoke.add_argument("key_id", help="the key's id")

    def handle(self, *args: Any, **options: Any) -> None:
        agent = AgentProfile.objects.select_related("tenant").filter(slug=options["agent"]).first()
        if agent is None:
            raise CommandError(f"no agent {options['agent']!r}")
        actor = Actor.platform("manage.py peer_key")
        if options["action"] == "create":
            try:
                issued = peer_key_create(agent=agent, name=options["name"], actor=actor)
            except TenancyError as exc:
                raise CommandError(exc.detail) from exc
            self.stdout.write(
                f"id:  {issued.credential_id}\nkey: {issued.key}\n(shown once; it is stored only as a hash)"
            )
        elif options["action"] == "list":
            for cred in PeerCredential.objects.filter(agent=agent).order_by("created_at"):
                state = f"revoked {cred.revoked_at:%Y-%m-%d %H:%M}" if cred.revoked_at else "active"
                self.stdout.write(f"{cred.pk}  fpk_{cred.key_prefix}_…  {cred.name}  {state}")
        else:
            found = (
                PeerCredential.objects.filter(agent=agent, pk=options["key_id"]).first()
                if _is_uuid(options["key_id"])
                else None
            )
            if found is None:
                raise CommandError(f"no key {options['key_id']!r} for agent {agent.slug!r}")
            peer_key_revoke(credential=found, actor=actor)
            self.stdout.write(f"revoked {found.pk}")


def _is_uuid(value: str) -> bool:
    import uuid

    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True
