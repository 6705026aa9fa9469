"""The wall clock, for what is compared with another process's clock.

`manage.py rsi_simulate` plays past days with the process's clock moved to each of them
(time-machine), so every row and ledger event of a simulated day carries that day's time.  A
Celery task sent meanwhile (a replay preview of the night review's draft, a scheduled run) is
read by a worker on the real clock: an expiry computed from the moved clock ("15 minutes from
last Monday") is long past there, and the worker discards the task as revoked.  What leaves the
process for another one therefore takes its time from `wall_now`, never from the moved clock."""

from __future__ import annotations

import datetime as dt

import time_machine


def wall_now() -> dt.datetime:
    """The real time (aware, UTC), even inside a time-machine travel."""
    if time_machine.escape_hatch.is_travelling():
        return dt.datetime.fromtimestamp(time_machine.escape_hatch.time.time(), tz=dt.UTC)
    return dt.datetime.now(tz=dt.UTC)


def task_expires(seconds: float) -> dt.datetime:
    """A task's `expires` for `apply_async`: `seconds` from now on the wall clock, as an absolute
    time (Celery would add relative seconds to the process's clock, which may be moved)."""
    return wall_now() + dt.timedelta(seconds=seconds)
