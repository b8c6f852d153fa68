"""Before/after, paired: the engine and the grader of two source trees, measured alternately.

    git archive <old-commit> service | tar -x -C /tmp/old
    python bench/paired.py /tmp/old/service service [--rounds 3]

Runs ``--rounds`` rounds; each round measures the OLD tree, then the NEW one, each in a fresh
interpreter (``PYTHONPATH`` set to the tree): the best of 7 repetitions of (1) a whole 8-token
toy run (target toy, draft biased, width 3, seed 1) and (2) ``grade`` on 500 correct eight-token
toy traces with distinct seeds (no reference cache hit); with ``--routes`` also (3) the CPU
time of one ``POST /v1/step`` through the Flask application (its test client: body reading,
parsing, the block, the answer), sessions run to their end with the answer's state sent back, for
three configs: the toy (``step_toy``), the toy with sampling parameters (``step_sampling``: the
rows processed as SPEC 9 says) and a custom 64-label table (``step_table``: the model read from the
body's JSON at every block). Times are **process CPU time**
(``time.process_time``), which other jobs on a shared machine disturb far less than wall time;
the pairing cancels the drift of the machine between rounds. Prints each round and the median
of the per-round ratios new / old. Record results in docs/bench-engine.md and
docs/bench-grading.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

PROBE = r"""
import json, time
from specdec_service.engine import parse_config, run
from specdec_service.grading import grade
import specdec_service.grading.grader as grader

def best(fn, n):
    times = []
    for _ in range(7):
        start = time.process_time()
        for _ in range(n):
            fn()
        times.append(time.process_time() - start)
    return min(times) / n

toy = parse_config({"draft": "biased", "seed": 1, "width": 3})
run_s = best(lambda: run(toy), 1000)
traces = [json.loads(json.dumps(run(parse_config({"draft": "biased", "seed": s, "width": 3})))) for s in range(500)]

def grade_all():
    grader._references.clear()
    for trace in traces:
        grade(trace)

grade_s = best(grade_all, 1) / len(traces)
print(json.dumps({"run_ms": run_s * 1e3, "grade_per_s": 1 / grade_s}))
"""

ROUTE_PROBE = r"""
import json, time
from step_sessions import CONFIGS, session

def best(config, n):
    session(config)  # warm: the memos a long-running worker holds
    times = []
    for _ in range(7):
        start, steps = time.process_time(), 0
        for _ in range(n):
            steps += session(config)
        times.append((time.process_time() - start) / steps)
    return min(times)

print(json.dumps({"step_" + name: best(config, 40 if name != "table" else 4) * 1e3 for name, config in CONFIGS.items()}))
"""


def measure(tree: str, routes: bool = False) -> dict:
    """One fresh interpreter with ``tree`` first on the path: ``{"run_ms", "grade_per_s"}``, and
    with ``routes`` (a second fresh interpreter) the CPU milliseconds of one ``POST /v1/step``
    of each config of the route probe (``step_toy``, ``step_sampling``, ``step_table``)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((os.path.abspath(tree), os.path.dirname(os.path.abspath(__file__))))}
    found = {}
    for probe in (PROBE, ROUTE_PROBE) if routes else (PROBE,):
        out = subprocess.run([sys.executable, "-c", probe], env=env, check=True, capture_output=True, text=True)
        found.update(json.loads(out.stdout))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", help="the old tree's service directory (holding specdec_service)")
    parser.add_argument("new", help="the new tree's service directory")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--routes", action="store_true", help="also one POST /v1/step of three configs")
    args = parser.parse_args()
    run_ratios, grade_ratios = [], []
    step_ratios: dict[str, list[float]] = {}
    for r in range(args.rounds):
        old, new = measure(args.old, args.routes), measure(args.new, args.routes)
        run_ratios.append(new["run_ms"] / old["run_ms"])
        grade_ratios.append(new["grade_per_s"] / old["grade_per_s"])
        steps = [k for k in old if k.startswith("step_")]
        for k in steps:
            step_ratios.setdefault(k, []).append(new[k] / old[k])
        print(f"round {r + 1}: toy run {old['run_ms']:.4f} -> {new['run_ms']:.4f} ms;"
              f"  grade {old['grade_per_s']:.0f} -> {new['grade_per_s']:.0f} traces/s"
              + "".join(f";  {k} {old[k]:.4f} -> {new[k]:.4f} ms" for k in steps))
    print(f"median ratio new/old: toy run time {statistics.median(run_ratios):.3f},"
          f" grading throughput {statistics.median(grade_ratios):.3f}"
          + "".join(f", {k} time {statistics.median(v):.3f}" for k, v in step_ratios.items()))


if __name__ == "__main__":
    main()
