"""The per-request CPU deadline (specdec_service.deadline): a request that slips past every cost
estimate is stopped at its deadline and answered by a 503 problem (type compute-deadline, with
its request id and a hint), counted in /metrics, and the worker goes on serving: under the Flask
test client and under a real gunicorn (same worker pid before and after).

The request built to slip past the estimate: a mode-tree analysis of a 4-label pair of 15-digit
rows, 8 drafts, width 16, every width 1-16 swept (about 1 KB; 20 s of CPU when it was accepted),
sent with the budgets switched off (SPECDEC_TESTING_SKIP_BUDGETS, a test-only knob), against a
deadline of a fraction of a second."""

from __future__ import annotations

import json
import os
import random
import runpy
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pytest
import requests

from conftest import ROOT, free_port, stop, wait_for_health
from specdec_service import create_app
from specdec_service.budget import SKIP_BUDGETS_ENV
from specdec_service.deadline import (DEADLINE_ENV, TIMEOUT_ENV, WALL_DEADLINE_ENV, ComputeDeadline, cpu_deadline,
                                      deadline_setting, guard_possible, wall_deadline_setting)

COMPUTE_DEADLINE = "tag:specdec,2026:problem/compute-deadline"
DEADLINE = 1.0
"""Seconds of CPU the tests allow a request (the slow request needs tens of seconds; a step, well
under 0.01 s, even with a collection of a large test process's heap)."""


def _row(rng: random.Random, size: int) -> list[float]:
    weights = [rng.random() for _ in range(size)]
    total = sum(weights)
    row = [float(f"{w / total:.15f}") for w in weights[:-1]]
    return row + [1 - sum(row)]


def _table(rng: random.Random, labels: list[str]) -> dict:
    return {"vocab": labels, "start": _row(rng, len(labels)),
            "next": {label: _row(rng, len(labels)) for label in labels}}


def slow_analysis() -> dict:
    """The body of the request that slips past the estimate (see the module docstring)."""
    rng, labels = random.Random(7), ["a", "b", "c", "d"]
    config = {"target": _table(rng, labels), "draft": _table(rng, labels), "mode": "tree", "drafts": 8,
              "width": 16, "limit": 2}
    return {"config": config, "widths": list(range(1, 17))}


def _spin(seconds: float) -> None:
    """Busy CPU work for about ``seconds`` of CPU time (bounded, so a broken guard fails, not hangs)."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        sum(range(1000))


# ---------------------------------------------------------------- the guard itself


@pytest.mark.skipif(not guard_possible(), reason="the guard arms only on the main thread of a POSIX process")
def test_the_deadline_stops_work_that_catches_exception():
    """An ``except Exception`` in the work cannot swallow the stop (it is a BaseException)."""
    caught = []
    with pytest.raises(ComputeDeadline) as stopped:
        with cpu_deadline(0.05):
            for _ in range(200):
                try:
                    _spin(0.01)
                except Exception as error:  # noqa: BLE001  (the engine's kind of handler)
                    caught.append(error)
    assert caught == [] and stopped.value.seconds == 0.05
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)  # disarmed on the way out


@pytest.mark.skipif(not guard_possible(), reason="the guard arms only on the main thread of a POSIX process")
def test_a_swallowed_stop_is_raised_again():
    """Code that swallows the first signal's exception (as C code reporting a callback's error
    its own way would) is stopped by the next one, 50 ms of CPU later."""
    swallowed = 0
    with pytest.raises(ComputeDeadline):
        with cpu_deadline(0.05):
            for _ in range(200):
                try:
                    _spin(0.01)
                except ComputeDeadline:
                    swallowed += 1
                    if swallowed > 1:
                        raise
    assert swallowed == 2


@pytest.mark.skipif(not guard_possible(), reason="the guard arms only on the main thread of a POSIX process")
def test_nested_guards_keep_the_outer_deadline():
    with pytest.raises(ComputeDeadline) as stopped:
        with cpu_deadline(0.05):
            with cpu_deadline(100.0):  # inside another: does nothing
                _spin(2.0)
    assert stopped.value.seconds == 0.05 and signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)
    with cpu_deadline(100.0):
        _spin(0.05)  # within the deadline: nothing happens
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)


@pytest.mark.skipif(not guard_possible(), reason="the guard arms only on the main thread of a POSIX process")
def test_between_requests_a_stray_signal_does_nothing():
    """Where SIGPROF had its default action (end the process), the guard's handler stays between
    requests and ignores a signal that arrives when no guard is active."""
    previous = signal.signal(signal.SIGPROF, signal.SIG_DFL)
    try:
        with cpu_deadline(100.0):
            pass
        os.kill(os.getpid(), signal.SIGPROF)
        _spin(0.01)  # the handler runs here: no exception, the process lives
    finally:
        signal.signal(signal.SIGPROF, previous)


@pytest.mark.skipif(not guard_possible(), reason="the guard arms only on the main thread of a POSIX process")
def test_a_profilers_timer_is_put_back():
    """A SIGPROF timer that was armed before (a sampling profiler's) runs again afterwards, with
    the CPU time the guarded work used taken off its remaining time."""
    ticks = []

    def profiler(*_args) -> None:
        ticks.append(1)

    previous = signal.signal(signal.SIGPROF, profiler)
    try:
        signal.setitimer(signal.ITIMER_PROF, 5.0, 0.5)
        with cpu_deadline(10.0):
            _spin(0.1)
        remaining, interval = signal.setitimer(signal.ITIMER_PROF, 0)
        assert interval == 0.5 and 4.0 < remaining < 4.95
        assert ticks == [] and signal.getsignal(signal.SIGPROF) is profiler  # the profiler's handler is back
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def test_off_the_main_thread_the_guard_does_nothing():
    seen = []

    def work():
        seen.append(guard_possible())
        with cpu_deadline(0.01):
            _spin(0.05)
        seen.append("done")

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(30)
    assert seen == [False, "done"]


@pytest.mark.parametrize("environ, seconds", [
    ({}, 10.0), ({DEADLINE_ENV: ""}, 10.0), ({DEADLINE_ENV: "2.5"}, 2.5), ({DEADLINE_ENV: "29"}, 29.0),
    ({TIMEOUT_ENV: "8"}, 4.0), ({TIMEOUT_ENV: "60", DEADLINE_ENV: "45"}, 45.0)])
def test_the_deadline_setting(environ, seconds):
    assert deadline_setting(environ) == seconds


@pytest.mark.parametrize("environ", [
    {DEADLINE_ENV: "30"}, {DEADLINE_ENV: "0"}, {DEADLINE_ENV: "-1"}, {DEADLINE_ENV: "nan"}, {DEADLINE_ENV: "inf"},
    {DEADLINE_ENV: "ten"}, {DEADLINE_ENV: "\uff15"}, {TIMEOUT_ENV: "5", DEADLINE_ENV: "5"}])
def test_a_deadline_not_below_the_worker_timeout_is_refused(environ):
    with pytest.raises(ValueError, match=f"{DEADLINE_ENV} must be a number of seconds above 0 and below the worker"):
        deadline_setting(environ)


@pytest.mark.parametrize("name, value", [(DEADLINE_ENV, "40"), (WALL_DEADLINE_ENV, "31")])
def test_gunicorn_settings_refuse_a_bad_deadline_in_one_line(monkeypatch, name, value):
    monkeypatch.setenv(TIMEOUT_ENV, "30")
    monkeypatch.delenv(DEADLINE_ENV, raising=False)
    monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as stopped:
        runpy.run_module("specdec_service.gunicorn_conf")
    assert str(stopped.value) == (f"specdec-service: {name} must be a number of seconds above 0 and below "
                                  f"the worker timeout ({TIMEOUT_ENV}, 30 s), not {value!r}")


# ---------------------------------------------------------------- through the app


def _assert_deadline_problem(response, request_id: str,
                             limit: tuple = ("cpu_deadline_seconds", DEADLINE, "CPU time")) -> dict:
    """The 503 compute-deadline problem, ``limit`` (member, seconds, what) the deadline hit."""
    member, seconds, what = limit
    assert response.status_code == 503
    assert response.headers["Content-Type"] == "application/problem+json"
    assert response.headers["X-Request-Id"] == request_id
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert "Retry-After" not in response.headers
    body = json.loads(response.data if hasattr(response, "data") else response.content)
    assert body["type"] == COMPUTE_DEADLINE and body["title"] == "Compute deadline exceeded"
    assert body["status"] == 503 and body["request_id"] == request_id
    assert body[member] == seconds and body["hint"].startswith("send a smaller request")
    assert f"more than its {seconds:g} s of {what}" in body["detail"]
    return body


def _deadline_count(metrics_text: str) -> float:
    line = f'specdec_problems_total{{status="503",type="{COMPUTE_DEADLINE}"}} '
    found = [float(row[len(line):]) for row in metrics_text.splitlines() if row.startswith(line)]
    return found[0] if found else 0.0


@pytest.mark.skipif(not guard_possible(), reason="the guard arms only on the main thread of a POSIX process")
def test_a_request_past_the_estimate_is_stopped_with_a_503_under_the_test_client(monkeypatch):
    monkeypatch.setenv(SKIP_BUDGETS_ENV, "1")
    client = create_app({"TESTING": True, "CPU_DEADLINE": DEADLINE}).test_client()
    scraper = create_app({"TESTING": True, "CPU_DEADLINE": None}).test_client()  # the process's metrics
    before = _deadline_count(scraper.get("/metrics").get_data(as_text=True))
    response = client.post("/v1/analysis", json=slow_analysis(), headers={"X-Request-Id": "slow-1",
                                                                           "Origin": "https://class.example"})
    _assert_deadline_problem(response, "slow-1")
    assert _deadline_count(scraper.get("/metrics").get_data(as_text=True)) == before + 1
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)
    step = client.post("/v1/step", json={"config": {"draft": "biased", "seed": 1}})
    assert step.status_code == 200 and step.get_json()["block"]["committed"] == ["A", "C"]


def test_without_the_knob_the_budget_refuses_that_request():
    """The knob is what lets the request through: without it, the analysis budget refuses it."""
    client = create_app({"TESTING": True, "CPU_DEADLINE": DEADLINE}).test_client()
    response = client.post("/v1/analysis", json=slow_analysis())
    assert response.status_code == 422 and response.get_json()["type"] == "tag:specdec,2026:problem/over-budget"


@pytest.mark.server
def test_under_gunicorn_the_worker_survives_the_deadline():
    """A real gunicorn (one sync worker, JSON log lines naming the worker's pid): the slow request
    gets the 503 problem, the next requests are served by the same worker process, and
    /metrics counts the stop."""
    def work(url: str, _process) -> None:
        slow = requests.post(f"{url}/v1/analysis", json=slow_analysis(), headers={"X-Request-Id": "slow-2"},
                             timeout=60)
        _assert_deadline_problem(slow, "slow-2")
        after = requests.get(f"{url}/health", headers={"X-Request-Id": "after-2"}, timeout=10)
        assert after.status_code == 200
        assert _deadline_count(requests.get(f"{url}/metrics", timeout=10).text) == 1

    lines, by_id = _under_gunicorn({DEADLINE_ENV: str(DEADLINE)}, work)
    assert by_id["slow-2"]["status"] == 503 and by_id["slow-2"]["problem"] == COMPUTE_DEADLINE
    assert by_id["after-2"]["pid"] == by_id["slow-2"]["pid"], lines[-3000:]
    assert "stopped at the CPU deadline" in lines and "WORKER TIMEOUT" not in lines


def _under_gunicorn(settings: dict, work) -> tuple[str, dict]:
    """Start a real gunicorn (one sync worker, JSON log lines naming the worker's pid, budgets off,
    ``settings`` added to the environment), run ``work(url, process)``, stop it: ``(the log, {request
    id: its JSON log record})``."""
    port = free_port()
    env = {**os.environ, "SPECDEC_BIND": f"127.0.0.1:{port}", "SPECDEC_WORKERS": "1",
           "SPECDEC_GUNICORN_CONF": str(ROOT / "gunicorn.conf.py"), "SPECDEC_LOG_FORMAT": "json",
           SKIP_BUDGETS_ENV: "1", **settings}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    with tempfile.TemporaryFile(mode="w+") as log:
        process = subprocess.Popen([sys.executable, "-m", "specdec_service.cli", "serve"], cwd=ROOT, env=env,
                                   stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_for_health(url, process)
            work(url, process)
        finally:
            stop(process)
            log.seek(0)
            lines = log.read()
    records = [json.loads(line) for line in lines.splitlines() if line.startswith("{")]
    return lines, {record["id"]: record for record in records}


# ---------------------------------------------------------------- the wall-clock deadline

WALL = 0.5
"""Seconds on the clock the wall-clock tests allow a request (their CPU deadline is far above)."""


@pytest.mark.skipif(not guard_possible(), reason="the guard arms only on the main thread of a POSIX process")
def test_the_wall_deadline_stops_work_that_waits_without_cpu():
    """A sleep uses no CPU, so only the wall clock can stop it: ComputeDeadline names the wall
    clock and its seconds, and both timers are off afterwards."""
    with pytest.raises(ComputeDeadline) as stopped:
        with cpu_deadline(25.0, wall=0.05):
            for _ in range(600):  # 60 s at most, so a broken guard fails, not hangs
                time.sleep(0.1)
    assert (stopped.value.clock, stopped.value.seconds) == ("wall", 0.05)
    assert "0.05 s of wall-clock time" in str(stopped.value)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)


@pytest.mark.skipif(not guard_possible(), reason="the guard arms only on the main thread of a POSIX process")
def test_the_wall_deadline_puts_back_an_alarm_that_was_there():
    seen = []
    previous = signal.signal(signal.SIGALRM, lambda *_: seen.append("alarm"))
    try:
        signal.setitimer(signal.ITIMER_REAL, 30.0)
        with cpu_deadline(None, wall=10.0):
            pass
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 0 < remaining <= 30.0 and seen == []
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("environ, seconds", [
    ({}, 20.0), ({WALL_DEADLINE_ENV: ""}, 20.0), ({WALL_DEADLINE_ENV: "2.5"}, 2.5), ({TIMEOUT_ENV: "60"}, 40.0),
    ({TIMEOUT_ENV: "9"}, 6.0), ({TIMEOUT_ENV: "60", WALL_DEADLINE_ENV: "45"}, 45.0)])
def test_the_wall_deadline_setting(environ, seconds):
    assert wall_deadline_setting(environ) == seconds


@pytest.mark.parametrize("environ", [
    {WALL_DEADLINE_ENV: "30"}, {WALL_DEADLINE_ENV: "0"}, {WALL_DEADLINE_ENV: "nan"}, {WALL_DEADLINE_ENV: "twenty"},
    {TIMEOUT_ENV: "5", WALL_DEADLINE_ENV: "5"}])
def test_a_wall_deadline_not_below_the_worker_timeout_is_refused(environ):
    with pytest.raises(ValueError, match=f"{WALL_DEADLINE_ENV} must be a number of seconds above 0 and below the"):
        wall_deadline_setting(environ)


def _assert_wall_problem(response, request_id: str) -> None:
    body = _assert_deadline_problem(response, request_id, ("wall_deadline_seconds", WALL, "wall-clock time"))
    assert "cpu_deadline_seconds" not in body


@pytest.mark.skipif(not guard_possible(), reason="the guard arms only on the main thread of a POSIX process")
def test_a_request_past_the_wall_deadline_is_stopped_with_a_503_under_the_test_client(monkeypatch):
    """The slow request against a CPU deadline it cannot reach first (25 s) and a wall-clock one of
    half a second: the wall clock stops it, the 503 says so, and the next request is served."""
    monkeypatch.setenv(SKIP_BUDGETS_ENV, "1")
    client = create_app({"TESTING": True, "CPU_DEADLINE": 25.0, "WALL_DEADLINE": WALL}).test_client()
    response = client.post("/v1/analysis", json=slow_analysis(),
                           headers={"X-Request-Id": "wall-1", "Origin": "https://class.example"})
    _assert_wall_problem(response, "wall-1")
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    step = client.post("/v1/step", json={"config": {"draft": "biased", "seed": 1}})
    assert step.status_code == 200 and step.get_json()["block"]["committed"] == ["A", "C"]


@pytest.mark.server
def test_under_gunicorn_the_worker_survives_the_wall_deadline():
    """A real gunicorn: the worker is stopped (SIGSTOP) in the middle of the slow request, so the
    clock runs while it uses no CPU at all, as on a machine loaded by others; on SIGCONT the wall
    deadline stops the request with the 503, and the same worker serves the next request."""
    workers = []

    def work(url: str, process) -> None:
        workers.append(_worker_pid(process.pid))
        threading.Timer(0.1, _pause, (workers[0], 2 * WALL)).start()
        slow = requests.post(f"{url}/v1/analysis", json=slow_analysis(),
                             headers={"X-Request-Id": "wall-2", "Origin": "https://class.example"},
                             timeout=60)
        _assert_wall_problem(slow, "wall-2")
        after = requests.get(f"{url}/health", headers={"X-Request-Id": "after-wall"}, timeout=10)
        assert after.status_code == 200

    lines, by_id = _under_gunicorn({DEADLINE_ENV: "25", WALL_DEADLINE_ENV: str(WALL)}, work)
    assert by_id["wall-2"]["status"] == 503 and by_id["wall-2"]["problem"] == COMPUTE_DEADLINE
    assert by_id["after-wall"]["pid"] == by_id["wall-2"]["pid"] == workers[0], lines[-3000:]
    assert "stopped at the wall-clock deadline" in lines and "WORKER TIMEOUT" not in lines


def _worker_pid(arbiter: int) -> int:
    """The pid of the only child of gunicorn's arbiter (one sync worker)."""
    with open(f"/proc/{arbiter}/task/{arbiter}/children") as children:
        (pid,) = children.read().split()
    return int(pid)


def _pause(pid: int, seconds: float) -> None:
    os.kill(pid, signal.SIGSTOP)
    time.sleep(seconds)
    os.kill(pid, signal.SIGCONT)
