"""Who may do what, on every route (issue 14, "the role matrix").

Every URL route the resolver knows (the admin's included) is walked by every role — an owner and
an auditor of tenant alpha (signed in), a customer of alpha (its signed cookie and a session of
its own), a peer (an API key of alpha's agent) and an anonymous visitor — against alpha's objects
and against bravo's, with GET and with each unsafe method (POST, PUT, PATCH, DELETE, with a body
a page or client of that route would send).  Each route is classified in ROUTES below: who may
get a 2xx from GET, who may write, and how it refuses a stranger.  The walk asserts:

- no 2xx (and no redirect other than to a sign-in page) that the route does not declare;
- an auditor's unsafe request is refused `read_only` everywhere, except the few a reader needs
  (audit.readonly.ALLOWED_NAMES and the console's "verify now"), and the auditor's whole walk
  changes no governance row and writes no ledger event but the console's own `audit.*` records;
- another tenant's object answers 404 to every signed-in role and to a customer or peer where
  they could reach their own (a method the route does not serve may answer 405 first, which
  says nothing about the tenant) — never 403, never 2xx;
- the anonymous visitor is sent to sign in (pages), refused 401/403 (API), or answered 404 (a
  session, which an anonymous caller is the principal of none of);
- no route answers 5xx, and no route altered or removed a ledger event (owners included: there
  is no route that could; the admin, where operators look, is read-only, tests/test_audit_access.py).

A route with no line in ROUTES fails the walk: a route added later must be classified here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.apps import apps
from django.http import HttpResponse
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from audit.readonly import ALLOWED_NAMES
from conftest import TenantWorld, build_tenant, rate_limits_lifted
from ledger.expressions import CanonicalField
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify

OWNER, AUDITOR, CUSTOMER, PEER, ANONYMOUS = "owner", "auditor", "customer", "peer", "anonymous"
ROLES = (ANONYMOUS, PEER, CUSTOMER, AUDITOR, OWNER)  # the owner last: its writes succeed
SIGNED_IN = frozenset({OWNER, AUDITOR})
EVERYONE = frozenset(ROLES)
READERS = frozenset({OWNER, AUDITOR})  # of a tenant's ledger and console
UNSAFE = ("post", "put", "patch", "delete")
MISSING = 999_999  # an id nothing has


@dataclass(frozen=True)
class Rule:
    """How one route answers.  `style`: "page" (a stranger is sent to sign in), "api" (401/403),
    "session" (a session by id: 404 for anyone not its principal), "public" (anyone), "admin"
    (Django's admin: its own sign-in).  `tenant`: the path (or `?tenant=`) names one tenant's
    object, so another tenant's answers 404.  `reads`: roles whose GET succeeds on their own
    tenant's path; `writes`: roles whose unsafe request may succeed there.  `missing`: the filler
    may name nothing (a permitted role may get 404).  `loose`: the answer depends on the
    caller's sign-in state (the account flows): any non-5xx answer is fine, but a 2xx to an
    unsafe method still needs `writes`."""

    style: str
    tenant: bool = True
    reads: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()
    body: dict[str, Any] = field(default_factory=dict)
    missing: bool = False
    query_tenant: bool = False  # the tenant is named as ?tenant=<slug>
    loose: bool = False
    query: str = ""  # a query string the route needs to answer at all


def page(reads: frozenset[str] = frozenset({OWNER}), **kw: Any) -> Rule:
    return Rule("page", reads=reads, **kw)


def owner_form(**kw: Any) -> Rule:
    """A POST-only form of an owner page."""
    return Rule("page", reads=frozenset(), writes=frozenset({OWNER}), **kw)


def api(reads: frozenset[str] = frozenset({OWNER}), **kw: Any) -> Rule:
    return Rule("api", reads=reads, **kw)


def console(**kw: Any) -> Rule:
    """A page of the auditor console over one tenant: its readers only, read-only."""
    return Rule("page", reads=READERS, **kw)


def audit_api(**kw: Any) -> Rule:
    return Rule("api", reads=READERS, query_tenant=True, **kw)


OWNERS = frozenset({OWNER})
SESSION_WRITERS = frozenset({OWNER, CUSTOMER, PEER})

ROUTES: dict[str, Rule] = {
    # --- the site ---
    "home": Rule("public", tenant=False, reads=EVERYONE),
    "healthz": Rule("public", tenant=False, reads=EVERYONE),
    "favicon": Rule("public", tenant=False, reads=EVERYONE),
    "customer-page": Rule("public", tenant=False, reads=EVERYONE),  # an auditor sees it without the chat
    "login": Rule("public", tenant=False, reads=EVERYONE, writes=EVERYONE, loose=True),
    "login-code": Rule("public", tenant=False, writes=EVERYONE, loose=True),
    "two-step": Rule("page", tenant=False, reads=SIGNED_IN, writes=SIGNED_IN, loose=True),
    # The page an invitation's link opens: with no invitation opened in this browser it answers 404.
    "invitation": Rule("public", tenant=False, loose=True),
    # A forgotten password (Django's flow) and a changed e-mail address (issue 32 §2).
    "password_reset": Rule(
        "public", tenant=False, reads=EVERYONE, writes=EVERYONE, loose=True, body={"email": "nobody@example.test"}
    ),
    "password_reset_done": Rule("public", tenant=False, reads=EVERYONE),
    "password_reset_confirm": Rule("public", tenant=False, reads=EVERYONE, writes=EVERYONE, loose=True),
    "password_reset_complete": Rule("public", tenant=False, reads=EVERYONE),
    "email-change": Rule("page", tenant=False, reads=SIGNED_IN, writes=SIGNED_IN, loose=True),
    "email-change-confirm": Rule("page", tenant=False, loose=True),
    "account-settings": Rule("page", tenant=False, reads=SIGNED_IN),
    "password_change": Rule("page", tenant=False, reads=SIGNED_IN, writes=SIGNED_IN, loose=True),
    # Self-service sign-up (FACADE_SIGNUP, off by default: 404).
    "signup": Rule("public", tenant=False, loose=True),
    "signup-verify": Rule("public", tenant=False, loose=True),
    "logout": Rule("public", tenant=False, writes=EVERYONE, loose=True),
    "set_language": Rule("public", tenant=False, writes=EVERYONE, body={"language": "en", "next": "/"}, loose=True),
    "schema": Rule("public", tenant=False, reads=EVERYONE),
    "api-docs": Rule("public", tenant=False, reads=EVERYONE),
    "api-docs-script": Rule("public", tenant=False, reads=EVERYONE),
    # --- the owner's pages of an agent ---
    "owner-overview": page(),
    "owner-knowledge": page(),
    "owner-knowledge-new": page(writes=OWNERS, body={"title": "Opening hours", "body": "Nine to five."}),
    "owner-unanswered": page(),
    "owner-unanswered-attach": owner_form(body={"topic": "x", "entry": MISSING}),
    "owner-inbox": page(),
    "owner-inbox-card": page(),
    "owner-outbox": page(missing=True),  # only with the demo outbox on
    "owner-feeds": page(),
    "owner-feeds-add": owner_form(body={"url": "http://127.0.0.1:9/feed", "keywords": "repair"}),
    "owner-feeds-run": owner_form(),
    "owner-feed-toggle": owner_form(body={"enabled": "0"}),
    "owner-candidate-propose": owner_form(),
    "owner-review-run": owner_form(body={"date": "2026-01-05"}),
    "owner-review": page(),
    "owner-review-status": api(),  # the review page's JSON, under the page's path
    "owner-contract": page(),
    "owner-contract-change": owner_form(
        body={"kind": "wording", "language": "en", "situation": "greeting", "text": "Hi", "summary": "Hi"}
    ),
    "owner-chat": page(),
    "owner-guard-breaker-close": owner_form(),
    "owner-preview": page(),
    "owner-requests": page(),
    "owner-request-move": owner_form(body={"to": "accepted"}),
    "owner-request-reply": owner_form(body={"text": "We will call you."}),
    # --- the auditor console (read-only; readers of the tenant's ledger) ---
    "audit-index": Rule("page", tenant=False, reads=SIGNED_IN),
    "audit-session": console(),
    "audit-metrics": console(),
    "audit-timeline": console(),
    "audit-event": console(missing=True),
    "audit-lineage": console(missing=True),
    "audit-review": console(missing=True),
    "audit-replay": console(missing=True),
    "audit-verification": console(),
    "audit-verify-run": Rule("page", reads=frozenset(), writes=READERS),
    "audit-export": console(),
    "audit-verifier": console(),  # the export verifier, a download
    "audit-events": audit_api(),
    "audit-lineage-api": audit_api(missing=True, query="entity_type=contract&entity_id=alpha-agent"),
    "audit-replay-api": audit_api(missing=True),
    "audit-export-api": audit_api(),
    # --- sessions and requests (customers, peers and owners talk to the agent) ---
    "session-create": Rule(
        "public", tenant=False, writes=frozenset({OWNER, CUSTOMER, PEER, ANONYMOUS}), body={"language": "en"}
    ),
    "preview-session-create": api(reads=frozenset(), writes=OWNERS),
    "session-detail": Rule("session", reads=SESSION_WRITERS),
    "message-create": Rule(
        "session", reads=SESSION_WRITERS, writes=SESSION_WRITERS, body={"text": "Do you repair bikes?"}
    ),  # GET: the session's messages
    "session-cancel": Rule("session", writes=SESSION_WRITERS),
    "session-rating": Rule("session", writes=frozenset({CUSTOMER, PEER}), body={"stars": 4}),
    "request-amend": Rule("session", writes=SESSION_WRITERS, missing=True, body={"summary": "Two bikes"}),
    "request-withdraw": Rule("session", writes=SESSION_WRITERS, missing=True),
    "request-transition": api(reads=frozenset(), writes=OWNERS, missing=True, body={"to": "accepted"}),
    # --- the owner's API ---
    # The owner's Peers page (issue 33 §4): keys, their trust, the card.
    "owner-peers": page(),
    "owner-peers-issue": owner_form(body={"name": "partner"}),
    "owner-peer-trust": owner_form(body={"trust": "ask"}),
    "owner-peer-revoke": owner_form(),
    "owner-peers-listing": owner_form(body={"listed": "1"}),
    # A2A 1.0 (issue 33): the card is public; the JSON-RPC endpoint answers a peer with a key of
    # the agent (JSON-RPC errors, a2a-sdk's way, with HTTP 200) and anyone else 401.
    "a2a-card": Rule("public", tenant=False, reads=EVERYONE),
    "a2a-agents": Rule("public", tenant=False, reads=EVERYONE),  # the platform's list of opted-in agents
    "a2a-jsonrpc": Rule("api", tenant=False, writes=frozenset({PEER}), body={"jsonrpc": "2.0"}),
    "peer-keys": api(writes=OWNERS, body={"name": "partner"}),
    "peer-key": api(reads=frozenset(), writes=OWNERS),  # DELETE revokes the spare key
    "tenant-audit-raw-text": api(writes=OWNERS, body={"allowed": False}),
    # The team of a tenant (issue 32 §2): its owners' members page and API.  A member id or an
    # invitation id names nothing here (the walk must not remove anyone).
    "tenant-members": api(),
    "tenant-member": api(reads=frozenset(), writes=OWNERS, missing=True, body={"role": "auditor"}),
    "tenant-invitations": api(writes=OWNERS, body={"email": "new-partner@example.test", "role": "auditor"}),
    "tenant-invitation": api(reads=frozenset(), writes=OWNERS, missing=True),
    # The platform operator takes on businesses (issue 32 §1): none of these roles is an operator.
    "businesses-api": Rule("api", tenant=False),
    "businesses": Rule("page", tenant=False),
    "business-new": Rule("page", tenant=False, body={"name": "x", "slug": "x"}),
    "team": page(),
    "team-invite": owner_form(body={"email": "new-partner@example.test", "role": "auditor"}),
    "team-member-role": owner_form(missing=True, body={"role": "auditor"}),
    "team-member-remove": owner_form(missing=True),
    "team-invitation-cancel": owner_form(missing=True),
    "changes": api(writes=OWNERS, body={}),
    "change": api(),
    "change-authorize": api(reads=frozenset(), writes=OWNERS, body={"decision": "reject", "expected_version": 1}),
    "change-verify": api(reads=frozenset(), writes=OWNERS, body={"challenge_id": "otp_x", "code": "123456"}),
    "change-decide": api(
        reads=frozenset(), writes=OWNERS, body={"token": "x", "decision": "reject", "expected_version": 1}
    ),
    "change-rebase": api(reads=frozenset(), writes=OWNERS, body={"expected_version": 1}),
    "change-rollback": api(reads=frozenset(), writes=OWNERS, body={"reason": "test"}),
    "reviews": api(reads=frozenset(), writes=OWNERS, body={"date": "2026-01-05"}),
    "review": api(missing=True),
    "knowledge-ingest": api(reads=frozenset(), writes=OWNERS, body={"title": "Hours", "text": "Nine to five."}),
    "knowledge-uploads": api(reads=frozenset(), writes=OWNERS),
    "knowledge-job": api(missing=True),
    "knowledge-search": Rule("public", tenant=False, reads=EVERYONE, query="q=hours"),  # per audience
    "knowledge-entries": api(writes=OWNERS, body={"title": "Hours", "body": "Nine to five."}),
    "knowledge-entry": api(writes=OWNERS, body={"title": "Hours", "body": "Ten to six."}),
    "knowledge-restore": api(reads=frozenset(), writes=OWNERS, body={"version": 1}),
    "knowledge-terms": api(writes=OWNERS, body={"term": "guarantee", "category": "legal"}),
    "knowledge-quarantine": api(reads=frozenset(), writes=OWNERS, body={"source_ref": "none"}),
    "knowledge-unquarantine": api(reads=frozenset(), writes=OWNERS, body={"source_ref": "none"}),
    "observe-feeds": api(writes=OWNERS, body={"url": "http://127.0.0.1:9/feed"}),
    "observe-digest": api(missing=True),
    "agent-metrics": api(),
    "guard-breaker": api(),
    "guard-breaker-close": api(reads=frozenset(), writes=OWNERS),
    # --- the ledger API (`?tenant=`): its readers; a checkpoint is a reader's act (no row) ---
    "ledger-verify": Rule("api", reads=READERS, query_tenant=True),
    "ledger-checkpoints": Rule("api", reads=frozenset(), writes=READERS, query_tenant=True),
    "ledger-events": Rule("api", reads=READERS, query_tenant=True),
}
# Django's admin (`admin/`, staff only): none of these roles is staff, so nothing there answers
# them but its sign-in page.  Its routes are one rule; GET and POST are what it serves.
ADMIN = Rule("admin", tenant=False)
ADMIN_ACCOUNT = Rule("admin", tenant=False, reads=EVERYONE, writes=EVERYONE, loose=True)
ADMIN_ROUTES = {"admin:login": ADMIN_ACCOUNT, "admin:logout": ADMIN_ACCOUNT}
# The rows a write would leave behind: every model of the governance apps, counted.
GOVERNANCE_APPS = ("tenancy", "dialogue", "knowledge", "rsi", "approvals", "ledger", "guard")


# --- the routes --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Route:
    pattern: str
    name: str | None
    converters: dict[str, str]
    methods: tuple[str, ...]  # the unsafe methods it serves (all four when it does not say)


def unsafe_methods(callback: Any) -> tuple[str, ...]:
    """A DRF view says which methods it serves (its handlers); a Django view is tried with all."""
    view_class = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
    if view_class is None or not hasattr(view_class, "http_method_names"):
        return UNSAFE
    return tuple(m for m in UNSAFE if hasattr(view_class, m)) or ("post",)


CONVERTER = re.compile(r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>")


def walk(patterns: list[Any] | None = None, prefix: str = "", namespace: str = "") -> Iterator[Route]:
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(entry, URLResolver):
            inner = namespace + (f"{entry.namespace}:" if entry.namespace else "")
            yield from walk(entry.url_patterns, prefix + str(entry.pattern), inner)
        elif isinstance(entry, URLPattern):
            pattern = prefix + str(entry.pattern)
            name = namespace + entry.name if entry.name else None
            converters = {m["name"]: m["converter"] or "str" for m in CONVERTER.finditer(pattern)}
            yield Route(pattern, name, converters, unsafe_methods(entry.callback))


def rule_of(route: Route) -> Rule | None:
    if route.pattern.startswith("admin/"):
        return ADMIN_ROUTES.get(route.name or "", ADMIN)
    return ROUTES.get(route.name or "")


def test_every_route_is_classified() -> None:
    """A route added later fails here until it has its line in ROUTES (or is the admin's)."""
    routes = list(walk())
    unclassified = [f"{r.pattern} (name {r.name!r})" for r in routes if rule_of(r) is None]
    assert unclassified == [], "classify these routes in tests/test_role_matrix.py ROUTES"
    known = {r.name for r in routes}
    stale = sorted(set(ROUTES) - known)
    assert stale == [], "these names are in ROUTES but no route has them"
    assert set(ALLOWED_NAMES) <= known  # the read-only middleware's allow-list names real routes


# --- the world ---------------------------------------------------------------------------------


@dataclass
class Side:
    """One tenant's objects that the routes' parameters name."""

    world: TenantWorld
    sessions: dict[str, str]  # a session per role that has one of its own here
    customer_cookie: tuple[str, str]
    peer_key: str
    spare_key: str
    change_id: str
    entry_id: int


def build_side(slug: str) -> Side:
    from approvals.services import proposal_create
    from facade.dialogue.runtime.loop import turn_handle
    from facade.dialogue.runtime.providers.offline import OfflineProvider
    from facade.dialogue.services import session_open
    from facade.tenancy.identity import customer_cookie_name, set_customer_cookie
    from facade.tenancy.models import PeerCredential
    from facade.tenancy.rules import Audience
    from facade.tenancy.schemas import Actor
    from facade.tenancy.services import customer_create, peer_key_create
    from knowledge.schemas import SourceIn
    from knowledge.services import entry_propose

    world = build_tenant(slug)
    actor = Actor.platform("tests")
    customer = customer_create(tenant=world.tenant)
    customer_session = session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer)
    turn_handle(session=customer_session, text="Do you repair bikes?", provider=OfflineProvider(world.agent))
    response = HttpResponse()
    set_customer_cookie(response, world.tenant, customer)
    name = customer_cookie_name(world.tenant)
    issued = peer_key_create(agent=world.agent, name="partner", actor=actor)
    spare = peer_key_create(agent=world.agent, name="spare", actor=actor)
    peer = PeerCredential.objects.get(pk=issued.credential_id)
    peer_session = session_open(agent=world.agent, audience=Audience.PEER, peer=peer)
    owner_session = session_open(agent=world.agent, audience=Audience.OWNER, user=world.owner)
    proposal = proposal_create(
        agent=world.agent,
        kind="pricing",
        payload={"currency": "EUR", "items": [{"name": "Repair", "amount": "35.00"}]},
        summary="New repair price",
        origin="owner_dialogue",
        actor=actor,
    )
    version = entry_propose(
        agent=world.agent,
        title="Opening hours",
        body="Open nine to five.",
        source=SourceIn(type="owner_dialogue", ref="chat:1", version="1"),
        actor=actor,
    )
    return Side(
        world=world,
        sessions={
            CUSTOMER: str(customer_session.pk),
            PEER: str(peer_session.pk),
            OWNER: str(owner_session.pk),
            AUDITOR: str(customer_session.pk),  # the console's session page reads a customer's
            ANONYMOUS: str(customer_session.pk),
        },
        customer_cookie=(name, response.cookies[name].value),
        peer_key=issued.key,
        spare_key=spare.credential_id,
        change_id=str(proposal.pk),
        entry_id=version.entry_id,
    )


def fill(route: Route, side: Side, role: str) -> str:
    values = {
        "slug": side.world.agent.slug,
        "tenant_slug": side.world.tenant.slug,
        "session_id": side.sessions[role],
        "key_id": side.spare_key,
        "change_id": side.change_id,
        "entry_id": str(side.entry_id),
        "day": "2026-01-05",
        "seq": "1",
        "uidb64": "MQ",  # a password reset link with a token that is no token
        "token": "no-such-token",
    }

    def value(match: re.Match[str]) -> str:
        name, converter = match["name"], match["converter"] or "str"
        if name in values:
            return values[name]
        if converter == "int":
            return str(MISSING)
        if converter == "uuid":
            return "00000000-0000-0000-0000-000000000000"
        if route.pattern.startswith("admin/"):
            return {"app_label": "tenancy", "object_id": "1", "url": "nothing"}.get(name, "x")
        raise AssertionError(f"route {route.pattern!r}: say in fill() how to fill <{converter}:{name}>")

    path = "/" + CONVERTER.sub(value, route.pattern)
    path = path.replace("^", "").replace("$", "")
    rule = rule_of(route)
    query = [rule.query] if rule is not None and rule.query else []
    if rule is not None and rule.query_tenant:
        query.append(f"tenant={side.world.tenant.slug}")
    return path + ("?" + "&".join(query) if query else "")


# --- the walk ----------------------------------------------------------------------------------


def governance_rows() -> dict[str, int]:
    counts = {
        f"{m._meta.app_label}.{m.__name__}": m._default_manager.count()
        for m in apps.get_models()
        if m._meta.app_label in GOVERNANCE_APPS and m is not LedgerEvent
    }
    counts["ledger events other than audit.*"] = (
        LedgerEvent.objects.alias(_t=CanonicalField("event_type")).exclude(_t__startswith="audit.").count()
    )
    return counts


class Caller:
    """One role's client.  Signed-in roles are signed in again after a route that signs out."""

    def __init__(self, role: str, home: Side) -> None:
        self.role = role
        self.home = home
        self.client = Client()
        self.extra: dict[str, str] = {}
        if role == CUSTOMER:
            name, value = home.customer_cookie
            self.client.cookies[name] = value
        if role == PEER:
            self.extra["HTTP_AUTHORIZATION"] = f"Bearer {home.peer_key}"
        self.sign_in()

    def sign_in(self) -> None:
        if self.role in SIGNED_IN:
            user = self.home.world.owner if self.role == OWNER else self.home.world.auditor
            self.client.force_login(user)

    def send(self, method: str, path: str, rule: Rule) -> Any:
        if method == "get":
            return self.client.get(path, **self.extra)
        if path.startswith("/api/"):
            return self.client.generic(
                method.upper(), path, json.dumps(rule.body), content_type="application/json", **self.extra
            )
        if method == "post":
            return self.client.post(path, rule.body, **self.extra)
        from urllib.parse import urlencode

        return self.client.generic(
            method.upper(), path, urlencode(rule.body), content_type="application/x-www-form-urlencoded", **self.extra
        )


def to_sign_in(response: Any) -> bool:
    location = response.get("Location", "")
    return response.status_code == 302 and ("/accounts/login/" in location or "/admin/login/" in location)


def refused_read_only(response: Any) -> bool:
    if response.status_code != 403:
        return False
    if response.get("Content-Type", "").startswith("application/json"):
        return bool(response.json().get("error") == "read_only")
    return any(context.get("read_only") for context in (response.context or []))


def stranger_answer(rule: Rule, response: Any) -> bool:
    """How the route refuses someone it does not serve at all (the anonymous visitor, a customer
    or peer on an owner's route)."""
    status = response.status_code
    if status in (404, 405):  # "no such thing for you", or a method the route does not serve
        return True
    if rule.style in ("page", "admin"):
        return to_sign_in(response)
    if rule.style == "api":
        return status in (401, 403)
    return rule.style == "public" and not 200 <= status < 300


def judge(role: str, rule: Rule, route: Route, method: str, foreign: bool, response: Any) -> str | None:
    """What is wrong with this answer, or None."""
    status = response.status_code
    ok = 200 <= status < 300
    name = route.name or ""
    if status >= 500:
        return "server error"
    unsafe = method != "get"
    allowed_name = name in ALLOWED_NAMES
    if role == AUDITOR and unsafe and not allowed_name:
        return None if refused_read_only(response) else "an auditor's write was not refused read_only"
    permitted = role in (rule.writes if unsafe else rule.reads)
    if foreign and rule.tenant:
        reach = role in SIGNED_IN or role in rule.reads or role in rule.writes
        if reach:
            return None if status in (404, 405) else "another tenant's object did not answer 404"
        return None if stranger_answer(rule, response) else "a stranger was not refused"
    if permitted:
        if rule.loose or not rule.tenant and unsafe:
            return None
        if rule.missing and status == 404:
            return None
        if unsafe:
            return None  # a permitted write may still be refused for its body; it did not fail
        return None if ok else "a permitted read did not succeed"
    if rule.loose:
        return "an unexpected success" if ok else None
    if ok or (300 <= status < 400 and not to_sign_in(response)):
        return "an unexpected success"
    if role not in SIGNED_IN:
        return None if stranger_answer(rule, response) else "a stranger was not refused"
    return None


@pytest.mark.django_db
def test_every_route_answers_every_role_as_declared(settings: Any) -> None:
    for name, value in rate_limits_lifted("100000/60").items():
        setattr(settings, name, value)
    alpha, bravo = build_side("alpha"), build_side("bravo")
    chains = (alpha.world.tenant.pk, bravo.world.tenant.pk)
    recorded = {(e.chain_id, e.seq): bytes(e.hash) for e in LedgerEvent.objects.filter(chain_id__in=chains)}
    routes = list(walk())
    problems: list[str] = []
    answered = 0
    for role in ROLES:
        caller = Caller(role, alpha)
        before = governance_rows() if role == AUDITOR else {}
        for route in routes:
            rule = rule_of(route)
            assert rule is not None, route  # test_every_route_is_classified says which
            sides = [(alpha, False), (bravo, True)] if rule.tenant else [(alpha, False)]
            methods = ("get", "post") if rule.style == "admin" else ("get", *route.methods)
            for side, foreign in sides:
                path = fill(route, side, role)
                for method in methods:
                    response = caller.send(method, path, rule)
                    answered += 1
                    problem = judge(role, rule, route, method, foreign, response)
                    if problem:
                        problems.append(
                            f"{role:9} {method.upper():6} {path} [{route.name}] → {response.status_code}: {problem}"
                        )
                    if route.name in ("logout", "admin:logout") and method != "get":
                        caller.sign_in()
        if role == AUDITOR:
            after = governance_rows()
            changed = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
            assert changed == {}, f"the auditor's walk changed rows: {changed}"
    assert answered > 2000
    # Whoever called whatever, no route altered or removed a ledger event: every event recorded
    # before the walk is still there with its hash, and both chains verify.
    after = {(e.chain_id, e.seq): bytes(e.hash) for e in LedgerEvent.objects.filter(chain_id__in=chains)}
    assert {key: after.get(key) for key in recorded} == recorded and len(after) > len(recorded)
    for chain_id in chains:
        assert ledger_verify(chain_id=chain_id).ok, chain_id
    assert problems == [], "\n" + "\n".join(problems)


# --- the decision routes of an L3 change, walked by those who may not decide it (issue 28 §2) -----


@pytest.mark.parametrize("decision", ["approve", "reject"])
@pytest.mark.parametrize("who", ["operator", "removed_owner"])
def test_the_l3_decision_routes_refuse_an_operator_and_a_removed_owner(
    world_a: TenantWorld, who: str, decision: str
) -> None:
    """A platform operator (staff, in no tenant) is no owner of a tenant's commitments, and an owner
    removed from the tenant is no longer one: each step of an L3 decision — the token, the e-mailed
    code's check, the decision — refuses them, and the change stays pending with nothing issued."""
    from test_approvals_decide import post, strict_client
    from test_authority_membership import operator
    from test_authority_step_up import PLATFORM, change, second_owner

    from approvals.authority_models import DecisionChallenge
    from facade.tenancy.services import membership_revoke

    proposal = change(world_a)
    if who == "operator":
        user = operator()
    else:
        user = second_owner(world_a)
        membership_revoke(tenant=world_a.tenant, user=user, actor=PLATFORM)
    client = strict_client(user)
    answers = {
        tail: post(client, world_a, proposal.pk, tail, body)
        for tail, body in (
            ("/authorize", {"decision": decision}),
            ("/authorize/verify", {"decision": decision, "code": "123456"}),
            ("/decide", {"decision": decision, "token": "x" * 43, "expected_version": 1}),
        )
    }
    for tail, answer in answers.items():
        assert answer.status_code in (403, 404), (tail, answer.status_code, answer.content)
        assert answer.headers["content-type"].startswith("application/json"), tail
    if who == "operator":
        assert answers["/authorize"].json()["error"] == "not_a_tenant_owner"
    proposal.refresh_from_db()
    assert proposal.status == "pending"
    assert not DecisionChallenge.objects.filter(change_id=proposal.pk).exists()
