"""Capacity per core of each route: the server's CPU time per request, over HTTP.

Starts gunicorn with one sync worker on a free port of 127.0.0.1, then for each
route of :data:`ROUTES` runs wrk (a generated script posting a fixed body
built with the service itself) for ``--duration``, ``--rounds`` times in
rotating order, and reads the gunicorn processes' user + system CPU time from
/proc before and after each run. The figure is the median CPU milliseconds per
request, and ``1000 / ms`` requests per second per core: CPU time is what a
deployment must provide (the work is CPU-bound pure Python), and a shared
machine disturbs it much less than throughput. Requests per second are printed
too, for reference. nginx's own cost per request is measured by
bench/load/edge.py. Results and the sizing built on them: docs/deploy.md.

    python bench/load/routes.py [--duration 3s] [--rounds 3] [--connections 2] [--json FILE]

Needs wrk and Linux (/proc).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run as single  # noqa: E402  bench/load/run.py: wrk(), cpu_seconds(), free_port(), wait_for_health()

SEED1 = {"config": {"draft": "biased", "seed": 1}}


def bodies() -> dict[str, tuple[str, str, object]]:
    """Each measured request: name -> (method, path, JSON body or None), made with the service in-process."""
    from specdec_service import create_app

    app = create_app({"TESTING": True}).test_client()

    def post(path: str, body: object) -> dict:
        response = app.post(path, json=body)
        assert response.status_code == 200, (path, response.get_data(as_text=True)[:300])
        return response.get_json()

    middle = post("/v1/step", post("/v1/step", SEED1)["state"])["state"]  # a session two blocks in
    traces = [post("/v1/runs", {"config": {"draft": "biased", "seed": seed}}) for seed in range(20)]
    failing = copy.deepcopy(traces[:20])
    for trace in failing:  # a classic mistake's symptom: the first rejection kept as an acceptance
        for block in trace["blocks"]:
            rejected = [v for v in block.get("verification") or [] if v.get("accepted") is False]
            if rejected:
                rejected[0]["accepted"] = True
                break
    return {
        "GET /health": ("GET", "/health", None),
        "GET /v1/models": ("GET", "/v1/models", None),
        "GET /v1/draws (16)": ("GET", "/v1/draws?seed=1&count=16", None),
        "POST /v1/draft": ("POST", "/v1/draft", SEED1),
        "POST /v1/step (first block)": ("POST", "/v1/step", SEED1),
        "POST /v1/step (third block)": ("POST", "/v1/step", middle),
        "POST /v1/runs (limit 8)": ("POST", "/v1/runs", SEED1),
        "POST /v1/grade (1 trace)": ("POST", "/v1/grade", {"traces": traces[:1]}),
        "POST /v1/grade (20 traces)": ("POST", "/v1/grade", {"traces": traces}),
        "POST /v1/grade (20 failing)": ("POST", "/v1/grade", {"traces": failing}),
    }


def script(directory: Path, index: int, method: str, path: str, body: object) -> Path:
    """A wrk script for one request, reporting through report.lua."""
    lines = [f'dofile("{HERE / "report.lua"}")', f'wrk.method = "{method}"', f'wrk.path = "{path}"']
    if body is not None:
        text = json.dumps(body, separators=(",", ":"))
        assert "]==]" not in text
        lines += ['wrk.headers["Content-Type"] = "application/json"', f"wrk.body = [==[{text}]==]"]
    target = directory / f"route{index}.lua"
    target.write_text("\n".join(lines) + "\n")
    return target


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", default="3s")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=2)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    if single.wrk_missing():
        return 2
    requests_ = bodies()
    with tempfile.TemporaryDirectory(prefix="specdec-routes-") as tmp, tempfile.TemporaryFile() as log:
        scripts = {name: script(Path(tmp), i, *spec) for i, (name, spec) in enumerate(requests_.items())}
        port = single.free_port()
        url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "SPECDEC_BIND": f"127.0.0.1:{port}", "SPECDEC_WORKERS": "1"}
        env.pop("SPECDEC_GUNICORN_CONF", None)
        server = subprocess.Popen([sys.executable, "-m", "specdec_service.cli", "serve"], env=env,
                                  stdout=log, stderr=subprocess.STDOUT)
        try:
            single.wait_for_health(url, server)
            names = list(scripts)
            for name in names:  # warm-up, and every request must succeed
                result = single.wrk(url, str(scripts[name]), "1s", args.connections, 1)
                if result["non_2xx"] or result["errors"] or not result["requests"]:
                    raise SystemExit(f"{name}: {result}")
            runs = {name: [] for name in names}
            for round_ in range(args.rounds):
                shift = round_ % len(names)
                for name in names[shift:] + names[:shift]:
                    before = single.cpu_seconds(server.pid)
                    result = single.wrk(url, str(scripts[name]), args.duration, args.connections, 1)
                    result["cpu_ms"] = 1000 * (single.cpu_seconds(server.pid) - before) / max(result["requests"], 1)
                    runs[name].append(result)
        finally:
            server.terminate()
            server.wait(timeout=30)

    print(f"gunicorn, 1 sync worker; wrk {args.duration} x {args.rounds} rounds, {args.connections} connections; "
          f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}")
    print(f"{'route':<30} {'CPU ms/req':>10} {'req/s/core':>10} {'req/s':>8} {'errors':>6}   (medians over rounds)")
    summary = {}
    for name, results in runs.items():
        cpu = statistics.median(r["cpu_ms"] for r in results)
        rps = statistics.median(r["rps"] for r in results)
        errors = sum(r["errors"] + r["non_2xx"] for r in results)
        summary[name] = {"cpu_ms": cpu, "per_core": 1000 / cpu if cpu else None, "rps": rps, "errors": errors}
        print(f"{name:<30} {cpu:>10.3f} {1000 / cpu if cpu else float('inf'):>10.0f} {rps:>8.1f} {errors:>6}")
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary, "runs": runs}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
