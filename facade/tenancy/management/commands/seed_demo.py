from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from ...models import AgentProfile, Role, Tenant, default_languages
from ...schemas import Actor
from ...services import (
    TenancyError,
    agent_create,
    agent_owner_add,
    business_create,
    membership_grant,
    tenant_create,
    user_ensure,
)

# What the demo agent knows from the start, so that the customer chat answers something.  Kept
# free of prices and delivery times: the commitment guard would (rightly) block a reply quoting
# them.  (origin key, title, body, questions this answers: how customers actually ask — each
# word of a question finds the entry, so no word that other questions use too, like "today")
DEMO_KNOWLEDGE = [
    (
        "demo:opening-hours",
        "Opening hours",
        "The shop is open Monday to Saturday, from nine in the morning to six in the evening. "
        "It is closed on Sundays and public holidays.",
        [
            "What time do you open?",
            "What time do you close?",
            "Are you open on Sundays?",
            "What are your opening times?",
        ],
    ),
    (
        "demo:custom-cakes",
        "Custom cakes",
        "We bake custom cakes for birthdays and weddings. Tell us the occasion, the size and the "
        "flavours you like, and the owner confirms the details with you.",
        ["Do you do birthday cakes?", "Do you do wedding cakes?"],
    ),
    (
        "demo:opening-hours-zh",
        "营业时间",
        "本店周一至周六营业，上午九点到晚上六点。周日和法定节假日休息。",
        ["你们几点开门？", "你们几点关门？", "营业时间是什么时候？", "周日开门吗？"],
    ),
    (
        "demo:custom-cakes-zh",
        "定制蛋糕",
        "我们为生日和婚礼定制蛋糕。告诉我们场合、尺寸和喜欢的口味，店主会与您确认细节。",
        ["可以订做生日蛋糕吗？", "你们做婚礼蛋糕吗？"],
    ),
]
SEED_REF = "seed_demo"
# The demo's customer face also tells a customer where their request stands (issue 26 §3).
DEMO_SKILLS = ["knowledge_answers", "request_intake", "handoff", "request_status"]


def seed_skills(agent: AgentProfile, actor: Actor) -> bool:
    """Give a demo agent seeded before the demo had them the demo's skills, through the contract
    compiler (version+1) — only while its live contract is still the seed's own (an owner who
    changed the contract since decided its skills); returns whether a version was published."""
    from approvals.contract import contract_compile, live_contract

    live = live_contract(agent)
    if live is None or live.published_by != actor.id:
        return False
    missing = [skill for skill in DEMO_SKILLS if skill not in live.skill_ids]
    if not missing:
        return False
    contract_compile(agent=agent, changes={"skill_ids": [*live.skill_ids, *missing]}, actor=actor, caused_by=SEED_REF)
    return True


def seed_knowledge(agent: AgentProfile, actor: Actor) -> int:
    """Add the demo entries the agent does not have yet, and their questions to a demo entry
    seeded before it had any (unless the owner has changed it since); returns how many
    versions were added."""
    # A demo command wires apps together; the knowledge app is asked through its service.
    from knowledge.models import KnowledgeEntry, SourceType
    from knowledge.schemas import SourceIn
    from knowledge.services import entry_propose

    added = 0
    for key, title, body, questions in DEMO_KNOWLEDGE:
        entry = KnowledgeEntry.objects.filter(agent=agent, origin_key=key).first()
        if entry is not None:
            latest = entry.versions.order_by("-number").first()
            if latest is None or latest.questions or latest.source_ref != SEED_REF:
                continue
        entry_propose(
            agent=agent,
            title=title,
            body=body,
            questions=questions,
            actor=actor,
            origin_key=key,
            entry=entry,
            source=SourceIn(type=SourceType.OWNER_DIALOGUE, ref=SEED_REF, version="2" if entry else "1"),
        )
        added += 1
    return added


class Command(BaseCommand):
    help = (
        "Seed a tenant with an agent, an owner, an auditor and a little approved knowledge, and the "
        "platform an operator who signs in to /admin/ (idempotent). Prints the passwords of accounts "
        "it creates and the URLs to open."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--tenant", default="demo")
        parser.add_argument("--agent", default="demo-shop")
        parser.add_argument("--owner-email", default="owner@demo.test")
        parser.add_argument("--auditor-email", default=None, help="default: auditor@<owner's domain>")
        parser.add_argument(
            "--operator-email",
            default="operator@demo.test",
            help="the platform operator (staff and superuser: the admin, and owner rights on every agent "
            "except deciding L3 changes, which are the tenant's own owners'); one for the platform, not per tenant",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        tenant_slug, agent_slug, owner_email = options["tenant"], options["agent"], options["owner_email"]
        operator_email = options["operator_email"]
        auditor_email = options["auditor_email"] or f"auditor@{owner_email.split('@', 1)[-1]}"
        actor = Actor.platform("manage.py seed_demo")
        created_passwords: dict[str, str] = {}
        with transaction.atomic():
            tenant = Tenant.objects.filter(slug=tenant_slug).first()
            existing = AgentProfile.objects.filter(slug=agent_slug).first()
            if tenant is None and existing is None:
                # A new demo business joins the way any business does (issue 32 §1): the same
                # service the operator's page calls, without an invitation (the demo's accounts
                # are made below, with passwords printed).
                try:
                    joined = business_create(
                        name=tenant_slug.replace("-", " ").title(),
                        slug=tenant_slug,
                        time_zone=settings.TIME_ZONE,
                        languages=default_languages(),
                        agent_slug=agent_slug,
                        agent_name=agent_slug.replace("-", " ").title(),
                        actor=actor,
                        skill_ids=DEMO_SKILLS,
                    )
                except TenancyError as exc:
                    raise CommandError(exc.detail) from None
                tenant, existing, created_agent = joined.tenant, None, joined.agent
            else:
                created_agent = None
                tenant = tenant or tenant_create(
                    slug=tenant_slug, name=tenant_slug.replace("-", " ").title(), actor=actor
                )
            if existing is not None and existing.tenant_id != tenant.pk:
                raise CommandError(f"agent {agent_slug!r} already belongs to tenant {existing.tenant.slug!r}")
            accounts = {}
            for email, role in ((owner_email, Role.OWNER), (auditor_email, Role.AUDITOR)):
                password = secrets.token_urlsafe(12)
                user, created = user_ensure(email=email, password=password)
                if created:
                    created_passwords[email] = password
                membership_grant(tenant=tenant, user=user, role=role, actor=actor)
                accounts[role] = user
            agent = (
                existing
                or created_agent
                or agent_create(
                    tenant=tenant,
                    slug=agent_slug,
                    name=agent_slug.replace("-", " ").title(),
                    actor=actor,
                    skill_ids=DEMO_SKILLS,
                )
            )
            agent_owner_add(agent=agent, user=accounts[Role.OWNER], actor=actor)
            skilled = existing is not None and seed_skills(agent, actor)
            added = seed_knowledge(agent, actor)
            # The platform's operator: a member of no tenant.  An existing account keeps its rights.
            password = secrets.token_urlsafe(12)
            operator, created = user_ensure(email=operator_email, password=password, is_staff=True, is_superuser=True)
            if created:
                created_passwords[operator_email] = password
        base = settings.FACADE_PUBLIC_URL.rstrip("/")
        self.stdout.write(self.style.SUCCESS(f"Seeded tenant {tenant.slug!r} with agent {agent.slug!r}."))
        if added:
            self.stdout.write(f"  knowledge: {added} demo entries added or given their questions")
        if skilled:
            self.stdout.write(f"  contract: the demo's skills ({', '.join(DEMO_SKILLS)}) published as a new version")
        for email, role_name in ((owner_email, "owner"), (auditor_email, "auditor"), (operator_email, "operator")):
            if email in created_passwords:
                self.stdout.write(f"  {role_name:8} {email}  password: {created_passwords[email]}")
            else:
                self.stdout.write(
                    f"  {role_name:8} {email}  (exists; password unchanged — `manage.py changepassword {email}`)"
                )
        if not (operator.is_staff and operator.is_superuser):
            self.stdout.write(
                self.style.WARNING(f"  {operator_email} is not staff and superuser: it cannot sign in to /admin/")
            )
        self.stdout.write(f"  customer chat:  {base}/c/{agent.slug}/")
        self.stdout.write(f"  owner chat:     {base}/owner/{agent.slug}/chat")
        self.stdout.write(f"  owner sign-in:  {base}/accounts/login/")
        self.stdout.write(f"  auditor console: {base}/audit/{tenant.slug}/  (sign in as the auditor)")
        self.stdout.write(f"  admin (operator): {base}/admin/")
        self.stdout.write(f"  API schema:     {base}/api/docs/")
