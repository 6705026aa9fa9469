"""Who may do what in the auditor console (issue 14): auditors change nothing (the middleware, the
customer page, the chat WebSocket), the admin shows the ledger and the governance records
read-only, customers' own words reach an auditor only when the tenant allows it (and each read is
recorded; owners never see them), and the console's metrics page shows the owner's figures."""

from __future__ import annotations

import io
import re
from html import unescape
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.contrib import admin
from django.core.management import call_command
from django.http import HttpResponse
from django.test import Client

from audit import admin as audit_admin
from conftest import TenantWorld, build_tenant
from facade.asgi import application
from facade.dialogue.models import DialogueSession, Message
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.offline import OfflineProvider
from facade.dialogue.services import session_open
from facade.tenancy.identity import customer_cookie_name, set_customer_cookie
from facade.tenancy.models import Tenant
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from facade.tenancy.services import customer_create, tenant_audit_raw_text_set, user_ensure
from ledger.models import LedgerEvent

CUSTOMER_WORDS = "RAW-CUSTOMER-WORDS please call me on 0170 7654321"


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def events_of(tenant: Tenant, event_type: str) -> list[LedgerEvent]:
    return list(LedgerEvent.objects.filter(chain_id=tenant.pk).of_type(event_type).order_by("seq"))


def customer_conversation(world: TenantWorld) -> tuple[DialogueSession, str]:
    """A customer session with one turn (the customer's words and the agent's reply), and the
    cookie header the server gave that customer's browser."""
    customer = customer_create(tenant=world.tenant)
    session = session_open(agent=world.agent, audience=Audience.CUSTOMER, customer=customer)
    turn_handle(session=session, text=CUSTOMER_WORDS, provider=OfflineProvider(world.agent))
    response = HttpResponse()
    set_customer_cookie(response, world.tenant, customer)
    name = customer_cookie_name(world.tenant)
    return session, f"{name}={response.cookies[name].value}"


# --- auditors change nothing -------------------------------------------------------------------


@pytest.mark.django_db
def test_an_auditor_is_refused_every_write_but_may_still_read_and_sign_out(world_a: TenantWorld) -> None:
    client = signed_in(world_a.auditor)
    before = LedgerEvent.objects.count()
    api = client.post(f"/api/agents/{world_a.agent.slug}/sessions", {}, content_type="application/json")
    assert api.status_code == 403 and api.json()["error"] == "read_only"
    for method in ("put", "patch", "delete"):
        answer = getattr(client, method)(f"/api/agents/{world_a.agent.slug}/peer-keys", content_type="application/json")
        assert (answer.status_code, answer.json()["error"]) == (403, "read_only"), method
    page = client.post(f"/owner/{world_a.agent.slug}/contract/change", {"kind": "greeting"})
    assert page.status_code == 403 and "auditors change nothing" in page.content.decode()
    assert not page["Content-Type"].startswith("application/json")
    assert LedgerEvent.objects.count() == before  # nothing written, not even a customer
    assert client.get("/audit/").status_code == 200
    # The language menu and signing out are a reader's too.
    assert client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/audit/"}).status_code == 302
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/audit/").status_code == 302  # signed out


@pytest.mark.django_db
def test_the_same_write_passes_for_an_owner_so_the_refusal_is_the_auditors(world_a: TenantWorld) -> None:
    """The check above can fail: the middleware lets an owner (even one who also audits another
    tenant) write, and an auditor who owns a tenant is no longer read-only."""
    world_b = build_tenant("bravo")
    owner = signed_in(world_a.owner)
    assert (
        owner.post(f"/api/agents/{world_a.agent.slug}/peer-keys", {"name": "p"}, "application/json").status_code == 201
    )
    from facade.tenancy.services import membership_grant

    membership_grant(tenant=world_b.tenant, user=world_a.owner, role="auditor", actor=Actor.platform("t"))
    assert (
        owner.post(f"/api/agents/{world_a.agent.slug}/peer-keys", {"name": "q"}, "application/json").status_code == 201
    )


@pytest.mark.django_db
def test_a_signed_in_auditor_gets_no_chat_on_the_customer_page(world_a: TenantWorld) -> None:
    html = signed_in(world_a.auditor).get(f"/c/{world_a.agent.slug}/").content.decode()
    assert "you cannot chat here while signed in" in unescape(html)
    assert 'id="send"' not in html and "chat-config" not in html
    visitor = Client().get(f"/c/{world_a.agent.slug}/").content.decode()
    assert 'id="send"' in visitor and "cannot chat here" not in visitor


@pytest.mark.django_db(transaction=True)
def test_the_chat_websocket_lets_an_auditor_act_neither_as_owner_nor_as_customer(
    world_a: TenantWorld, settings: Any
) -> None:
    settings.FACADE_PUBLIC_URL = "http://localhost"
    settings.CSRF_TRUSTED_ORIGINS = []
    owner_session = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    customer_session, customer_cookie = customer_conversation(world_a)
    auditor = signed_in(world_a.auditor)
    auditor_cookie = f"sessionid={auditor.cookies['sessionid'].value}"
    stored = Message.objects.count()

    async def scenario() -> None:
        # The owner's session: not the auditor's, so it is refused like an id that does not exist.
        ws = WebsocketCommunicator(
            application,
            f"/ws/sessions/{owner_session.pk}/",
            headers=[(b"origin", b"http://localhost"), (b"cookie", auditor_cookie.encode())],
        )
        connected, _ = await ws.connect(timeout=10)
        assert connected
        closed = await ws.receive_output(timeout=10)
        assert closed == {"type": "websocket.close", "code": 4404}
        # A customer session whose cookie the auditor's browser also carries: the auditor may
        # see it, but not say anything in it while signed in.
        both = f"{auditor_cookie}; {customer_cookie}"
        ws = WebsocketCommunicator(
            application,
            f"/ws/sessions/{customer_session.pk}/",
            headers=[(b"origin", b"http://localhost"), (b"cookie", both.encode())],
        )
        connected, _ = await ws.connect(timeout=10)
        assert connected
        history = await ws.receive_json_from(timeout=10)
        assert history["type"] == "history"
        for frame in (
            {"type": "message", "text": "hello", "client_message_id": "c1"},
            {"type": "rate", "stars": 5},
            {"type": "cancel"},
        ):
            await ws.send_json_to(frame)
            answer = await ws.receive_json_from(timeout=10)
            assert (answer["type"], answer["code"]) == ("error", "read_only"), frame
        await ws.disconnect()
        # The same customer cookie without the auditor's sign-in is a customer like any other.
        ws = WebsocketCommunicator(
            application,
            f"/ws/sessions/{customer_session.pk}/",
            headers=[(b"origin", b"http://localhost"), (b"cookie", customer_cookie.encode())],
        )
        connected, _ = await ws.connect(timeout=10)
        assert connected and (await ws.receive_json_from(timeout=10))["type"] == "history"
        await ws.send_json_to({"type": "rate", "stars": 4})
        assert (await ws.receive_json_from(timeout=10))["type"] == "rated"
        await ws.disconnect()

    async_to_sync(scenario)()
    assert Message.objects.count() == stored


# --- raw text ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_raw_text_is_off_by_default_and_nobody_reads_it(world_a: TenantWorld) -> None:
    session, _ = customer_conversation(world_a)
    url = f"/audit/{world_a.tenant.slug}/sessions/{session.pk}"
    operator, _ = user_ensure(email="operator@platform.test", password="pw", is_staff=True)
    for user in (world_a.auditor, world_a.owner, operator):
        for query in ("", "?text=1"):
            response = signed_in(user).get(url + query)
            assert response.status_code == 200, user
            html = unescape(response.content.decode())
            assert CUSTOMER_WORDS not in html and "0170" not in html
            assert "Show the conversation" not in html
    page = unescape(signed_in(world_a.auditor).get(url).content.decode())
    # The pointers are there: the messages' ids, roles and sizes, the turn's run and its status.
    message = Message.objects.filter(session=session, role="principal").get()
    assert f"<code>{message.pk}</code>" in page and f"<td>{len(CUSTOMER_WORDS)}</td>" in page
    assert str(message.run.status) in page
    assert events_of(world_a.tenant, "audit.raw_text_read") == []


@pytest.mark.django_db
def test_an_allowed_auditor_reads_the_text_and_the_read_is_recorded(world_a: TenantWorld) -> None:
    session, _ = customer_conversation(world_a)
    out = io.StringIO()
    call_command("tenant_audit_raw_text", "--tenant", "alpha", "--allow", stdout=out)
    assert "allowed" in out.getvalue()
    changed = events_of(world_a.tenant, "tenant.audit_raw_text_changed")
    assert [e.payload for e in changed] == [{"allowed": True}]
    assert changed[0].actor_type == "platform"
    url = f"/audit/{world_a.tenant.slug}/sessions/{session.pk}"
    auditor = signed_in(world_a.auditor)
    page = unescape(auditor.get(url).content.decode())
    assert "Show the conversation's text" in page and CUSTOMER_WORDS not in page
    assert events_of(world_a.tenant, "audit.raw_text_read") == []
    shown = unescape(auditor.get(url + "?text=1").content.decode())
    assert CUSTOMER_WORDS in shown
    reads = events_of(world_a.tenant, "audit.raw_text_read")
    assert [(e.entity_id, e.payload) for e in reads] == [
        (str(world_a.auditor.pk), {"session": str(session.pk), "messages": 2})
    ]
    assert CUSTOMER_WORDS not in reads[0].canonical
    # Owners never see the text, even when their tenant allows its auditors to.
    for query in ("", "?text=1"):
        owner_page = unescape(signed_in(world_a.owner).get(url + query).content.decode())
        assert CUSTOMER_WORDS not in owner_page and "Show the conversation" not in owner_page
    assert len(events_of(world_a.tenant, "audit.raw_text_read")) == 1
    # Denied again: the button and the text are gone.
    call_command("tenant_audit_raw_text", "--tenant", "alpha", "--deny", stdout=io.StringIO())
    assert CUSTOMER_WORDS not in unescape(auditor.get(url + "?text=1").content.decode())
    assert [e.payload for e in events_of(world_a.tenant, "tenant.audit_raw_text_changed")][-1] == {"allowed": False}


@pytest.mark.django_db
def test_a_platform_auditor_reads_an_allowed_tenants_text_an_auditor_of_another_tenant_does_not(
    world_a: TenantWorld,
) -> None:
    from django.contrib.auth.models import Permission

    world_b = build_tenant("bravo")
    session, _ = customer_conversation(world_a)
    tenant_audit_raw_text_set(tenant=world_a.tenant, allowed=True, actor=Actor.platform("t"))
    platform, _ = user_ensure(email="platform-auditor@platform.test", password="pw")
    platform.user_permissions.add(Permission.objects.get(codename="audit_all_tenants"))
    url = f"/audit/{world_a.tenant.slug}/sessions/{session.pk}?text=1"
    assert CUSTOMER_WORDS in unescape(signed_in(platform).get(url).content.decode())
    assert signed_in(world_b.auditor).get(url).status_code == 404
    # A session of another tenant through this tenant's console: 404 as well.
    other, _ = customer_conversation(world_b)
    assert signed_in(world_a.auditor).get(f"/audit/{world_a.tenant.slug}/sessions/{other.pk}").status_code == 404


@pytest.mark.django_db
def test_owners_decide_the_setting_through_the_api(world_a: TenantWorld) -> None:
    world_b = build_tenant("bravo")
    url = f"/api/tenants/{world_a.tenant.slug}/audit-raw-text"
    owner = signed_in(world_a.owner)
    assert owner.get(url).json() == {"tenant": "alpha", "allowed": False}
    answer = owner.put(url, {"allowed": True}, content_type="application/json")
    assert answer.status_code == 200 and answer.json()["allowed"] is True
    assert owner.put(url, {"allowed": True}, content_type="application/json").status_code == 200  # no second event
    [changed] = events_of(world_a.tenant, "tenant.audit_raw_text_changed")
    assert (changed.actor_type, changed.actor_id, changed.payload) == (
        "human",
        f"user:{world_a.owner.pk}",
        {"allowed": True},
    )
    assert owner.put(url, {"allowed": "perhaps"}, content_type="application/json").status_code == 400
    refused = signed_in(world_a.auditor).put(url, {"allowed": False}, content_type="application/json")
    assert (refused.status_code, refused.json()["error"]) == (403, "read_only")
    for outsider in (world_b.owner, world_a.member):
        assert signed_in(outsider).get(url).status_code == 404
        assert signed_in(outsider).put(url, {"allowed": False}, content_type="application/json").status_code == 404
    assert Client().get(url).status_code in (401, 403)
    world_a.tenant.refresh_from_db()
    assert world_a.tenant.auditors_read_raw_text is True


# --- metrics ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_console_shows_the_owners_metrics_read_only(world_a: TenantWorld) -> None:
    from facade.tenancy.services import agent_create

    customer_conversation(world_a)
    second = agent_create(tenant=world_a.tenant, slug="alpha-second", name="Second", actor=Actor.platform("t"))
    url = f"/audit/{world_a.tenant.slug}/metrics"
    response = signed_in(world_a.auditor).get(url)
    assert response.status_code == 200
    html = response.content.decode()
    for metric in ("review_adoption", "over_commitment", "satisfaction"):
        assert f'id="metric-{metric}"' in html  # its chart, or its name where no day has a figure
    assert 'id="metrics-data"' in html and "vendor/chart.js/chart.umd.min.js" in html
    assert "/owner/" not in html and "<form" not in html.split('id="wow-h"')[1]  # no owner links or actions
    assert f"?agent={second.slug}" in html
    chosen = signed_in(world_a.auditor).get(url + f"?agent={second.slug}").content.decode()
    assert "Second" in chosen
    assert signed_in(world_a.auditor).get(url + "?agent=bravo-agent").status_code == 404
    assert signed_in(world_a.owner).get(url).status_code == 200
    world_b = build_tenant("bravo")
    assert signed_in(world_b.auditor).get(url).status_code == 404
    viewed = events_of(world_a.tenant, "audit.viewed")
    assert [e.payload["view"] for e in viewed][-1] == "metrics"
    # The owner's overview still renders the same figures through the shared template part.
    overview = signed_in(world_a.owner).get(f"/owner/{world_a.agent.slug}/").content.decode()
    assert 'id="metric-review_adoption"' in overview
    assert re.search(r'action="/owner/alpha-agent/reviews/run"', overview)


# --- the admin ----------------------------------------------------------------------------------

READ_ONLY_MODELS = [
    model for model, model_admin in admin.site._registry.items() if model_admin.__module__ == audit_admin.__name__
]


@pytest.mark.django_db
def test_the_admin_shows_the_ledger_and_governance_records_and_changes_none(world_a: TenantWorld) -> None:
    customer_conversation(world_a)
    from approvals.services import proposal_create

    proposal_create(
        agent=world_a.agent,
        kind="pricing",
        payload={"currency": "EUR", "items": [{"name": "Repair", "amount": "35.00"}]},
        summary="New price",
        origin="owner_dialogue",
        actor=Actor.platform("t"),
    )
    superuser, _ = user_ensure(email="root@platform.test", password="pw", is_staff=True, is_superuser=True)
    client = signed_in(superuser)
    names = {model.__name__ for model in READ_ONLY_MODELS}
    assert {"LedgerEvent", "Chain", "ChangeProposal", "DecisionToken", "DecisionChallenge", "AgentContract"} <= names
    assert {"PreferenceSignal", "ProposalReplay", "ReviewReport", "EscalationBudget", "KnowledgeEntry"} <= names
    assert {"EntryVersion", "Tenant", "Membership", "AgentProfile"} <= names
    assert not names & {"Message", "PeerCredential", "DialogueSession"}  # customers' words, key hashes
    opened = 0
    for model in READ_ONLY_MODELS:
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        listing = client.get(base)
        assert listing.status_code == 200, base
        assert 'name="action"' not in listing.content.decode(), base  # no actions, delete_selected included
        assert client.get(base + "add/").status_code == 403, base
        row = model._default_manager.order_by("pk").first()
        if row is None:
            continue
        opened += 1
        change = f"{base}{row.pk}/change/"
        page = client.get(change)
        assert page.status_code == 200, change
        assert 'type="submit"' not in page.content.decode().split('id="content-main"')[1].split("</form>")[0], change
        assert client.post(change, {}).status_code == 403, change
        assert client.get(f"{base}{row.pk}/delete/").status_code == 403, change
        assert client.post(f"{base}{row.pk}/delete/", {"post": "yes"}).status_code == 403, change
        assert client.post(base, {"action": "delete_selected", "_selected_action": [row.pk]}).status_code != 302
    assert opened >= 7
    # No secret's stand-in is shown: the hashes of tokens and e-mailed codes are left out.
    for model, field in (("DecisionToken", "token_hash"), ("DecisionChallenge", "code_hash")):
        model_admin = next(a for m, a in admin.site._registry.items() if m.__name__ == model)
        assert field in (model_admin.exclude or ()), model


@pytest.mark.django_db
def test_a_ledger_event_cannot_be_altered_through_the_admin(world_a: TenantWorld) -> None:
    superuser, _ = user_ensure(email="root@platform.test", password="pw", is_staff=True, is_superuser=True)
    client = signed_in(superuser)
    event = LedgerEvent.objects.filter(chain_id=world_a.tenant.pk).order_by("seq").first()
    assert event is not None
    before = (event.canonical, bytes(event.hash), LedgerEvent.objects.count())
    url = f"/admin/ledger/ledgerevent/{event.pk}/change/"
    page = client.get(url)
    assert page.status_code == 200
    html = unescape(page.content.decode())
    assert bytes(event.hash).hex() in html and event.event_type in html
    forged = event.canonical.replace("Alpha", "Forged")
    assert client.post(url, {"canonical": forged, "seq": 99}).status_code == 403
    assert client.post(f"/admin/ledger/ledgerevent/{event.pk}/delete/", {"post": "yes"}).status_code == 403
    listing = client.get("/admin/ledger/ledgerevent/", {"event_type": "tenant.created", "chain_id": world_a.tenant.pk})
    assert listing.status_code == 200 and "tenant.created" in listing.content.decode()
    event = LedgerEvent.objects.get(pk=event.pk)
    assert (event.canonical, bytes(event.hash), LedgerEvent.objects.count()) == before
