"""Where the budget of POST /v1/analysis comes from: the cost model against measured time.

    .venv/bin/python bench/analysis.py            # a table: config, cost units, seconds, us per unit

For built-in and random custom configs (rows of 2, 3, 6 or 15 decimal digits, so that the
common denominator G of the step rows, and with it the size of the exact integers, varies),
it computes ``analysis_cost`` and times ``analyze`` (best of ``--repeat`` runs, one core);
configs over ``--max-cost`` are only costed (and the time to refuse them is shown). The
ratio seconds / cost should stay at or below about 1 us per unit for the budget (1,500,000
units) to mean "at most about 1.5 s" (docs/analysis.md, "Cost and budget"). Timings are
noisy on a shared machine: compare the ratios of one run.
"""

from __future__ import annotations

import argparse
import random
import time

from specdec_service.budget import BUDGETS
from specdec_service.engine.analysis import analysis_cost, analyze, parse_analysis_config


def row(rng: random.Random, size: int, digits: int) -> list[float]:
    scale = 10 ** digits
    cuts = sorted(rng.randrange(scale + 1) for _ in range(size - 1))
    return [(b - a) / scale for a, b in zip([0, *cuts], [*cuts, scale])]


def model(rng: random.Random, size: int, digits: int) -> dict:
    vocab = [f"t{i}" for i in range(size)]
    return {"vocab": vocab, "start": row(rng, size, digits), "next": {v: row(rng, size, digits) for v in vocab}}


CASES = [  # (vocabulary or None for the toy, width, limit, depth, digits, widths)
    (None, 3, 8, 3, 0, range(1, 9)),
    (None, 16, 256, 8, 0, range(1, 17)),
    (3, 16, 256, 8, 2, range(1, 9)),
    (6, 8, 256, 3, 3, range(1, 9)),
    (6, 16, 256, 4, 15, range(1, 9)),
    (8, 8, 64, 3, 3, range(1, 9)),
    (12, 16, 256, 3, 3, range(1, 9)),
    (16, 8, 128, 3, 3, range(1, 9)),
    (16, 4, 64, 3, 6, range(1, 5)),
    (32, 4, 32, 2, 3, range(1, 5)),
    (64, 2, 16, 2, 3, range(1, 3)),
    (64, 16, 256, 3, 3, range(1, 9)),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--max-cost", type=int, default=4_000_000)
    args = parser.parse_args()
    rng = random.Random(3)
    budget = BUDGETS["POST /v1/analysis"].limit
    print(f"budget {budget:,} units")
    print(f"{'V':>3} {'w':>3} {'limit':>5} {'depth':>5} {'digits':>6} {'cost':>12} {'seconds':>8} {'us/unit':>8}")
    for size, width, limit, depth, digits, widths in CASES:
        if size is None:
            config = {"draft": "biased", "width": width, "limit": limit}
        else:
            config = {"target": model(rng, size, digits), "draft": model(rng, size, digits), "width": width,
                      "limit": limit}
        start = time.perf_counter()
        parsed = parse_analysis_config(config)
        cost = analysis_cost(parsed, depth, widths)
        costing = time.perf_counter() - start
        label = f"{size or 3:>3} {width:>3} {limit:>5} {depth:>5} {digits if size else 'toy':>6} {cost:>12,}"
        if cost > args.max_cost:
            print(f"{label} {'-':>8} {'-':>8}  over budget: refused after {costing:.3f} s (parse + cost)")
            continue
        best = min(_timed(parsed, depth, widths) for _ in range(args.repeat))
        flag = "" if cost <= budget else "  (over budget)"
        print(f"{label} {best:>8.3f} {best / cost * 1e6:>8.3f}{flag}", flush=True)


def _timed(config, depth, widths) -> float:
    start = time.perf_counter()
    analyze(config, depth, widths)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
