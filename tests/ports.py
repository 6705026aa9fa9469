"""A free TCP port on loopback, for a server a test starts (daphne, redis-server, a listener that
never answers): the kernel picks one, the probe closes it, the server binds it."""

from __future__ import annotations

import socket


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
