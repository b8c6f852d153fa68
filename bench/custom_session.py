"""A custom 64-label session: block by block through ``POST /v1/step`` against
one ``POST /v1/runs`` call (run by hand, not in CI).

    python bench/custom_session.py [--repeat 3] [--width 16] [--limit 256] [--no-memo]

The target and draft are random 64-label bigram tables (``bench/engine.py``'s
``custom_model``); both requests go through the whole WSGI app in process
(Flask's test client: JSON parsing, validation, the engine, the response),
no sockets. Prints the best of ``--repeat`` rounds of each and their ratio;
the target of issue 10 is a ratio of at most 3. ``--no-memo`` reads the
tables again on every request (the memo of ``engine.models.parse_model`` off:
the figure before it). Record results in
docs/bench-engine.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import lru_cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine import custom_model  # noqa: E402  (bench/engine.py)

from specdec_service import create_app  # noqa: E402
from specdec_service.engine import models  # noqa: E402

JSON = {"Content-Type": "application/json"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--limit", type=int, default=256)
    parser.add_argument("--no-memo", action="store_true", help="read the custom tables on every request")
    args = parser.parse_args()
    if args.no_memo:
        models._memoised = lru_cache(maxsize=0)(models._memoised.__wrapped__)

    config = {"target": custom_model(64, 1), "draft": custom_model(64, 2), "seed": 1,
              "width": args.width, "limit": args.limit}
    client = create_app().test_client()
    run_body = json.dumps({"config": config}).encode()

    def one_run() -> dict:
        response = client.post("/v1/runs", data=run_body, headers=JSON)
        assert response.status_code == 200, response.get_data(as_text=True)[:300]
        return response.get_json()

    def stepped() -> list:
        state, blocks = {"config": config}, []
        while True:
            response = client.post("/v1/step", data=json.dumps(state).encode(), headers=JSON)
            assert response.status_code == 200, response.get_data(as_text=True)[:300]
            answer = response.get_json()
            blocks.append(answer["block"])
            if answer["done"] is not None:
                return blocks
            state = answer["state"]

    trace = one_run()
    assert stepped() == trace["blocks"], "stepping must give the blocks of the run"
    run_times, step_times = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        one_run()
        run_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        stepped()
        step_times.append(time.perf_counter() - start)
    best_run, best_steps = min(run_times), min(step_times)
    print(f"custom 64-label session, width {args.width}, limit {args.limit}, memo {'off' if args.no_memo else 'on'}: "
          f"{len(trace['blocks'])} blocks, "
          f"request body {len(run_body)} bytes")
    print(f"one POST /v1/runs:               {best_run * 1e3:9.1f} ms")
    print(f"POST /v1/step block by block:    {best_steps * 1e3:9.1f} ms  ({best_steps / len(trace['blocks']) * 1e3:.2f} ms a block)")
    print(f"ratio steps / run:               {best_steps / best_run:9.2f}  (target <= 3)")


if __name__ == "__main__":
    main()
