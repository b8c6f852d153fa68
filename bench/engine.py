"""Engine speed, in-process (run by hand, not in CI).

    python bench/engine.py [--repeat 5] [--cpu]

Times (1) a whole 8-token toy run (target toy, draft biased, width 3, seed 1)
and (2) a width-16, 64-token-vocabulary, 256-token custom run, each the best
of ``--repeat`` rounds of timeit, and prints the figures. Target (issue 2):
a whole toy run well under 1 ms on one core. Record results in
docs/bench-engine.md.
"""

from __future__ import annotations

import argparse
import platform
import random
import time
import timeit

from specdec_service.engine import parse_config, run


def custom_model(vocab_size: int, seed: int) -> dict:
    """A random bigram table over ``vocab_size`` labels, rows summing to 1
    exactly as decimals with 6 places."""
    rng = random.Random(seed)
    vocab = [f"t{i}" for i in range(vocab_size)]

    def row():
        cuts = sorted(rng.sample(range(1, 10**6), vocab_size - 1))
        parts = [b - a for a, b in zip([0] + cuts, cuts + [10**6])]
        return [p / 10**6 for p in parts]

    return {"vocab": vocab, "start": row(), "next": {t: row() for t in vocab}}


CLOCK = timeit.default_timer
"""The clock of :func:`best_of`: wall time, or process CPU time with ``--cpu``."""


def best_of(stmt, number: int, repeat: int) -> float:
    """Best time per call in seconds (by :data:`CLOCK`)."""
    return min(timeit.repeat(stmt, number=number, repeat=repeat, timer=CLOCK)) / number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cpu", action="store_true",
                        help="process CPU time instead of wall time (steadier on a shared machine)")
    args = parser.parse_args()
    global CLOCK
    if args.cpu:
        CLOCK = time.process_time

    toy = parse_config({"draft": "biased", "seed": 1, "width": 3})
    target, draft = custom_model(64, 1), custom_model(64, 2)
    big = parse_config({"target": target, "draft": draft, "seed": 1, "width": 16, "limit": 256})
    big_trace = run(big)

    toy_time = best_of(lambda: run(toy), 2000, args.repeat)
    big_time = best_of(lambda: run(big), 5, args.repeat)
    print(f"python {platform.python_version()} on {platform.machine()}, one core, {'CPU' if args.cpu else 'wall'} time")
    print(f"toy run, 8 tokens, width 3:            {toy_time * 1e3:8.3f} ms  ({1 / toy_time:8.0f} runs/s)")
    print(
        f"custom run, 64 tokens vocab, width 16, 256 tokens: {big_time * 1e3:8.3f} ms"
        f"  ({len(big_trace['blocks'])} blocks, {big_trace['counters']['draws']} draws)"
    )
    print(f"parse + run of the custom config:      {best_of(lambda: run(parse_config({'target': target, 'draft': draft, 'seed': 1, 'width': 16, 'limit': 256})), 5, args.repeat) * 1e3:8.3f} ms")


if __name__ == "__main__":
    main()
