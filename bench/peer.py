"""Peer benchmark (issue 33 §5): tasks per second over the A2A JSON-RPC binding against the same
turns over the peer HTTP API, in the same run (`make bench`; target: A2A >= 0.9x the HTTP API).

`--clients` peers (default 8), each with its own key of the seeded demo shop, send `--turns`
messages (default 10) one after another, waiting for each answer; the clients run in parallel.
Over HTTP a client opens a session (`POST /api/agents/demo-shop/sessions`) and posts its messages
to it; over A2A it sends `SendMessage` — the first without a context, the next in the context the
first opened (a new task in the same conversation, as a peer asking one question after another
would).  Both answer each message with the same run loop, tools, outgoing check and ledger
events; what differs is the binding (JSON-RPC parsing, the task's rows and events).  The loads
alternate (HTTP, A2A, A2A, HTTP, …) so that drift on the machine hits both; figures are pooled.

The server is a real daphne on a free port with FACADE_LLM_PROVIDER=offline and the limits out
of the way, on its own database (default facade_bench_peer on DATABASE_URL's server), created
afresh and dropped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from chat import free_port, launch_daphne, stop_server  # noqa: E402
from fresh_db import drop_database, prepare_database  # noqa: E402

BENCH_VAR = ROOT / "var" / "bench"
UNLIMITED = "1000000/60"
QUESTIONS = (
    "When is the shop open?",
    "How much does a custom cake cost?",
    "Do you deliver?",
    "营业时间是几点？",
    "Hello",
)
TARGET = 0.9


def seed(clients: int) -> list[str]:
    """The demo shop and one peer key per client (the keys, for this process only)."""
    import django

    django.setup()
    from django.core.management import call_command

    from facade.tenancy.models import AgentProfile
    from facade.tenancy.schemas import Actor
    from facade.tenancy.services import peer_key_create

    call_command("migrate", verbosity=0)
    call_command("seed_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    agent = AgentProfile.objects.get(slug="demo-shop")
    actor = Actor.platform("bench")
    return [peer_key_create(agent=agent, name=f"bench {n}", actor=actor).key for n in range(clients)]


async def http_client(site: str, key: str, turns: int, offset: int) -> list[float]:
    import httpx

    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(timeout=120, headers=headers) as http:
        opened = await http.post(f"{site}/api/agents/demo-shop/sessions", json={})
        opened.raise_for_status()
        session = opened.json()["id"]
        took = []
        for n in range(turns):
            text = QUESTIONS[(offset + n) % len(QUESTIONS)]
            began = time.perf_counter()
            answer = await http.post(f"{site}/api/sessions/{session}/messages", json={"text": text})
            answer.raise_for_status()
            took.append(time.perf_counter() - began)
        return took


async def a2a_client(site: str, key: str, turns: int, offset: int) -> list[float]:
    import httpx

    headers = {"X-API-Key": key, "A2A-Version": "1.0"}
    async with httpx.AsyncClient(timeout=120, headers=headers) as http:
        context = ""
        took = []
        for n in range(turns):
            text = QUESTIONS[(offset + n) % len(QUESTIONS)]
            message: dict[str, Any] = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
            if context:
                message["contextId"] = context
            body = {"jsonrpc": "2.0", "id": n, "method": "SendMessage", "params": {"message": message}}
            began = time.perf_counter()
            answer = await http.post(f"{site}/a2a/demo-shop/jsonrpc", json=body)
            answer.raise_for_status()
            result = answer.json()
            if "error" in result:
                raise SystemExit(f"A2A answered an error: {result['error']}")
            took.append(time.perf_counter() - began)
            context = result["result"]["task"]["contextId"]
        return took


async def load(kind: str, site: str, keys: list[str], turns: int) -> tuple[float, list[float]]:
    client = http_client if kind == "http" else a2a_client
    began = time.perf_counter()
    runs = await asyncio.gather(*(client(site, key, turns, i) for i, key in enumerate(keys)))
    wall = time.perf_counter() - began
    return wall, [t for run in runs for t in run]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2, help="each round runs HTTP and A2A (alternating order)")
    args = parser.parse_args()

    prepare_database(script="bench/peer.py", env_name="FACADE_BENCH_PEER_DB", default_name="facade_bench_peer")
    BENCH_VAR.mkdir(parents=True, exist_ok=True)
    keys = seed(args.clients)
    port = free_port()
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "facade.settings",
            "FACADE_VAR_DIR": str(BENCH_VAR),
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "FACADE_PUBLIC_URL": f"http://127.0.0.1:{port}",
            "FACADE_LLM_PROVIDER": "offline",
            "FACADE_RATE_PEER": UNLIMITED,
            "FACADE_RATE_SESSION": UNLIMITED,
            "FACADE_RATE_IP": UNLIMITED,
            "FACADE_DAILY_MODEL_CALLS": str(10**9),
            "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        }
    )
    server = launch_daphne(port, BENCH_VAR / "peer-daphne.log", env, "facade.asgi:application")
    site = f"http://127.0.0.1:{port}"
    walls: dict[str, float] = {"http": 0.0, "a2a": 0.0}
    turns: dict[str, list[float]] = {"http": [], "a2a": []}
    try:
        asyncio.run(load("a2a", site, keys[:1], 2))  # warm both paths once, unmeasured
        asyncio.run(load("http", site, keys[:1], 2))
        for n in range(args.rounds):
            for kind in ("http", "a2a") if n % 2 == 0 else ("a2a", "http"):
                wall, took = asyncio.run(load(kind, site, keys, args.turns))
                walls[kind] += wall
                turns[kind] += took
    finally:
        stop_server(server)
        drop_database()
    rate = {kind: len(turns[kind]) / walls[kind] for kind in walls}
    print(f"peer benchmark: {args.clients} clients x {args.turns} turns x {args.rounds} rounds, offline model")
    for kind, name in (("http", "peer HTTP API"), ("a2a", "A2A JSON-RPC")):
        p50 = statistics.median(turns[kind]) * 1000
        p95 = statistics.quantiles(turns[kind], n=20)[18] * 1000
        print(f"  {name:<14} {rate[kind]:7.1f} turns/s   p50 {p50:6.0f} ms   p95 {p95:6.0f} ms")
    ratio = rate["a2a"] / rate["http"]
    verdict = "met" if ratio >= TARGET else "NOT met"
    print(f"  A2A / HTTP: {ratio:.2f}x (target >= {TARGET}x: {verdict})")


if __name__ == "__main__":
    main()
