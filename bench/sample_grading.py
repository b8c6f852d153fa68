"""Sample grading (POST /v1/grade/samples, issue 20): the false-fail rate of a correct sampler
and the smallest N that catches each catalogued mistake, on the sample configs of the standard
suite (docs/grading.md, "Grading by samples"). Deterministic (fixed seeds); takes minutes.

    python bench/sample_grading.py false-fails [--runs 200] [--n 2000]
    python bench/sample_grading.py power [--reps 10]

false-fails: for each config, ``--runs`` independent runs of the correct student sampler
(tests/students/sampler.py, its own random.Random) graded at alpha 0.05 and 0.001; the share
that fails is the false-fail rate (Holm keeps it at most alpha).

power: for each catalogued mistake of modes speculative, autoregressive, block and tree (or those
``--mistakes`` names) and each config, the
engine's variant (grading.faulty_run, seeds r * 10^6 + i) graded at N = 50, 100, 200, ...,
10000 until all ``--reps`` runs fail: that N (the smallest N of the grid with power >= 1 - 1/reps
in this measurement), and how often the failing grade names the mistake itself.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
from pathlib import Path

from specdec_service.engine import parse_config
from specdec_service.grading import CATALOGUE, grade_samples
from specdec_service.grading.faulty import faulty_run
from specdec_service.grading.laws import PROGRAMS, law_of_program
from specdec_service.grading.samples import _law_computable, law_of_rules, target_law
from specdec_service.grading.suites import suite

ROOT = Path(__file__).resolve().parents[1]
GRID = (50, 100, 200, 500, 1000, 2000, 5000)


def configs():
    seen = {}
    for entry in suite("standard").configs:
        if entry.config["mode"] != "greedy":
            seen.setdefault(json.dumps({k: v for k, v in entry.config.items() if k != "seed"}, sort_keys=True), entry)
    return list(seen.values())


def student():
    spec = importlib.util.spec_from_file_location("sampler", ROOT / "tests" / "students" / "sampler.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def correct_samples(module, config, n, seed):
    target, draft = module.model_of(config["target"]), module.model_of(config["draft"])
    rng = random.Random(seed)
    width = config["width"] if config["mode"] == "speculative" else 0
    out = []
    for _ in range(n):
        if width:
            out.append(module.speculative_decode(target, draft, width, config["limit"], config["eos"], rng))
        else:
            s = []
            while len(s) < config["limit"] and (not s or s[-1] != config["eos"]):
                s.append(target.vocab[module._pick(target(s), rng.random())])
            out.append(s)
    return out


def false_fails(runs: int, n: int) -> None:
    module = student()
    print("| config | runs | N | failed at alpha 0.05 | failed at alpha 0.001 |")
    print("|---|---|---|---|---|")
    for entry in configs():
        fails = {0.05: 0, 0.001: 0}
        for run in range(runs):
            samples = correct_samples(module, entry.config, n, 10_000 + run)
            for alpha in fails:
                fails[alpha] += not grade_samples({"config": entry.config, "samples": samples, "alpha": alpha})["passed"]
        print(f"| `{entry.id}` | {runs} | {n} | {fails[0.05]} ({fails[0.05] / runs:.3f}) | "
              f"{fails[0.001]} ({fails[0.001] / runs:.3f}) |", flush=True)


def same_law(config: dict, mistake) -> bool:
    """Whether the mistake's exact row law (when stated) equals the target's on this config."""
    parsed = parse_config(config)
    if _law_computable(mistake) is not None and "target's law" not in _law_computable(mistake):
        return False
    if _law_computable(mistake) is not None:
        return True
    try:
        law = (law_of_program(parsed, PROGRAMS[mistake.id], mistake.id, 10**6) if mistake.id in PROGRAMS
               else law_of_rules(parsed, mistake.rules))
    except ValueError:
        return False
    target = target_law(parsed)
    return all(set(outcomes) == set(target(row)) and all(abs(p - target(row)[y]) < 1e-12 for y, p in outcomes.items())
               for row, outcomes in law.items())


def power(reps: int, only: set | None = None) -> None:
    entries = configs()
    print("| mistake | " + " | ".join(f"`{e.id}`" for e in entries) + " |")
    print("|---|" + "---|" * len(entries))
    for mistake in CATALOGUE:
        if mistake.mode not in ("speculative", "autoregressive", "block", "tree") or (only and mistake.id not in only):
            continue
        cells = []
        for entry in entries:
            if entry.config["mode"] != mistake.mode:
                cells.append("·")
                continue
            same = same_law(entry.config, mistake)
            if same:
                cells.append("target's law")
                continue
            pools = [[] for _ in range(reps)]
            found = None
            for n in GRID:
                named = failed = 0
                for r in range(reps):
                    pool = pools[r]
                    while len(pool) < n:
                        config = parse_config({**entry.config, "seed": r * 1_000_000 + len(pool)})
                        pool.append(faulty_run(config, mistake.rules)["output"])
                    report = grade_samples({"config": entry.config, "samples": pool[:n]})
                    failed += not report["passed"]
                    named += (report["mistake"]["named"] or {}).get("id") == mistake.id
                if failed == reps:
                    found = (n, named)
                    break
            cells.append(f">{GRID[-1]}" if found is None else f"{found[0]} ({found[1]}/{reps} named)")
        print(f"| `{mistake.id}` | " + " | ".join(cells) + " |", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("false-fails", "power"))
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--mistakes", default="", help="comma-separated catalogue ids (power only; default: all)")
    args = parser.parse_args(argv)
    if args.what == "false-fails":
        false_fails(args.runs, args.n)
    else:
        power(args.reps, set(filter(None, args.mistakes.split(","))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
