"""Django's Redis cache with one client object per connection pool.

Django's `RedisCacheClient.get_client` builds a new `redis.Redis` for every cache operation,
and each one copies redis-py's table of response callbacks: on the chat's hot path (rate limits,
the cancel flag checked before every model and tool call) that construction cost more CPU than
the round trip.  A `redis.Redis` is safe to share between threads (it takes a connection from its
pool per command), so this client keeps one per pool.  Behaviour is otherwise Django's, plus
`count_in_windows` for the chat's rate limits (one round trip for all of a message's windows).

The pools and clients are the process's, not the cache object's: Django makes a cache object per
thread, and under ASGI every request runs in a thread of its own, so a pool per object meant a
new Redis connection (a TCP handshake and a HELLO) for every request that counted a rate limit —
a fifth of the server's time under bench/abuse.py.  redis-py's pools are thread-safe and start
afresh in a forked child.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from django.core.cache.backends import redis as django_redis

_SHARED_LOCK = threading.Lock()


@functools.lru_cache(maxsize=8)
def _shared(key: tuple[str, ...]) -> tuple[dict[int, Any], dict[int, Any]]:
    """The process's pools and clients for one cache configuration (servers and options)."""
    return {}, {}


class RedisCacheClient(django_redis.RedisCacheClient):
    def __init__(self, servers: Any, **options: Any) -> None:
        super().__init__(servers, **options)
        key = (*map(str, servers), repr(sorted(options.items())))
        with _SHARED_LOCK:
            pools, clients = _shared(key)
        self._pools = pools
        self._clients: dict[int, Any] = clients

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        # Django's own (private) helpers choose the pool, so reads still spread over replicas;
        # django-stubs leaves private members out, hence the ignores.
        index = self._get_connection_pool_index(write)  # type: ignore[attr-defined]
        client = self._clients.get(index)
        if client is None:
            with _SHARED_LOCK:
                client = self._clients.get(index)
                if client is None:
                    pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
                    client = self._clients[index] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class RedisCache(django_redis.RedisCache):
    def __init__(self, server: Any, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = RedisCacheClient

    def count_in_windows(self, windows: list[tuple[str, int]]) -> list[int]:
        """Add one to each (key, seconds) counter, giving a new counter that lifetime, in one
        round trip: INCR and EXPIRE NX per key, pipelined.  Returns the new counts."""
        client = self._cache.get_client(write=True)  # type: ignore[attr-defined]
        with client.pipeline(transaction=False) as pipe:
            for key, seconds in windows:
                name = self.make_and_validate_key(key)
                pipe.incr(name)
                pipe.expire(name, seconds, nx=True)
            replies = pipe.execute()
        return [int(count) for count in replies[::2]]
