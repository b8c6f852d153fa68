"""Regenerate the golden reference traces of ``tests/golden/`` from the engine.

    python tests/golden/make_golden.py          # rewrite every file
    python tests/golden/make_golden.py --check  # exit 1 if a file differs from a fresh run

The matrix (:func:`matrix`): the toy target with both built-in drafts, widths 1-5, seeds 0-2 in
mode speculative; widths 1-5 in mode greedy (which uses no draws, so one seed); seeds 0-2 in mode
autoregressive; and a custom target/draft pair over a four-token vocabulary whose EOS ends
sessions early (widths 1-5 and seeds 0-2 speculative, widths 1-5 greedy, seeds 0-2
autoregressive). Each trace is ``<name>.json`` (indented, key order kept), listed in
``index.json`` with its config. ``tests/test_grading_golden.py`` checks that every file still
equals a fresh engine run and grades as passed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "service"))

from specdec_service.engine import parse_config, run  # noqa: E402

CUSTOM_TARGET = {
    "vocab": ["the", "cat", "sat", "."],
    "start": [0.7, 0.2, 0.05, 0.05],
    "next": {
        "the": [0.05, 0.8, 0.1, 0.05],
        "cat": [0.1, 0.1, 0.6, 0.2],
        "sat": [0.3, 0.1, 0.1, 0.5],
        ".": [0.25, 0.25, 0.25, 0.25],
    },
}
"""A custom target whose EOS (``"."``) ends most sessions before the limit."""
CUSTOM_DRAFT = {
    "vocab": ["the", "cat", "sat", "."],
    "start": [0.5, 0.3, 0.1, 0.1],
    "next": {
        "the": [0.1, 0.6, 0.2, 0.1],
        "cat": [0.2, 0.2, 0.4, 0.2],
        "sat": [0.4, 0.2, 0.1, 0.3],
        ".": [0.25, 0.25, 0.25, 0.25],
    },
}
WIDTHS = range(1, 6)
SEEDS = range(3)


def matrix() -> dict[str, dict]:
    """Golden name -> config (JSON form)."""
    configs: dict[str, dict] = {}
    for draft in ("aligned", "biased"):
        for width in WIDTHS:
            for seed in SEEDS:
                configs[f"toy-{draft}-speculative-w{width}-s{seed}"] = {"draft": draft, "width": width, "seed": seed}
            configs[f"toy-{draft}-greedy-w{width}"] = {"draft": draft, "mode": "greedy", "width": width, "seed": 0}
    for seed in SEEDS:
        configs[f"toy-autoregressive-s{seed}"] = {"draft": "biased", "mode": "autoregressive", "seed": seed}
    custom = {"target": CUSTOM_TARGET, "draft": CUSTOM_DRAFT, "eos": ".", "limit": 12}
    for width in WIDTHS:
        for seed in SEEDS:
            configs[f"custom-eos-speculative-w{width}-s{seed}"] = {**custom, "width": width, "seed": seed}
        configs[f"custom-eos-greedy-w{width}"] = {**custom, "mode": "greedy", "width": width, "seed": 0}
    for seed in SEEDS:
        configs[f"custom-eos-autoregressive-s{seed}"] = {**custom, "mode": "autoregressive", "seed": seed}
    return configs


def render(trace: dict) -> str:
    return json.dumps(trace, indent=1) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the files; exit 1 on a difference")
    args = parser.parse_args(argv)
    configs = matrix()
    stale = []
    index = {name: config for name, config in configs.items()}
    files = {f"{name}.json": render(run(parse_config(config))) for name, config in configs.items()}
    files["index.json"] = json.dumps(index, indent=1) + "\n"
    for filename, text in files.items():
        path = HERE / filename
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(filename)
        else:
            path.write_text(text, encoding="utf-8")
    if args.check:
        for filename in stale:
            print(f"out of date: tests/golden/{filename}", file=sys.stderr)
        return 1 if stale else 0
    print(f"wrote {len(files)} files to {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
