"""The CPU cost of the edge's checker (deploy/nginx/edge.conf): nginx's CPU time per
``POST /v1/step`` through this tree's edge.conf against another edge.conf (one without the
checker, e.g. an earlier commit's), in paired rounds of one run.

One replica (``deploy/local.py up --replicas 1`` in a temporary run directory); each round
reloads nginx with one configuration, then the other (the order alternating), sends ``N``
sequential requests over one keep-alive connection and reads nginx's CPU ticks (user +
system, /proc) before and after. Prints each phase's milliseconds of nginx CPU per request,
the medians and the paired differences.

    git show <commit>:deploy/nginx/edge.conf > /tmp/edge-before.conf
    python bench/load/edge_checker.py /tmp/edge-before.conf [N] [ROUNDS]

Needs nginx and Linux (/proc). Results: docs/deploy.md ("No upstream error page passes either").
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from edge import load_local  # noqa: E402  bench/load/edge.py: deploy/local.py as a module
TICKS = os.sysconf("SC_CLK_TCK")
BODY = {"config": {"draft": "biased", "seed": 1}}


def main(argv: list[str]) -> int:
    other, count, rounds = Path(argv[0]), int(argv[1]) if len(argv) > 1 else 3000, int(argv[2]) if len(argv) > 2 else 3
    local = load_local()
    run = Path(tempfile.mkdtemp(prefix="specdec-edge-checker-"))
    port = local.free_port()
    deploy = [sys.executable, str(ROOT / "deploy" / "local.py"), "--run-dir", str(run)]
    subprocess.run(deploy + ["up", "--port", str(port), "--replicas", "1"], check=True, capture_output=True)
    nginx = json.loads((run / "state.json").read_text())["nginx"]["pid"]
    conf = (run / "nginx.conf").read_text()
    confs = {"checker": conf, "other": conf.replace(str(local.EDGE_CONF), str(other.resolve()))}
    results: dict[str, list[float]] = {name: [] for name in confs}

    def cpu() -> float:
        return sum(int(f[11]) + int(f[12]) for _, f in local.processes() if int(f[2]) == nginx) / TICKS

    try:
        for round_ in range(rounds):
            for name in list(confs) if round_ % 2 == 0 else list(confs)[::-1]:
                (run / "nginx.conf").write_text(confs[name])
                subprocess.run(local.nginx_argv(run, "-s", "reload"), check=True, capture_output=True)
                time.sleep(1.5)  # the old worker leaves
                session = requests.Session()
                for _ in range(50):
                    session.post(f"http://127.0.0.1:{port}/v1/step", json=BODY)
                before = cpu()
                for _ in range(count):
                    assert session.post(f"http://127.0.0.1:{port}/v1/step", json=BODY).status_code == 200
                results[name].append((cpu() - before) / count * 1000)
                print(f"round {round_} {name}: {results[name][-1]:.4f} ms of nginx CPU a request", flush=True)
    finally:
        subprocess.run(deploy + ["down"], capture_output=True)
    for name, values in results.items():
        print(f"{name}: median {statistics.median(values):.4f} ms", [round(v, 4) for v in values])
    print("paired differences (checker - other):", [round(a - b, 4) for a, b in zip(results["checker"], results["other"])])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
