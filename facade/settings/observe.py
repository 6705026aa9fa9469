"""Observe (issue 13): fetching the industry feeds an owner subscribes an agent to."""

from .env import env_bool, env_int, env_list

# Private, loopback and link-local feed addresses are refused unless this is on (tests with a
# local server; a deployment that really reads an intranet feed).
FACADE_OBSERVE_ALLOW_PRIVATE = env_bool("FACADE_OBSERVE_ALLOW_PRIVATE", False)
# Exact addresses allowed even though private (e.g. one intranet feed server), comma-separated.
FACADE_OBSERVE_TRUSTED_ADDRESSES = env_list("FACADE_OBSERVE_TRUSTED_ADDRESSES", [])
# Seconds for connecting, for each read and for the whole fetch of one feed.
FACADE_OBSERVE_TIMEOUT = env_int("FACADE_OBSERVE_TIMEOUT", 10)
# A feed body larger than this is not read further (the fetch fails `oversize`).
FACADE_OBSERVE_MAX_BYTES = env_int("FACADE_OBSERVE_MAX_BYTES", 2 * 1024 * 1024)
# Subscriptions per agent, and candidates kept per feed and run.
FACADE_OBSERVE_MAX_FEEDS = env_int("FACADE_OBSERVE_MAX_FEEDS", 20)
FACADE_OBSERVE_ITEMS_PER_FEED = env_int("FACADE_OBSERVE_ITEMS_PER_FEED", 50)
