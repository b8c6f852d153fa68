"""How long each route takes to refuse the costliest bodies within its size limit (run by hand).

    python bench/refusals.py [--repeat 3] [--route /v1/grade] [--markdown]

The families of refusals measured in issue 27 (item 6), and the bad settings of a config on
every route: for each case the request is sent in-process (Flask's test client: the whole WSGI
request, JSON reading and the problem document included) ``--repeat`` times and timed in CPU
seconds of this process (``time.process_time``: other jobs on a shared machine do not inflate
it). Every case must be refused with a 4xx other than 413 (a 413 is the size limit, not a
refusal of the content); the script says so and exits 1 otherwise. Target: at most 0.5 s CPU a
refusal on one core. ``--markdown`` prints the table in the form of docs/service.md's worst-case
table (route, case, median and best CPU seconds, status).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Callable, Iterator

from specdec_service import create_app

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
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = parser.parse_args(argv)
    client = create_app({"CPU_DEADLINE": None}).test_client()  # the cost measured, not the guard
    rows, failed = [], False
    for route, what, data in cases():
        if args.route and route != args.route:
            continue
        median, best, status = measure(client, route, data, args.repeat)
        refused = 400 <= status < 500 and status != 413
        failed |= not refused or median > 0.5
        rows.append((route, what, len(data), median, best, status))
        print(f"{route:24} {median:6.3f} s (best {best:.3f})  {status}  {len(data):>9,} B  {what}", flush=True)
    if args.markdown:
        print("\n| route | refused body | bytes | CPU (median) | best | status |\n|---|---|---|---|---|---|")
        for route, what, size, median, best, status in rows:
            print(f"| `POST {route}` | {what} | {size:,} | {median:.2f} s | {best:.2f} s | {status} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
