"""Load benchmark of the service: wrk against gunicorn as configured.

Starts gunicorn with the repository's ``gunicorn.conf.py`` on a free port of
127.0.0.1, warms it up, then runs ``ROUNDS`` rounds of wrk, each round
``GET /health`` (health.lua) and then ``POST /v1/step`` with the SPEC
section 4 worked example's state (step.lua), every wrk run bounded by
``--duration``; the order of the two routes alternates from round to round.
Reports, per route, the median over rounds of requests per second and of
wrk's p50/p99 latency, and the server's CPU time per request (user + system
time of the gunicorn processes from /proc, which other load on a shared
machine disturbs less than throughput does).

The throughput ratio (issue 3's target: /v1/step >= 70% of /health; issue 10's: >= 80%) is the
median over rounds of each round's ratio: the two runs of a round are
back to back, so a slow spell of a shared machine (which moves throughput by
up to 2x) hits both sides of a ratio rather than one side of a median.

    python bench/load/run.py [--duration 6s] [--rounds 5] [--connections 4]
                             [--threads 1] [--workers N] [--json FILE] [--app MODULE:CALLABLE]

``--app`` serves another WSGI app under the same gunicorn settings, for experiments:
``bench.load.variants:without_cors()`` is the service without flask-cors's after-request
hook (what CORS costs a request; the service itself always has CORS).

Needs wrk (``apt-get install -y wrk``) and Linux (/proc).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
ROUTES = (("GET /health", "health.lua"), ("POST /v1/step", "step.lua"))
TARGET = 0.80
TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` and its children (the workers)."""
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    total = 0
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / TICKS


def wrk(url: str, script: str, duration: str, connections: int, threads: int) -> dict:
    """One wrk run; the RESULT line of report.lua as a dict."""
    out = subprocess.run(
        ["wrk", "--threads", str(threads), "--connections", str(connections), "--duration", duration,
         "--timeout", "5s", "--script", str(HERE / script), url],
        capture_output=True, text=True, check=True, timeout=600).stdout
    line = next(line for line in out.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def wrk_missing() -> bool:
    """True (after saying so on stderr) when wrk is not installed."""
    if shutil.which("wrk") is None:
        print("wrk is not installed (apt-get install -y wrk)", file=sys.stderr)
        return True
    return False


def print_table(label: str, summary: dict, runs: dict, cpu_key: str) -> None:
    """The medians of each setup (``summary``: rps, p50_ms, p99_ms, ``cpu_key``,
    errors) as a table, then each setup's requests per second by round."""
    print(f"{label:<14} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'CPU ms/req':>11} {'errors':>7}   (medians over rounds)")
    for name, s in summary.items():
        print(f"{name:<14} {s['rps']:>9.1f} {s['p50_ms']:>8.2f} {s['p99_ms']:>8.2f} {s[cpu_key]:>11.3f} {s['errors']:>7}")
    for name, results in runs.items():
        print(f"  {name} req/s by round: " + ", ".join(f"{r['rps']:.0f}" for r in results))


def wait_for_health(url: str, server: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited with status {server.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"{url}/health did not answer within {timeout} s")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", default="6s", help="each wrk run (wrk syntax, default 6s)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1, help="wrk threads")
    parser.add_argument("--workers", type=int, help="gunicorn workers (default: gunicorn.conf.py's)")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--app", help="another WSGI app to serve (gunicorn syntax), e.g. "
                                      "'bench.load.variants:without_cors()'")
    args = parser.parse_args(argv)
    if wrk_missing():
        return 2

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "SPECDEC_BIND": f"127.0.0.1:{port}"}
    if args.workers:
        env["SPECDEC_WORKERS"] = str(args.workers)
    with tempfile.TemporaryFile() as log:
        server = subprocess.Popen([sys.executable, "-m", "gunicorn", "--config", "gunicorn.conf.py",
                                   *([args.app] if args.app else [])],
                                  cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for_health(url, server)
            for _, script in ROUTES:  # warm-up: imports, caches
                wrk(url, script, "2s", args.connections, args.threads)
            runs = {name: [] for name, _ in ROUTES}
            for round_ in range(args.rounds):
                for name, script in ROUTES[::-1] if round_ % 2 else ROUTES:
                    before = cpu_seconds(server.pid)
                    result = wrk(url, script, args.duration, args.connections, args.threads)
                    result["server_cpu_ms"] = 1000 * (cpu_seconds(server.pid) - before) / max(result["requests"], 1)
                    runs[name].append(result)
            workers = len(Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split())
        finally:
            server.terminate()
            server.wait(timeout=30)

    summary = {name: {key: statistics.median(r[key] for r in results)
                      for key in ("rps", "p50_ms", "p99_ms", "server_cpu_ms")}
               | {"errors": sum(r["errors"] + r["non_2xx"] for r in results)}
               for name, results in runs.items()}
    health, step = summary["GET /health"], summary["POST /v1/step"]
    round_ratios = [s["rps"] / h["rps"] for h, s in zip(runs["GET /health"], runs["POST /v1/step"])]
    ratio = statistics.median(round_ratios)
    cpu_ratio = health["server_cpu_ms"] / step["server_cpu_ms"]
    print(f"wrk {args.duration} x {args.rounds} rounds, {args.threads} thread(s), {args.connections} connections; "
          f"gunicorn {workers} sync worker(s); {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}")
    print_table("route", summary, runs, "server_cpu_ms")
    print("  throughput ratio by round: " + ", ".join(f"{r:.2f}" for r in round_ratios))
    print(f"throughput ratio /v1/step : /health = {ratio:.2f} (median of the rounds; target >= {TARGET:.2f}: "
          f"{'met' if ratio >= TARGET else 'NOT met'}); server CPU per request ratio = {cpu_ratio:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary, "runs": runs, "ratio": ratio,
                                               "round_ratios": round_ratios, "cpu_ratio": cpu_ratio},
                                              indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
