"""Commitment guard benchmark (`make bench`): CPU per reply, against a plain `re` scan.

The sentences of the guard's corpus (guard/corpus/, English and Chinese) are shuffled with a
fixed seed and joined into replies of about 300 characters, the length of a typical customer
reply, in two sets: replies made of the harmless sentences only (what a delivered reply looks
like: the guard runs every check and blocks next to nothing) and replies made of the whole corpus
(commitments too: most are blocked, price ones as soon as they are found).  For every reply the
benchmark measures, back to back and in alternating order so that drift on the machine hits both:

* `guard_check(reply)` - the guard's named rules, as the runtime calls them on every outgoing
  message; and the rules followed by the guard's model (`guard/classifier.py`: the model reads
  every reply the rules pass, so a delivered reply pays for both);
* a plain `re` scan of the same reply - lower-cased, cut into sentences, and each sentence
  searched with one compiled alternation of the simple words a naive guard would look for
  (price, deliver, guarantee, 元, 保证 ...).  It is the floor for any regex-based check of the
  same text, not a guard: it does no normalisation, no clauses, no negation.

Each figure is the CPU time (`time.process_time`) of `--repeat` calls divided by `--repeat`, per
reply and per round.  Prints median and p95 per reply of both and the guard / scan ratios.  No
database, no Django setup: the guard is pure.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = ROOT / "guard" / "corpus"

# Words a first attempt at a guard would search for: a currency or price word, a delivery verb or
# a time word, a promise word, in both languages.  Plain alternatives, no lookarounds.
_SCAN_WORDS = (
    "price cost costs free discount dollars euros deliver delivered ship shipped ready tomorrow today within "
    "guarantee guaranteed promise ensure definitely refund "
    "价 元 块 免费 折 送达 发货 明天 天内 保证 承诺 确保 一定 退款"
).split()
_SCAN = re.compile(
    r"[$€£¥]|\d+\s?%|\b(?:"
    + "|".join(w for w in _SCAN_WORDS if w.isascii())
    + r")\b|"
    + "|".join(w for w in _SCAN_WORDS if not w.isascii())
)
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")


def plain_scan(text: str) -> bool:
    """The baseline: does any sentence of `text` contain one of the simple words?"""
    return any(_SCAN.search(sentence) for sentence in _SENTENCE.split(text.lower()) if sentence)


def corpus_sentences(name: str) -> list[str]:
    """The texts of one corpus file (the last column; header dropped)."""
    _header, *lines = (CORPUS / name).read_text(encoding="utf-8").splitlines()
    return [line.split("\t")[-1] for line in lines if line.strip()]


def build_replies(sentences: list[str], *, length: int, seed: int) -> list[str]:
    """The sentences in a fixed shuffled order, joined into replies of at least `length` characters."""
    shuffled = list(sentences)
    random.Random(seed).shuffle(shuffled)
    replies: list[str] = []
    current = ""
    for sentence in shuffled:
        current = f"{current} {sentence}" if current else sentence
        if len(current) >= length:
            replies.append(current)
            current = ""
    return replies


def cpu_per_call(check: Callable[[str], object], text: str, repeat: int) -> float:
    start = time.process_time()
    for _ in range(repeat):
        check(text)
    return (time.process_time() - start) / repeat


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reply-chars", type=int, default=300, help="minimum length of a reply (characters)")
    parser.add_argument("--repeat", type=int, default=20, help="calls per reply per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="passes over all replies")
    parser.add_argument("--seed", type=int, default=9)
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "facade.settings")
    from guard.classifier import model_verdict, reader
    from guard.engine import guard_check

    def rules_and_model(text: str) -> Any:
        verdict = guard_check(text)
        return verdict if verdict.blocked else model_verdict(text)

    reader()  # fitted once per process, before anything is timed

    harmless = corpus_sentences("harmless.tsv")
    sets = {
        "harmless replies": build_replies(harmless, length=args.reply_chars, seed=args.seed),
        "whole corpus": build_replies(
            corpus_sentences("commitments.tsv") + harmless, length=args.reply_chars, seed=args.seed
        ),
    }
    for label, replies in sets.items():
        measure(label, replies, guard_check, "guard_check", rounds=args.rounds, repeat=args.repeat)
        measure(label, replies, rules_and_model, "rules + model", rounds=args.rounds, repeat=args.repeat)


def measure(
    label: str, replies: list[str], guard: Callable[[str], Any], name: str, *, rounds: int, repeat: int
) -> None:
    for reply in replies:  # warm up: first calls pay for cold caches
        guard(reply)
        plain_scan(reply)

    guard_times: list[float] = []
    scan_times: list[float] = []
    for round_number in range(rounds):
        for index, reply in enumerate(replies):
            # Alternate which side runs first, so neither always finds the caches warm.
            if (index + round_number) % 2:
                scan_times.append(cpu_per_call(plain_scan, reply, repeat))
                guard_times.append(cpu_per_call(guard, reply, repeat))
            else:
                guard_times.append(cpu_per_call(guard, reply, repeat))
                scan_times.append(cpu_per_call(plain_scan, reply, repeat))
    blocked = sum(bool(guard(reply).blocked) for reply in replies)
    flagged = sum(plain_scan(reply) for reply in replies)

    chars = statistics.mean(len(reply) for reply in replies)
    print(f"{label}: {len(replies)} replies of {chars:.0f} characters on average, {rounds} rounds x {repeat} calls")
    print(f"  blocked by the guard: {blocked}; flagged by the plain scan: {flagged}")
    for shown, times in ((name, guard_times), ("plain re scan", scan_times)):
        print(
            f"  {shown:<14} median {statistics.median(times) * 1e6:8.1f} µs   "
            f"p95 {percentile(times, 0.95) * 1e6:8.1f} µs   (CPU per reply)"
        )
    median_ratio = statistics.median(guard_times) / statistics.median(scan_times)
    p95_ratio = percentile(guard_times, 0.95) / percentile(scan_times, 0.95)
    print(f"  {name} / plain scan: median {median_ratio:.1f}x, p95 {p95_ratio:.1f}x")


if __name__ == "__main__":
    main()
