"""Extraction in a child process held to a time and a memory limit.

Parsers of owner-supplied files (BeautifulSoup, pypdf, python-docx) can take minutes and gigabytes
on a hostile or merely enormous document, and none of them can be interrupted from inside.  A
forked child can: it sets its own address-space limit, so an allocation past the budget fails
there with ``MemoryError`` and the worker is untouched, and the parent kills it at the deadline.
The child only parses — it never touches the database, the cache or a log handler, and leaves
with ``os._exit`` so nothing inherited from the parent (connections, atexit hooks) runs twice.
POSIX only, like the worker.
"""

from __future__ import annotations

import os
import pickle
import resource
import select
import signal
import time
from dataclasses import dataclass
from typing import Any

from .extract import Extracted, ExtractError, Limits, _doc_title, extract

__all__ = ["Budget", "extract_isolated"]


@dataclass(frozen=True)
class Budget:
    seconds: float
    memory_bytes: int


def _address_space() -> int:
    """Bytes this process has mapped now (VmSize): the child's limit is this plus its budget, since
    what it inherits from the worker (libraries, thread stacks) is mapped already."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _child(write_fd: int, budget: Budget, call: tuple[Any, ...]) -> None:
    filename, data, declared_type, limits = call
    try:
        limit = _address_space() + budget.memory_bytes
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        # A backstop should the parent be gone: the kernel stops a child that spins past its time.
        cpu = int(budget.seconds) + 2
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        outcome: tuple[Any, ...] = ("ok", extract(filename, data, declared_type=declared_type, limits=limits))
    except ExtractError as exc:
        outcome = ("refused", exc.code, exc.detail)
    except MemoryError:
        outcome = ("memory",)
    except BaseException as exc:  # noqa: BLE001  (anything else is reported, never raised in a fork)
        outcome = ("failed", type(exc).__name__)
    try:
        payload = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
    except MemoryError:
        payload = pickle.dumps(("memory",))
    view = memoryview(payload)
    while view:
        written = os.write(write_fd, view)
        view = view[written:]


def _read_all(read_fd: int, deadline: float) -> bytes | None:
    """Everything the child writes, or None when it is still busy at the deadline."""
    chunks: list[bytes] = []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        ready, _, _ = select.select([read_fd], [], [], remaining)
        if not ready:
            return None
        chunk = os.read(read_fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def extract_isolated(
    filename: str, data: bytes, *, declared_type: str | None, limits: Limits, budget: Budget
) -> Extracted:
    """:func:`knowledge.extract.extract` in a child process; a document that needs more time or
    memory than the budget is refused with an error naming the limit."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        code = 0
        try:
            os.close(read_fd)
            _child(write_fd, budget, (filename, data, declared_type, limits))
        except BaseException:  # noqa: BLE001  (a fork must never return into the parent's code)
            code = 1
        finally:
            os._exit(code)
    os.close(write_fd)
    try:
        payload = _read_all(read_fd, time.monotonic() + budget.seconds)
    finally:
        os.close(read_fd)
    if payload is None:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)

    name = _doc_title(filename)
    advice = limits.advice
    timeout = ExtractError(
        "extraction_timeout",
        f"Reading {name} took longer than the limit of {budget.seconds:g} seconds per document. {advice}",
    )
    if payload is None or (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU):
        raise timeout
    out_of_memory = ExtractError(
        "extraction_out_of_memory",
        f"Reading {name} needed more than the limit of {budget.memory_bytes // (1024 * 1024):,} MB of memory "
        f"per document. {advice}",
    )
    failed = ExtractError("extraction_failed", f"{name} could not be read. Save it again and re-upload it.")
    if not payload:  # the child died before it could answer: the kernel's OOM killer, or a crash
        raise out_of_memory if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL else failed
    outcome = pickle.loads(payload)  # noqa: S301  (our own child's bytes, over a private pipe)
    if outcome[0] == "ok":
        result: Extracted = outcome[1]
        return result
    if outcome[0] == "refused":
        raise ExtractError(outcome[1], outcome[2])
    if outcome[0] == "memory":
        raise out_of_memory
    raise failed
