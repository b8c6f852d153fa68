"""How well a suite's configs separate each catalogued mistake from the target, by samples: for
each config of a suite (or the mode-block candidate pool of grading/suites_search.py) and each
catalogued mistake of its mode whose law differs from the target's there, ``N`` sessions of the
engine's variant (``grading.faulty_run``, seeds 0 .. N-1: a fixed-seed simulation of the
mistake's exact process) graded by ``grade_samples``: the family's Holm-adjusted p-value and the
mistake named. A config separates a mistake when p < 1e-6 (the bar of docs/grading.md for the
suites' configs at the documented default N).

    python tests/separation.py --suite standard [--n 2000] [--mistakes id,...] [--modes block]
    python tests/separation.py --pool [--n 2000]            (the mode-block candidate pool)
    python tests/separation.py --configs configs.json       ([{"id", "config"}, ...])

Prints a Markdown table: one row per mistake, one column per config, each cell ``p (named id)``,
``target's law`` where the mistake's law is the target's there, ``law not computed`` (over the
enumeration budget of a grade), or ``·`` (another mode); then,
per mistake, the configs that reach p < 1e-6. Deterministic; about 5 s of CPU per cell at N = 2000.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from specdec_service.engine import parse_config
from specdec_service.grading import CATALOGUE, grade_samples
from specdec_service.grading.faulty import faulty_run
from specdec_service.grading.samples import mistake_laws
from specdec_service.grading.suites import suite
from specdec_service.grading.suites_search import BLOCK_MODELS

BAR = 1e-6
"""A config separates a mistake when the family's Holm-adjusted p-value is below this."""


def suite_configs(name: str, modes: set | None) -> list[tuple[str, dict]]:
    """The configs of suite ``name`` with an output law (greedy left out), those of ``modes``."""
    return [(e.id, e.config) for e in suite(name).configs
            if e.config["mode"] != "greedy" and (not modes or e.config["mode"] in modes)]


def pool_configs(widths=(2, 3, 4)) -> list[tuple[str, dict]]:
    """The mode-block candidate models of the suite search, at each width and each of their limits."""
    out = []
    for name, (target, draft, eos, limits) in BLOCK_MODELS.items():
        for width in widths:
            for limit in limits:
                config = {"target": target, "draft": draft, "mode": "block", "width": width, "seed": 0,
                          "limit": limit, "eos": eos}
                out.append((f"{name}-block-w{width}-l{limit}", config))
    return out


def separation(config: dict, mistake, n: int) -> dict:
    """``{"p": Holm-adjusted p-value, "named": id or None}`` of ``n`` sessions of the mistake's
    engine variant on ``config`` (seeds 0 .. n-1)."""
    outputs = [faulty_run(parse_config({**config, "seed": seed}), mistake.rules)["output"] for seed in range(n)]
    report = grade_samples({"config": config, "samples": outputs})
    return {"p": report["p_value"], "named": (report["mistake"]["named"] or {}).get("id"),
            "schedule": (report["mistake"]["named"] or {}).get("schedule")}


def measure(configs: list[tuple[str, dict]], n: int, only: set | None) -> dict:
    """``{mistake id: {config id: cell}}``: a :func:`separation` dict, ``"target"`` (its law is
    the target's there, unstated, or undefined), ``"not computed"`` (its law takes more paths
    than a grade allows there: the grade cannot name it) or ``None`` (another mode)."""
    table: dict = {}
    for cid, config in configs:
        skipped: list = []
        stated = {m.id for m, _ in mistake_laws(parse_config(config), True, skipped)[0]}
        left_out = {mid for mid, _ in skipped}
        for mistake in CATALOGUE:
            if only and mistake.id not in only:
                continue
            row = table.setdefault(mistake.id, {})
            if mistake.mode != config["mode"]:
                row[cid] = None
            elif mistake.id in left_out:
                row[cid] = "not computed"
            elif mistake.id not in stated:
                row[cid] = "target"
            else:
                row[cid] = separation(config, mistake, n)
            print(f"{cid} {mistake.id}: {row[cid]}", file=sys.stderr, flush=True)
    return table


def _cell(cell) -> str:
    if cell is None:
        return "·"
    if cell == "target":
        return "target's law"
    if cell == "not computed":
        return "law not computed"
    named = f" ({cell['named']})" if cell["named"] else " (none named)"
    return f"{cell['p']:.2g}{named}"


def markdown(table: dict, configs: list[tuple[str, dict]], n: int) -> str:
    """The table, then the separating configs of each mistake."""
    ids = [cid for cid, _ in configs]
    lines = [f"N = {n} per config; Holm-adjusted p (the mistake named)", "",
             "| mistake | " + " | ".join(f"`{c}`" for c in ids) + " |", "|---|" + "---|" * len(ids)]
    for mistake, row in table.items():
        if all(row[c] is None for c in ids):
            continue
        lines.append(f"| `{mistake}` | " + " | ".join(_cell(row[c]) for c in ids) + " |")
    lines.append("")
    for mistake, row in table.items():
        good = [c for c in ids if isinstance(row[c], dict) and row[c]["p"] < BAR]
        if any(row[c] is not None for c in ids):
            lines.append(f"- `{mistake}`: p < {BAR:g} on {', '.join(f'`{c}`' for c in good) or 'no config'}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--suite")
    where.add_argument("--pool", action="store_true")
    where.add_argument("--configs", type=Path)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--mistakes", default="")
    parser.add_argument("--modes", default="")
    args = parser.parse_args(argv)
    modes = set(filter(None, args.modes.split(",")))
    if args.suite:
        configs = suite_configs(args.suite, modes)
    elif args.pool:
        configs = pool_configs()
    else:
        configs = [(e["id"], e["config"]) for e in json.loads(args.configs.read_text(encoding="utf-8"))]
    only = set(filter(None, args.mistakes.split(",")))
    print(markdown(measure(configs, args.n, only or None), configs, args.n))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
