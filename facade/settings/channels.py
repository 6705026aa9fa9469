"""Channel layer: Redis when REDIS_URL is set, otherwise in-process memory (embedded default)."""

from .env import env_str

REDIS_URL = env_str("REDIS_URL", "")

if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL], "prefix": env_str("FACADE_CHANNEL_PREFIX", "facade")},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# The cache carries short-lived progress (e.g. of an ingest) between worker and web processes:
# Redis when configured, otherwise files under var/ so that separate processes share it.
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "facade.cache.RedisCache", "LOCATION": REDIS_URL}}
else:
    from .base import VAR_DIR

    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }
