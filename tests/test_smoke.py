"""The embedded default, end to end: `make run` with nothing configured.

Runs command 1 exactly as a user would — `make run PORT=… VAR=…` from the project root with no
DATABASE_URL, REDIS_URL or DJANGO_SETTINGS_MODULE — so the product comes up on SQLite under VAR,
the in-memory channel layer and kombu's filesystem broker.  Then Ctrl-C (SIGINT to the whole
foreground process group, as a terminal sends it) must stop web, worker and beat.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from ports import free_port

pytestmark = pytest.mark.slow

PROJECT_ROOT = Path(__file__).resolve().parents[1]
INSTALL_TIMEOUT = 300.0  # `make run` depends on `make install`, which pip-installs when pyproject.toml changed
STARTUP_TIMEOUT = 90.0  # from `manage.py migrate` to a healthy /healthz
SHUTDOWN_TIMEOUT = 20.0
# Variables that would steer `make run` away from the embedded default (or tie a nested make to
# the jobserver of a `make test` that may be running this suite).
SCRUBBED_ENV = (
    "DATABASE_URL",
    "REDIS_URL",
    "DJANGO_SETTINGS_MODULE",
    "DJANGO_ALLOW_ASYNC_UNSAFE",
    "MAKEFLAGS",
    "MFLAGS",
    "MAKELEVEL",
)


def _proc_stat(pid: int) -> tuple[int, int] | None:
    """(ppid, starttime) of a live process, None when it is gone (or a zombie)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = raw[raw.rindex(")") + 2 :].split()
    if fields[0] == "Z":
        return None
    return int(fields[1]), int(fields[19])


def _descendants(root: int) -> dict[int, int]:
    """Every live descendant of `root`: pid -> starttime (to tell a reused pid apart)."""
    children: dict[int, list[int]] = {}
    starts: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        stat = _proc_stat(int(entry.name))
        if stat is None:
            continue
        children.setdefault(stat[0], []).append(int(entry.name))
        starts[int(entry.name)] = stat[1]
    found: dict[int, int] = {}
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found[child] = starts[child]
                stack.append(child)
    return found


def _alive(pid: int, starttime: int) -> bool:
    stat = _proc_stat(pid)
    return stat is not None and stat[1] == starttime


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait_healthy(base: str, proc: subprocess.Popen[bytes], log_path: Path) -> httpx.Response:
    deadline = time.monotonic() + INSTALL_TIMEOUT
    while "manage.py migrate" not in log_path.read_text(errors="replace"):
        if proc.poll() is not None:
            pytest.fail(f"`make run` exited early (rc={proc.returncode}):\n{log_path.read_text(errors='replace')}")
        if time.monotonic() > deadline:
            pytest.fail(f"`make install` did not finish within {INSTALL_TIMEOUT:.0f}s:\n{log_path.read_text()}")
        time.sleep(0.5)
    deadline = time.monotonic() + STARTUP_TIMEOUT
    last: object = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"`make run` exited early (rc={proc.returncode}):\n{log_path.read_text(errors='replace')}")
        try:
            response = httpx.get(f"{base}/healthz", timeout=5)
            if response.status_code == 200:
                return response
            last = f"HTTP {response.status_code}: {response.text[:300]}"
        except httpx.HTTPError as exc:
            last = repr(exc)
        time.sleep(0.5)
    pytest.fail(
        f"/healthz did not answer 200 within {STARTUP_TIMEOUT:.0f}s (last: {last}):\n"
        + log_path.read_text(errors="replace")
    )


def _wait_for_output(log_path: Path, patterns: dict[str, str], timeout: float) -> str:
    """The console output once every pattern has appeared (or the timeout passed)."""
    deadline = time.monotonic() + timeout
    while True:
        text = log_path.read_text(errors="replace")
        if all(re.search(p, text, re.MULTILINE) for p in patterns.values()) or time.monotonic() > deadline:
            return text
        time.sleep(0.5)


class RunningApp:
    def __init__(self, proc: subprocess.Popen[bytes], port: int, var: Path, log_path: Path) -> None:
        self.proc, self.port, self.var, self.log_path = proc, port, var, log_path
        self.pgid = proc.pid  # a session leader: its pid is the process group id
        self.base = f"http://127.0.0.1:{port}"
        self.health: httpx.Response | None = None
        self.tracked: dict[int, int] = {}

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill_everything(self) -> None:
        groups = {self.pgid}
        for pid, start in _descendants(self.proc.pid).items() | self.tracked.items():
            try:
                if _alive(pid, start):
                    groups.add(os.getpgid(pid))
            except ProcessLookupError:
                pass
        for group in groups:
            try:
                os.killpg(group, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory):
    """`make run` on the embedded default, healthy; whatever is left is SIGKILLed at the end."""
    tmp = tmp_path_factory.mktemp("make-run")
    port = free_port()
    log_path = tmp / "make-run.log"
    env = {key: value for key, value in os.environ.items() if key not in SCRUBBED_ENV}
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            ["make", "run", f"PORT={port}", f"VAR={tmp / 'var'}"],
            cwd=PROJECT_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    running = RunningApp(proc, port, tmp / "var", log_path)
    try:
        running.health = _wait_healthy(running.base, proc, log_path)
        running.tracked = _descendants(proc.pid)
        yield running
    finally:
        running.kill_everything()


def test_healthz_reports_the_embedded_default(app: RunningApp) -> None:
    assert app.health is not None
    body = app.health.json()
    assert body["status"] == "ok", body
    checks = body["checks"]
    assert checks["database"]["ok"] is True and checks["database"]["vendor"] == "sqlite", checks
    assert checks["broker"]["ok"] is True, checks
    assert "filesystem" in checks["broker"]["transport"], checks
    assert checks["channel_layer"]["ok"] is True, checks
    assert checks["channel_layer"]["backend"] == "InMemoryChannelLayer", checks
    assert (app.var / "facade.sqlite3").is_file(), "the SQLite database should live under VAR"


def test_home_page(app: RunningApp) -> None:
    home = httpx.get(f"{app.base}/", timeout=10)
    assert home.status_code == 200
    assert "Facade" in home.text


def test_seeded_customer_page(app: RunningApp) -> None:
    customer = httpx.get(f"{app.base}/c/demo-shop/", timeout=10)
    assert customer.status_code == 200, customer.text[:500]
    assert "Demo Shop" in customer.text


def test_console_shows_accounts_url_and_all_three_processes(app: RunningApp) -> None:
    expected = {
        "owner with password": r"^\s*owner\s+owner@demo\.test\s+password: \S+",
        "auditor with password": r"^\s*auditor\s+auditor@demo\.test\s+password: \S+",
        "customer URL": re.escape(f"{app.base}/c/demo-shop/"),
        "honcho started web": r"system\s+\| web\.1 started \(pid=\d+\)",
        "honcho started worker": r"system\s+\| worker\.1 started \(pid=\d+\)",
        "honcho started beat": r"system\s+\| beat\.1 started \(pid=\d+\)",
        "daphne listening": r"web\.1\s+\|.*Listening on TCP address 127\.0\.0\.1:" + str(app.port),
        "celery worker ready": r"worker\.1\s+\|.*\S+@\S+ ready\.",
        "celery beat starting": r"beat\.1\s+\|.*beat: Starting\.\.\.",
    }
    output = _wait_for_output(app.log_path, expected, timeout=30)
    missing = [name for name, pattern in expected.items() if not re.search(pattern, output, re.MULTILINE)]
    assert not missing, f"missing from the console output: {missing}\n{output}"


def test_ctrl_c_stops_every_process(app: RunningApp) -> None:
    """Runs last in this module: it shuts the shared app down."""
    started = {"web": r"\| web\.1 started", "worker": r"worker\.1\s+\|.*ready\.", "beat": r"beat: Starting"}
    output = _wait_for_output(app.log_path, started, timeout=30)
    # Every process make started, including the honcho children, which live in sessions of
    # their own (honcho starts each Procfile entry with start_new_session=True).
    app.tracked = {**app.tracked, **_descendants(app.proc.pid)}
    child_groups = {int(pid) for pid in re.findall(r"\| \w+\.1 started \(pid=(\d+)\)", output)}
    assert len(child_groups) == 3, output
    commands = " ".join(
        Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        for pid, start in app.tracked.items()
        if _alive(pid, start)
    )
    for needle in ("daphne", "celery -A facade worker", "celery -A facade beat"):
        assert needle in commands, f"{needle!r} not running under make: {commands}"

    t0 = time.monotonic()
    os.killpg(app.pgid, signal.SIGINT)  # what Ctrl-C in the terminal does
    try:
        app.proc.wait(timeout=SHUTDOWN_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`make run` still running {SHUTDOWN_TIMEOUT:.0f}s after SIGINT:\n{app.output()}")
    while time.monotonic() - t0 < SHUTDOWN_TIMEOUT and (
        _group_alive(app.pgid)
        or any(_group_alive(group) for group in child_groups)
        or any(_alive(pid, start) for pid, start in app.tracked.items())
    ):
        time.sleep(0.2)

    assert app.proc.returncode != 0  # make reports the interrupt
    with pytest.raises(ProcessLookupError):
        os.killpg(app.pgid, 0)
    for group in child_groups:
        with pytest.raises(ProcessLookupError):
            os.killpg(group, 0)
    leftovers = [pid for pid, start in app.tracked.items() if _alive(pid, start)]
    assert not leftovers, f"processes left after Ctrl-C: {leftovers}\n{app.output()}"
    assert "SIGINT received" in app.output()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{app.base}/healthz", timeout=2)
