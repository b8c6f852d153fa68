"""Grading throughput, in-process and over HTTP (run by hand, not in CI).

    python bench/grading.py [--count 1000] [--repeat 3] [--no-http] [--cpu]

In-process (one core): ``grade`` on ``--count`` correct eight-token toy traces (draft biased,
width 3, seeds 0..count-1, round-tripped through JSON like a parsed request: every config
distinct, so the reference cache never hits), the same number drawn from 20 configs (the cache
hits, as when a class submits traces for a few assigned settings), ``grade_many`` on
the same batch, ``POST /v1/grade`` with the same batch through Flask's test client (the body
read under the JSON rule, graded and written: the request's work without the socket), and
failing traces (every catalogue mistake over the same seeds) with and without the diagnosis.
Over HTTP: the service under gunicorn with one sync worker on a free local port, one
``POST /v1/grade`` with the whole batch, and single-trace requests on a keep-alive session.
Also distribution grading of 10^6 samples given as counts (m = 4) and of 10^5 sampled outputs.
Targets: at least 1000 eight-token traces per second on one core in-process (issue 5); at least
6,000 correct traces per second, line ``grade, correct traces`` (issue 10).
Record results in docs/bench-grading.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from specdec_service.engine import parse_config, run
from specdec_service.grading import CATALOGUE, faulty_run, grade, grade_distribution, grade_many

ROOT = Path(__file__).resolve().parents[1]


def best(fn, repeat: int, clock=time.perf_counter) -> float:
    """Best time of ``fn()`` in seconds over ``repeat`` rounds: wall time, or ``clock``
    (``time.process_time`` for the in-process figures with ``--cpu``)."""
    times = []
    for _ in range(repeat):
        start = clock()
        fn()
        times.append(clock() - start)
    return min(times)


def correct_traces(count: int) -> list[dict]:
    return [json.loads(json.dumps(run(parse_config({"draft": "biased", "seed": s, "width": 3})))) for s in range(count)]


def failing_traces(count: int) -> list[dict]:
    traces = []
    seed = 0
    while len(traces) < count:
        mistake = CATALOGUE[seed % len(CATALOGUE)]
        config = parse_config({"draft": "biased", "seed": seed, "width": 3})
        trace = faulty_run(config, mistake.rules)
        if trace != run(config):
            traces.append(json.loads(json.dumps(trace)))
        seed += 1
    return traces


def route_batch(traces: list[dict]):
    """``POST /v1/grade`` of ``traces`` as one batch through Flask's test client (no socket):
    a function that sends it once and checks that every trace passed."""
    from specdec_service import create_app

    client = create_app({"TESTING": True}).test_client()
    body = json.dumps({"traces": traces}).encode()

    def send():
        r = client.post("/v1/grade", data=body, content_type="application/json")
        summary = r.data.rindex(b'"summary":')  # the response's last member (not read whole: not the route's work)
        assert r.status_code == 200 and json.loads(r.data[summary + 10:-2])["passed"] == len(traces), r.data[:200]
    send()  # warm up
    return send


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_bench(traces: list[dict], repeat: int) -> dict:
    import requests

    port = free_port()
    env = {**os.environ, "SPECDEC_BIND": f"127.0.0.1:{port}", "SPECDEC_WORKERS": "1", "SPECDEC_TIMEOUT": "120",
           "SPECDEC_LOG_LEVEL": "warning"}
    server = subprocess.Popen([sys.executable, "-m", "specdec_service.cli", "serve"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        with requests.Session() as http:
            for _ in range(100):
                try:
                    http.get(url + "/health", timeout=1)
                    break
                except requests.ConnectionError:
                    time.sleep(0.1)
            else:
                raise RuntimeError("the service did not start")
            body = json.dumps({"traces": traces})

            def batch():
                r = http.post(url + "/v1/grade", data=body, headers={"Content-Type": "application/json"}, timeout=120)
                assert r.status_code == 200 and r.json()["summary"]["passed"] == len(traces), r.text[:200]

            singles = [json.dumps(t) for t in traces[:200]]

            def single():
                for text in singles:
                    r = http.post(url + "/v1/grade", data=text, headers={"Content-Type": "application/json"}, timeout=10)
                    assert r.status_code == 200 and r.json()["passed"]

            batch()  # warm up
            t_batch = best(batch, repeat)
            t_single = best(single, repeat)
        return {"batch": len(traces) / t_batch, "batch_seconds": t_batch, "single": len(singles) / t_single,
                "body_bytes": len(body)}
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-http", action="store_true", help="skip the HTTP measurements")
    parser.add_argument("--cpu", action="store_true",
                        help="in-process figures in process CPU time (steadier on a shared machine); HTTP stays wall time")
    args = parser.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter

    good = correct_traces(args.count)
    bad = failing_traces(min(args.count, 300))
    config = parse_config({"draft": "biased", "seed": 1, "width": 3})
    t_run = best(lambda: [run(config) for _ in range(200)], args.repeat, clock) / 200

    t_grade = best(lambda: [grade(t) for t in good], args.repeat, clock)  # distinct configs: no cache hits
    same = [good[i % 20] for i in range(len(good))]  # 20 settings, like a class with 20 assigned configs
    t_same = best(lambda: [grade(t) for t in same], args.repeat, clock)
    t_many = best(lambda: grade_many(good), args.repeat, clock)
    t_route = best(route_batch(good), args.repeat, clock)
    t_bad = best(lambda: [grade(t) for t in bad], args.repeat, clock)
    t_bad_nodiag = best(lambda: [grade(t, diagnose=False) for t in bad], args.repeat, clock)

    toy4 = {"config": {"draft": "biased", "seed": 0}, "m": 4}
    cells = [[a, b, c, d] for a in "ABC" for b in "ABC" for c in "ABC" for d in "ABC"]
    counts = [{"prefix": cell, "count": 1_000_000 // 81 + (1 if i < 1_000_000 % 81 else 0)} for i, cell in enumerate(cells)]
    samples = [t["output"] for t in good] * (100_000 // len(good))
    t_counts = best(lambda: grade_distribution({**toy4, "counts": counts}), args.repeat, clock)
    t_samples = best(lambda: grade_distribution({**toy4, "samples": samples}), args.repeat, clock)

    print(f"# {platform.python_implementation()} {platform.python_version()} on {platform.machine()}, "
          f"{os.cpu_count()} CPUs; best of {args.repeat}; in-process figures in {'CPU' if args.cpu else 'wall'} time")
    print(f"engine run (8-token toy trace):            {t_run * 1e3:8.3f} ms")
    print(f"grade, correct traces:                     {len(good) / t_grade:8.0f} traces/s  ({t_grade / len(good) * 1e3:.3f} ms each)")
    print(f"grade, 20 distinct configs (cached refs):  {len(same) / t_same:8.0f} traces/s")
    print(f"grade_many, batch of {len(good)}:                {len(good) / t_many:8.0f} traces/s")
    print(f"POST /v1/grade in-process, batch of {len(good)}:  {len(good) / t_route:8.0f} traces/s  ({t_route:.2f} s a request)")
    print(f"grade, failing traces with diagnosis:      {len(bad) / t_bad:8.0f} traces/s  ({t_bad / len(bad) * 1e3:.2f} ms each)")
    print(f"grade, failing traces without diagnosis:   {len(bad) / t_bad_nodiag:8.0f} traces/s")
    print(f"distribution, 10^6 samples as 81 counts:   {t_counts * 1e3:8.1f} ms")
    print(f"distribution, {len(samples)} sampled outputs:  {t_samples * 1e3:8.1f} ms")
    if not args.no_http:
        h = http_bench(good, args.repeat)
        print(f"HTTP, one batch of {len(good)} ({h['body_bytes']} bytes): {h['batch']:8.0f} traces/s  ({h['batch_seconds']:.2f} s)")
        print(f"HTTP, single-trace requests:               {h['single']:8.0f} traces/s")


if __name__ == "__main__":
    main()
