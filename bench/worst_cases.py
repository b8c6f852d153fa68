"""The worst request each route accepts, and how long it takes (issue 9 section 3; run by hand).

    python bench/worst_cases.py [--repeat 3] [--route "POST /v1/grade"] [--only accepted|refused|family] [--http]
                                [--exact-too]

For every route the costliest requests we could construct within its input bounds and its work
budget (:mod:`specdec_service.budget`) are sent to the service, each ``--repeat`` times, and so
are the costliest bodies within its size limit that it refuses (issue 18 section 4: oversized
parts, the most faults a schema allows); the median time of each (and the best) and the slowest
accepted and refused case per route are printed as the Markdown table of docs/service.md. In-process by default (Flask's test client: the whole WSGI request, JSON
parsing and serialisation included, on one core), timed in CPU seconds of the process (so that
other jobs on a shared machine do not inflate it; the wall time is printed too); ``--http``
sends them to gunicorn with one sync worker on a free loopback port instead (wall time). Every accepted case
must answer 200, and the cost of each is printed next to its route's budget; every refusal must
answer a 4xx other than 413. Targets, on one core: at most 2 s an accepted case, 0.25 s a refusal. Issue 27's families (the
costly kinds of exact arithmetic: long and tiny entries under a temperature, grading's reference
runs, the tree analysis, the mistake laws, runs above the promise, slow refusals, 1e-400) are sent
at the sizes the issue gives and must be answered (200) or refused (400/422): each is filed by
what it got and listed in a table of its own with the estimate of ``budget.session_work``.
``--exact-too`` (in-process) times each grading case a second time with the fast float64 reading
off (``api.bodies.parse_json_float64``) and the samples checked one at a time, the two sends
alternating, and prints the ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

ROOT = Path(__file__).resolve().parents[1]

from specdec_service import create_app  # noqa: E402
from specdec_service.budget import BUDGETS  # noqa: E402
from specdec_service.engine import MAX_POSITION, parse_config, run  # noqa: E402
from specdec_service.grading import BY_ID, faulty_run  # noqa: E402
from specdec_service.grading.distribution import MAX_CELLS, distribution_cost  # noqa: E402
from specdec_service.budget import WORK_BUDGET  # noqa: E402
from specdec_service.grading.grader import batch_cost, batch_work  # noqa: E402


def one_hot(size: int, shift: int, *, labels: str = "t") -> dict:
    """A model whose rows are one-hot: token i is always followed by token i + shift."""
    vocab = [f"{labels}{i}" for i in range(size)]
    row = lambda i: [1.0 if j == i % size else 0.0 for j in range(size)]  # noqa: E731
    return {"vocab": vocab, "start": row(0), "next": {label: row(i + shift) for i, label in enumerate(vocab)}}


def spread(size: int, favourite: int, weight: float) -> dict:
    """A model whose every row gives ``weight`` to one token and shares the rest evenly; the
    probabilities are 15-digit decimals (the longest rows a state can carry)."""
    vocab = [f"token-{i:03d}"[:16] for i in range(size)]
    rest = round((1 - weight) / (size - 1), 15)
    row = [rest] * size
    row[favourite] = round(1 - rest * (size - 1), 15)
    return {"vocab": vocab, "start": row, "next": {label: row for label in vocab}}


def json_copy(value):
    return json.loads(json.dumps(value))


# ---------------------------------------------------------------- the cases


Case = tuple[str, str, str, object]  # route, description, method + path (+ query), body


def block_cases() -> Iterator[Case]:
    # The largest state: two custom 64-token models with 15-digit rows (about 150 KB of the
    # 256 KiB), width 16, a committed prefix near the limit, the position near 2^53 - 1.
    target, draft = spread(64, 0, 0.5), spread(64, 1, 0.5)
    config = {"target": target, "draft": draft, "width": 16, "limit": 256, "seed": 2**53 - 1}
    state = {"config": config, "committed": [target["vocab"][2]] * 200, "position": MAX_POSITION - 4096}
    for route in ("/v1/draft", "/v1/step"):
        yield f"POST {route}", "two custom 64-token models, width 16, 200 tokens committed", f"POST {route}", state
    proposal = {"tokens": [target["vocab"][1]] * 16}
    yield "POST /v1/verify", "the same state, a proposal of 16 tokens", "POST /v1/verify", {"state": state, "proposal": proposal}


def runs_cases() -> Iterator[Case]:
    yield ("POST /v1/runs", "64 one-hot tokens, width 16, limit 256: 256 blocks of 16 proposals", "POST /v1/runs",
           {"config": {"target": one_hot(64, 1), "draft": one_hot(64, 2), "width": 16, "limit": 256, "seed": 1}})
    yield ("POST /v1/runs", "64 tokens, width 16, limit 256, draft close to the target (8 MB trace)", "POST /v1/runs",
           {"config": {"target": spread(64, 0, 0.5), "draft": spread(64, 0, 0.45), "width": 16, "limit": 256, "seed": 1}})


def draws_cases() -> Iterator[Case]:
    yield ("GET /v1/draws", "count 4096 at the end of the stream", "GET /v1/draws?seed=9007199254740991"
           f"&position={MAX_POSITION - 4095}&count=4096", None)


def _fits(traces: list, budget: int, failing: bool = True) -> list:
    """The longest prefix of ``traces`` whose cost, every trace counted as failing (or, not
    ``failing``, as passing: only the references count), is within
    ``budget`` (block units) and within ``WORK_BUDGET`` (work units, ``grading.grader.batch_work``
    of the distinct configs and the failing traces): the costliest batch both budgets accept."""
    configs = [parse_config(t["config"]) for t in traces]
    keys = [json.dumps(t["config"], sort_keys=True) for t in traces]

    def within(n: int) -> bool:
        failed = list(zip(traces[:n], configs[:n])) if failing else []
        distinct = dict(zip(keys[:n], configs[:n]))
        return batch_cost(configs[:n], failed) <= budget and batch_work(distinct, failed) <= WORK_BUDGET

    low, high = 1, len(traces)
    while low < high:
        mid = (low + high + 1) // 2
        if within(mid):
            low = mid
        else:
            high = mid - 1
    return traces[:low]


def _last_block_wrong(config: dict) -> dict:
    trace = json_copy(run(parse_config(config)))
    trace["blocks"][-1]["position"] += 1  # agrees with the reference until its last block
    return trace


def grade_cases() -> Iterator[Case]:
    limit = BUDGETS["POST /v1/grade"].limit
    worst = _last_block_wrong({"target": one_hot(64, 1), "draft": one_hot(64, 2), "width": 16, "limit": 256, "seed": 1})
    if _fits([worst], limit) == [worst] and batch_work({0: parse_config(worst["config"])},
                                                       [(worst, parse_config(worst["config"]))]) <= WORK_BUDGET:
        yield "POST /v1/grade", "one trace: 64 tokens, width 16, 256 blocks, wrong in its last block", "POST /v1/grade", worst
    mistake = BY_ID["no-bonus"]
    failing = []
    for seed in itertools.count():
        config = parse_config({"draft": "biased", "seed": seed})
        trace = json_copy(faulty_run(config, mistake.faults))
        if trace != run(config):
            failing.append(trace)
        if len(failing) == 1000:
            break
    batch = _fits(failing, limit)
    yield "POST /v1/grade", f"{len(batch)} failing eight-token toy traces, every config distinct", "POST /v1/grade", {"traces": batch}
    same = _fits([failing[0]] * 1000, limit)
    yield "POST /v1/grade", f"{len(same)} copies of one failing eight-token toy trace", "POST /v1/grade", {"traces": same}
    long = json_copy(run(parse_config({"target": one_hot(8, 1), "draft": one_hot(8, 2), "width": 16, "limit": 256, "seed": 0})))
    long["blocks"] = []
    empty = [{**long, "config": {**long["config"], "seed": seed}} for seed in range(1000)]
    batch = _fits(empty, limit)
    yield ("POST /v1/grade", f"{len(batch)} traces without blocks, each a distinct limit-256 width-16 config (issue 9)",
           "POST /v1/grade", {"traces": batch})
    lasts = [_last_block_wrong({"target": one_hot(2, 1), "draft": one_hot(2, 0), "width": 16, "limit": 256, "seed": s})
             for s in range(8)]
    batch = _fits(lasts, limit)
    yield ("POST /v1/grade", f"{len(batch)} traces of 256 blocks of width 16 (2 tokens), each wrong in its last block",
           "POST /v1/grade", {"traces": batch})
    correct = [json_copy(run(parse_config({"draft": "biased", "seed": s}))) for s in range(1000)]
    correct = _fits(correct, limit, failing=False)
    yield ("POST /v1/grade", f"{len(correct)} correct eight-token toy traces, every config distinct", "POST /v1/grade",
           {"traces": correct})


def distribution_cases() -> Iterator[Case]:
    rng = random.Random(1)
    size = 21  # 21^4 = 194,481 cells, each expecting more than 5 of 10^6 samples: all enumerated
    uniform = [round(1 / size, 15)] * (size - 1)
    uniform.append(round(1 - sum(uniform), 15))
    vocab = [f"t{i}" for i in range(size)]
    model = {"vocab": vocab, "start": uniform, "next": {v: uniform for v in vocab}}
    config = {"target": model, "draft": model, "seed": 0, "width": 16, "limit": 256}
    cells = list(itertools.product(vocab, repeat=4))
    rng.shuffle(cells)
    counts = [{"prefix": list(c), "count": 10} for c in cells[:MAX_CELLS]]
    yield ("POST /v1/grade/distribution", f"{MAX_CELLS} counts of 10^6 samples, m = 4 over 21 tokens (194,481 cells), counters",
           "POST /v1/grade/distribution", {"config": config, "m": 4, "counts": counts,
                                           "counters": {"accepted": 10**6, "draft_steps": 2 * 10**6}})
    letters = [chr(ord("A") + i) for i in range(17)]
    short = {"vocab": letters, "start": [round(1 / 17, 15)] * 16 + [round(1 - 16 * round(1 / 17, 15), 15)]}
    short["next"] = {v: short["start"] for v in letters}
    # 390,000 * 4 to read + 5 * 17^4 cells = 1,977,605 sample units, just within the budget (7 MB)
    samples = [[rng.choice(letters) for _ in range(4)] for _ in range(390_000)]
    yield ("POST /v1/grade/distribution", "390,000 sampled outputs of 4 one-letter tokens, m = 4 over 17 tokens",
           "POST /v1/grade/distribution", {"config": {"target": short, "draft": short, "seed": 0}, "m": 4, "samples": samples})
    samples = [[rng.choice(letters)] for _ in range(10**6)]
    yield ("POST /v1/grade/distribution", "10^6 sampled outputs of one token, m = 1", "POST /v1/grade/distribution",
           {"config": {"target": short, "draft": short, "seed": 0}, "m": 1, "samples": samples})


def analysis_cases() -> Iterator[Case]:
    from specdec_service.engine.analysis import analysis_cost

    budget = BUDGETS["POST /v1/analysis"].limit
    widths = list(range(1, 17))
    models = [("toy target, biased draft", "toy", "biased"),
              ("8 tokens, 15-digit rows", spread(8, 0, 0.5), spread(8, 1, 0.45)),
              ("64 tokens, 15-digit rows", spread(64, 0, 0.5), spread(64, 1, 0.45))]
    for name, target, draft in models:
        best = None
        for limit in range(1, 257):  # the largest limit within the budget, sweeping every width
            config = {"target": target, "draft": draft, "seed": 0, "width": 16, "limit": limit}
            try:
                cost = analysis_cost(parse_config(config), min(limit, 3), widths)
            except Exception:  # noqa: BLE001 - a config the analysis cannot take
                break
            if cost > budget:
                break
            best = config
        if best is not None:
            yield ("POST /v1/analysis", f"{name}, limit {best['limit']}, widths 1-16", "POST /v1/analysis",
                   {"config": best, "widths": widths})


CASES: list[Callable[[], Iterator[Case]]] = [draws_cases, block_cases, runs_cases, grade_cases, distribution_cases,
                                             analysis_cases]


# ---------------------------------------------------------------- the worst refusals (issue 18 section 4)

ENGINE_BODY, GRADING_BODY = 256 * 1024, 8 * 1024 * 1024
"""The body limits: a refusal case is as large as its route takes (a 413 is no refusal here)."""


def _names(count: int, prefix: str = "k") -> dict:
    return {f"{prefix}{i}": 1 for i in range(count)}


def _fill(make: Callable[[int], object], limit: int) -> object:
    """``make(n)`` for an ``n`` whose JSON is just within ``limit`` bytes (``make`` grows about
    linearly with ``n``): scaled from ``make(1000)``, then down 1% at a time until it fits."""
    def size(n: int) -> int:
        return len(json.dumps(make(n), separators=(",", ":")))

    base, per = size(0), (size(1000) - size(0)) / 1000
    n = int((limit - base) / per)
    while size(n) > limit:
        n = int(n * 0.99)
    return make(n)


def refusal_cases() -> Iterator[Case]:
    """Bodies within each route's size limit that the route refuses (422), built to cost the
    most: parts far beyond their size bounds (a list of ints where labels belong, 10^5 unknown
    names, a huge string) and, within the bounds, the most faults a schema allows (every entry
    of two 64-token tables a string)."""
    seed = {"draft": "biased", "seed": 1}
    strings = {"vocab": [f"t{i}" for i in range(64)], "start": ["x"] * 64,
               "next": {f"t{i}": ["x"] * 64 for i in range(64)}}
    for route in ("/v1/draft", "/v1/step"):
        yield (f"POST {route}", "`committed` a list of 130,000 ints (260 KB; issue 18)", f"POST {route}",
               {"config": seed, "committed": [1] * 130_000})
        yield (f"POST {route}", "a config of 21,000 unknown names", f"POST {route}",
               _fill(lambda n: {"config": {**seed, **_names(n)}}, ENGINE_BODY))
        yield (f"POST {route}", "two 64-token tables, every one of their 8,320 entries a string", f"POST {route}",
               {"config": {"target": strings, "draft": strings, "seed": 1}})
    yield ("POST /v1/verify", "a proposal of 120,000 ints", "POST /v1/verify",
           _fill(lambda n: {"state": {"config": seed}, "proposal": {"tokens": [1] * n}}, ENGINE_BODY))
    yield ("POST /v1/verify", "a state whose target's `next` has 16,000 rows", "POST /v1/verify",
           _fill(lambda n: {"state": {"config": {"target": {**strings, "next": _names(n)}, "draft": "biased",
                                                 "seed": 1}}, "proposal": {"tokens": []}}, ENGINE_BODY))
    yield ("POST /v1/runs", "a label of 260,000 characters", "POST /v1/runs",
           _fill(lambda n: {"config": {**seed, "eos": "e" * n}}, ENGINE_BODY))
    yield ("POST /v1/runs", "two 64-token tables, every one of their 8,320 entries a string", "POST /v1/runs",
           {"config": {"target": strings, "draft": strings, "seed": 1}})
    yield ("POST /v1/analysis", "`widths` a list of 130,000 ones (issue 18)", "POST /v1/analysis",
           {"config": seed, "widths": [1] * 130_000})
    yield ("POST /v1/analysis", "a config of 21,000 unknown names", "POST /v1/analysis",
           _fill(lambda n: {"config": {**seed, **_names(n)}}, ENGINE_BODY))
    yield ("POST /v1/grade", "a distribution body of 10^6 samples (6 MB; issue 18)", "POST /v1/grade",
           {"config": seed, "m": 1, "samples": [["A"]] * 10**6})
    yield ("POST /v1/grade", "a trace whose config has 349,525 unknown names (4 MB; issue 18)", "POST /v1/grade",
           {"config": _names(349_525)})
    yield ("POST /v1/grade", "a batch of 2.7 million ints (8 MiB)", "POST /v1/grade",
           _fill(lambda n: {"traces": [1] * n}, GRADING_BODY))
    trace = json_copy(run(parse_config({"target": one_hot(64, 1), "draft": one_hot(64, 2), "width": 16, "limit": 16,
                                        "seed": 1})))
    wrong = json_copy(trace)
    for block in wrong["blocks"]:
        for step in block["proposal"]["steps"]:
            step["q"] = ["x"] * 64
    yield ("POST /v1/grade", "a batch of traces of 16 blocks of width 16 over 64 tokens, every draft row strings",
           "POST /v1/grade", _fill(lambda n: {"traces": [wrong] * n}, GRADING_BODY))
    yield ("POST /v1/grade", "a batch of configs with two 64-token tables, every entry a string", "POST /v1/grade",
           _fill(lambda n: {"traces": [{"config": {"target": strings, "draft": strings, "seed": 1}}] * n}, GRADING_BODY))
    yield ("POST /v1/grade/distribution", "an object of 699,050 names (8 MiB; issue 18)", "POST /v1/grade/distribution",
           _names(699_050))
    yield ("POST /v1/grade/distribution", "`samples` a list of 4 million ints (8 MiB)", "POST /v1/grade/distribution",
           _fill(lambda n: {"config": seed, "m": 1, "samples": [1] * n}, GRADING_BODY))
    yield ("POST /v1/grade/distribution", "10^6 samples, the last one a label not of the vocabulary",
           "POST /v1/grade/distribution",
           {"config": seed, "m": 1, "samples": [["A"]] * (10**6 - 1) + [["Z"]]})


REFUSALS: list[Callable[[], Iterator[Case]]] = [refusal_cases]


# ---------------------------------------------------------------- issue 27's families (answered or refused)


sys.path.insert(0, str(ROOT / "tests"))
from test_cost_routes import blockless_trace as _blockless, decimal_rows, tiny_rows  # noqa: E402  (the tests' families)


def family_cases() -> Iterator[Case]:
    """Issue 27's families at the sizes it gives: each must be answered (200) or refused (422)."""
    one = {"target": tiny_rows(1), "draft": tiny_rows(2), "width": 1, "limit": 1, "seed": 0,
           "sampling": {"temperature": 2.5}}
    name = "1: 64 labels, rows [1, 63 x 17-digit e-300], T 2.5, width 1, limit 1"
    for route in ("/v1/step", "/v1/draft", "/v1/runs"):
        yield f"POST {route}", name, f"POST {route}", {"config": one}
    yield "POST /v1/verify", name, "POST /v1/verify", {"state": {"config": one}, "proposal": {"tokens": ["t1"]}}
    yield "POST /v1/grade/distribution", name + ", 10 samples", "POST /v1/grade/distribution", {
        "config": one, "m": 1, "samples": [["t0"]] * 10}
    yield "POST /v1/grade/samples", name + ", 10 samples", "POST /v1/grade/samples", {"config": one, "samples": [["t0"]] * 10}
    yield "POST /v1/analysis", name, "POST /v1/analysis", {"config": one}
    for temperature, exponent in ((0.15, -20), (0.3, -60), (0.6, -100)):
        config = {**one, "target": tiny_rows(3, exponent=exponent), "draft": tiny_rows(4, exponent=exponent),
                  "sampling": {"temperature": temperature}}
        yield "POST /v1/step", f"1: the same, rows e{exponent}, T {temperature}", "POST /v1/step", {"config": config}
    two = {"target": decimal_rows(1, 64, 15), "draft": decimal_rows(2, 64, 15), "mode": "block", "width": 16,
           "limit": 256, "seed": 0, "sampling": {"temperature": 0.05}}
    yield ("POST /v1/grade", "2: one trace without blocks, mode block, width 16, limit 256, 64 labels, 15 digits, T 0.05",
           "POST /v1/grade", _blockless(two))
    yield "POST /v1/grade", "2: two such traces", "POST /v1/grade", {"traces": [_blockless(two)] * 2}
    three = {"target": decimal_rows(3, 4, 15), "draft": decimal_rows(4, 4, 15), "mode": "tree", "drafts": 8,
             "width": 16, "limit": 2, "seed": 0}
    yield ("POST /v1/analysis", "3: mode tree, D 8, 4 labels, 15 digits, width 16, widths 1-16, limit 2",
           "POST /v1/analysis", {"config": three, "widths": list(range(1, 17))})
    four = {"target": decimal_rows(5, 4, 15), "draft": decimal_rows(6, 4, 15), "width": 16, "limit": 66, "seed": 0}
    yield ("POST /v1/grade/samples", "4: 10 samples, 4 labels, 15 digits, width 16, limit 66", "POST /v1/grade/samples",
           {"config": four, "samples": [["t0"]] * 10})
    yield ("POST /v1/runs", "5: mode tree, D 8, 64 labels, 6 digits, T 0.07, top_k/top_p/min_p, limit 60", "POST /v1/runs",
           {"config": {"target": decimal_rows(7, 64, 6), "draft": decimal_rows(8, 64, 6), "mode": "tree", "drafts": 8,
                       "width": 16, "limit": 60, "seed": 0,
                       "sampling": {"temperature": 0.07, "top_k": 40, "top_p": 0.9, "min_p": 0.01}}})
    yield ("POST /v1/runs", "5: mode block, 64 labels, 15 digits, T 0.05, width 16, limit 43", "POST /v1/runs",
           {"config": {"target": decimal_rows(9, 64, 15), "draft": decimal_rows(10, 64, 15), "mode": "block",
                       "width": 16, "limit": 43, "seed": 0, "sampling": {"temperature": 0.05}}})
    tiny = {"vocab": [f"t{i}" for i in range(64)], "start": ["1e-999"] * 64,
            "next": {f"t{i}": ["1e-999"] * 64 for i in range(64)}}
    text = json.dumps({"config": {"target": tiny, "draft": tiny, "seed": 1}}).replace('"1e-999"', "1e-999")
    for route in ("/v1/step", "/v1/draft", "/v1/runs", "/v1/analysis"):
        yield f"POST {route}", "6: two 64-label tables of 1e-999 entries (60 KB)", f"POST {route}", RawJson(text)
    yield ("POST /v1/grade/samples", "6: 10^6 samples, the last label not of the vocabulary", "POST /v1/grade/samples",
           {"config": {"draft": "biased", "seed": 0}, "samples": [["A"]] * (10**6 - 1) + [["Z"]]})
    cold = '{"config": {"draft": "biased", "seed": 1, "sampling": {"temperature": 1e-400}}}'
    for route in ("/v1/step", "/v1/runs"):
        yield f"POST {route}", "7: temperature 1e-400", f"POST {route}", RawJson(cold)
    yield ("POST /v1/grade/samples", "7: temperature 1e-400", "POST /v1/grade/samples",
           RawJson('{"config": {"draft": "biased", "seed": 1, "sampling": {"temperature": 1e-400}}, "samples": [["A"]]}'))


class RawJson(str):
    """A body sent as written (numbers JSON cannot round-trip through Python floats)."""


FAMILIES: list[Callable[[], Iterator[Case]]] = [family_cases]


def estimate_of(route: str, body) -> str:
    """A family case's estimate (``budget.session_work`` of one block on the block routes, of its
    run on /v1/runs, ``budget.grading_work`` on the grading routes) against ``WORK_BUDGET``."""
    from specdec_service.budget import WORK_BUDGET, grading_work, session_work

    try:
        config = parse_config(((body.get("state") or body).get("config") if "traces" not in body
                               else body["traces"][0]["config"]))
    except Exception:  # noqa: BLE001 - a body the service refuses before any estimate
        return "refused before any estimate"
    if route in ("POST /v1/draft", "POST /v1/verify", "POST /v1/step"):
        cost = session_work(config, 1)
    elif route == "POST /v1/runs":
        cost = session_work(config, config.limit)
    else:
        cost = grading_work(config) * (len(body["traces"]) if "traces" in body else 1)
    return f"estimate {cost:,} / {WORK_BUDGET:,} work units"


def cost_of(route: str, body) -> str:
    """The case's cost in its route's unit, as ``cost / budget``."""
    budget = BUDGETS.get(route)
    if budget is None:
        return ""
    if route == "POST /v1/grade":
        traces = body["traces"] if "traces" in body else [body]
        configs = [parse_config(t["config"]) for t in traces]
        failing = [(t, c) for t, c in zip(traces, configs) if json_copy(run(c)) != t]  # as the service finds them
        cost = batch_cost(configs, failing)
    elif route == "POST /v1/grade/distribution":
        config = parse_config(body["config"])
        key = "samples" if "samples" in body else "counts"
        cost = distribution_cost(len(config.vocab), min(body["m"], config.limit), body[key], counts=key == "counts")
    elif route == "POST /v1/analysis":
        from specdec_service.engine.analysis import analysis_cost
        config = parse_config(body["config"])
        cost = analysis_cost(config, body.get("depth", min(config.limit, 3)), body.get("widths", range(1, 9)))
    elif route == "GET /v1/draws":
        cost = 4096
    else:
        from specdec_service.budget import session_work
        config = parse_config((body.get("state") or body)["config"])
        cost = session_work(config, config.limit if route == "POST /v1/runs" else 1)
    return f"{cost:,} / {budget.limit:,} {budget.unit}"


# ---------------------------------------------------------------- sending


class InProcess:
    def __init__(self):
        self.client = create_app({"CPU_DEADLINE": None}).test_client()  # the cost measured, not the guard

    def send(self, target: str, data: bytes | None) -> tuple[int, int]:
        method, path = target.split(" ", 1)
        if method == "GET":
            response = self.client.get(path)
        else:
            response = self.client.post(path, data=data, headers={"Content-Type": "application/json"})
        return response.status_code, len(response.get_data())

    def close(self):
        pass


class Http:
    """gunicorn with one sync worker on a free loopback port."""

    def __init__(self):
        import requests

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"
        # gunicorn's default timeout (30 s): no case, accepted or refused, may come near it
        env = {**os.environ, "SPECDEC_BIND": f"127.0.0.1:{port}", "SPECDEC_WORKERS": "1", "SPECDEC_TIMEOUT": "30"}
        self.process = subprocess.Popen([sys.executable, "-m", "specdec_service.cli", "serve"], env=env, cwd=ROOT,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.session = requests.Session()
        for _ in range(300):
            try:
                if self.session.get(self.base + "/health", timeout=1).ok:
                    break
            except requests.RequestException:
                time.sleep(0.1)

    def send(self, target: str, data: bytes | None) -> tuple[int, int]:
        method, path = target.split(" ", 1)
        response = self.session.request(method, self.base + path, data=data, timeout=120,
                                        headers={"Content-Type": "application/json"} if data is not None else {})
        return response.status_code, len(response.content)

    def close(self):
        self.process.terminate()
        self.process.wait(10)


def _measure(server, target: str, data: bytes | None, repeat: int, http: bool) -> tuple[float, float, float, int, int]:
    """``(median, best, best wall, status, response bytes)`` of ``repeat`` sends: CPU seconds of
    this process in-process, wall seconds with ``http``."""
    times, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        status, size = server.send(target, data)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    measured = times if http else cpu  # in-process: CPU time of this one thread
    return statistics.median(measured), min(measured), min(times), status, size


@contextlib.contextmanager
def exact_reading() -> Iterator[None]:
    """The grading routes as before issue 18's fast reading: every body read by the exact path,
    and the samples of a distribution checked one at a time (``_count_each``)."""
    from specdec_service.api import bodies
    from specdec_service.grading import distribution

    fast, count = bodies.parse_json_float64, distribution._count_samples
    bodies.parse_json_float64, distribution._count_samples = (lambda data: None), distribution._count_each
    try:
        yield
    finally:
        bodies.parse_json_float64, distribution._count_samples = fast, count


def _paired(server, target: str, data: bytes, repeat: int) -> tuple[float, float]:
    """Median CPU seconds of ``repeat`` sends with the fast reading and without, alternating."""
    fast, exact = [], []
    for _ in range(repeat):
        for times, context in ((fast, contextlib.nullcontext()), (exact, exact_reading())):
            with context:
                start = time.process_time()
                server.send(target, data)
                times.append(time.process_time() - start)
    return statistics.median(fast), statistics.median(exact)


def _reading(data: bytes, grading: bool, repeat: int) -> float:
    """Median CPU seconds of reading ``data`` under the JSON rule alone as the route reads it (on
    the grading routes ``api.bodies.parse_json_float64`` where it pays, then ``parse_json`` if it
    defers): the part of a refusal that is not the checks'."""
    from specdec_service.api.bodies import fast_float64_pays, parse_json, parse_json_float64
    from specdec_service.api.grading import cycle_collection_paused

    times = []
    for _ in range(repeat):
        with cycle_collection_paused() if grading else contextlib.nullcontext():  # as the route reads it
            start = time.process_time()
            try:
                if not (grading and fast_float64_pays(data)) or parse_json_float64(data) is None:
                    parse_json(data, exact=not grading)
            except Exception:  # noqa: BLE001 - a refusal while reading is a reading too
                pass
            times.append(time.process_time() - start)
    return statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--route", help='only this route, e.g. "POST /v1/grade"')
    parser.add_argument("--http", action="store_true", help="send to gunicorn (one sync worker), not in-process")
    parser.add_argument("--only", choices=("accepted", "refused", "family"),
                        help="only the accepted cases, only the refusals, or only issue 27's families")
    parser.add_argument("--exact-too", action="store_true",
                        help="time the grading cases with the exact reading too (paired, in-process)")
    args = parser.parse_args(argv)
    server = Http() if args.http else InProcess()
    worst: dict[str, dict[str, tuple[float, str]]] = {}
    families: list[str] = []
    failed = False
    kinds = [("accepted", CASES), ("refused", REFUSALS), ("family", FAMILIES)]
    try:
        for kind, makers in kinds:
            if args.only and kind != args.only:
                continue
            for make in makers:
                for route, description, target, body in make():
                    if args.route and route != args.route:
                        continue
                    data = (None if body is None else body.encode() if isinstance(body, RawJson)
                            else json.dumps(body, separators=(",", ":")).encode())
                    median, best, wall, status, size = _measure(server, target, data, args.repeat, args.http)
                    filed = kind
                    if kind == "family":  # issue 27: answered or refused, filed by what it got
                        filed = "accepted" if status == 200 else "refused"
                        estimate = "-" if isinstance(body, RawJson) else estimate_of(route, body)
                        cost = f"issue 27 family {description.split(':')[0]}: {estimate}"
                        ok = status in (200, 400, 422)
                        families.append(f"| {description} | `{route}` | {status} | {median:.3f} | {estimate} |")
                    else:
                        ok = status == 200 if kind == "accepted" else 400 <= status < 500 and status != 413
                        cost = cost_of(route, body) if kind == "accepted" else "refused"
                    failed |= not ok
                    if filed == "refused" and data is not None and kind != "family":
                        reading = _reading(data, "/v1/grade" in target, args.repeat)
                        cost += f" (reading the JSON alone: {reading:.3f} s)"
                    if args.exact_too and "/v1/grade" in target and not args.http:
                        fast, exact = _paired(server, target, data, args.repeat)
                        cost += f" [paired: fast reading {fast:.3f} s, exact {exact:.3f} s, ratio {fast / exact:.2f}]"
                    print(f"{route:30} {median:6.3f} s median, {best:6.3f} best (wall {wall:6.3f} s)  status {status}  "
                          f"in {0 if data is None else len(data):>9,} B  out {size:>10,} B  {cost}  {description}", flush=True)
                    seen = worst.setdefault(route, {})
                    if filed not in seen or median > seen[filed][0]:
                        seen[filed] = (median, description)
    finally:
        server.close()
    print("\n| route | worst accepted | time | worst refusal | time |\n|---|---|---|---|---|")
    for route, seen in worst.items():
        accepted, refused = seen.get("accepted", (None, "")), seen.get("refused", (None, ""))
        shown = [f"{t:.2f} s" if t is not None else "-" for t in (accepted[0], refused[0])]
        print(f"| `{route}` | {accepted[1]} | {shown[0]} | {refused[1]} | {shown[1]} |")
    if families:
        print("\n| issue 27 family | route | status | CPU s (median) | estimate |\n|---|---|---|---:|---|")
        print("\n".join(families))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
