"""The cost of the one JSON rule (api/bodies.py parse_json), in-process (run by hand, not in CI).

    python bench/json_rule.py [--rounds 7]

Compares the rule's parse (UTF-8 without BOM, no repeated names, no lone surrogates,
integer-valued numbers as integers, float64 range on the grading routes) with a plain
standard-library parse of the same bytes (what the service did before: ``json`` with floats
as Decimal, or as float64 for the grading routes), on

- the body of ``POST /v1/step`` (the SPEC section 4 worked example's state, as bench/load's
  step.lua posts it), the state a step returns, and a custom 64-label state;
- a ``POST /v1/grade`` batch of 1000 eight-token traces (about 6 MB);
- a whole ``POST /v1/step`` request through the Flask test client, with the rule and with
  ``parse_json`` replaced by the plain parse (rounds alternate; the median of the rounds).

Then the structure check that runs before any parse (``api/structure.py``, issue 18): its own
cost per body (the bodies above, a 64-label custom state as orjson writes it and a 6 MB
distribution body of 10^6 samples), and whole requests of ``POST /v1/step`` (the toy state, the
64-label custom state) with the check and with it replaced by nothing, in alternating rounds, as
**process CPU time** and the ratio of the medians.

Prints microseconds per call. Record the figures in docs/bench-service.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine import custom_model  # noqa: E402  (bench/engine.py)

from specdec_service import create_app  # noqa: E402
from specdec_service.api import bodies  # noqa: E402
from specdec_service.engine import parse_config, run  # noqa: E402

STEP = json.dumps({"config": {"target": "toy", "draft": "biased", "width": 3, "seed": 1}}).encode()


def _plain_decimal(text: str):
    value = Decimal(text)
    exponent = value.adjusted()
    return value if -1000 <= exponent <= 1000 else Decimal(f"1e{1000 if exponent > 0 else -1000}").copy_sign(value)


_PLAIN = json.JSONDecoder(parse_float=_plain_decimal)


def plain_parse(data: bytes, exact: bool = True):
    """The parse before the rule: UTF-8 decode and the standard library, nothing checked."""
    return _PLAIN.decode(data.decode("utf-8")) if exact else json.loads(data)


def per_call(fn, number: int, rounds: int) -> float:
    """Median over ``rounds`` of the time per call in microseconds."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number * 1e6)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    print(f"Python {platform.python_version()}, {platform.machine()}; median of {rounds} rounds")

    app = create_app()
    client = app.test_client()
    state = json.dumps(client.post("/v1/step", data=STEP, content_type="application/json").get_json()["state"]).encode()
    table = custom_model(64, 1)
    custom = json.dumps({"config": {"target": table, "draft": table, "seed": 1, "width": 16, "limit": 256}}).encode()
    trace = run(parse_config({"draft": "biased", "seed": 1}))
    batch = json.dumps({"traces": [trace] * 1000}).encode()
    for name, body, exact, number in [("step body", STEP, True, 20000), ("returned state", state, True, 20000),
                                      ("custom 64-label state", custom, True, 20),
                                      ("grade batch, 1000 traces", batch, False, 1)]:
        rule = per_call(lambda: bodies.parse_json(body, exact), number, rounds)
        plain = per_call(lambda: plain_parse(body, exact), number, rounds)
        print(f"{name:26s} {len(body):>8} B  rule {rule:10.1f} us  plain {plain:10.1f} us  "
              f"+{rule - plain:8.1f} us ({rule / plain:.2f}x)")

    def step():
        client.post("/v1/step", data=STEP, content_type="application/json")

    rule_parse = bodies.parse_json
    with_rule, without = [], []
    for _ in range(rounds):
        with_rule.append(per_call(step, 1000, 1))
        bodies.parse_json = plain_parse
        try:
            without.append(per_call(step, 1000, 1))
        finally:
            bodies.parse_json = rule_parse
    a, b = statistics.median(with_rule), statistics.median(without)
    print(f"POST /v1/step (test client)  rule {a:8.1f} us  plain {b:8.1f} us  ratio {a / b:.3f} "
          f"(round ratios {', '.join(f'{x / y:.3f}' for x, y in zip(with_rule, without))})")
    structure(client, {"step body": STEP, "returned state": state, "custom 64-label state": custom,
                       "grade batch, 1000 traces": batch}, rounds)


def cpu_per_call(fn, number: int) -> float:
    """Process CPU time per call in microseconds."""
    start = time.process_time()
    for _ in range(number):
        fn()
    return (time.process_time() - start) / number * 1e6


def structure(client, bodies_by_name: dict, rounds: int) -> None:
    """The structure check alone on each body, then whole ``POST /v1/step`` requests with and
    without it (paired rounds, CPU time)."""
    import orjson

    from specdec_service.api import structure as bounds

    table = custom_model(64, 2)
    custom_orjson = orjson.dumps({"config": {"target": table, "draft": table, "seed": 1, "width": 16, "limit": 256}})
    samples = json.dumps({"config": {"draft": "biased", "seed": 0}, "m": 1,
                          "samples": [["A"]] * 10**6}, separators=(",", ":")).encode()
    bodies_by_name = {**bodies_by_name, "custom state (orjson)": custom_orjson, "10^6 samples": samples}
    for name, body in bodies_by_name.items():
        number = max(1, 2_000_000 // len(body))
        check = statistics.median(cpu_per_call(lambda: bounds.check_structure(body, 5_000_000), number)
                                  for _ in range(rounds))
        print(f"structure check: {name:26s} {len(body):>8} B  {check:10.1f} us")
    real = bodies.check_structure
    for name, body, number in [("toy state", STEP, 2000), ("custom 64-label state", bodies_by_name["custom 64-label state"], 40),
                               ("custom state (orjson)", custom_orjson, 40)]:
        def step():
            response = client.post("/v1/step", data=body, content_type="application/json")
            assert response.status_code == 200
        with_check, without = [], []
        for _ in range(rounds):
            with_check.append(cpu_per_call(step, number))
            bodies.check_structure = lambda data, max_values: None
            try:
                without.append(cpu_per_call(step, number))
            finally:
                bodies.check_structure = real
        a, b = statistics.median(with_check), statistics.median(without)
        print(f"POST /v1/step, {name:24s} with the check {a:9.1f} us  without {b:9.1f} us  ratio {a / b:.3f} "
              f"(rounds {', '.join(f'{x / y:.3f}' for x, y in zip(with_check, without))})")


if __name__ == "__main__":
    main()
