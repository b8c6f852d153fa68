"""Calibrate the work unit of the cost model (``budget.session_work``) to CPU time, once (run by hand).

    python bench/cost_units.py [--repeat 1]

For families of configs that stress each part of the model (the p^(1/T) of long and tiny entries by
decimal evaluation and by the walk, mode block's growing weights, the tree's residuals, one-hot rows
whose cost is all Python overhead), each run (``engine.run``, the rows processed inside it, nothing
memoised before) is timed in CPU seconds of this process and counted with the engine's own counter
(``engine.work``, bit operations). Printed per family: the estimate (work units), the count, the CPU
seconds, and nanoseconds per estimated unit: ``budget.WORK_BUDGET`` times the largest of those must
stay under 2 s with margin. Each run uses fresh models (distinct random rows), so no memo helps.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))

from specdec_service.budget import WORK_BUDGET, config_work, session_work  # noqa: E402
from specdec_service.engine import parse_config, run  # noqa: E402
from specdec_service.engine.work import counting  # noqa: E402


def tiny_rows(rnd: random.Random, size: int, exponent: int, digits: int = 17) -> dict:
    """Rows ``[1, then size - 1 entries of `digits` digits times 10^exponent]`` (issue 27's family 1)."""
    vocab = [f"t{i}" for i in range(size)]

    def row() -> list:
        return [1.0] + [float(f"{rnd.randint(10 ** (digits - 1), 10 ** digits - 1)}e{exponent - digits + 1}")
                        for _ in range(size - 1)]
    return {"vocab": vocab, "start": row(), "next": {label: row() for label in vocab}}


def random_rows(rnd: random.Random, size: int, digits: int) -> dict:
    """Random rows of ``digits``-decimal entries summing to 1 (the last absorbs the rounding)."""
    vocab = [f"t{i}" for i in range(size)]

    def row() -> list:
        xs = [rnd.random() + 0.01 for _ in range(size)]
        total = sum(xs)
        entries = [round(x / total, digits) for x in xs[1:]]
        return [float(repr(1 - sum(entries)))] + entries
    return {"vocab": vocab, "start": row(), "next": {label: row() for label in vocab}}


def one_hot(size: int, shift: int) -> dict:
    vocab = [f"t{i}" for i in range(size)]
    row = lambda i: [1.0 if j == i % size else 0.0 for j in range(size)]  # noqa: E731
    return {"vocab": vocab, "start": row(0), "next": {label: row(i + shift) for i, label in enumerate(vocab)}}


def families(rnd: random.Random):
    yield "p^(1/T) by decimal: 64 labels, rows 1e-300 (17 digits), T 2.5, width 1, limit 1", {
        "target": tiny_rows(rnd, 64, -300), "draft": tiny_rows(rnd, 64, -300), "width": 1, "limit": 1,
        "sampling": {"temperature": 2.5}}
    yield "p^(1/T) by decimal: 64 labels, rows 1e-20 (17 digits), T 0.15, width 1, limit 1", {
        "target": tiny_rows(rnd, 64, -20), "draft": tiny_rows(rnd, 64, -20), "width": 1, "limit": 1,
        "sampling": {"temperature": 0.15}}
    yield "p^(1/T) by the walk: 64 labels, 6-digit rows, T 0.7, width 16, limit 8", {
        "target": random_rows(rnd, 64, 6), "draft": random_rows(rnd, 64, 6), "width": 16, "limit": 8,
        "sampling": {"temperature": 0.7}}
    yield "mode block: 64 labels, 15-digit rows, T 0.05, width 16, limit 3", {
        "target": random_rows(rnd, 64, 15), "draft": random_rows(rnd, 64, 15), "mode": "block", "width": 16,
        "limit": 3, "sampling": {"temperature": 0.05}}
    yield "mode tree: 64 labels, 6-digit rows, D 8, T 0.07, top_k/top_p/min_p, width 4, limit 8", {
        "target": random_rows(rnd, 64, 6), "draft": random_rows(rnd, 64, 6), "mode": "tree", "drafts": 8,
        "width": 4, "limit": 8, "sampling": {"temperature": 0.07, "top_k": 40, "top_p": 0.9, "min_p": 0.01}}
    yield "mode speculative: 64 labels, 15-digit rows, width 16, limit 64", {
        "target": random_rows(rnd, 64, 15), "draft": random_rows(rnd, 64, 15), "width": 16, "limit": 64}
    yield "overhead: 64 one-hot labels, width 16, limit 256 (255 blocks)", {
        "target": one_hot(64, 1), "draft": one_hot(64, 2), "width": 16, "limit": 256}
    yield "overhead: 64 one-hot labels, mode block, width 16, limit 256", {
        "target": one_hot(64, 1), "draft": one_hot(64, 2), "mode": "block", "width": 16, "limit": 256}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=27)
    args = parser.parse_args()
    rnd = random.Random(args.seed)
    print("| family | estimate (work units) | exact part | counted | CPU s | ns / estimated unit |")
    print("|---|---:|---:|---:|---:|---:|")
    worst = 0.0
    for name, body in families(rnd):
        config = parse_config({"seed": 1, **body})
        estimate, exact = session_work(config, config.limit), config_work(config, config.limit)
        start = time.process_time()
        with counting() as work:
            run(config)
        seconds = time.process_time() - start
        assert work.units <= exact, name
        worst = max(worst, seconds / estimate * 1e9)
        print(f"| {name} | {estimate:,} | {exact:,} | {work.units:,} | {seconds:.3f} | {seconds / estimate * 1e9:.2f} |")
    print(f"\nWORK_BUDGET {WORK_BUDGET:,} units x {worst:.2f} ns (the costliest family) = {WORK_BUDGET * worst / 1e9:.2f} s")


if __name__ == "__main__":
    main()
