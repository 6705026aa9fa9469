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


class Workers:
    """The workers of one test queue: more can be started on it, and one killed like a crash."""

    def __init__(self, queue: str, env: dict[str, str]) -> None:
        self.queue = queue
        self.env = env
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
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
                self.queue,
                "--hostname",
                f"w{len(self.processes)}-{self.queue}@%h",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.processes.append(process)
        return process

    def kill(self, process: subprocess.Popen[bytes]) -> None:
        """SIGKILL the worker process itself, as the kernel's OOM killer or an operator would: no
        shutdown, no acknowledgement, its database connection cut."""
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)

    def stop(self) -> None:
        for process in self.processes:
            _signal_group(process, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                _signal_group(process, signal.SIGKILL)
                process.wait()


def _signal_group(process: subprocess.Popen[bytes], sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:  # killed already, with all of its group
        pass


@contextlib.contextmanager
def celery_worker_pool(tasks: list[str], *, count: int = 1, **environ: str) -> Iterator[Workers]:
    """Start `count` workers consuming a new queue, route `tasks` to it for the block, and yield
    them (more may be started, one may be killed); they stop and the queue is purged afterwards."""
    from facade.celery import app

    queue = f"test-{uuid.uuid4().hex[:12]}"
    db = settings.DATABASES["default"]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "facade.test_settings"}
    env["DATABASE_URL"] = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    env.update(environ)
    previous_routes = app.conf.task_routes
    app.conf.update(task_routes={task: {"queue": queue} for task in tasks})
    workers = Workers(queue, env)
    for _ in range(count):
        workers.start()
    try:
        yield workers
    finally:
        app.conf.update(task_routes=previous_routes)
        workers.stop()
        with app.connection_for_write() as conn:
            conn.default_channel.queue_purge(queue)


@contextlib.contextmanager
def celery_workers(tasks: list[str], *, count: int = 1, **environ: str) -> Iterator[str]:
    """Start `count` workers consuming a new queue, route `tasks` to it for the block, and yield
    the queue's name; the workers stop and the queue is purged afterwards."""
    with celery_worker_pool(tasks, count=count, **environ) as workers:
        yield workers.queue
