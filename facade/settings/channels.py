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
