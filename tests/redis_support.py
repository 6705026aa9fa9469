"""A redis-server of the test's own, on a free port, that the test stops and starts again: the
shared Redis of this machine is never touched.  No persistence, so a restart comes back empty,
as a Redis that lost its memory would (the rate windows, the channel layer's groups)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from ports import free_port

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


class OwnRedis:
    def __init__(self, log_dir: Path) -> None:
        self.port = free_port()
        self.log_path = log_dir / f"redis-{self.port}.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        assert self.process is None, "already running"
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 15
        while True:
            if self.process.poll() is not None:
                pytest.fail(f"redis-server exited:\n{self.log_path.read_text(errors='replace')[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("redis-server did not answer within 15 s")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None
        with socket.socket() as s:  # nothing listens any more: the outage is real
            assert s.connect_ex(("127.0.0.1", self.port)) != 0


@contextmanager
def own_redis(log_dir: Path) -> Iterator[OwnRedis]:
    server = OwnRedis(log_dir)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def turns_of(session_id: Any) -> tuple[list[tuple[str, str]], int]:
    """The principal messages of a session as (client_message_id, run status), and how many
    agent replies are stored."""
    from facade.dialogue.models import Message

    principal = [
        (m.client_message_id, getattr(getattr(m, "run", None), "status", "none"))
        for m in Message.objects.filter(session_id=session_id, role="principal").select_related("run").order_by("pk")
    ]
    replies = Message.objects.filter(session_id=session_id, role="agent").count()
    return principal, replies


def database_url() -> str:
    db = settings.DATABASES["default"]
    return f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
