"""Whether the model server answers, for the owners' banner and `/healthz` (issue 29 §2).

The OpenAI-compatible provider notes the outcome of each of its calls: a failure after its own
retries (5xx, a timeout, a refused request — ProviderError) or an answer.  The state lives in
the cache (Redis in the deployed stack, so every web process and worker sees the same), one small
key: how many calls in a row failed, since when, when last, and the last reason code — never a
URL, a key or any text.  The model server counts as down when at least DOWN_AFTER calls in a row
failed and the last failure is fresher than FRESH_FOR seconds; one answer clears it.

Down is not unhealthy: the run loop answers honestly without the model (a short reply, the
message saved), and the offline model needs no server.  `/healthz` reports the model on a line
of its own that never turns the site's status to "down".  Redis away: nothing is noted, and
the banner is Redis' own."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

# A cache that cannot be reached (as facade.ratelimit.UNREACHABLE, which imports this module's
# reader, facade.dependencies).
UNREACHABLE = (RedisConnectionError, RedisTimeoutError)

KEY = "facade:model-health"
DOWN_AFTER = 2  # failed calls in a row
FRESH_FOR = 600.0  # seconds a failure streak counts after its last failure
KEEP_FOR = 3600  # seconds the cache keeps the state


def note_failure(reason: str) -> None:
    now = time.time()
    with contextlib.suppress(*UNREACHABLE):
        state = cache.get(KEY) or {}
        cache.set(
            KEY,
            {
                "failures": int(state.get("failures", 0)) + 1,
                "since": state.get("since", now),
                "last": now,
                "reason": reason[:32],
            },
            timeout=KEEP_FOR,
        )


def note_answer() -> None:
    with contextlib.suppress(*UNREACHABLE):
        if cache.get(KEY) is not None:
            cache.delete(KEY)


def state() -> dict[str, Any]:
    """`{"provider", "ok", "failures", "since", "reason"}` ("since": epoch seconds or None)."""
    provider = settings.FACADE_LLM_PROVIDER
    noted: dict[str, Any] = {}
    if provider != "offline":
        with contextlib.suppress(*UNREACHABLE):
            noted = cache.get(KEY) or {}
    failures = int(noted.get("failures", 0))
    down = failures >= DOWN_AFTER and time.time() - float(noted.get("last", 0)) < FRESH_FOR
    return {
        "provider": provider,
        "ok": not down,
        "failures": failures,
        "since": noted.get("since") if down else None,
        "reason": noted.get("reason", "") if down else "",
    }


def down() -> bool:
    return not state()["ok"]
