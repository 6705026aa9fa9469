"""Real Celery workers for the tests that need one (not `task_always_eager`): worker processes
on the test database, consuming a queue of the test's own, so workers of other test runs sharing
the Redis broker cannot take (and drop) this test's tasks, nor these workers theirs."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def celery_workers(tasks: list[str], *, count: int = 1, **environ: str) -> Iterator[str]:
    """Start `count` workers consuming a new queue, route `tasks` to it for the block, and yield
    the queue's name; the workers stop and the queue is purged afterwards."""
    from facade.celery import app

    queue = f"test-{uuid.uuid4().hex[:12]}"
    db = settings.DATABASES["default"]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "facade.test_settings"}
    env["DATABASE_URL"] = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    env.update(environ)
    previous_routes = app.conf.task_routes
    app.conf.update(task_routes={task: {"queue": queue} for task in tasks})
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "facade",
                "worker",
                "--pool",
                "solo",
                "--loglevel",
                "WARNING",
                "--without-gossip",
                "--without-mingle",
                "-Q",
                queue,
                "--hostname",
                f"w{n}-{queue}@%h",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        for n in range(count)
    ]
    try:
        yield queue
    finally:
        app.conf.update(task_routes=previous_routes)
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        with app.connection_for_write() as conn:
            conn.default_channel.queue_purge(queue)
