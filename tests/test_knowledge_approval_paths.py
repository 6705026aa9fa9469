"""Deciding its L1 proposal is the only way a knowledge version becomes approved (issue 12):
every URL route and every owner tool is tried as the owner while versions wait, and none
approves one — except `POST …/changes/<id>/decide` with a token from `…/authorize`, which the
walk ends with as the control that shows the check can see an approval.  And `entry_approve` is
called from approvals/services.py only (the WebSocket consumer runs turns, whose tools are walked
here; Celery tasks only ingest, which leaves versions pending)."""

from __future__ import annotations

import ast
import json
import re
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from django.contrib import admin
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from pydantic import ValidationError

from approvals.models import ChangeProposal
from conftest import TenantWorld
from facade.dialogue.models import DialogueSession
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.base import ModelReply, ToolCall
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.runtime.tools import registry
from facade.dialogue.services import session_open
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from knowledge.models import EntryVersion, Kind
from knowledge.schemas import SourceIn
from knowledge.services import entry_propose, knowledge_miss_record
from knowledge.text import topic_key
from ledger.models import LedgerEvent

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
PARAM = re.compile(r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>")


class Waiting:
    """An agent with knowledge that waits (a fact and a lesson, with their proposals), an
    approved entry, an unanswered topic and an owner conversation."""

    def __init__(self, world: TenantWorld) -> None:
        owner = Actor.human(world.owner.pk)
        self.approved = entry_propose(
            agent=world.agent,
            title="Opening hours",
            body="The workshop opens at nine.",
            source=SourceIn(type="upload", ref="hours.md#hours", version="1"),
            actor=owner,
        )
        self.fact = entry_propose(
            agent=world.agent,
            title="Refunds",
            body="Refunds are paid within 14 days.",
            source=SourceIn(type="upload", ref="prices.md#refunds", version="1"),
            actor=owner,
            confidence="0.2",
        )
        self.lesson = entry_propose(
            agent=world.agent,
            title="Warranty",
            body="Say warranty, never guarantee; the law decides.",
            source=SourceIn(type="review", ref="review:1", version="1"),
            actor=Actor.platform("review"),
            kind=Kind.WORDING,
        )
        self.pending = [self.fact, self.lesson]
        assert [v.status for v in self.pending] == ["pending", "pending"]
        self.change = ChangeProposal.objects.get(payload__version_id=self.fact.pk)
        self.session = session_open(agent=world.agent, audience=Audience.OWNER, user=world.owner)
        knowledge_miss_record(agent=world.agent, session_id=self.session.pk, query="refunds")
        self.topic = topic_key("refunds")

    def assert_none_approved(self, what: str) -> None:
        statuses = dict(EntryVersion.objects.filter(pk__in=[v.pk for v in self.pending]).values_list("pk", "status"))
        assert "approved" not in statuses.values(), f"{what} approved a waiting version: {statuses}"
        assert not LedgerEvent.objects.of_type("knowledge.version_approved").exists(), f"{what} approved knowledge"


def routes() -> list[str]:
    """Every route of the project, as its pattern text (admin's own routes aside: see below)."""
    found: list[str] = []

    def walk(patterns: list[Any], prefix: str) -> None:
        for pattern in patterns:
            text = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                if text == "admin/":
                    continue
                walk(pattern.url_patterns, text)
            elif isinstance(pattern, URLPattern):
                found.append(text)

    walk(get_resolver().url_patterns, "")
    return found


def body(world: TenantWorld, waiting: Waiting) -> dict[str, Any]:
    """Every field a route could read as "approve this version", and the rest of what the
    mutating routes take, pointing at the waiting fact."""
    fact = waiting.fact
    return {
        "decision": "approve",
        "status": "approved",
        "approve": True,
        "approved": True,
        "action": "approve",
        "version": fact.number,
        "version_id": fact.pk,
        "entry": fact.entry_id,
        "entry_id": fact.entry_id,
        "expected_version": 1,
        "token": "t" * 43,
        "challenge_id": "chl_x",
        "code": "123456",
        "topic": waiting.topic,
        "title": fact.title,
        "body": fact.body,
        "text": fact.body,
        "questions": "refunds",
        "source": {"type": "upload", "ref": fact.source_ref, "version": fact.source_version},
        "source_ref": fact.source_ref,
        "kind": "knowledge_draft",
        "payload": {"entry_id": fact.entry_id, "version_id": fact.pk, "title": fact.title, "text": fact.body},
        "summary": "approve the refunds entry",
        "state": "done",
        "to": "done",
        "reply": "Approved.",
        "name": "partner",
        "term": "refund",
        "category": "finance",
        "rating": 5,
        "language": "en",
        "next": "/",
    }


def url_of(route: str, values: dict[str, Any]) -> str:
    def fill(match: re.Match[str]) -> str:
        name = match["name"]
        assert name in values, f"route {route!r} takes <{name}>: give this test a value for it"
        return str(values[name])

    return "/" + PARAM.sub(fill, route)


def test_no_route_approves_a_waiting_version(world_a: TenantWorld) -> None:
    waiting = Waiting(world_a)
    values = {
        "slug": world_a.agent.slug,
        "session_id": waiting.session.pk,
        "entry_id": waiting.fact.entry_id,
        "change_id": waiting.change.pk,
        "request_id": 1,
        "job_id": 1,
        "key_id": uuid.uuid4(),
        "feed_id": 1,
        "item_id": 1,
        "day": "2026-12-01",
        "tenant_slug": world_a.tenant.slug,  # the auditor console (read-only)
        "seq": 1,
        "report_id": uuid.uuid4(),
        "member_id": 1,
        "invitation_id": 1,
        "uidb64": "MQ",
        "token": "x-x",
    }
    data = body(world_a, waiting)
    form = {k: json.dumps(v) if isinstance(v, dict) else str(v) for k, v in data.items()}
    # The knowledge API reads `kind` as a knowledge kind: the fact's text again, as material.
    material = {**data, "kind": "fact", "source": {**data["source"], "version": "2"}}
    client = Client(raise_request_exception=False)
    tried = 0
    all_routes = routes()
    assert any(r.endswith("/changes/<str:change_id>/decide") for r in all_routes)
    for route in all_routes:
        url = url_of(route, values)
        for method in METHODS:
            for encoded in ("json", "material", "form"):
                sid = transaction.savepoint()
                client.force_login(world_a.owner)
                if encoded != "form":
                    sent = data if encoded == "json" else material
                    client.generic(method, url, json.dumps(sent), content_type="application/json")
                elif method in ("GET", "HEAD"):
                    client.generic(method, url + "?" + urlencode(form))
                else:
                    client.generic(method, url, urlencode(form), content_type="application/x-www-form-urlencoded")
                waiting.assert_none_approved(f"{method} {url} ({encoded})")
                transaction.savepoint_rollback(sid)
                tried += 1
    assert tried == len(all_routes) * len(METHODS) * 3

    # Admin: the knowledge and proposal models it shows are read-only, even to a superuser, so
    # its generic views cannot write them.
    from django.contrib.auth import get_user_model
    from django.test import RequestFactory

    request = RequestFactory().get("/admin/")
    request.user = get_user_model()(is_staff=True, is_superuser=True, is_active=True)
    shown = [(m, a) for m, a in admin.site._registry.items() if m._meta.app_label in ("knowledge", "approvals")]
    assert shown  # the governance records are in the admin (audit/admin.py), to be read
    for _model, model_admin in shown:
        assert not model_admin.has_add_permission(request)
        assert not model_admin.has_change_permission(request) and not model_admin.has_delete_permission(request)

    # The control: the decision does approve, and the check above would have seen it.
    client.force_login(world_a.owner)
    base = f"/api/agents/{world_a.agent.slug}/changes/{waiting.change.pk}"
    token = client.post(f"{base}/authorize", {"decision": "approve"}, content_type="application/json").json()["token"]
    decided = client.post(
        f"{base}/decide",
        {"token": token, "decision": "approve", "expected_version": 1},
        content_type="application/json",
    )
    assert decided.status_code == 200, decided.content
    with pytest.raises(AssertionError, match="approved a waiting version"):
        waiting.assert_none_approved("the decision")


def say(text: str) -> ModelReply:
    return ModelReply(text=text, prompt_tokens=10, completion_tokens=5)


def test_no_owner_tool_approves_a_waiting_version(world_a: TenantWorld) -> None:
    waiting = Waiting(world_a)
    fact, change = waiting.fact, waiting.change
    # What the tools are called with: each tool gets every candidate its arguments accept.
    candidates: list[dict[str, Any]] = [
        {},
        {"query": "refunds"},
        {"title": fact.title, "text": fact.body},
        {"kind": "wording", "title": waiting.lesson.title, "text": waiting.lesson.body},
        {
            "kind": "knowledge_draft",
            "payload": {"entry_id": fact.entry_id, "version_id": fact.pk, "title": fact.title, "text": fact.body},
            "summary": "approve the refunds entry",
            "level": 1,
            "requires": "auto",
            "confirm": True,
        },
        {"proposal_id": change.pk, "decision": "approve", "token": "t" * 43, "confirm": True, "expected_version": 1},
        {"proposal_id": change.pk, "decision": "approve", "code": "123456", "confirm": "yes"},
    ]
    shown = f"Shall I add this? {fact.title}: {fact.body}"
    session: DialogueSession = waiting.session
    turn_handle(session=session, text="what waits?", provider=ScriptedProvider.of(say(shown)))
    tools = registry.for_audience(Audience.OWNER)
    assert {"decide_change", "propose_change", "add_confirmed_knowledge", "remember_lesson"} <= {t.name for t in tools}
    for tool in tools:
        accepted = []
        for args in candidates:
            try:
                tool.args.model_validate(args)
            except ValidationError:
                continue
            accepted.append(args)
        assert accepted, f"no candidate fits {tool.name}: give this test its arguments"
        for args in accepted:
            # The owner's own words approve nothing either: a yes, and the typed decision.
            for text in ("yes", f"approve {change.pk}"):
                provider = ScriptedProvider.of(
                    ModelReply(tool_calls=[ToolCall(id=f"c-{tool.name}", name=tool.name, arguments=json.dumps(args))]),
                    say(shown),
                )
                turn_handle(session=session, text=text, provider=provider)
                answers = [json.loads(m["content"]) for m in provider.calls[-1].messages if m["role"] == "tool"]
                assert answers and answers[-1]["outcome"] != "refused", (tool.name, answers)
                waiting.assert_none_approved(f"{tool.name}({args}) after {text!r}")
    change.refresh_from_db()
    assert (change.status, change.authorization_id) == ("pending", "")


def test_entry_approve_is_called_by_the_decision_only() -> None:
    """Outside the tests, only knowledge/services.py (where it is defined) and
    approvals/services.py (the decision) name `entry_approve`."""
    users = []
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in {".venv", "tests", "node_modules"} or "site-packages" in relative.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        names |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        names |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
        if "entry_approve" in names:
            users.append(str(relative))
    assert users == ["approvals/services.py"], users
    knowledge_services = (ROOT / "knowledge" / "services.py").read_text(encoding="utf-8")
    assert knowledge_services.count("entry_approve") == 1  # its definition: nothing in knowledge calls it
