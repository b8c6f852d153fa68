"""Load benchmark of the production shape: ``POST /v1/step`` through the nginx
edge with 1 and with 2 replicas, against gunicorn alone, in the same run.

Starts three setups side by side on free ports of 127.0.0.1, each replica with
one sync worker:

- ``gunicorn``: ``specdec-service serve`` alone (the shape of bench/load/run.py);
- ``edge+1``: ``deploy/local.py up --replicas 1`` (nginx in front of one replica);
- ``edge+2``: ``deploy/local.py up --replicas 2``.

Then ``ROUNDS`` rounds of wrk (bench/load/step.lua: the SPEC section 4 worked
example's state) against each setup in turn, the order rotating from round to
round, every wrk run bounded by ``--duration``. Reports per setup the median
over rounds of requests per second and of p50/p99 latency, the CPU time per
request of the setup's processes (gunicorn and, for the edge setups, nginx,
from /proc), and each round's ratios, whose medians are the figures: the edge's
cost (edge+1 : gunicorn) and what a second replica adds (edge+2 : edge+1). The
setups idle while another is measured, so they do not compete for the cores.

    python bench/load/edge.py [--duration 5s] [--rounds 5] [--connections 8] [--json FILE]

Needs wrk and nginx (``apt-get install -y wrk nginx``) and Linux (/proc).
Results: docs/bench-service.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import run as single  # noqa: E402  bench/load/run.py: wrk(), cpu_seconds(), free_port(), wait_for_health()


def load_local():
    """deploy/local.py as a module."""
    spec = importlib.util.spec_from_file_location("deploy_local", ROOT / "deploy" / "local.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["deploy_local"] = module
    spec.loader.exec_module(module)
    return module


def group_cpu_seconds(local, pgids: list[int]) -> float:
    """User + system CPU time of every live process in the process groups ``pgids``."""
    return sum(int(f[11]) + int(f[12]) for _, f in local.processes() if int(f[2]) in pgids) / single.TICKS


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", default="5s", help="each wrk run (wrk syntax, default 5s)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    if single.wrk_missing():
        return 2
    local = load_local()
    local.nginx_binary()  # fails early without nginx

    with tempfile.TemporaryDirectory(prefix="specdec-bench-") as tmp, tempfile.TemporaryFile() as log:
        port = single.free_port()
        env = {**os.environ, "SPECDEC_BIND": f"127.0.0.1:{port}", "SPECDEC_WORKERS": "1"}
        env.pop("SPECDEC_GUNICORN_CONF", None)
        alone = subprocess.Popen([sys.executable, "-m", "specdec_service.cli", "serve"], env=env,
                                 stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        runs = {"gunicorn": Path(tmp) / "none", "edge+1": Path(tmp) / "edge1", "edge+2": Path(tmp) / "edge2"}
        try:
            single.wait_for_health(f"http://127.0.0.1:{port}", alone)
            urls, groups = {"gunicorn": f"http://127.0.0.1:{port}"}, {"gunicorn": [alone.pid]}
            for name, replicas in (("edge+1", 1), ("edge+2", 2)):
                local.up(runs[name], "127.0.0.1", single.free_port(), replicas, 1)
                state = local.read_state(runs[name])
                urls[name] = state["url"]
                groups[name] = [state["nginx"]["pid"], *(r["pid"] for r in state["replicas"])]
            for name, url in urls.items():  # warm-up
                single.wrk(url, "step.lua", "2s", args.connections, 1)
            results = {name: [] for name in urls}
            names = list(urls)
            for round_ in range(args.rounds):
                for name in names[round_ % 3:] + names[:round_ % 3]:
                    before = group_cpu_seconds(local, groups[name])
                    result = single.wrk(urls[name], "step.lua", args.duration, args.connections, 1)
                    result["cpu_ms"] = 1000 * (group_cpu_seconds(local, groups[name]) - before) / max(result["requests"], 1)
                    results[name].append(result)
        finally:
            for name in ("edge+1", "edge+2"):
                if (runs[name] / local.STATE_FILE).exists():
                    local.down(runs[name])
            alone.terminate()
            alone.wait(timeout=30)

    summary = {name: {key: statistics.median(r[key] for r in rs) for key in ("rps", "p50_ms", "p99_ms", "cpu_ms")}
               | {"errors": sum(r["errors"] + r["non_2xx"] for r in rs)} for name, rs in results.items()}
    cost = [e["rps"] / g["rps"] for g, e in zip(results["gunicorn"], results["edge+1"])]
    scale = [two["rps"] / one["rps"] for one, two in zip(results["edge+1"], results["edge+2"])]
    print(f"wrk {args.duration} x {args.rounds} rounds, 1 thread, {args.connections} connections; one sync worker "
          f"per replica; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}")
    single.print_table("setup", summary, results, "cpu_ms")
    print("  edge+1 : gunicorn by round: " + ", ".join(f"{r:.2f}" for r in cost))
    print("  edge+2 : edge+1 by round: " + ", ".join(f"{r:.2f}" for r in scale))
    print(f"edge cost: edge+1 : gunicorn = {statistics.median(cost):.2f}; "
          f"second replica: edge+2 : edge+1 = {statistics.median(scale):.2f} (medians of the rounds)")
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary, "runs": results, "edge_cost": cost,
                                               "second_replica": scale}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
