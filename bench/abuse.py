"""Abuse benchmark on PostgreSQL + Redis (`make bench`): does a well-behaved customer stay served
while anonymous clients abuse the public endpoints?

A real daphne serves the product (its own database, default facade_bench_abuse, and Redis db 13)
with its production limits, behind a pretend proxy on loopback: the server trusts
X-Forwarded-For from 127.0.0.1, and each client of this script sends its own address there, as a
proxy would.  No traffic leaves the machine; the addresses only name the clients.

One customer chats over the WebSocket (a question every half second, waiting for each reply),
first alone, then while N anonymous clients (default 8) loop as fast as they are answered over:
oversized JSON bodies (1 MiB) to the session endpoint, session opens with no cookie, and
knowledge searches.  Everything is bounded: the abusers stop when the customer's turns are done
or after --max-seconds, and after --max-requests requests in all.  Prints the customer's p50/p95
alone and under abuse, the ratio (target p95 <= 2x), and what the abusers were answered.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import chat  # noqa: E402  (the chat benchmark's world: entries, questions, seeding)
from fresh_db import prepare_database  # noqa: E402

REDIS_URL = "redis://127.0.0.1:6379/13"
BENCH_VAR = ROOT / "var" / "bench"
# The chatting customer asks faster than a person types; its own limit is raised so that only
# what the abusers do can slow it down.  Every other limit is the product's default.
CUSTOMER_RATE = "600/60"
GOOD_ADDRESSES = ("198.51.100.1", "198.51.100.2")  # documentation addresses (RFC 5737): never contacted
ABUSER_ADDRESSES = "203.0.113.{}"
BIG_BODY = json.dumps({"padding": "x" * (1 << 20)}).encode()


def start_server(port: int, log_path: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "facade.settings",
            "REDIS_URL": REDIS_URL,
            "FACADE_VAR_DIR": str(BENCH_VAR),
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "FACADE_PUBLIC_URL": f"http://127.0.0.1:{port}",
            "FACADE_LLM_PROVIDER": "offline",
            "FACADE_RATE_CUSTOMER": CUSTOMER_RATE,
            "FACADE_TRUSTED_PROXIES": "127.0.0.1",
            "DB_POOL": "8",
            "PYTHONPATH": str(ROOT),
        }
    )
    return chat.launch_daphne(port, log_path, env, "facade.asgi:application")


async def customer(port: int, seat: chat.Seat, turns: int, pause: float, timeout: float, address: str) -> list[float]:
    from websockets.asyncio.client import connect

    latencies: list[float] = []
    headers = {"Cookie": seat.cookie, "X-Forwarded-For": address}
    url = f"ws://127.0.0.1:{port}/ws/sessions/{seat.session_id}/"
    async with connect(url, origin=f"http://127.0.0.1:{port}", additional_headers=headers, ping_interval=None) as ws:
        while json.loads(await asyncio.wait_for(ws.recv(), timeout))["type"] != "history":
            pass
        for _kind, text in chat.script(4242, turns):
            cid = str(uuid.uuid4())
            sent = time.perf_counter()
            await ws.send(json.dumps({"type": "message", "text": text, "client_message_id": cid}))
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), timeout))
                if frame.get("client_message_id") != cid:
                    continue
                if frame["type"] == "reply":
                    latencies.append(time.perf_counter() - sent)
                    break
                if frame["type"] == "error":
                    raise SystemExit(f"the well-behaved customer was refused: {frame}")
            await asyncio.sleep(pause)
    return latencies


def _request(kind: str, port: int, slug: str, address: str) -> bytes:
    """One abusive request, as bytes on the wire (HTTP/1.1, kept alive)."""
    head = f"Host: 127.0.0.1:{port}\r\nX-Forwarded-For: {address}\r\nContent-Type: application/json\r\n"
    if kind == "oversized":
        line = f"POST /api/agents/{slug}/sessions HTTP/1.1\r\n{head}Content-Length: {len(BIG_BODY)}\r\n\r\n"
        return line.encode() + BIG_BODY
    if kind == "open":
        return f"POST /api/agents/{slug}/sessions HTTP/1.1\r\n{head}Content-Length: 2\r\n\r\n{{}}".encode()
    return f"GET /api/agents/{slug}/knowledge/search?q=frames HTTP/1.1\r\n{head}\r\n".encode()


async def _exchange(port: int, conn: list[Any], request: bytes) -> int:
    """Send `request` on the kept-alive connection in `conn` (opened again when the server closed
    it); the answer's status."""
    if not conn:
        conn.extend(await asyncio.open_connection("127.0.0.1", port))
    reader, writer = conn
    writer.write(request)
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length, close = 0, False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
        elif name.strip().lower() == b"connection" and value.strip().lower() == b"close":
            close = True
    await reader.readexactly(length)
    if close:
        writer.close()
        conn.clear()
    return status


async def abuser(n: int, port: int, slug: str, args: dict[str, Any], deadline: float, answers: Counter[str]) -> None:
    """One abusive client: a request at `rate` per second (or, at 0, as soon as the last one is
    answered) until the deadline, its budget or the parent's stop."""
    rng = random.Random(n)
    address = ABUSER_ADDRESSES.format(n + 1)
    kinds = args["kinds"]
    requests = {kind: _request(kind, port, slug, address) for kind in kinds}
    rate, budget = args["rate"], args["budget"]
    conn: list[Any] = []
    loop = asyncio.get_running_loop()
    next_at = loop.time()
    sent = 0
    while loop.time() < deadline and sent < budget:
        kind = rng.choice(kinds)
        sent += 1
        try:
            status = await asyncio.wait_for(_exchange(port, conn, requests[kind]), 30)
            answers[f"{kind} {status}"] += 1
        except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError) as exc:
            answers[f"{kind} {type(exc).__name__}"] += 1
            if conn:
                conn[1].close()
                conn.clear()
        if rate > 0:
            next_at += 1 / rate
            await asyncio.sleep(max(0.0, next_at - loop.time()))


def abusers_main(port: int, slug: str, args: dict[str, Any], results: Any) -> None:
    """The abusers' process: its own interpreter and event loop, so that what they cost the
    client side never delays the well-behaved customer's own loop (it did when they shared it)."""

    async def run() -> Counter[str]:
        answers: Counter[str] = Counter()
        deadline = asyncio.get_running_loop().time() + args["seconds"]
        tasks = [asyncio.create_task(abuser(n, port, slug, args, deadline, answers)) for n in range(args["abusers"])]
        await asyncio.gather(*tasks)
        return answers

    started = time.perf_counter()
    answers = asyncio.run(run())
    results.put((dict(answers), time.perf_counter() - started, time.process_time()))


def pct(values: list[float], p: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1] * 1000


def cpu_seconds(pid: int) -> float:
    """User and system CPU a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(args: argparse.Namespace, port: int, seats: list[chat.Seat], server_pid: int) -> None:
    # Each phase from its own address, so that the first phase's messages are not counted
    # against the second's address window.
    alone = await customer(port, seats[0], args.turns, args.pause, args.timeout, GOOD_ADDRESSES[0])
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    options = {
        "kinds": args.kinds.split(","),
        "rate": args.rate,
        "abusers": args.abusers,
        # Each abuser's share of --max-requests; the customer's turns take about turns * pause.
        "budget": max(1, args.max_requests // args.abusers),
        "seconds": min(args.max_seconds, args.turns * (args.pause + 0.1) + 5),
    }
    process = context.Process(target=abusers_main, args=(port, "bench-frames", options, results), daemon=True)
    process.start()
    await asyncio.sleep(1.0)  # the abusers' interpreter starts and they are under way
    server_before = cpu_seconds(server_pid)
    try:
        abused = await asyncio.wait_for(
            customer(port, seats[1], args.turns, args.pause, args.timeout, GOOD_ADDRESSES[1]), timeout=args.max_seconds
        )
    finally:
        answers, wall, client_cpu = await asyncio.get_running_loop().run_in_executor(None, results.get, True, 300)
        server_cpu = cpu_seconds(server_pid) - server_before
        process.join(30)
    ratio = pct(abused, 95) / pct(alone, 95)
    pace = f"{args.rate:g} requests/s each" if args.rate > 0 else "each as fast as it is answered"
    print(f"abuse benchmark: one customer, {args.turns} turns ({args.pause} s apart), {args.abusers} abusers ({pace})")
    print(f"  {'':22}{'p50 ms':>9}{'p95 ms':>9}")
    print(f"  {'customer alone':22}{pct(alone, 50):9.1f}{pct(alone, 95):9.1f}")
    print(f"  {'customer under abuse':22}{pct(abused, 50):9.1f}{pct(abused, 95):9.1f}")
    print(f"  ratio p95 abused/alone {ratio:7.2f}   (target <= 2.00: {'met' if ratio <= 2 else 'NOT met'})")
    total = sum(answers.values())
    print(
        f"  abusers: {total} requests in {wall:.1f} s ({total / wall:.0f}/s), "
        f"their own client's CPU {client_cpu:.1f} s; answered:"
    )
    for key, count in sorted(answers.items()):
        print(f"    {key:28}{count:7d}")
    print(
        f"  the server's process used {server_cpu:.1f} s of CPU meanwhile "
        f"({server_cpu / wall * 100:.0f}% of one core; {server_cpu / max(1, total) * 1000:.2f} ms per abusive request, "
        "the customer's turns included)"
    )
    if args.timeline:
        print("  the customer's turns under abuse, in order (ms):")
        print("    " + " ".join(f"{value * 1000:.0f}" for value in abused))


async def floor(args: argparse.Namespace) -> None:
    """The same abusers, as fast as they are answered, against daphne serving bench/bare_asgi.py:
    the server's own CPU per request, before any of the product's code."""
    port = chat.free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "bench"))
    server = chat.launch_daphne(port, BENCH_VAR / "abuse-bare-daphne.log", env, "bare_asgi:application")
    try:
        context = multiprocessing.get_context("spawn")
        results = context.Queue()
        options = {"kinds": args.kinds.split(","), "rate": 0, "abusers": args.abusers, "budget": 10**9, "seconds": 8}
        before = cpu_seconds(server.pid)
        process = context.Process(target=abusers_main, args=(port, "bench-frames", options, results), daemon=True)
        process.start()
        answers, wall, _client_cpu = await asyncio.get_running_loop().run_in_executor(None, results.get, True, 120)
        used = cpu_seconds(server.pid) - before
        process.join(30)
    finally:
        chat.stop_server(server)
    total = sum(answers.values())
    print(
        f"  baseline, the same abusers against daphne with a bare ASGI app (429 at once, no Django, no gate): "
        f"{total / wall:.0f} requests/s, {used / max(1, total) * 1000:.2f} ms of the server's CPU per request"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--abusers", type=int, default=8)
    parser.add_argument(
        "--rate", type=float, default=25.0, help="requests per second per abuser; 0: each as fast as it is answered"
    )
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--pause", type=float, default=0.5, help="seconds between the customer's turns")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for any one frame")
    parser.add_argument("--max-seconds", type=float, default=120.0, help="the abused phase stops after this")
    parser.add_argument("--max-requests", type=int, default=20_000, help="abusers' requests in all, at most")
    parser.add_argument("--timeline", action="store_true", help="print each turn's time under abuse, in order")
    parser.add_argument(
        "--kinds", default="oversized,open,search", help="what the abusers send, drawn at random (comma-separated)"
    )
    args = parser.parse_args()

    prepare_database(script="bench/abuse.py", env_name="FACADE_BENCH_ABUSE_DB", default_name="facade_bench_abuse")
    os.environ["REDIS_URL"] = REDIS_URL
    os.environ["FACADE_VAR_DIR"] = str(BENCH_VAR)
    import django

    django.setup()
    from django.core.cache import cache

    seats, _facts = chat.seed(2)
    cache.clear()  # no counts left from an earlier run
    BENCH_VAR.mkdir(parents=True, exist_ok=True)
    port = chat.free_port()
    proc = start_server(port, BENCH_VAR / "abuse-daphne.log")
    try:
        asyncio.run(measure(args, port, seats, proc.pid))
    finally:
        chat.stop_server(proc)
    asyncio.run(floor(args))


if __name__ == "__main__":
    main()
