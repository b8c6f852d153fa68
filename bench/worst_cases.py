"""The worst request each route accepts, and how long it takes (issue 9 section 3; run by hand).

    python bench/worst_cases.py [--repeat 3] [--route "POST /v1/grade"] [--http]

For every route the costliest requests we could construct within its input bounds and its work
budget (:mod:`specdec_service.budget`) are sent to the service, each ``--repeat`` times; the
best time of each and the slowest case per route are printed as the Markdown table of
docs/service.md. In-process by default (Flask's test client: the whole WSGI request, JSON
parsing and serialisation included, on one core), timed in CPU seconds of the process (so that
other jobs on a shared machine do not inflate it; the wall time is printed too); ``--http``
sends them to gunicorn with one sync worker on a free loopback port instead (wall time). Every case must answer 200 (it is accepted), and
the cost of each is printed next to its route's budget. Target: at most 2 s each, on one core.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import os
import random
import socket
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
from specdec_service.grading.grader import batch_cost  # noqa: E402


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


def _fits(traces: list, budget: int) -> list:
    """The longest prefix of ``traces`` whose cost is within ``budget``."""
    configs = [parse_config(t["config"]) for t in traces]
    low, high = 1, len(traces)
    while low < high:
        mid = (low + high + 1) // 2
        if batch_cost(configs[:mid], list(zip(traces[:mid], configs[:mid]))) <= budget:
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
    yield "POST /v1/grade", "1000 correct eight-token toy traces (6.5 MB), every config distinct", "POST /v1/grade", {"traces": correct}


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
        config = parse_config((body.get("state") or body)["config"])
        from specdec_service.budget import block_units, session_units
        cost = (session_units(config.width, len(config.vocab), config.limit) if route == "POST /v1/runs"
                else block_units(config.width, len(config.vocab)))
    return f"{cost:,} / {budget.limit:,} {budget.unit}"


# ---------------------------------------------------------------- sending


class InProcess:
    def __init__(self):
        self.client = create_app().test_client()

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
        env = {**os.environ, "SPECDEC_BIND": f"127.0.0.1:{port}", "SPECDEC_WORKERS": "1", "SPECDEC_TIMEOUT": "60"}
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--route", help='only this route, e.g. "POST /v1/grade"')
    parser.add_argument("--http", action="store_true", help="send to gunicorn (one sync worker), not in-process")
    args = parser.parse_args(argv)
    server = Http() if args.http else InProcess()
    worst: dict[str, tuple[float, str]] = {}
    failed = False
    try:
        for make in CASES:
            for route, description, target, body in make():
                if args.route and route != args.route:
                    continue
                data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
                times, cpu = [], []
                for _ in range(args.repeat):
                    start, start_cpu = time.perf_counter(), time.process_time()
                    status, size = server.send(target, data)
                    times.append(time.perf_counter() - start)
                    cpu.append(time.process_time() - start_cpu)
                best = min(cpu) if not args.http else min(times)  # in-process: CPU time of this one thread
                cost = cost_of(route, body)
                failed |= status != 200
                print(f"{route:30} {best:6.3f} s (wall {min(times):6.3f} s)  status {status}  in {0 if data is None else len(data):>9,} B  "
                      f"out {size:>10,} B  {cost}  {description}", flush=True)
                if route not in worst or best > worst[route][0]:
                    worst[route] = (best, description)
    finally:
        server.close()
    print("\n| route | worst case | time |\n|---|---|---|")
    for route, (best, description) in worst.items():
        print(f"| `{route}` | {description} | {best:.2f} s |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
