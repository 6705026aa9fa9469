"""Leases on claimed work (issue 16, point 4): a task that claims a row (an upload's ingest job, a
re-check, review or observe run) holds a lease on it — `lease_expires_at`, a few tens of seconds
ahead — and a thread of the worker renews it while the task works.  A worker that dies (SIGKILL,
an out-of-memory kill, a lost machine) stops renewing, so a lease in the past means a dead worker.

The sweep of each app asks :func:`leases_expired` for its running rows whose lease ran out and
applies :func:`lease_verdict`: the work is run again from the start once (the row goes back to its
queued state and its task is sent again); when that run's worker dies too, the row ends `failed`
with the reason `worker_lost`.  Never "running" forever.

The attempt number is the fencing token: the claim returns it, the heartbeat renews only the
lease of that attempt, and a task writes its outcome only while its attempt is the row's — a worker
thought dead that wakes up again cannot overwrite the run that replaced it.

Each app keeps its own rows, states and ledger events; this module is the one place where a lease
is taken, renewed and judged.  The rows need two fields: `attempts` (a positive integer, counted
by the claim) and `lease_expires_at` (a nullable aware datetime)."""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection, models
from django.utils import timezone

logger = logging.getLogger(__name__)

# Runs of one piece of work: the first and the one retry after its worker died.
MAX_RUNS = 2
WORKER_LOST = "worker_lost"


def lease_length() -> dt.timedelta:
    return dt.timedelta(seconds=max(1, int(settings.FACADE_LEASE_SECONDS)))


def lease_until(now: dt.datetime | None = None) -> dt.datetime:
    """The expiry a claim or a renewal sets."""
    return (now or timezone.now()) + lease_length()


class Verdict(StrEnum):
    RETRY = "retry"  # run it again from the start
    FAIL = "fail"  # its retry's worker died too: failed, reason worker_lost


def lease_verdict(attempts: int) -> Verdict:
    """What becomes of work whose lease expired after `attempts` runs were started (pure)."""
    return Verdict.RETRY if attempts < MAX_RUNS else Verdict.FAIL


@dataclass(frozen=True)
class Leased:
    """Where a model keeps its state: the field and the value that means "a worker has it"."""

    model: type[models.Model]
    state_field: str
    running: str

    def running_rows(self) -> models.QuerySet[Any]:
        return self.model._default_manager.filter(**{self.state_field: self.running})

    def held(self, pk: int, attempt: int) -> models.QuerySet[Any]:
        """The row while `attempt` still holds it (the fence every write of the task goes through)."""
        return self.running_rows().filter(pk=pk, attempts=attempt)


def leases_expired(kind: Leased, *, now: dt.datetime | None = None, limit: int = 100) -> models.QuerySet[Any]:
    """The running rows whose lease ran out, locked (`skip_locked`: a row another sweep is judging
    is left to it); call inside a transaction.  A running row without a lease (claimed before
    leases existed) counts as expired."""
    now = now or timezone.now()
    stale = models.Q(lease_expires_at__lt=now) | models.Q(lease_expires_at__isnull=True)
    ids = kind.running_rows().filter(stale).order_by("pk").values_list("pk", flat=True)[:limit]
    # The lock's own query repeats the condition: a row that finished or renewed its lease
    # between the two statements is not judged (PostgreSQL re-checks a locked row's WHERE).
    locked = kind.running_rows().filter(stale, pk__in=list(ids)).select_for_update(skip_locked=True)
    return locked.order_by("pk")


@contextmanager
def lease_kept(kind: Leased, pk: int, attempt: int, *, every: float | None = None) -> Iterator[None]:
    """Renew the lease of `attempt` on row `pk` from a thread while the block runs.  The thread
    uses a database connection of its own and closes it; a renewal that fails is logged and
    tried again at the next beat (the lease is long enough to miss a few)."""
    interval = every if every is not None else lease_length().total_seconds() / 3
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(interval):
                try:
                    renewed = kind.held(pk, attempt).update(lease_expires_at=lease_until())
                except Exception:  # noqa: BLE001 - the next beat tries again
                    logger.warning("could not renew the lease of %s %s", kind.model.__name__, pk, exc_info=True)
                    close_old_connections()
                    continue
                if not renewed:
                    return  # no longer ours (finished, or taken over): nothing to keep
        finally:
            connection.close()

    thread = threading.Thread(target=beat, name=f"lease-{kind.model.__name__}-{pk}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=interval + 5)
