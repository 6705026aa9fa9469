"""The agent runtime: which model answers, and the budgets and limits every turn runs under."""

import ipaddress

from django.core.exceptions import ImproperlyConfigured

from .env import env_int, env_list, env_str

# offline (default, deterministic, no model needed) or openai (any OpenAI-compatible server).
FACADE_LLM_PROVIDER = env_str("FACADE_LLM_PROVIDER", "offline")
FACADE_LLM_BASE_URL = env_str("FACADE_LLM_BASE_URL", "")
FACADE_LLM_MODEL = env_str("FACADE_LLM_MODEL", "")
FACADE_LLM_API_KEY = env_str("FACADE_LLM_API_KEY", "")
FACADE_LLM_TIMEOUT = env_int("FACADE_LLM_TIMEOUT", 30)  # seconds per HTTP attempt
FACADE_LLM_MAX_RETRIES = env_int("FACADE_LLM_MAX_RETRIES", 2)  # extra attempts on 429/5xx/timeouts
# At most this many completion tokens per model call (0: the run loop's own bound, 800).  A small
# local model on a CPU writes 20-70 tokens a second: a low cap bounds a text answer (issue 29;
# llama-cpp-python's chatml-function-calling ignores it for a tool call's arguments, README).
FACADE_LLM_MAX_TOKENS = env_int("FACADE_LLM_MAX_TOKENS", 0)

# Budgets: model tokens per turn, model calls per tenant per day (UTC).
FACADE_TURN_TOKEN_LIMIT = env_int("FACADE_TURN_TOKEN_LIMIT", 12000)
FACADE_DAILY_MODEL_CALLS = env_int("FACADE_DAILY_MODEL_CALLS", 5000)

# The guard breaker: more than this many blocked customer and peer replies of one agent in a
# sliding hour switch its customer face to strict composition until an owner closes it (0: off).
FACADE_GUARD_BREAKER_THRESHOLD = env_int("FACADE_GUARD_BREAKER_THRESHOLD", 10)

# Threads per web process that run chat turns (a turn waits on the model in one of them).
FACADE_TURN_THREADS = env_int("FACADE_TURN_THREADS", 32)

# A run left without a reply this long after its latest attempt began is stranded (its process
# died, or lost the database and could not say so): a re-send of its message runs it again, and
# otherwise the sweep (every minute) answers it honestly.  An attempt that broke off and said so
# is run again by a re-send at once.  Longer than a turn may take: max_steps model calls of up to
# FACADE_LLM_TIMEOUT seconds each.
FACADE_RUN_STUCK_SECONDS = env_int("FACADE_RUN_STUCK_SECONDS", 300)

FACADE_SESSION_IDLE_MINUTES = env_int("FACADE_SESSION_IDLE_MINUTES", 30)
FACADE_MESSAGE_MAX_CHARS = env_int("FACADE_MESSAGE_MAX_CHARS", 4000)

# Message rate limits, as "count per seconds" windows kept in the cache (Redis in production).
FACADE_RATE_CUSTOMER = env_str("FACADE_RATE_CUSTOMER", "20/60")
FACADE_RATE_IP = env_str("FACADE_RATE_IP", "60/60")
FACADE_RATE_PEER = env_str("FACADE_RATE_PEER", "30/60")

# Session opens and knowledge searches: per caller (a customer by its cookie, a peer by its key)
# and per client address.  Owners signed in to their own agent are not counted.
FACADE_RATE_SESSION = env_str("FACADE_RATE_SESSION", "10/60")
FACADE_RATE_SESSION_IP = env_str("FACADE_RATE_SESSION_IP", "30/60")
FACADE_RATE_SEARCH = env_str("FACADE_RATE_SEARCH", "30/60")
FACADE_RATE_SEARCH_IP = env_str("FACADE_RATE_SEARCH_IP", "60/60")
# Session opens and searches served at once by one web process (the gate in front of Django,
# facade/gate.py), and how many may wait for a place before the next is answered 503.
FACADE_PUBLIC_CONCURRENCY = env_int("FACADE_PUBLIC_CONCURRENCY", 1)
FACADE_PUBLIC_QUEUE = env_int("FACADE_PUBLIC_QUEUE", 200)

# Proxies (addresses or CIDR networks) whose X-Forwarded-For names the client; none by default,
# since without a proxy in front the header is whatever the client chose to send.
FACADE_TRUSTED_PROXIES = env_list("FACADE_TRUSTED_PROXIES", [])
for _proxy in FACADE_TRUSTED_PROXIES:
    try:
        ipaddress.ip_network(_proxy, strict=False)
    except ValueError as _exc:
        raise ImproperlyConfigured(f"FACADE_TRUSTED_PROXIES: {_exc}") from _exc
