"""A custom 64-label session: block by block through ``POST /v1/step`` against
one ``POST /v1/runs`` call (run by hand, not in CI).

    python bench/custom_session.py [--repeat 3] [--width 16] [--limit 256] [--no-memo] [--exact]

The target and draft are random 64-label bigram tables (``bench/engine.py``'s
``custom_model``, rows of 6-decimal numbers); both requests go through the whole WSGI app in
process (Flask's test client: JSON parsing, validation, the engine, the response), no
sockets. Times are process CPU time (one thread: other jobs on a shared machine disturb it far
less than wall time). A client's own JSON work is part of each figure, so it is measured with two
clients: one writing and reading JSON with Python's ``json`` (as the SDK does), one with
orjson (a fast client; it writes numbers as JavaScript does). For each: the best of
``--repeat`` rounds of one run and of the stepped session, their ratio (issue 10's target:
at most 3), and the server's share (the WSGI call alone, the client's JSON work left out).

``--no-memo`` reads the tables again on every request (the memo of
``engine.models.parse_model`` off); ``--exact`` turns the fast reading of a state off
(``api.bodies.parse_json_shortest``; every body read as exact decimals): the figures before
each. Record results in docs/bench-engine.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import lru_cache
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine import custom_model  # noqa: E402  (bench/engine.py)

from specdec_service import create_app  # noqa: E402
from specdec_service.api import bodies  # noqa: E402
from specdec_service.engine import models  # noqa: E402

JSON = {"Content-Type": "application/json"}
CODECS = {"json": (lambda v: json.dumps(v).encode(), json.loads), "orjson": (orjson.dumps, orjson.loads)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--limit", type=int, default=256)
    parser.add_argument("--no-memo", action="store_true", help="read the custom tables on every request")
    parser.add_argument("--exact", action="store_true", help="read every state as exact decimals")
    args = parser.parse_args()
    if args.no_memo:
        models._memoised = lru_cache(maxsize=0)(models._memoised.__wrapped__)
    if args.exact:
        bodies.parse_json_shortest = lambda data: None

    config = {"target": custom_model(64, 1), "draft": custom_model(64, 2), "seed": 1,
              "width": args.width, "limit": args.limit}
    client = create_app().test_client()
    server = [0.0]

    def post(path: str, data: bytes) -> bytes:
        start = time.process_time()
        response = client.post(path, data=data, headers=JSON)
        body = response.get_data()
        server[0] += time.process_time() - start
        assert response.status_code == 200, body[:300]
        return body

    def one_run(dumps, loads) -> dict:
        return loads(post("/v1/runs", dumps({"config": config})))

    def stepped(dumps, loads) -> list:
        state, blocks = {"config": config}, []
        while True:
            answer = loads(post("/v1/step", dumps(state)))
            blocks.append(answer["block"])
            if answer["done"] is not None:
                return blocks
            state = answer["state"]

    trace = one_run(*CODECS["json"])
    print(f"custom 64-label session, width {args.width}, limit {args.limit}, "
          f"memo {'off' if args.no_memo else 'on'}, reading {'exact' if args.exact else 'fast'}: "
          f"{len(trace['blocks'])} blocks, request body {len(json.dumps({'config': config}))} bytes")
    for name, codec in CODECS.items():
        assert json.loads(json.dumps(stepped(*codec))) == trace["blocks"], "stepping must give the blocks of the run"
        best = {}
        for label, call in (("run", one_run), ("steps", stepped)):
            times = []
            for _ in range(args.repeat):
                server[0] = 0.0
                start = time.process_time()
                call(*codec)
                times.append((time.process_time() - start, server[0]))
            best[label] = min(times)
        (run, run_server), (steps, steps_server) = best["run"], best["steps"]
        blocks = len(trace["blocks"])
        print(f"client {name:6s}  one POST /v1/runs {run * 1e3:7.1f} ms (server {run_server * 1e3:5.1f}); "
              f"POST /v1/step block by block {steps * 1e3:7.1f} ms (server {steps_server * 1e3:6.1f}; "
              f"{steps / blocks * 1e3:.2f} ms a block); ratio {steps / run:5.2f} (server alone "
              f"{steps_server / run_server:5.2f}; target <= 3)")


if __name__ == "__main__":
    main()
