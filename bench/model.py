"""What a small local model costs a turn (`make bench`; issue 29 §3, informational: no target).

The seeded demo shop (`seed_demo`: its knowledge, contract and tools) answers the same customer
questions, in English and Chinese, through the real run loop (`turn_handle`: prompt, tools, the
outgoing check, the ledger) with two models in the same run:

* the built-in offline model (`FACADE_LLM_PROVIDER=offline`), the default;
* SmolLM2-135M-Instruct on llama.cpp's server through the pinned `llama-cpp-python[server]`, as
  tests/test_real_model.py runs it (tests/llama_server.py: one CPU thread, a context of 2048,
  `FACADE_LLM_MAX_TOKENS=40`), in its two chat formats: `chatml` (text; the model is shown no
  tools) and `chatml-function-calling` (the tools in the prompt, every answer a call or empty).

Every question is a new customer session; each is asked of the offline model and of the local
model back to back, the order alternating, so that drift on the machine hits both.  Printed per
model: p50 and p95 turn latency (the whole `turn_handle`, the database included), model calls per
turn, and prompt and completion tokens per turn (the server's counts; the offline model's are its
own estimate, a token per four characters), and the latency ratio against the offline model in
the same run.  The text format runs first (`--text` questions, default 20), then the tools format
(`--tools`, default 2: a turn there costs 10-150 s on two cores).

It uses its own database (default facade_bench_model on DATABASE_URL's server), created afresh
and dropped at the end; the server's log is var/bench/model-server.log.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from fresh_db import drop_database, prepare_database  # noqa: E402

BENCH_VAR = ROOT / "var" / "bench"
MAX_TOKENS = 40
QUESTIONS = (
    "Hello! When do you open on Sunday?",
    "你好，周日几点开门？",
    "How much is a birthday cake?",
    "生日蛋糕多少钱？",
    "Can you deliver tomorrow?",
    "明天能送到吗？",
    "Can I talk to a person?",
    "可以找人工吗？",
    "Do you guarantee a refund?",
    "你们保证退款吗？",
)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text", type=int, default=20, help="questions in the text format")
    parser.add_argument("--tools", type=int, default=2, help="questions in the tools format")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark's database")
    args = parser.parse_args()

    prepare_database(script="bench/model.py", env_name="FACADE_BENCH_MODEL_DB", default_name="facade_bench_model")
    BENCH_VAR.mkdir(parents=True, exist_ok=True)
    os.environ["FACADE_VAR_DIR"] = str(BENCH_VAR)
    import django

    django.setup()
    from django.core.management import call_command
    from llama_server import TEXT, TOOLS, serve

    from facade.dialogue.models import Run
    from facade.dialogue.runtime.loop import turn_handle
    from facade.dialogue.runtime.providers.offline import OfflineProvider
    from facade.dialogue.runtime.providers.openai import OpenAICompatibleProvider
    from facade.dialogue.services import session_open
    from facade.tenancy.models import AgentProfile
    from facade.tenancy.rules import Audience
    from facade.tenancy.services import customer_create

    call_command("migrate", verbosity=0)
    call_command("seed_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    agent = AgentProfile.objects.get(slug="demo-shop")

    def turn(provider: Any, question: str) -> dict[str, float]:
        session = session_open(agent=agent, audience=Audience.CUSTOMER, customer=customer_create(tenant=agent.tenant))
        began = time.perf_counter()
        turn_handle(session=session, text=question, provider=provider)
        took = time.perf_counter() - began
        run = Run.objects.filter(session=session).get()
        return {
            "latency": took,
            "calls": run.llm_call_count,
            "prompt": run.prompt_tokens,
            "completion": run.completion_tokens,
        }

    offline = OfflineProvider(agent)
    results: dict[str, list[dict[str, float]]] = {}
    try:
        with serve(BENCH_VAR / "model-server.log") as url:
            for alias, count in ((TEXT, args.text), (TOOLS, args.tools)):
                with OpenAICompatibleProvider(url, alias, timeout=300, max_retries=1, max_tokens=MAX_TOKENS) as model:
                    turn(model, "Hello")  # loads this format's model and reads its prompt once (not counted)
                    for n in range(count):
                        question = QUESTIONS[n % len(QUESTIONS)]
                        pair = [("offline", offline), (alias, model)]
                        for name, provider in pair if n % 2 == 0 else reversed(pair):
                            key = f"offline (beside {alias})" if name == "offline" else name
                            results.setdefault(key, []).append(turn(provider, question))
    finally:
        if not args.keep:
            drop_database()

    print(f"{'model':<34} {'turns':>5} {'p50 s':>7} {'p95 s':>7} {'calls':>6} {'prompt tok':>10} {'compl tok':>9}")
    for name, rows in results.items():
        latency = [row["latency"] for row in rows]
        print(
            f"{name:<34} {len(rows):>5} {statistics.median(latency):>7.3f} {percentile(latency, 0.95):>7.3f}"
            f" {statistics.mean(r['calls'] for r in rows):>6.2f} {statistics.mean(r['prompt'] for r in rows):>10.0f}"
            f" {statistics.mean(r['completion'] for r in rows):>9.1f}"
        )
    for alias in (TEXT, TOOLS):
        if alias in results:
            model_p50 = statistics.median(row["latency"] for row in results[alias])
            base_p50 = statistics.median(row["latency"] for row in results[f"offline (beside {alias})"])
            print(f"{alias}: p50 latency {model_p50 / base_p50:.0f}x the offline model's in the same run")


if __name__ == "__main__":
    main()
