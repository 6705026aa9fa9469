"""Issue 10, points 4 and 6–8: bounded request bodies, limits on opening sessions and searching,
refusals that write nothing but a counter, and the client address read from a trusted proxy."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from django.core.asgi import get_asgi_application
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile

from conftest import TenantWorld
from facade.api import BoundedJSONParser, json_too_deep
from facade.dialogue.models import DialogueSession, Message, TrustChange
from facade.dialogue.rules import TRUST_MAX
from facade.dialogue.services import trust_adjust
from facade.ratelimit import client_ip, scope_client_ip
from facade.tenancy.models import Customer, PeerCredential
from facade.tenancy.schemas import Actor
from facade.tenancy.services import customer_create, peer_key_create
from ledger.models import LedgerEvent

ACTOR = Actor.platform("tests")


@pytest.fixture(autouse=True)
def _fresh_windows(settings: Any) -> None:
    cache.clear()
    settings.FACADE_RATE_IP = "1000/3600"
    settings.FACADE_RATE_CUSTOMER = "1000/3600"


def sessions_url(world: TenantWorld) -> str:
    return f"/api/agents/{world.agent.slug}/sessions"


def search_url(world: TenantWorld) -> str:
    return f"/api/agents/{world.agent.slug}/knowledge/search"


def written() -> tuple[int, int, int, int, int]:
    return (
        Customer.objects.count(),
        DialogueSession.objects.count(),
        Message.objects.count(),
        TrustChange.objects.count(),
        LedgerEvent.objects.count(),
    )


def assert_refused(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.content[:200])
    assert response["Content-Type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    assert body["error"] == code and body["detail"]
    return body


def open_session(client: Any, world: TenantWorld, **extra: Any) -> Any:
    return client.post(sessions_url(world), {}, format="json", **extra)


# --- 4. bodies are bounded before they are parsed --------------------------------------------


@pytest.fixture
def no_parsing(monkeypatch: Any) -> list[int]:
    """Counts the JSON parser's calls: a refused body must never reach it."""
    calls: list[int] = []
    original = BoundedJSONParser.parse

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(BoundedJSONParser, "parse", counted)
    return calls


@pytest.mark.django_db
def test_a_10_mb_json_body_to_open_a_session_is_refused_unparsed(
    api: Any, world_a: TenantWorld, no_parsing: list[int]
) -> None:
    before = written()
    body = json.dumps({"padding": "x" * (10 * 1024 * 1024)})
    response = api.post(sessions_url(world_a), data=body, content_type="application/json")
    assert_refused(response, 413, "body_too_large")
    assert no_parsing == [] and written() == before


@pytest.mark.django_db
def test_a_large_form_body_is_refused_too(api: Any, world_a: TenantWorld) -> None:
    before = written()
    response = api.post(
        sessions_url(world_a), data="a=" + "b" * 100_000, content_type="application/x-www-form-urlencoded"
    )
    assert_refused(response, 413, "body_too_large")
    assert written() == before


@pytest.mark.django_db
def test_the_message_limit_takes_the_longest_message_escaped_and_no_more(
    api: Any, world_a: TenantWorld, settings: Any, no_parsing: list[int]
) -> None:
    settings.FACADE_MESSAGE_MAX_CHARS = 4000
    sid = open_session(api, world_a).json()["id"]
    url = f"/api/sessions/{sid}/messages"
    longest = json.dumps({"text": "好" * 4000, "client_message_id": "c-1"})  # ensure_ascii: 6 bytes each
    assert api.post(url, data=longest, content_type="application/json").status_code == 201
    padded = json.dumps({"text": "hello", "client_message_id": "c-2", "x": " " * 30_000})
    parsed = len(no_parsing)
    assert_refused(api.post(url, data=padded, content_type="application/json"), 413, "body_too_large")
    assert len(no_parsing) == parsed and not Message.objects.filter(client_message_id="c-2").exists()


@pytest.mark.django_db
def test_ingest_takes_more_and_uploads_keep_their_own_limit(api: Any, world_a: TenantWorld) -> None:
    api.force_login(world_a.owner)
    url = f"/api/agents/{world_a.agent.slug}/knowledge/ingest"
    text = "\n\n".join(f"Paragraph {n}: we open at nine." for n in range(1200))  # 40 KiB
    material = {"title": "Hours", "text": text, "source": {"type": "upload", "ref": "hours"}}
    accepted = api.post(url, material, format="json")
    assert accepted.status_code == 201, accepted.content[:300]
    # A 1.2 MB file gets past the body cap to the upload view, which judges it (here: not a type
    # it reads); the synchronous ingest refuses it for its own size limit, naming the upload endpoint.
    upload = SimpleUploadedFile("big.bin", b"\x00\x01" * 600_000, content_type="application/octet-stream")
    uploads = f"/api/agents/{world_a.agent.slug}/knowledge/uploads"
    assert_refused(api.post(uploads, {"file": upload}, format="multipart"), 415, "unsupported_type")
    upload.seek(0)
    assert_refused(api.post(url, {"file": upload}, format="multipart"), 413, "too_large")
    oversized = json.dumps({**material, "text": "x" * (7 * 1024 * 1024)})
    assert_refused(api.post(url, data=oversized, content_type="application/json"), 413, "body_too_large")


@pytest.mark.parametrize(
    "raw, deep",
    [
        (b"[" * 32 + b"]" * 32, False),
        (b"[" * 33 + b"]" * 33, True),
        (b'{"a": "' + b"[" * 100 + b'"}', False),  # brackets inside a string do not nest
        (b'{"a": "\\"[[[[", "b": ' + b"[" * 40 + b"]" * 40 + b"}", True),  # nor does an escaped quote end it
        (b'{"a": [1, {"b": [2, 3]}], "c": {}}', False),
    ],
)
def test_json_depth_is_counted_outside_strings(raw: bytes, deep: bool) -> None:
    assert json_too_deep(raw) is deep


@pytest.mark.django_db
def test_json_nested_deeper_than_the_bound_is_malformed_before_it_is_parsed(api: Any, world_a: TenantWorld) -> None:
    before = written()
    body = '{"a":' * 40 + "1" + "}" * 40  # 200 bytes, well under the limit, and 40 levels deep
    response = api.post(sessions_url(world_a), data=body, content_type="application/json")
    assert "nested" in assert_refused(response, 400, "malformed_body")["detail"]
    assert written() == before


def asgi_post(path: str, chunks: list[bytes], headers: list[tuple[bytes, bytes]]) -> tuple[int, dict[str, Any]]:
    """POST through Django's ASGI handler as daphne hands it a chunked body: no Content-Length,
    the body in several messages."""
    application = get_asgi_application()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"localhost"), (b"transfer-encoding", b"chunked"), *headers],
        "client": ("203.0.113.9", 40000),
        "server": ("localhost", 80),
    }
    incoming = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if incoming:
            return incoming.pop(0)
        await asyncio.sleep(3600)  # nothing more: the client waits for the answer
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(application(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, json.loads(body)


def test_a_chunked_body_over_the_limit_is_refused() -> None:
    # No database: the refusal comes before anything reads one.
    chunk = b'{"padding": "' + b"x" * 60_000
    status, body = asgi_post(
        "/api/agents/anything/sessions", [chunk] * 20 + [b'"}'], [(b"content-type", b"application/json")]
    )
    assert (status, body["error"]) == (413, "body_too_large")


def test_a_chunked_body_under_the_limit_is_read_like_any_other() -> None:
    # DRF alone takes a body without a Content-Length for no body at all: this one would open a
    # session for whatever audience it names.  Read, it is refused before any database read.
    status, body = asgi_post(
        "/api/agents/anything/sessions",
        [b'{"meta": ', b'{"audience": "owner"}}'],
        [(b"content-type", b"application/json")],
    )
    assert (status, body["error"]) == (400, "audience_is_server_derived")


# --- 6. opening sessions and searching are limited --------------------------------------------


@pytest.mark.django_db
def test_session_opens_are_limited_per_address_and_a_refusal_creates_nothing(
    make_api: Any, world_a: TenantWorld, settings: Any
) -> None:
    settings.FACADE_RATE_SESSION_IP = "3/3600"  # an hour: the window never turns over mid-test
    assert [open_session(make_api(), world_a).status_code for _ in range(3)] == [201, 201, 201]
    before = written()
    refused = open_session(make_api(), world_a)  # a new anonymous client: no cookie, same address
    body = assert_refused(refused, 429, "rate_limited")
    assert 1 <= int(refused["Retry-After"]) <= 3600 and body["retry_after"] == int(refused["Retry-After"])
    assert written() == before  # no customer, no session, no event
    assert not refused.cookies


@pytest.mark.django_db
def test_session_opens_are_limited_per_customer(make_api: Any, world_a: TenantWorld, settings: Any) -> None:
    settings.FACADE_RATE_SESSION = "2/3600"
    customer = make_api()
    # The first open makes the customer (and its cookie): that one is counted by its address only.
    assert [open_session(customer, world_a).status_code for _ in range(3)] == [201, 201, 201]
    assert_refused(open_session(customer, world_a), 429, "rate_limited")
    assert open_session(make_api(), world_a).status_code == 201  # another customer at the same address
    assert Customer.objects.count() == 2


@pytest.mark.django_db
def test_peers_are_counted_by_key_and_owners_not_at_all(make_api: Any, world_a: TenantWorld, settings: Any) -> None:
    settings.FACADE_RATE_SESSION = "1/3600"
    settings.FACADE_RATE_SESSION_IP = "1/3600"
    owner = make_api()
    owner.force_login(world_a.owner)
    assert [open_session(owner, world_a).status_code for _ in range(3)] == [201, 201, 201]
    keys = [peer_key_create(agent=world_a.agent, name=f"p{n}", actor=ACTOR) for n in range(2)]
    first, second = (make_api() for _ in keys)
    first.credentials(HTTP_AUTHORIZATION=f"Bearer {keys[0].key}")
    second.credentials(HTTP_AUTHORIZATION=f"Bearer {keys[1].key}")
    assert open_session(first, world_a).status_code == 201
    assert_refused(open_session(first, world_a), 429, "rate_limited")
    assert open_session(second, world_a).status_code == 201  # its own key, the same address
    assert PeerCredential.objects.count() == 2


@pytest.mark.django_db
def test_searches_are_limited_per_address_and_per_customer(make_api: Any, world_a: TenantWorld, settings: Any) -> None:
    settings.FACADE_RATE_SEARCH_IP = "3/3600"
    settings.FACADE_RATE_SEARCH = "2/3600"
    customer = make_api()
    open_session(customer, world_a)  # the cookie that names the customer
    assert [customer.get(search_url(world_a), {"q": "hours"}).status_code for _ in range(2)] == [200, 200]
    refused = customer.get(search_url(world_a), {"q": "hours"})
    assert_refused(refused, 429, "rate_limited")
    assert refused["Retry-After"]
    stranger = make_api()
    assert stranger.get(search_url(world_a), {"q": "hours"}).status_code == 429  # the address's 3 are spent
    owner = make_api()
    owner.force_login(world_a.owner)
    assert owner.get(search_url(world_a), {"q": "hours"}).status_code == 200


# --- 7. a refusal writes nothing but a counter; no change is never an event ------------------


@pytest.mark.django_db
def test_a_refused_message_writes_no_trust_change(api: Any, world_a: TenantWorld, settings: Any) -> None:
    settings.FACADE_RATE_CUSTOMER = "1/3600"
    sid = open_session(api, world_a).json()["id"]
    url = f"/api/sessions/{sid}/messages"
    assert api.post(url, {"text": "hello"}, format="json").status_code == 201
    before = written()
    for n in range(5):
        assert_refused(api.post(url, {"text": f"again {n}"}, format="json"), 429, "rate_limited")
    assert written() == before
    assert not LedgerEvent.objects.of_type("customer.trust_changed").exists()
    assert Customer.objects.get().trust == 50


@pytest.mark.django_db
@pytest.mark.parametrize("score, reason", [(TRUST_MAX, "request_completed")])
def test_a_trust_score_that_does_not_move_writes_nothing(world_a: TenantWorld, score: int, reason: str) -> None:
    customer = customer_create(tenant=world_a.tenant)
    Customer.objects.filter(pk=customer.pk).update(trust=score)
    before = written()
    assert trust_adjust(customer_id=customer.pk, reason=reason) == score
    assert written() == before


@pytest.mark.django_db
def test_a_trust_score_that_moves_is_recorded_once(world_a: TenantWorld) -> None:
    customer = customer_create(tenant=world_a.tenant)
    assert trust_adjust(customer_id=customer.pk, reason="request_completed") == 55
    [change] = TrustChange.objects.all()
    [event] = LedgerEvent.objects.of_type("customer.trust_changed")
    assert (change.delta, event.payload["delta"], event.payload["score"]) == (5, 5, 55)


# --- 8. the client address, from a trusted proxy only ------------------------------------------


@pytest.mark.parametrize(
    "trusted, peer, forwarded, expected",
    [
        ([], "198.51.100.7", ["203.0.113.1"], "198.51.100.7"),  # no proxy trusted: the header is the client's word
        (["10.0.0.2"], "198.51.100.7", ["203.0.113.1"], "198.51.100.7"),  # not from the proxy
        (["10.0.0.2"], "10.0.0.2", ["203.0.113.1"], "203.0.113.1"),
        (["10.0.0.2"], "10.0.0.2", [], "10.0.0.2"),  # the proxy's own request
        (["10.0.0.2"], "10.0.0.2", ["6.6.6.6, 203.0.113.1"], "203.0.113.1"),  # the client's own entry is not read
        (["10.0.0.0/8"], "10.0.0.2", ["203.0.113.1, 10.1.1.1"], "203.0.113.1"),  # two proxies in a row
        (["10.0.0.0/8"], "10.0.0.2", ["203.0.113.1", "10.1.1.1"], "203.0.113.1"),  # the header twice
        (["10.0.0.0/8"], "10.0.0.2", ["10.3.3.3, 10.1.1.1"], "10.3.3.3"),  # only proxies: the first of them
        (["10.0.0.2"], "10.0.0.2", ["203.0.113.1, junk"], "10.0.0.2"),  # nothing left of garbage is believed
        (["::1"], "::1", ["2001:db8::5"], "2001:db8::5"),
        (["127.0.0.1"], "::ffff:127.0.0.1", ["203.0.113.1"], "203.0.113.1"),  # IPv4 mapped into IPv6
        (["10.0.0.2"], "", ["203.0.113.1"], "unknown"),
    ],
)
def test_client_ip(trusted: list[str], peer: str, forwarded: list[str], expected: str, settings: Any) -> None:
    settings.FACADE_TRUSTED_PROXIES = trusted
    assert client_ip(peer, forwarded) == expected


def test_the_websocket_reads_its_address_the_same_way(settings: Any) -> None:
    settings.FACADE_TRUSTED_PROXIES = ["10.0.0.2"]
    scope = {"client": ("10.0.0.2", 5000), "headers": [(b"x-forwarded-for", b"203.0.113.4")]}
    assert scope_client_ip(scope) == "203.0.113.4"
    assert scope_client_ip({"client": ("198.51.100.1", 5000), "headers": scope["headers"]}) == "198.51.100.1"


@pytest.mark.django_db
def test_customers_behind_a_trusted_proxy_each_have_their_own_window(
    make_api: Any, world_a: TenantWorld, settings: Any
) -> None:
    settings.FACADE_TRUSTED_PROXIES = ["127.0.0.1"]  # the test client's address
    settings.FACADE_RATE_IP = "1/3600"
    codes = []
    for n in (1, 2):
        client = make_api(HTTP_X_FORWARDED_FOR=f"203.0.113.{n}")
        sid = open_session(client, world_a).json()["id"]
        codes.append(client.post(f"/api/sessions/{sid}/messages", {"text": "hi"}, format="json").status_code)
    assert codes == [201, 201]


@pytest.mark.django_db
def test_an_untrusted_forwarded_for_does_not_escape_the_address_limit(
    make_api: Any, world_a: TenantWorld, settings: Any
) -> None:
    settings.FACADE_TRUSTED_PROXIES = []
    settings.FACADE_RATE_IP = "1/3600"
    codes = []
    for n in (1, 2):
        client = make_api(HTTP_X_FORWARDED_FOR=f"203.0.113.{n}")
        sid = open_session(client, world_a).json()["id"]
        codes.append(client.post(f"/api/sessions/{sid}/messages", {"text": "hi"}, format="json").status_code)
    assert codes == [201, 429]
    assert not TrustChange.objects.exists()  # the second customer did not spend the limit: no trust lost
