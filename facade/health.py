"""`/healthz`: is the database, the broker and the channel layer reachable?"""

from __future__ import annotations

import time
import uuid
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_safe


def _check_database() -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return {"ok": True, "vendor": connection.vendor}


def _check_broker() -> dict[str, Any]:
    from facade.celery import app

    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
        transport = conn.transport_cls
    return {"ok": True, "transport": str(transport)}


def _check_channel_layer() -> dict[str, Any]:
    layer = get_channel_layer()
    if layer is None:
        raise RuntimeError("no channel layer configured")

    async def roundtrip() -> None:
        channel = await layer.new_channel("healthz.")
        token = uuid.uuid4().hex
        await layer.send(channel, {"type": "healthz.ping", "token": token})
        message = await layer.receive(channel)
        if message.get("token") != token:
            raise RuntimeError("channel layer returned a different message")

    async_to_sync(roundtrip)()
    return {"ok": True, "backend": type(layer).__name__}


CHECKS = {"database": _check_database, "broker": _check_broker, "channel_layer": _check_channel_layer}


@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    results: dict[str, Any] = {}
    for name, check in CHECKS.items():
        started = time.perf_counter()
        try:
            result = check()
        except Exception as exc:  # any failure means "down", reported by type only
            result = {"ok": False, "error": type(exc).__name__}
        result["ms"] = round((time.perf_counter() - started) * 1000, 1)
        results[name] = result
    healthy = all(result["ok"] for result in results.values())
    return JsonResponse({"status": "ok" if healthy else "down", "checks": results}, status=200 if healthy else 503)
