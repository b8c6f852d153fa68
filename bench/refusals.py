"""How long each route takes to refuse the costliest bodies within its size limit (run by hand).

    python bench/refusals.py [--repeat 3] [--route /v1/grade] [--sizes 1,4,8] [--markdown]

The families of refusals measured in issue 27 (item 6), and the bad settings of a config on
every route: for each case the request is sent in-process (Flask's test client: the whole WSGI
request, JSON reading and the problem document included) ``--repeat`` times and timed in CPU
seconds of this process (``time.process_time``: other jobs on a shared machine do not inflate
it). Every case must be refused with a 4xx other than 413 (a 413 is the size limit, not a
refusal of the content); the script says so and exits 1 otherwise. Target: at most 0.5 s CPU a
refusal on one core, about what reading the body costs: each case is printed with the CPU time
of ``orjson.loads`` of the same body with its bad values made valid (the cyclic collector paused,
as the grading routes read), and the ratio. The grading families (a bad value last in a batch
of traces, a batch of configs with bad tables, too many traces, a bad label among the samples)
are built at each of ``--sizes`` MiB (the samples at most 10^6). ``--markdown`` prints the
table in the form of docs/service.md's worst-case table.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import statistics
import sys
import time
from typing import Callable, Iterator

from specdec_service import create_app
from specdec_service.engine import parse_config, run

try:
    import orjson
except ImportError:  # pragma: no cover - a dependency of the service
    orjson = None

ENGINE_BODY, GRADING_BODY = 256 * 1024, 8 * 1024 * 1024
"""The body limits of the session routes and of the grading routes."""
SEED = {"draft": "biased", "seed": 1}
SESSION_ROUTES = ("/v1/draft", "/v1/step", "/v1/runs", "/v1/analysis")

Case = tuple[str, str, bytes]  # route, description, body


def table(entry: object, size: int = 64) -> dict:
    """A custom model of ``size`` labels whose every entry is ``entry``."""
    vocab = [f"t{i}" for i in range(size)]
    return {"vocab": vocab, "start": [entry] * size, "next": {label: [entry] * size for label in vocab}}


def dumps(value: object, literal: str = "") -> bytes:
    """``value`` as compact JSON; the string ``"@"`` written as the raw literal ``literal``."""
    text = json.dumps(value, separators=(",", ":"))
    return (text.replace('"@"', literal) if literal else text).encode()


def fill(make: Callable[[int], bytes], limit: int) -> bytes:
    """``make(n)`` for the largest ``n`` (found by bisection) whose body is within ``limit`` bytes."""
    low, high = 1, 2
    while len(make(high)) <= limit:
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if len(make(middle)) <= limit else (low, middle)
    return make(low)


def session_body(route: str, config: dict) -> dict:
    """The smallest body of ``route`` around ``config``."""
    if route == "/v1/verify":
        return {"state": {"config": config}, "proposal": {"tokens": []}}
    return {"config": config}


def cases() -> Iterator[Case]:
    """The refusals of issue 27 item 6 at the body limits, and more of their kind."""
    for literal, what in (("1e-999", "1e-999"), ("1e-400", "1e-400"), ("0.10000000000000000001", "22-digit"),
                          ("-1e-400", "-1e-400")):
        config = {"target": table("@"), "draft": table("@"), "seed": 1}
        for route in SESSION_ROUTES + ("/v1/verify",):
            yield route, f"two 64-label tables of {what} entries", dumps(session_body(route, config), literal)
    strings = table("x")
    yield ("/v1/grade", "a batch of configs with two 64-label tables, every entry a string (8 MiB)",
           fill(lambda n: dumps({"traces": [{"config": {"target": strings, "draft": strings, "seed": 1}}] * n}),
                GRADING_BODY))
    yield ("/v1/grade", "a batch of configs with two 64-label tables of 1e-999 entries (8 MiB)",
           fill(lambda n: dumps({"traces": [{"config": {"target": table("@"), "draft": table("@"), "seed": 1}}] * n},
                                "1e-999"), GRADING_BODY))
    for route in ("/v1/grade/distribution", "/v1/grade/samples"):
        extra = {"m": 1} if route.endswith("distribution") else {}
        yield (route, "two 64-label tables, every entry a string, and 10^5 samples",
               dumps({"config": {"target": strings, "draft": strings, "seed": 1}, **extra,
                      "samples": [["t0"]] * 100_000}))
        yield (route, "10^6 samples, the last one a label not of the vocabulary",
               dumps({"config": SEED, **extra, "samples": [["A"]] * (10**6 - 1) + [["Z"]]}))
        yield (route, "10^6 samples, the first one a label not of the vocabulary",
               dumps({"config": SEED, **extra, "samples": [["Z"]] + [["A"]] * (10**6 - 1)}))
        yield (route, "10^6 samples and temperature 1e-400",
               dumps({"config": {**SEED, "sampling": {"temperature": "@"}}, **extra, "samples": [["A"]] * 10**6},
                     "1e-400"))
        yield (route, "`samples` a list of 2.6 million ints (5.2 MB: the values bound)",
               dumps({"config": SEED, **extra, "samples": [1] * 2_600_000}))


def one_hot(size: int, shift: int) -> dict:
    """A model whose rows are one-hot: token i is always followed by token i + shift."""
    vocab = [f"t{i}" for i in range(size)]
    row = lambda i: [1.0 if j == i % size else 0.0 for j in range(size)]  # noqa: E731
    return {"vocab": vocab, "start": row(0), "next": {label: row(i + shift) for i, label in enumerate(vocab)}}


def sized_cases(mib: float) -> Iterator[Case]:
    """The grading families at ``mib`` MiB: one bad value last in a batch of valid traces (16
    blocks of width 16 over 64 labels, about 90 KB each), every draft row strings, a batch of
    configs of bad tables, too many traces, a bad label last among the samples."""
    size = int(mib * 1024 * 1024)
    trace = json.loads(json.dumps(run(parse_config({"target": one_hot(64, 1), "draft": one_hot(64, 2), "width": 16,
                                                    "limit": 16, "seed": 1}))))
    last = json.loads(json.dumps(trace))
    last["blocks"][-1]["proposal"]["steps"][-1]["q"][-1] = "@"
    strings = json.loads(json.dumps(trace))
    for block in strings["blocks"]:
        for step in block["proposal"]["steps"]:
            step["q"] = ["x"] * 64
    for literal, what in (("1e400", "1e400"), ("1" * 400, "a 400-digit integer"), ("1e-99999", "1e-99999"),
                          ('"x"', "a string")):
        yield ("/v1/grade", f"{mib:g} MiB of traces, the last draft entry {what}",
               fill(lambda n: dumps({"traces": [trace] * n + [last]}, literal), size))
    yield "/v1/grade", f"{mib:g} MiB of traces, every draft row strings", fill(lambda n: dumps({"traces": [strings] * n}), size)
    for literal, what in (("1e400", "1e400"), ("1e-999", "1e-999"), ('"x"', "string")):
        yield ("/v1/grade", f"{mib:g} MiB of configs, two 64-label tables of {what} entries",
               fill(lambda n: dumps({"traces": [{"config": {"target": table("@"), "draft": table("@"), "seed": 1}}] * n},
                                    literal), size))
    yield ("/v1/grade", f"{mib:g} MiB of toy configs: more than 1000 traces",
           fill(lambda n: dumps({"traces": [{"config": SEED}] * n}), size))
    samples = min(10**6, size // 6 - 10)
    for route in ("/v1/grade/distribution", "/v1/grade/samples"):
        extra = {"m": 1} if route.endswith("distribution") else {}
        for literal, what in (('"Z"', "a label not of the vocabulary"), ("1e400", "1e400")):
            yield (route, f"{samples:,} samples ({mib:g} MiB at most), the last one {what}",
                   dumps({"config": SEED, **extra, "samples": [["A"]] * (samples - 1) + [["@"]]}, literal))


def reading(data: bytes) -> float:
    """CPU seconds of ``orjson.loads`` of ``data`` with its bad values made valid (``"@"``-like
    literals as 0), the cyclic collector paused: what reading such a body costs."""
    if orjson is None:
        return float("nan")
    valid = data
    for bad in (b"1e400", b"1e-99999", b"1" * 400, b"1e-999", b'"x"', b'"Z"'):
        valid = valid.replace(bad, b"0")
    gc.disable()
    try:
        start = time.process_time()
        try:
            orjson.loads(valid)
        except orjson.JSONDecodeError:
            pass
        return time.process_time() - start
    finally:
        gc.enable()


def measure(client, route: str, data: bytes, repeat: int) -> tuple[float, float, int]:
    """``(median, best, status)``: CPU seconds of ``repeat`` sends of ``data`` to ``route``."""
    spent, status = [], 0
    for _ in range(repeat):
        start = time.process_time()
        response = client.post(route, data=data, headers={"Content-Type": "application/json"})
        spent.append(time.process_time() - start)
        status = response.status_code
    return statistics.median(spent), min(spent), status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--route", help="only this route, e.g. /v1/grade")
    parser.add_argument("--sizes", default="1,4,8", help="the MiB of the grading families, e.g. 1,4,8")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = parser.parse_args(argv)
    client = create_app({"CPU_DEADLINE": None, "WALL_DEADLINE": None}).test_client()  # the cost, not the guard
    rows, failed = [], False
    sized = (case for mib in args.sizes.split(",") for case in sized_cases(float(mib)))
    for route, what, data in itertools.chain(cases(), sized):
        if args.route and route != args.route:
            continue
        median, best, status = measure(client, route, data, args.repeat)
        refused = 400 <= status < 500 and status != 413
        failed |= not refused or median > 0.5
        read = reading(data)
        rows.append((route, what, len(data), median, best, status, read))
        print(f"{route:24} {median:6.3f} s (best {best:.3f})  {status}  {len(data):>9,} B  orjson {read:.3f} s "
              f"({median / read:4.1f}x)  {what}", flush=True)
    if args.markdown:
        print("\n| route | refused body | bytes | CPU (median) | best | orjson.loads | status |\n"
              "|---|---|---|---|---|---|---|")
        for route, what, size, median, best, status, read in rows:
            print(f"| `POST {route}` | {what} | {size:,} | {median:.2f} s | {best:.2f} s | {read:.2f} s | {status} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
