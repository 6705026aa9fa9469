"""The Redis cache backend (facade/cache.py) against the real Redis of the test settings."""

from __future__ import annotations

import threading
import uuid

from django.core.cache import cache, caches

from facade.cache import RedisCache


def test_the_cache_is_the_pooled_redis_backend_and_keeps_one_client() -> None:
    backend = caches["default"]
    assert isinstance(backend, RedisCache)
    client = backend._cache.get_client(write=True)
    assert backend._cache.get_client(write=True) is client
    assert backend._cache.get_client() is backend._cache.get_client()


def test_it_behaves_as_djangos_redis_cache_across_threads() -> None:
    key = f"test-cache:{uuid.uuid4()}"
    assert cache.add(key, 0, timeout=30) is True
    assert cache.add(key, 5, timeout=30) is False  # add does not overwrite
    errors: list[BaseException] = []

    def bump() -> None:
        try:
            for _ in range(50):
                cache.incr(key)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert cache.get(key) == 200  # atomic increments from four threads, none lost
    cache.set(key, {"a": [1, 2]}, timeout=30)
    assert cache.get(key) == {"a": [1, 2]}
    cache.delete(key)
    assert cache.get(key) is None


def test_count_in_windows_counts_every_window_in_one_go_and_keeps_the_first_lifetime() -> None:
    backend = caches["default"]
    assert isinstance(backend, RedisCache)
    a, b = f"test-window:{uuid.uuid4()}", f"test-window:{uuid.uuid4()}"
    assert backend.count_in_windows([(a, 30), (b, 300)]) == [1, 1]
    assert backend.count_in_windows([(a, 30), (b, 300)]) == [2, 2]
    assert backend.count_in_windows([(a, 9999)]) == [3]
    client = backend._cache.get_client(write=True)
    # EXPIRE NX: the window's lifetime is set by its first count, never stretched by later ones.
    assert 0 < client.ttl(backend.make_and_validate_key(a)) <= 30
    assert 30 < client.ttl(backend.make_and_validate_key(b)) <= 300
    assert cache.get(a) == 3  # the same key Django's cache API sees
