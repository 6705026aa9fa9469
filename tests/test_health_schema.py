"""`/healthz` and the OpenAPI schema."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from facade.celery import app as celery_app

pytestmark = pytest.mark.django_db


def test_healthz_reports_every_component_up_on_postgres_and_redis(client: Any, settings: Any) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["checks"]["database"] == {**body["checks"]["database"], "ok": True, "vendor": "postgresql"}
    assert body["checks"]["broker"]["ok"] is True
    assert body["checks"]["channel_layer"]["ok"] is True
    assert body["checks"]["channel_layer"]["backend"] == "RedisChannelLayer"
    # The bound each check was given, and how long each took (issue 16, point 2).
    assert body["timeout_s"] == settings.FACADE_HEALTH_TIMEOUT
    assert set(body) == {"status", "timeout_s", "checks", "model"}
    assert all(isinstance(check["ms"], float) for check in body["checks"].values())


def test_healthz_is_503_when_the_broker_is_down(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Settings are read with the CELERY_ namespace, so that is the key to point elsewhere.
    monkeypatch.setitem(celery_app.conf, "CELERY_BROKER_URL", "redis://127.0.0.1:1/0")
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "down"
    assert body["checks"]["broker"]["ok"] is False
    assert body["checks"]["database"]["ok"] is True


def test_healthz_is_503_when_the_channel_layer_is_down(client: Any, settings: Any) -> None:
    from channels.layers import channel_layers

    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": ["redis://127.0.0.1:1/0"]}}
    }
    channel_layers.backends.clear()
    try:
        response = client.get("/healthz")
    finally:
        channel_layers.backends.clear()
    assert response.status_code == 503
    assert response.json()["checks"]["channel_layer"]["ok"] is False
    assert response.json()["checks"]["broker"]["ok"] is True


def test_the_schema_lists_every_endpoint_with_its_error_codes(client: Any) -> None:
    response = client.get("/api/schema/")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    assert schema["openapi"].startswith("3.")
    paths = schema["paths"]
    expected = {
        "/api/agents/{slug}/sessions": {"post": {"201", "400", "401", "404"}},
        "/api/sessions/{session_id}": {"get": {"200", "404"}},
        "/api/sessions/{session_id}/messages": {"post": {"201", "400", "403", "404", "409"}},
        "/api/agents/{slug}/peer-keys": {"get": {"200", "404"}, "post": {"201", "400", "404"}},
        "/api/agents/{slug}/peer-keys/{key_id}": {"delete": {"204", "404"}},
        "/api/tenants/{tenant_slug}/audit-raw-text": {"get": {"200", "404"}, "put": {"200", "400", "403", "404"}},
        "/api/ledger/verify": {"get": {"200", "404"}},
        "/api/ledger/checkpoints": {"post": {"201", "404", "409"}},
        "/api/ledger/events": {"get": {"200", "404"}},
        "/api/audit/lineage": {"get": {"200", "400", "404"}},
        "/api/audit/events": {"get": {"200", "400", "401", "404"}},
        "/api/audit/export": {"get": {"200", "400", "404"}},
        "/api/agents/{slug}/knowledge/ingest": {"post": {"201", "400", "404", "413", "415", "422"}},
        "/api/agents/{slug}/knowledge/search": {"get": {"200", "400", "404"}},
        "/api/agents/{slug}/knowledge/entries": {"get": {"200", "404"}},
        "/api/agents/{slug}/knowledge/entries/{entry_id}": {"get": {"200", "404"}},
        "/api/agents/{slug}/knowledge/entries/{entry_id}/restore": {"post": {"201", "404", "409"}},
        "/api/agents/{slug}/knowledge/quarantine": {"post": {"200", "400", "404"}},
        "/api/agents/{slug}/knowledge/unquarantine": {"post": {"200", "400", "404"}},
        "/api/audit/replay": {"get": {"200", "400", "401", "404"}},
        "/api/agents/{slug}/guard-breaker": {"get": {"200", "401", "404"}},
        "/api/agents/{slug}/guard-breaker/close": {"post": {"200", "401", "403", "404", "409"}},
    }
    for path, methods in expected.items():
        assert path in paths, path
        for method, codes in methods.items():
            responses = paths[path][method]["responses"]
            assert codes <= set(responses), (path, method, set(responses))
            for code in codes - {"200", "201", "204"}:
                assert "`" in responses[code]["description"], (path, method, code)
    assert "peerKey" in schema["components"]["securitySchemes"]
    assert client.get("/api/docs/").status_code == 200
