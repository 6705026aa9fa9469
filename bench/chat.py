"""Chat benchmark on PostgreSQL + Redis (`make bench`).

50 concurrent WebSocket clients (default) each hold a customer session of one agent and send 20
messages (default) one after another, waiting for each reply; the 50 run in parallel.  A turn's
latency is the time from sending `{"type": "message", ...}` to receiving the `reply` frame for
that client_message_id.  The texts are a fixed mix that makes the offline provider do its real
work: questions answered from approved knowledge (search, citations, hits recorded), questions
nobody can answer (search, miss recorded) and greetings (no tool).  Every reply passes the
commitment guard and every turn appends its ledger events, as in production.

In the same run the same load (same clients, same texts) goes to a bare echo consumer
(bench/echo_asgi.py) in the same daphne process, behind the same origin check and auth
middleware: everything is shared but the consumer.  A third load goes to a storing echo: the
chat consumer with the agent taken out (it stores the message and an echo reply, nothing else),
which shows how much of a turn is the agent and its governance rather than the chat itself.  A
fourth load goes to the chat with its governance taken out (bench/echo_asgi.py: the guard and the
grounding check pass everything, the tool check allows every call, no ledger event is appended),
which measures under the same load what the issue's targets are about: how much of a turn the
governance costs.
The loads alternate (echo, store, ungoverned, chat, then backwards, ...) so that drift on the
machine hits all of them; the figures are pooled.  The ledger events each load appended are
counted, so a switch that did not take (or took where it should not) shows.
Prints p50/p95 turn latency and turns/s of both, the ratios and the targets: chat turns/s
>= 0.5x the echo's, chat p95 <= 3x the echo's p95.  For the chat it also splits a turn into
the time to its first `delta` frame (the server's work) and the streaming after it, and prints
the CPU time of the client process (one asyncio process; at ~100% of a core the client, not the
server, would be the limit), of the server process and of PostgreSQL.  The server runs with a
connection pool of `--pool` connections (DB_POOL, as compose.yaml deploys it; 0 turns it off
and every sync call opens a new connection) or, with `--conn-max-age`, persistent connections.

The server is a real daphne on a free port with FACADE_LLM_PROVIDER=offline, Redis db 14 for
channels and cache, and rate limits and the daily model-call budget set out of the way.  It
uses its own database (default facade_bench_chat on DATABASE_URL's server), created afresh.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fresh_db import prepare_database  # noqa: E402

BENCH_VAR = ROOT / "var" / "bench"
REDIS_URL = "redis://127.0.0.1:6379/14"
UNLIMITED_RATE = "100000/60"

# (title, body, a customer's question it answers).  Approved owner knowledge: no prices, no
# delivery times, no promises, so the guard lets the answers through.  Every word of a question
# (bar stop words) is in its entry, and the Chinese questions are keywords: with only 50
# versions every term counts as common to the search, which then wants all of them.
ENTRIES: list[tuple[str, str, str]] = [
    (
        "Parking",
        "Customers can park in the courtyard behind the workshop; the gate is on Linden Street next to the bakery.",
        "Where can I park at the workshop?",
    ),
    (
        "Wheelchair access",
        "The shop floor is step-free and the counter has a lowered section for wheelchair users.",
        "Is there wheelchair access?",
    ),
    (
        "Payment methods",
        "We accept card payments and bank transfer; cash is accepted at the counter too.",
        "Which payment methods do you accept?",
    ),
    (
        "Frame materials",
        "Our frames are made from oak, ash and walnut wood from certified forests, plus a recycled aluminium range.",
        "What wood are your frames made from?",
    ),
    (
        "Glass options",
        "We offer standard float glass, anti-reflective glass and museum glass that filters ultraviolet light.",
        "What glass options are there?",
    ),
    (
        "Mount board colours",
        "Mount boards come in white, ivory, charcoal and black, all acid-free and of conservation grade.",
        "Which mount board colours are there?",
    ),
    (
        "Canvas stretching",
        "We stretch canvas paintings on kiln-dried pine bars and re-stretch older canvases that have gone slack.",
        "Can you stretch canvas paintings?",
    ),
    (
        "Jigsaw framing",
        "Finished jigsaw puzzles are glued onto a backing board and framed like a print.",
        "Can finished jigsaw puzzles be framed?",
    ),
    (
        "Sports shirts",
        "Football and rugby shirts are pinned onto a padded board and framed in a deep box frame.",
        "Can football shirts be framed?",
    ),
    (
        "Medals",
        "Medals and badges are framed in a shadow box, stitched onto a fabric-covered board.",
        "How are medals and badges framed?",
    ),
    (
        "Mirror frames",
        "We make mirror frames from any of our mouldings, with a bevelled mirror plate.",
        "Do you make mirror frames?",
    ),
    (
        "Hanging fittings",
        "Every frame we make will have D-rings and cord; heavy frames also get a security hanging kit.",
        "What hanging fittings does a frame have?",
    ),
    (
        "Photo restoration",
        "We restore damaged photographs: we scan them, retouch tears and stains digitally "
        "and print them on archival paper.",
        "Can you restore damaged photographs?",
    ),
    (
        "Art prints",
        "We carry limited edition prints by local artists; each print comes with a signed certificate.",
        "Do you carry prints by local artists?",
    ),
    (
        "Gift vouchers",
        "Gift vouchers are available, printed on card, for framing, prints and workshop classes.",
        "Are gift vouchers available?",
    ),
    (
        "Framing classes",
        "Our evening classes teach beginners how to cut mounts and assemble a simple frame.",
        "Do you teach framing classes for beginners?",
    ),
    (
        "Class size",
        "Classes are kept small, with at most six participants at each bench.",
        "How small are the classes?",
    ),
    (
        "Children's art",
        "Children's drawings are framed in lightweight frames with acrylic glazing, which is safer than glass.",
        "How are children's drawings framed?",
    ),
    (
        "Acrylic glazing",
        "Acrylic glazing is shatter-resistant and lighter than glass, which suits large frames and public spaces.",
        "Is acrylic glazing lighter than glass?",
    ),
    (
        "Float mounting",
        "Float mounting shows the whole edge of the artwork by raising it on a hidden spacer above the mount.",
        "What is float mounting?",
    ),
    (
        "Textile framing",
        "Embroidery, tapestry and lace are framed by lacing them onto a board with cotton thread rather than glue.",
        "How are embroidery and lace framed?",
    ),
    (
        "Conservation framing",
        "Conservation framing uses only reversible methods and acid-free materials that do not harm the artwork.",
        "What is conservation framing?",
    ),
    (
        "Oversized artwork",
        "Very large artwork is framed in sections at the workshop and assembled on site.",
        "Can very large artwork be framed?",
    ),
    (
        "Collection from home",
        "Large or fragile works can be collected from your home by appointment made at the counter.",
        "Can fragile works be collected from my home?",
    ),
    (
        "Gallery walls",
        "Our team can hang gallery walls and arrange groups of frames on site.",
        "Does your team hang gallery walls?",
    ),
    (
        "Colour matching",
        "We stain or paint a moulding to match furniture or an existing frame from a sample you bring.",
        "Can you match the colour of my furniture?",
    ),
    (
        "Gilding",
        "Water gilding and oil gilding are done by hand with gold and silver leaf in our gilding room.",
        "Do you do gilding with gold leaf?",
    ),
    (
        "Antique frames",
        "Chipped antique frames are mended with traditional gesso and then retouched to blend in.",
        "Can chipped antique frames be mended?",
    ),
    (
        "Diplomas",
        "A slim black or gold frame with a double mount suits certificates and diplomas best.",
        "What frame suits diplomas?",
    ),
    (
        "Maps and posters",
        "Maps and posters are dry mounted to keep them flat, unless they are valuable, in which case we hinge them.",
        "How are maps and posters mounted?",
    ),
    (
        "Wood offcuts",
        "Offcuts of wood are reused for small frames and the rest goes to a local wood recycler.",
        "Are wood offcuts reused?",
    ),
    (
        "Packaging",
        "Framed works are wrapped in bubble wrap with corner protectors before they leave the workshop.",
        "How are framed works wrapped?",
    ),
    (
        "Cleaning",
        "To clean a frame, dust it with a soft dry cloth; spray glass cleaner on the cloth, "
        "never straight onto the glass.",
        "How do I clean a frame?",
    ),
    (
        "Sunlight",
        "Keep framed works out of direct sunlight; even behind UV-filtering glass some pigments fade over the years.",
        "Does sunlight fade framed works?",
    ),
    (
        "Damp rooms",
        "Do not hang artwork in bathrooms or above radiators: damp and heat make paper ripple.",
        "Can I hang artwork in bathrooms?",
    ),
    (
        "Fine art printing",
        "We print photographs and artwork on fine art paper with pigment inks on a large-format printer.",
        "Do you print photographs on fine art paper?",
    ),
    (
        "Canvas prints",
        "Photos are printed on canvas and stretched on a frame with mirrored or coloured edges.",
        "Can photos be printed on canvas?",
    ),
    (
        "Hotels and offices",
        "Offices and hotels ask us to frame whole series of prints in one matching style.",
        "Do you frame series of prints for hotels and offices?",
    ),
    (
        "Location",
        "The workshop is on Linden Street, a short walk from the tram stop at the market square.",
        "Which street is the workshop on?",
    ),
    (
        "Opening days",
        "The shop is open from Tuesday to Saturday; on Sundays and Mondays the workshop is closed.",
        "Which days is the shop open?",
    ),
    ("停车", "店后面的院子可以停车，入口在椴树街面包店旁边。", "停车？"),
    ("付款方式", "我们接受借记卡、信用卡和银行转账，柜台也收现金。", "付款方式？"),
    ("画框材料", "我们的画框用橡木、白蜡木和胡桃木制作，也有再生铝框系列。", "画框材料？"),
    ("玻璃种类", "可选普通浮法玻璃、防反光玻璃和能过滤紫外线的博物馆级玻璃。", "玻璃种类？"),
    ("卡纸颜色", "卡纸有白色、象牙色、炭灰色和黑色，全部无酸。", "卡纸颜色？"),
    ("十字绣装裱", "十字绣和刺绣用棉线绑在衬板上，不用胶水。", "十字绣装裱？"),
    ("老照片修复", "我们扫描受损的老照片，用数字方式修复折痕和污渍，再用档案级相纸打印。", "老照片修复？"),
    ("装裱课程", "晚间课程教初学者裁切卡纸和组装简单的画框。", "装裱课程？"),
    ("照片墙", "我们的团队可以帮您布置照片墙，把一组画框排列好。", "照片墙？"),
    ("画框清洁", "用柔软的干布擦画框，玻璃清洁剂要喷在布上，不要直接喷在玻璃上。", "画框清洁？"),
]
# Questions no approved entry answers (the search finds nothing and records a miss).
UNKNOWN = [
    "Is there a loyalty scheme for students?",
    "Do you stock telescopes?",
    "Are dogs welcome?",
    "Does the café upstairs serve vegan cakes?",
    "Do you fix bicycles?",
    "Is there wifi for visitors?",
    "Do you tune pianos?",
    "Are concert tickets sold here?",
    "能带宠物吗？",
    "有无线网络吗？",
]
GREETINGS = ["Hello!", "Hi", "Good morning", "Hey", "你好"]
MIX = (("knowledge", 0.6), ("unknown", 0.25), ("greeting", 0.15))


def _prepare_database() -> None:
    prepare_database(script="bench/chat.py", env_name="FACADE_BENCH_CHAT_DB", default_name="facade_bench_chat")
    os.environ["REDIS_URL"] = REDIS_URL
    os.environ["FACADE_VAR_DIR"] = str(BENCH_VAR)


# --- the world the clients talk to -------------------------------------------------------


@dataclass(frozen=True)
class Seat:
    """One client's session and the cookie the server would have issued to its browser."""

    session_id: str
    cookie: str


def seed(sessions: int) -> tuple[list[Seat], dict[str, int]]:
    """One tenant and agent, the approved knowledge, and `sessions` customer sessions.  Counts
    the knowledge questions that find their entry and the unknown ones that find nothing."""
    from django.core.management import call_command
    from django.db import connection
    from django.http import HttpResponse

    from facade.dialogue.services import session_open
    from facade.tenancy.identity import customer_cookie_name, set_customer_cookie
    from facade.tenancy.rules import Audience
    from facade.tenancy.schemas import Actor
    from facade.tenancy.services import agent_create, customer_create, tenant_create
    from guard.engine import guard_check
    from knowledge.models import SourceType, Status
    from knowledge.schemas import SourceIn
    from knowledge.selectors import knowledge_search
    from knowledge.services import entry_propose

    call_command("migrate", verbosity=0)
    actor = Actor.platform("bench")
    tenant = tenant_create(slug="bench-frames", name="Linden Frames", actor=actor)
    agent = agent_create(tenant=tenant, slug="bench-frames", name="Linden Frames", actor=actor)
    entry_ids: dict[str, int] = {}
    for n, (title, body, _question) in enumerate(ENTRIES):
        if guard_check(f"{title}: {body}").blocked:
            raise SystemExit(f"bench entry {title!r} would be blocked by the guard; reword it")
        version = entry_propose(
            agent=agent,
            title=title,
            body=body,
            actor=actor,
            source=SourceIn(type=SourceType.OWNER_DIALOGUE, ref=f"bench-chat#{n}", version="1"),
        )
        if version.status != Status.APPROVED:
            raise SystemExit(f"bench entry {title!r} was not approved: {version.decision_reasons}")
        entry_ids[title] = version.entry_id
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    # The turns are only the intended mix if the questions find what they should (reported).
    found_own = sum(
        entry_ids[title]
        in [r.entry_id for r in knowledge_search(agent=agent, query=question, audience=Audience.CUSTOMER, limit=3)]
        for title, _body, question in ENTRIES
    )
    found_none = sum(not knowledge_search(agent=agent, query=q, audience=Audience.CUSTOMER, limit=3) for q in UNKNOWN)
    seats = []
    name = customer_cookie_name(tenant)
    for _ in range(sessions):
        customer = customer_create(tenant=tenant)
        session = session_open(agent=agent, audience=Audience.CUSTOMER, customer=customer)
        response = HttpResponse()
        set_customer_cookie(response, tenant, customer)
        seats.append(Seat(str(session.pk), f"{name}={response.cookies[name].value}"))
    return seats, {"entries": len(entry_ids), "found_own": found_own, "found_none": found_none}


def script(seed_: int, turns: int) -> list[tuple[str, str]]:
    """One client's turns: (kind, text), drawn from the mix."""
    rng = random.Random(seed_)
    kinds = [k for k, _ in MIX]
    weights = [w for _, w in MIX]
    out = []
    for _ in range(turns):
        kind = rng.choices(kinds, weights)[0]
        if kind == "knowledge":
            text = rng.choice(ENTRIES)[2]
        elif kind == "unknown":
            text = rng.choice(UNKNOWN)
        else:
            text = rng.choice(GREETINGS)
        out.append((kind, text))
    return out


# --- the server ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int, log_path: Path, conn_max_age: int | None, pool: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "facade.settings",
            "DATABASE_URL": os.environ["DATABASE_URL"],
            "REDIS_URL": REDIS_URL,
            "FACADE_VAR_DIR": str(BENCH_VAR),  # the same secret key as this process: the cookies verify
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            # The clients' Origin (run_load): the WebSocket takes only the site's exact origin.
            "FACADE_PUBLIC_URL": f"http://127.0.0.1:{port}",
            "FACADE_LLM_PROVIDER": "offline",
            "FACADE_RATE_CUSTOMER": UNLIMITED_RATE,
            "FACADE_RATE_IP": UNLIMITED_RATE,
            "FACADE_DAILY_MODEL_CALLS": str(10**9),
            "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        }
    )
    if conn_max_age is not None:
        env["DB_CONN_MAX_AGE"] = str(conn_max_age)
        pool = 0
    env["DB_POOL"] = str(pool)
    return launch_daphne(port, log_path, env, "bench.echo_asgi:application")


def launch_daphne(port: int, log_path: Path, env: dict[str, str], app: str) -> subprocess.Popen[bytes]:
    """A daphne serving `app` on loopback with `env`, once /healthz answers (the benchmarks' server)."""
    daphne = Path(sys.executable).with_name("daphne")
    log = open(log_path, "wb")  # noqa: SIM115 (open for the server's lifetime)
    proc = subprocess.Popen(
        [str(daphne), "-b", "127.0.0.1", "-p", str(port), app],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"daphne exited with {proc.returncode}; see {log_path}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).read()
            return proc
        except urllib.error.HTTPError:
            return proc  # it answers; whatever /healthz thinks of the broker is not measured here
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    raise SystemExit(f"daphne did not answer within 60 s; see {log_path}")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


TICK = os.sysconf("SC_CLK_TCK")


def cpu_of(pid: int, children: bool = False) -> float:
    """CPU seconds (user + system) a process has used so far; with `children`, plus those of
    its children that have exited."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if children else 0)
    return ticks / TICK


def cpu_of_postgres() -> float:
    """CPU seconds of PostgreSQL on this machine: its live processes plus the backends that have
    exited (the postmaster reaps them; with DB_CONN_MAX_AGE=0 a backend lives for one request)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == "postgres":
                    total += cpu_of(int(entry.name), children=True)
            except OSError:
                continue
    return total


def cpu_of_machine() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine, all cores."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]
    return (sum(values) - idle) / TICK, sum(values) / TICK


# --- the clients ---------------------------------------------------------------------------


@dataclass
class Load:
    """What one load (one mode, one round) measured."""

    mode: str
    latencies: list[float] = field(default_factory=list)  # seconds, send → reply
    first_delta: list[float] = field(default_factory=list)  # seconds, send → first delta (chat)
    kinds: dict[str, list[float]] = field(default_factory=dict)
    answered: int = 0  # knowledge questions whose reply cites knowledge
    knowledge_asked: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    wall: float = 0.0
    client_cpu: float = 0.0
    server_cpu: float = 0.0
    postgres_cpu: float = 0.0
    ledger_events: int = 0
    statements: int = 0  # what the server sent to PostgreSQL during the load (bench/echo_asgi.py counts)
    governance_cpu: dict[str, float] = field(default_factory=dict)  # server CPU of each governance step
    transactions: int = 0
    machine_busy: float = 0.0
    machine_total: float = 0.0

    @property
    def turns(self) -> int:
        return len(self.latencies)


async def one_client(
    url: str,
    origin: str,
    cookie: str | None,
    turns: list[tuple[str, str]],
    load: Load,
    ready: asyncio.Event,
    go: asyncio.Event,
    timeout: float,
) -> None:
    from websockets.asyncio.client import connect

    headers = {"Cookie": cookie} if cookie else None
    async with connect(
        url, origin=origin, additional_headers=headers, open_timeout=timeout, ping_interval=None, max_size=2**22
    ) as ws:
        if cookie:  # the chat sends the history first
            while json.loads(await asyncio.wait_for(ws.recv(), timeout))["type"] != "history":
                pass
        ready.set()
        await go.wait()
        for kind, text in turns:
            cid = str(uuid.uuid4())
            sent = time.perf_counter()
            first: float | None = None
            await ws.send(json.dumps({"type": "message", "text": text, "client_message_id": cid}, ensure_ascii=False))
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), timeout))
                if frame.get("client_message_id") != cid:
                    continue
                kind_of = frame.get("type")
                if kind_of == "delta" and first is None:
                    first = time.perf_counter() - sent
                elif kind_of == "reply":
                    elapsed = time.perf_counter() - sent
                    load.latencies.append(elapsed)
                    load.kinds.setdefault(kind, []).append(elapsed)
                    if first is not None:
                        load.first_delta.append(first)
                    if kind == "knowledge" and cookie:
                        load.knowledge_asked += 1
                        load.answered += bool((frame.get("reply") or {}).get("citations"))
                    break
                elif kind_of == "error":
                    code = str(frame.get("code"))
                    load.errors[code] = load.errors.get(code, 0) + 1
                    break


async def run_load(
    mode: str, port: int, seats: list[Seat], scripts: list[list[tuple[str, str]]], timeout: float, server_pid: int
) -> Load:
    origin = f"http://127.0.0.1:{port}"
    load = Load(mode)
    readies = [asyncio.Event() for _ in scripts]
    go = asyncio.Event()
    tasks = []
    for i, turns in enumerate(scripts):
        if mode == "echo":
            url, cookie = f"ws://127.0.0.1:{port}/ws/echo/", None
        elif mode == "store":
            url, cookie = f"ws://127.0.0.1:{port}/ws/echo-store/{seats[i].session_id}/", seats[i].cookie
        elif mode == "ungoverned":
            url, cookie = f"ws://127.0.0.1:{port}/ws/ungoverned/{seats[i].session_id}/", seats[i].cookie
        else:
            url, cookie = f"ws://127.0.0.1:{port}/ws/sessions/{seats[i].session_id}/", seats[i].cookie
        tasks.append(asyncio.create_task(one_client(url, origin, cookie, turns, load, readies[i], go, timeout)))
    # Every client connected (and has its history) before the clock starts: the figures are turns.
    all_ready = asyncio.ensure_future(asyncio.gather(*(r.wait() for r in readies)))
    done, _ = await asyncio.wait([all_ready, *tasks], timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    if all_ready not in done:
        for t in tasks:
            t.cancel()
        all_ready.cancel()
        failed = [t.exception() for t in done if t is not all_ready and t.exception() is not None]
        raise SystemExit(f"{mode}: not every client connected: {failed[0] if failed else 'timeout'}")
    events0 = await ledger_events()
    stats0 = await server_stats(port)
    client0, server0, pg0, (busy0, total0) = (
        time.process_time(),
        cpu_of(server_pid),
        cpu_of_postgres(),
        cpu_of_machine(),
    )
    started = time.perf_counter()
    go.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    load.wall = time.perf_counter() - started
    busy1, total1 = cpu_of_machine()
    load.client_cpu = time.process_time() - client0
    load.server_cpu = cpu_of(server_pid) - server0
    load.postgres_cpu = cpu_of_postgres() - pg0
    load.machine_busy, load.machine_total = busy1 - busy0, total1 - total0
    load.ledger_events = await ledger_events() - events0
    stats1 = await server_stats(port)
    load.statements = stats1["statements"] - stats0["statements"]
    load.transactions = stats1["transactions"] - stats0["transactions"]
    before = stats0.get("governance_cpu", {})
    load.governance_cpu = {k: v - before.get(k, 0.0) for k, v in stats1.get("governance_cpu", {}).items()}
    for r in results:
        if isinstance(r, BaseException):
            name = type(r).__name__
            load.errors[name] = load.errors.get(name, 0) + 1
    return load


async def server_stats(port: int) -> dict[str, Any]:
    def fetch() -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/bench/stats", timeout=10) as response:
            return dict(json.loads(response.read()))

    return await asyncio.to_thread(fetch)


async def ledger_events() -> int:
    from asgiref.sync import sync_to_async

    from ledger.models import LedgerEvent

    return int(await sync_to_async(LedgerEvent.objects.count, thread_sensitive=False)())


# --- the report ----------------------------------------------------------------------------


def pct(values: list[float], p: float) -> float:
    if len(values) < 2:
        return (values[0] if values else float("nan")) * 1000
    return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1] * 1000


def pooled(loads: list[Load]) -> Load:
    out = Load(loads[0].mode)
    for load in loads:
        out.latencies += load.latencies
        for step, spent in load.governance_cpu.items():
            out.governance_cpu[step] = out.governance_cpu.get(step, 0.0) + spent
        out.first_delta += load.first_delta
        for kind, values in load.kinds.items():
            out.kinds.setdefault(kind, []).extend(values)
        out.answered += load.answered
        out.knowledge_asked += load.knowledge_asked
        for code, n in load.errors.items():
            out.errors[code] = out.errors.get(code, 0) + n
        for name in (
            "wall",
            "client_cpu",
            "server_cpu",
            "postgres_cpu",
            "ledger_events",
            "statements",
            "transactions",
            "machine_busy",
            "machine_total",
        ):
            setattr(out, name, getattr(out, name) + getattr(load, name))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--turns", type=int, default=20, help="turns per client, sent one after another")
    parser.add_argument("--rounds", type=int, default=2, help="loads of each kind, interleaved")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for any one frame")
    parser.add_argument(
        "--conn-max-age", type=int, default=None, help="DB_CONN_MAX_AGE for the server instead of the pool"
    )
    parser.add_argument("--pool", type=int, default=8, help="DB_POOL for the server (0: no pool)")
    args = parser.parse_args()

    _prepare_database()
    import django

    django.setup()
    warm_clients = min(args.clients, 10)
    seats, facts = seed(3 * args.clients * args.rounds + 2 * warm_clients)
    BENCH_VAR.mkdir(parents=True, exist_ok=True)
    log_path = BENCH_VAR / "chat-daphne.log"
    port = free_port()
    share = governance_share()
    proc = start_server(port, log_path, args.conn_max_age, args.pool)
    try:
        asyncio.run(_measure(args, seats, facts, port, proc.pid, warm_clients, log_path))
        parts = sum(v for k, v in share.items() if k != "turn")
        print(
            "  governance inside a turn (in-process, one turn at a time, same database): "
            + ", ".join(f"{k} {v:.2f} ms" for k, v in share.items() if k != "turn")
            + f" — {parts:.2f} of {share['turn']:.2f} ms per turn ({100 * parts / share['turn']:.0f}%)"
        )
    finally:
        stop_server(proc)


def governance_share(turns: int = 300) -> dict[str, float]:
    """One client's turns in this process, one after another, with the governance steps timed:
    the commitment guard, the tool registry's execution checks, the ledger appends (the message's
    and the run's events) and the prompt built per audience.  Returns ms per turn of each and of
    the whole turn, so the share of governance in a turn is measured, not assumed."""
    from facade.dialogue import events
    from facade.dialogue.runtime import loop, tools
    from facade.dialogue.runtime.loop import turn_handle
    from facade.dialogue.services import session_open
    from facade.tenancy.models import AgentProfile
    from facade.tenancy.rules import Audience
    from facade.tenancy.services import customer_create
    from guard import outgoing

    spent = {"guard": 0.0, "grounding": 0.0, "tool checks": 0.0, "ledger appends": 0.0, "prompt": 0.0}

    def timed(name: str, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - started

        return wrapper

    patches = [
        (outgoing, "guard_check", "guard"),
        (outgoing, "unsourced_figures", "grounding"),
        (tools, "may_execute", "tool checks"),
        (events, "ledger_append", "ledger appends"),  # every event of a customer's turn is the dialogue's
        (loop, "_build_prompt", "prompt"),
    ]
    originals = [(module, attr, getattr(module, attr)) for module, attr, _ in patches]
    for module, attr, name in patches:
        setattr(module, attr, timed(name, getattr(module, attr)))
    try:
        agent = AgentProfile.objects.get(slug="bench-frames")
        texts = [text for _kind, text in script(424242, turns)]
        session = session_open(agent=agent, audience=Audience.CUSTOMER, customer=customer_create(tenant=agent.tenant))
        for text in texts[:20]:  # warm
            turn_handle(session=session, text=text)
        for key in spent:
            spent[key] = 0.0
        session = session_open(agent=agent, audience=Audience.CUSTOMER, customer=customer_create(tenant=agent.tenant))
        started = time.perf_counter()
        for text in texts:
            turn_handle(session=session, text=text)
        total = time.perf_counter() - started
    finally:
        for module, attr, original in originals:
            setattr(module, attr, original)
    out = {name: 1000 * value / turns for name, value in spent.items()}
    out["turn"] = 1000 * total / turns
    return out


async def _measure(
    args: argparse.Namespace,
    seats: list[Seat],
    facts: dict[str, int],
    port: int,
    pid: int,
    warm_clients: int,
    log_path: Path,
) -> None:
    # Warm both paths (imports, connections, caches) on sessions of their own; not counted.
    warm = [script(10_000 + i, 3) for i in range(warm_clients)]
    await run_load("echo", port, [], warm, args.timeout, pid)
    await run_load("chat", port, seats[-warm_clients:], warm, args.timeout, pid)
    await run_load("store", port, seats[-warm_clients:], warm, args.timeout, pid)
    await run_load("ungoverned", port, seats[-2 * warm_clients : -warm_clients], warm, args.timeout, pid)

    modes = ("echo", "store", "ungoverned", "chat")
    loads: dict[str, list[Load]] = {mode: [] for mode in modes}
    for r in range(args.rounds):
        scripts = [script(r * 1000 + i, args.turns) for i in range(args.clients)]
        for mode in modes if r % 2 == 0 else tuple(reversed(modes)):
            # Each load writes into sessions of its own, so every chat history is the load's own
            # and the ungoverned turns start from the same history the chat's did.
            lane = {"chat": 0, "store": 1, "ungoverned": 2}.get(mode, 0)
            base = (r + lane * args.rounds) * args.clients
            mine = seats[base : base + args.clients]
            loads[mode].append(await run_load(mode, port, mine, scripts, args.timeout, pid))

    echo, chat, store, ungoverned = (pooled(loads[mode]) for mode in ("echo", "chat", "store", "ungoverned"))
    planned = args.clients * args.turns * args.rounds
    print(
        f"chat benchmark on PostgreSQL + Redis: {args.clients} clients x {args.turns} turns, sequential per client, "
        f"{args.rounds} rounds per consumer (interleaved), offline provider, {facts['entries']} approved entries"
    )
    mix = ", ".join(f"{k} {len(v)}" for k, v in sorted(chat.kinds.items()))
    print(f"  turns measured: chat {chat.turns}/{planned} ({mix}), echo {echo.turns}/{planned}")
    print(f"  {'':26}{'p50 ms':>9}{'p95 ms':>9}{'turns/s':>10}")
    for label, load in (
        ("echo consumer", echo),
        ("storing echo", store),
        ("chat, governance off", ungoverned),
        ("chat (ChatConsumer)", chat),
    ):
        print(f"  {label:26}{pct(load.latencies, 50):9.1f}{pct(load.latencies, 95):9.1f}{load.turns / load.wall:10.1f}")
    for kind in ("knowledge", "unknown", "greeting"):
        values = chat.kinds.get(kind, [])
        if values:
            print(f"    chat, {kind:19}{pct(values, 50):9.1f}{pct(values, 95):9.1f}")
    if chat.first_delta:
        print(
            f"    chat, to first delta     {pct(chat.first_delta, 50):9.1f}{pct(chat.first_delta, 95):9.1f}"
            "   (the server's work; the rest is the paced streaming of the reply)"
        )
    for r in range(args.rounds):
        e, c = loads["echo"][r], loads["chat"][r]
        print(
            f"    round {r + 1}: echo {e.turns / e.wall:7.1f} turns/s p95 {pct(e.latencies, 95):7.1f} ms | "
            f"chat {c.turns / c.wall:6.1f} turns/s p95 {pct(c.latencies, 95):7.1f} ms"
        )

    def rate(load: Load) -> float:
        return load.turns / load.wall

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    governed, governed_p95 = rate(chat) / rate(ungoverned), pct(chat.latencies, 95) / pct(ungoverned.latencies, 95)
    stored, stored_p95 = rate(chat) / rate(store), pct(chat.latencies, 95) / pct(store.latencies, 95)
    print("  targets (issue 9):")
    print(
        f"    chat / the same chat with its governance off (guard, grounding, tool checks, ledger events): "
        f"turns/s {governed:5.3f} (>= 0.90: {verdict(governed >= 0.9)}), "
        f"p95 {governed_p95:5.2f} (<= 1.15: {verdict(governed_p95 <= 1.15)})"
    )
    print(
        f"    chat / the storing echo (the same consumer storing a message and its reply, no agent): "
        f"turns/s {stored:5.3f} (>= 0.50: {verdict(stored >= 0.5)}), p95 {stored_p95:5.2f}"
    )
    print(
        f"  for information, chat / the bare echo (no work at all): turns/s {rate(chat) / rate(echo):6.3f}, "
        f"p95 {pct(chat.latencies, 95) / pct(echo.latencies, 95):6.1f}"
    )
    steps = {"guard_check": "guard", "unsourced_figures": "grounding", "may_execute": "tool checks",
             "ledger_append": "ledger appends"}  # fmt: skip
    spent = {label: 1000 * chat.governance_cpu.get(step, 0.0) / max(chat.turns, 1) for step, label in steps.items()}
    print(
        "  governance in the server during the chat load, CPU of the turn's thread per turn: "
        + ", ".join(f"{label} {ms:.2f} ms" for label, ms in spent.items())
        + f" — {sum(spent.values()):.2f} ms"
    )
    print("  per turn, from the server:    statements  transactions  ledger events")
    for label, load in (("storing echo", store), ("governance off", ungoverned), ("chat", chat)):
        n = max(load.turns, 1)
        print(f"    {label:27}{load.statements / n:11.1f}{load.transactions / n:14.2f}{load.ledger_events / n:15.2f}")
    print(
        f"  search check before the loads: {facts['found_own']}/{len(ENTRIES)} knowledge questions find their entry, "
        f"{facts['found_none']}/{len(UNKNOWN)} unknown questions find nothing"
    )
    if chat.knowledge_asked:
        print(f"  knowledge questions answered with citations during the loads: {chat.answered}/{chat.knowledge_asked}")
    for label, load in (("echo", echo), ("store", store), ("ungoverned", ungoverned), ("chat", chat)):
        if load.errors:
            print(f"  {label} errors: {', '.join(f'{k} {v}' for k, v in sorted(load.errors.items()))}")
    cores = os.cpu_count() or 1
    print(
        f"  CPU during the loads, % of one core over the load's wall time ({cores} cores; 'other' is Redis, the kernel"
    )
    print("  and anything else running on the machine):")
    print(
        f"  {'':10}{'client':>8}{'server':>8}{'postgres':>10}{'other':>8}{'server ms/turn':>16}{'postgres ms/turn':>18}"
    )
    for label, load in (("echo", echo), ("store", store), ("ungoverned", ungoverned), ("chat", chat)):
        other = load.machine_busy - load.client_cpu - load.server_cpu - load.postgres_cpu
        shares = [100 * s / load.wall for s in (load.client_cpu, load.server_cpu, load.postgres_cpu, max(other, 0.0))]
        per_turn = [1000 * s / max(load.turns, 1) for s in (load.server_cpu, load.postgres_cpu)]
        print(
            f"  {label:10}{shares[0]:7.0f}%{shares[1]:7.0f}%{shares[2]:9.0f}%{shares[3]:7.0f}%"
            f"{per_turn[0]:16.2f}{per_turn[1]:18.2f}"
        )
        if shares[0] >= 90:
            print(
                f"    NOTE: the client process was at ~100% of a core during the {label} load: "
                "its figures are bounded by the client, not the server"
            )
    problems = sum(line.count("Traceback") for line in log_path.read_text(errors="replace").splitlines())
    if problems:
        print(f"  the server logged {problems} traceback(s): see {log_path}")


if __name__ == "__main__":
    main()
