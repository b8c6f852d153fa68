"""The data of the documentation's figures, from the service's own answers (issue 22 section 5).

Each figure of ``docs/figures/`` is drawn by ``make.py`` from one JSON file beside it, and that
file is what a function here returns: the requests sent to the app (in process, through Flask's
test client) and the fields of the answers the figure plots. ``tests/test_figures.py`` calls
:func:`collect` again and asserts the committed JSON is unchanged, and that each figure embeds
the SHA-256 of its JSON (:func:`digest`), so neither the data nor the drawing can drift from the
service. This module needs no matplotlib and no browser.

- ``analysis-acceptance``: alpha per context (the empty prefix, then each token), the
  probability that one drafted token is accepted, for each toy draft (``POST /v1/analysis``,
  docs/analysis.md).
- ``analysis-width``: committed tokens per target pass and the speedup at draft cost c against
  the width, toy target with the biased draft, c in 0, 0.05 and 0.2 (``POST /v1/analysis``'s
  ``sweep`` and ``best_width``; at c = 0 the speedup is the tokens per pass).
- ``grading-distribution``: observed against expected counts of the first two tokens, for
  N = 2000 sessions (seeds 0 to 1999, toy/biased, limit 4) of a correct sampler (the outputs of
  ``POST /v1/runs``) and of the catalogued mistake ``resample-from-p`` (the correction drawn from
  p; ``grading.faulty_run``, the grader's own variant: no route serves faulty runs), each graded
  by ``POST /v1/grade/distribution`` with m = 2; the expected counts are N times the target's
  exact distribution of the first two tokens (``POST /v1/analysis`` ``output.target``).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

SCHEMA = "specdec-figure-data/1"
TOY_DRAFTS = ("biased", "aligned")
"""The toy's drafts (SPEC section 1), in the order docs/analysis.md discusses them."""
WIDTHS = list(range(1, 9))
DRAFT_COSTS = ("0", "0.05", "0.2")
"""Draft costs in target passes, as the decimals sent (the route reads 0.05 as exactly 1/20)."""
GRADE_CONFIG = {"draft": "biased", "limit": 4, "seed": 0}
GRADE_M = 2
GRADE_N = 2000
GRADE_SAMPLERS = ("correct", "resample-from-p")


def _post(client, path: str, body: dict) -> dict:
    response = client.post(path, json=body)
    if response.status_code != 200:
        raise RuntimeError(f"POST {path} {json.dumps(body)} answered {response.status_code}: {response.get_data(as_text=True)}")
    return response.get_json()


def _context(name: str | None) -> str:
    return "\u2205" if name is None else name


def acceptance(client) -> dict:
    """alpha per context for each toy draft: ``{"requests", "contexts", "drafts": {draft:
    {"alpha": [...], "alpha_exact": [...]}}}``, contexts in the answer's order."""
    requests, drafts, contexts = [], {}, None
    for draft in TOY_DRAFTS:
        body = {"config": {"draft": draft}, "depth": 1}
        answer = _post(client, "/v1/analysis", body)
        requests.append({"method": "POST", "path": "/v1/analysis", "body": body})
        names = [_context(c["context"]) for c in answer["contexts"]]
        if contexts is not None and names != contexts:
            raise RuntimeError(f"the contexts differ between drafts: {contexts} and {names}")
        contexts = names
        drafts[draft] = {"alpha": [c["alpha"] for c in answer["contexts"]],
                         "alpha_exact": [c["alpha_exact"] for c in answer["contexts"]]}
    return {"requests": requests, "contexts": contexts, "drafts": drafts}


def width(client) -> dict:
    """Committed tokens per pass and the speedup per width at each draft cost: ``{"requests",
    "widths", "committed_per_pass", "committed_per_pass_exact", "costs": {c: {"speedup",
    "speedup_exact", "best_width"}}}``."""
    requests, costs, per_pass = [], {}, None
    for cost in DRAFT_COSTS:
        body = {"config": {"draft": "biased"}, "widths": WIDTHS, "draft_cost": float(cost)}
        answer = _post(client, "/v1/analysis", body)
        requests.append({"method": "POST", "path": "/v1/analysis", "body": body})
        if [s["width"] for s in answer["sweep"]] != WIDTHS:
            raise RuntimeError(f"the sweep's widths are {[s['width'] for s in answer['sweep']]}")
        this = {"committed_per_pass": [s["committed_per_pass"] for s in answer["sweep"]],
                "committed_per_pass_exact": [s["committed_per_pass_exact"] for s in answer["sweep"]]}
        if per_pass is not None and this != per_pass:
            raise RuntimeError("tokens per pass depend on the draft cost")
        per_pass = this
        costs[cost] = {"speedup": [s["speedup"] for s in answer["sweep"]],
                       "speedup_exact": [s["speedup_exact"] for s in answer["sweep"]],
                       "best_width": answer["best_width"]}
    return {"requests": requests, "config": {"target": "toy", "draft": "biased"}, "widths": WIDTHS,
            **per_pass, "costs": costs}


def _outputs(client, sampler: str) -> list[list[str]]:
    """The outputs of GRADE_N sessions, seeds 0 .. GRADE_N - 1."""
    if sampler == "correct":
        return [_post(client, "/v1/runs", {"config": {**GRADE_CONFIG, "seed": seed}})["output"]
                for seed in range(GRADE_N)]
    from specdec_service.engine import parse_config
    from specdec_service.grading import BY_ID, faulty_run

    rules = BY_ID[sampler].rules
    return [faulty_run(parse_config({**GRADE_CONFIG, "seed": seed}), rules)["output"] for seed in range(GRADE_N)]


def _check_report_cells(report: dict, cells: list[list[str]], observed: list[int], expected: list[float]) -> None:
    """The cells the grade lists (most over- and under-represented) have the counts drawn."""
    index = {tuple(c): i for i, c in enumerate(cells)}
    for cell in report["over_represented"] + report["under_represented"]:
        i = index[tuple(cell["prefix"])]
        if cell["observed"] != observed[i] or abs(cell["expected"] - expected[i]) > 1e-9 * GRADE_N:
            raise RuntimeError(f"the grade's cell {cell} differs from the figure's {observed[i]}, {expected[i]}")


def distribution(client) -> dict:
    """Observed against expected counts of the first GRADE_M tokens, per sampler, with its grade:
    ``{"requests", "config", "m", "n", "cells", "expected", "expected_exact", "samplers": {name:
    {"observed", "grade": {...}}}}``, cells in lexicographic vocabulary order."""
    body = {"config": GRADE_CONFIG, "depth": GRADE_M}
    target = _post(client, "/v1/analysis", body)["output"]["target"]
    requests = [{"method": "POST", "path": "/v1/analysis", "body": body}]
    cells = [d["tokens"] for d in target]
    expected = [GRADE_N * d["p"] for d in target]
    samplers = {}
    for sampler in GRADE_SAMPLERS:
        counts = Counter(tuple(out[:GRADE_M]) for out in _outputs(client, sampler))
        if set(counts) - {tuple(c) for c in cells}:
            raise RuntimeError(f"{sampler}: prefixes the target never gives: {set(counts)}")
        observed = [counts.get(tuple(c), 0) for c in cells]
        grade_body = {"config": GRADE_CONFIG, "m": GRADE_M,
                      "counts": [{"prefix": c, "count": n} for c, n in zip(cells, observed) if n]}
        report = _post(client, "/v1/grade/distribution", grade_body)
        requests.append({"method": "POST", "path": "/v1/grade/distribution", "sampler": sampler,
                         "samples": f"first {GRADE_M} tokens of {GRADE_N} sessions, seeds 0-{GRADE_N - 1}"})
        _check_report_cells(report, cells, observed, expected)
        samplers[sampler] = {"observed": observed, "grade": {k: report[k] for k in (
            "passed", "statistic", "dof", "p_value", "alpha", "total_variation", "reason")}}
    return {"requests": requests, "config": GRADE_CONFIG, "m": GRADE_M, "n": GRADE_N, "cells": cells,
            "expected": expected, "expected_exact": [d["p_exact"] for d in target], "samplers": samplers}


FIGURES: dict[str, Callable[[Any], dict]] = {
    "analysis-acceptance": acceptance,
    "analysis-width": width,
    "grading-distribution": distribution,
}
"""Each figure's name (its files: ``<name>.json``, ``<name>.svg``) and the function of its data."""


def app_client():
    """The app's Flask test client (the service in process, no server)."""
    from specdec_service.app import create_app

    return create_app({"TESTING": True}).test_client()


def collect(client=None, names=None) -> dict[str, dict]:
    """The data of the figures ``names`` (all by default), each with ``schema`` and ``figure``."""
    client = client or app_client()
    return {name: {"schema": SCHEMA, "figure": name, **FIGURES[name](client)} for name in (names or FIGURES)}


def canonical(data: Any) -> bytes:
    """The bytes a figure's JSON file holds (and its digest covers): indented, keys sorted, UTF-8."""
    return (json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def digest(data: Any) -> str:
    """SHA-256 (hex) of :func:`canonical`: the value each figure embeds."""
    return hashlib.sha256(canonical(data)).hexdigest()


def differences(old: Any, new: Any, path: str = "") -> list[str]:
    """The field paths where ``old`` and ``new`` differ, with both values (for a failing test)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in sorted(set(old) | set(new)):
            if key not in new:
                out.append(f"{path}/{key}: removed (was {json.dumps(old[key])[:80]})")
            elif key not in old:
                out.append(f"{path}/{key}: added ({json.dumps(new[key])[:80]})")
            else:
                out += differences(old[key], new[key], f"{path}/{key}")
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [d for i, (a, b) in enumerate(zip(old, new)) for d in differences(a, b, f"{path}/{i}")]
    if old != new or type(old) is not type(new):
        return [f"{path or '/'}: was {json.dumps(old)[:80]}, now {json.dumps(new)[:80]}"]
    return []


# ---------------------------------------------------------------- the inspector's story frames

STORY_JS = "service/specdec_service/static/inspector/story.js"
"""The story's steps (``export const STEPS = [...]``), relative to the repository."""
FRAME_FRAGMENT = "story={n}&projector=1"
"""Each frame's URL fragment: step n in projector mode (large text, one 1280x720 screen)."""
FRAME_VIEWPORT = {"width": 1280, "height": 720}


def story_steps(source: str) -> tuple[str, list[dict]]:
    """From story.js's text: the source of its ``STEPS`` array (what a frame depicts: settings,
    view, action and words of every step) and the steps' ``{"n", "id", "title"}`` in order."""
    import re

    start = source.index("export const STEPS = [")
    end = source.index("\n];", start) + 3
    steps_source = source[start:end]
    ids = re.findall(r'^ {4}id: "([^"]+)",$', steps_source, re.MULTILINE)
    titles = re.findall(r'^ {4}title: "((?:[^"\\]|\\.)*)",$', steps_source, re.MULTILINE)
    # a step's action is a button's name, or null (the closing recap has none)
    actions = [a or None for a in re.findall(r'^ {4}action: (?:"([^"]+)"|null),$', steps_source, re.MULTILINE)]
    if not (len(ids) == len(titles) == len(actions)) or not ids:
        raise RuntimeError(f"{STORY_JS}: {len(ids)} step ids, {len(titles)} titles, {len(actions)} actions found")
    return steps_source, [{"n": n, "id": i, "title": json.loads(f'"{t}"'), "action": a}
                          for n, (i, t, a) in enumerate(zip(ids, titles, actions), start=1)]


def replay(client, request: dict) -> dict:
    """One request a frame's page sent (``method``, ``path``, ``body`` text or null), sent again
    to the app: ``{"status", "answer_sha256"}`` (the answer's JSON, :func:`digest`)."""
    response = client.open(request["path"], method=request["method"], data=request["body"],
                           content_type="application/json" if request["body"] is not None else None)
    answer = response.get_json(silent=True)
    return {"status": response.status_code,
            "answer_sha256": digest(answer if answer is not None else response.get_data(as_text=True))}


FRAMES_BEGIN, FRAMES_END = "<!-- story-frames: python docs/figures/make.py -->", "<!-- /story-frames -->"
"""docs/inspector.md's list of the frames, written by make.py between these lines."""


def frames_markdown(manifest: dict) -> str:
    """The frames as docs/inspector.md shows them (between :data:`FRAMES_BEGIN` and
    :data:`FRAMES_END`): per step its number, title and fragment, then the frame."""
    lines = [FRAMES_BEGIN]
    for step in manifest["steps"]:
        after = f"after {step['action']}" if step["action"] else "no action"
        lines += ["", f"**Step {step['n']}: {step['title']}** (`#{step['fragment']}`, {after})", "",
                  (f"![Step {step['n']} of the guided story, {step['title']}, {after}, "
                   f"in projector mode](figures/story/{step['frame']})")]
    return "\n".join(lines + ["", FRAMES_END])


def replace_block(text: str, block: str) -> str:
    """``text`` with what lies between the frame markers (inclusive) replaced by ``block``."""
    start, end = text.index(FRAMES_BEGIN), text.index(FRAMES_END) + len(FRAMES_END)
    return text[:start] + block + text[end:]
