"""Operations (issue 22 section 4): request ids, ``GET /metrics`` and JSON log lines, in the app
(``specdec_service.observe``) and under a real gunicorn with several workers."""

from __future__ import annotations

import json
import os
import re
import runpy
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from conftest import SEED1, free_port, start_gunicorn, stop, wait_for_health
from specdec_service import create_app
from specdec_service.budget import BUDGETS, OVER_BUDGET, block_units
from specdec_service.engine.analysis import analysis_cost, parse_analysis
from specdec_service.observe import METHODS, REQUEST_ID_FORM, exposition

ROOT = Path(__file__).resolve().parents[1]
HEX32 = re.compile(r"[0-9a-f]{32}")
APP = create_app({"TESTING": True})
_VOCAB = [f"t{i}" for i in range(64)]
_MODEL = {"vocab": _VOCAB, "start": [1 / 64] * 64, "next": {v: [1 / 64] * 64 for v in _VOCAB}}
OVER_BUDGET_ANALYSIS = {"config": {"target": _MODEL, "draft": _MODEL, "width": 16, "limit": 256}}
"""Refused before any work (tests/test_analysis.py)."""


@pytest.fixture
def client():
    return APP.test_client()


def samples(text: str) -> dict[tuple[str, frozenset], float]:
    """Every sample of a Prometheus text exposition by (name, labels)."""
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(found: dict, name: str, **labels: str) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


# -- request ids -------------------------------------------------------------------------

WELL_FORMED = ["a", "abc.DEF_123-x", "0" * 32, "Z" * 128, "req-2026-12-01.7"]
MALFORMED = ["", "a" * 129, "has space", "a/b", "a,b", "caf\xe9", "x\ty", "{id}"]


@pytest.mark.parametrize("sent", WELL_FORMED)
def test_a_well_formed_caller_id_comes_back(client, sent):
    assert REQUEST_ID_FORM.fullmatch(sent)
    response = client.post("/v1/step", json=SEED1, headers={"X-Request-Id": sent})
    assert response.status_code == 200 and response.headers["X-Request-Id"] == sent


@pytest.mark.parametrize("sent", MALFORMED)
def test_a_malformed_caller_id_is_replaced_by_a_new_one(client, sent):
    assert not REQUEST_ID_FORM.fullmatch(sent)
    response = client.post("/v1/step", json=SEED1, headers={"X-Request-Id": sent})
    assert response.status_code == 200 and HEX32.fullmatch(response.headers["X-Request-Id"])


@pytest.mark.parametrize("method,path,kwargs,status", [
    ("get", "/health", {}, 200),
    ("get", "/metrics", {}, 200),
    ("get", "/nowhere", {}, 404),
    ("get", "/v1/step", {}, 405),
    ("post", "/v1/step", {"data": "[" + " " * 300_000 + "]", "content_type": "application/json"}, 413),
    ("post", "/v1/step", {"data": "{}", "content_type": "text/plain"}, 415),
    ("post", "/v1/step", {"json": {"config": {"draft": "biased", "seed": -1}}}, 422),
    ("options", "/v1/step", {"headers": {"Origin": "https://a.example", "Access-Control-Request-Method": "POST"}}, 204),
])
def test_every_answer_has_a_new_id_each_time(client, method, path, kwargs, status):
    ids = set()
    for _ in range(2):
        response = getattr(client, method)(path, **kwargs)
        assert response.status_code == status
        assert HEX32.fullmatch(response.headers["X-Request-Id"])
        ids.add(response.headers["X-Request-Id"])
    assert len(ids) == 2


def test_an_unexpected_error_has_the_id_in_its_answer_and_its_log(caplog):
    app = create_app({"TESTING": False})

    @app.get("/boom")
    def boom():
        raise RuntimeError("boom")

    response = app.test_client().get("/boom", headers={"X-Request-Id": "trace-me-42"})
    assert response.status_code == 500 and response.headers["X-Request-Id"] == "trace-me-42"
    assert "unexpected error (request_id=trace-me-42)" in caplog.text


def test_browsers_may_read_the_id(client):
    """CORS: ``Access-Control-Expose-Headers`` names it, so a page's script can read it."""
    for path in ("/v1/models", "/openapi.yaml"):
        response = client.get(path, headers={"Origin": "https://course.example.org"})
        assert response.headers["Access-Control-Allow-Origin"] == "*"
        assert response.headers["Access-Control-Expose-Headers"] == "X-Request-Id"


# -- metrics -----------------------------------------------------------------------------

def scrape(client) -> dict:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    return samples(response.get_data(as_text=True))


def test_requests_are_counted_by_route_pattern_and_status(client):
    before = scrape(client)
    for name in ("quick", "no-such-suite"):
        client.get(f"/v1/grade/suites/{name}")
    client.post("/v1/step", json=SEED1)
    client.post("/v1/step", json={"config": {"draft": "biased", "seed": -1}})
    client.get("/nowhere/at/all")
    client.delete("/health")  # a path without that method: no rule took it
    after = scrape(client)

    def delta(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    suites = "/v1/grade/suites/<name>"
    assert delta("specdec_http_requests_total", method="GET", route=suites, status="200") == 1
    assert delta("specdec_http_requests_total", method="GET", route=suites, status="404") == 1
    assert delta("specdec_http_requests_total", method="POST", route="/v1/step", status="200") == 1
    assert delta("specdec_http_requests_total", method="POST", route="/v1/step", status="422") == 1
    assert delta("specdec_http_requests_total", method="GET", route="unmatched", status="404") == 1
    assert delta("specdec_http_requests_total", method="DELETE", route="unmatched", status="405") == 1  # docs/deploy.md
    assert delta("specdec_http_request_duration_seconds_count", method="POST", route="/v1/step") == 2
    assert delta("specdec_http_request_duration_seconds_bucket", method="POST", route="/v1/step", le="+Inf") == 2
    assert not any("no-such-suite" in str(key) or "/nowhere" in str(key) for key in after)  # paths are no labels


ODD_METHODS = ("FOO", "PROPFIND", "get", "TRACE", "CONNECT", "M" * 20)
ODD_SEGMENTS = ("x", "no-such-thing", "a" * 300, "%00", "..%2F..", "caf%C3%A9", "1e3", "")


def test_labels_stay_few_whatever_the_caller_sends(client):
    """The kind of a label explosion, walked: every route rule of the app with each of
    its variables filled by odd values, unknown paths under and beside each, with every
    method the metrics name and odd ones; whatever answered (200, 3xx, 404, 405, 413...),
    the labels hold only the app's rule patterns (or ``unmatched``), the named methods
    (or ``other``), the problem types the service writes, the budgets' units, and the
    statuses sent."""
    rules = {rule.rule for rule in APP.url_map.iter_rules()}
    paths = {"/", "/nowhere", "/v1", "/v1/", "/v1//step"}
    for rule in rules:
        for segment in ODD_SEGMENTS:
            filled = re.sub(r"<[^>]+>", segment, rule)
            paths |= {filled, filled + "/", filled + "/" + segment, rule}  # a rule's pattern as a path too
    before = scrape(client)  # (the registry is the process's: other tests' apps add to it)
    statuses = set()
    for path in sorted(p for p in paths if not p.startswith("//")):  # "//x" is a host to the test client
        for method in sorted(METHODS | set(ODD_METHODS)):
            response = client.open(path, method=method, data="{}", content_type="application/json")
            statuses.add(str(response.status_code))
    found = scrape(client)
    types = {"about:blank"} | {f"tag:specdec,2026:problem/{name}" for name in
                               ("invalid-input", "malformed-json", "over-budget", "session-done", "structure-bound")}
    allowed = {"route": rules | {"unmatched"}, "method": set(METHODS) | {"other"}, "type": types,
               "unit": {budget.unit for budget in BUDGETS.values()}}
    assert len(found) > len(before)
    for (name, labels), _ in found.items():
        if not name.startswith("specdec_") or (name, labels) in before:
            continue
        for label, label_value in labels:
            if label in allowed:
                assert label_value in allowed[label], (name, label, label_value)
            elif label == "status":
                assert label_value in statuses, (name, label_value)
            else:
                assert label == "le", (name, label)


def test_refusals_are_counted_by_problem_type(client):
    before = scrape(client)
    client.post("/v1/step", json={"config": {"draft": "biased", "seed": -1}})
    client.post("/v1/step", data="{", content_type="application/json")
    client.get("/nowhere")
    over = client.post("/v1/analysis", json=OVER_BUDGET_ANALYSIS)
    assert over.status_code == 422 and over.get_json()["type"] == OVER_BUDGET
    after = scrape(client)
    for status, kind in (("422", "tag:specdec,2026:problem/invalid-input"), ("400", "tag:specdec,2026:problem/malformed-json"),
                         ("404", "about:blank"), ("422", OVER_BUDGET)):
        assert value(after, "specdec_problems_total", status=status, type=kind) - \
            value(before, "specdec_problems_total", status=status, type=kind) == 1, kind


def test_grading_and_analysis_work_units_are_counted(client):
    """The units are the route's cost model (docs/service.md): an analysis costs
    ``analysis_cost``; grading a trace equal to its reference costs its reference run,
    ``5 * limit * (width + 8) * (vocabulary + 64)``; an over-budget request spends nothing."""
    before = scrape(client)
    body = {"config": {"draft": "biased", "seed": 1}}
    assert client.post("/v1/analysis", json=body).status_code == 200
    trace = client.post("/v1/runs", json=body).get_json()
    assert client.post("/v1/grade", json={"traces": [trace]}).get_json()["summary"]["passed"] == 1
    assert client.post("/v1/analysis", json=OVER_BUDGET_ANALYSIS).status_code == 422  # over budget: nothing spent
    after = scrape(client)
    config = trace["config"]
    analysis = analysis_cost(*parse_analysis(body)[:3])
    grading = 5 * config["limit"] * block_units(config["width"], 3)  # the toy target's 3 tokens
    assert grading == 29_480
    for route, unit, units in (("/v1/analysis", "analysis units", analysis), ("/v1/grade", "block units", grading)):
        labels = {"method": "POST", "route": route, "unit": unit}
        assert value(after, "specdec_work_units_total", **labels) - value(before, "specdec_work_units_total", **labels) == units


def test_the_exposition_is_the_prometheus_text_format():
    text = exposition().decode()
    for name, kind in (("specdec_http_requests_total", "counter"), ("specdec_http_request_duration_seconds", "histogram"),
                       ("specdec_http_requests_in_progress", "gauge"), ("specdec_problems_total", "counter"),
                       ("specdec_work_units_total", "counter")):
        assert f"# TYPE {name} {kind}\n" in text
    assert {family.name for family in text_string_to_metric_families(text)} >= {"specdec_http_requests"}


def test_a_missing_metrics_directory_outside_gunicorn_is_made(tmp_path):
    """PROMETHEUS_MULTIPROC_DIR naming a directory nobody made (the app under another server
    than the package's gunicorn settings, or with a gunicorn config of one's own): the app
    makes it and counts, where every request used to be a 500 (and, after the first, a
    DuplicateTimeseries from the half-registered metrics)."""
    directory = tmp_path / "not" / "made"
    code = ("from specdec_service import create_app\n"
            "c = create_app({'TESTING': True}).test_client()\n"
            "print(c.get('/health').status_code, c.get('/health').status_code)\n"
            "r = c.get('/metrics'); print(r.status_code); print(r.get_data(as_text=True))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env={**_env(), "PROMETHEUS_MULTIPROC_DIR": str(directory)})
    assert result.returncode == 0, result.stderr[-2000:]
    first, second, text = result.stdout.split("\n", 2)
    assert (first, second) == ("200 200", "200") and "Traceback" not in result.stderr
    assert value(samples(text), "specdec_http_requests_total", method="GET", route="/health", status="200") == 2
    assert directory.is_dir() and any(directory.glob("counter_*.db"))


class _Broken:
    """prometheus_client failing as it does on a directory it cannot write."""

    def __getattr__(self, name):
        raise PermissionError(13, "Permission denied", "/metrics-dir/counter_1.db")


@pytest.mark.parametrize("broken", ["made", "used"])
@pytest.mark.parametrize("method,path,kwargs,status", [
    ("get", "/health", {}, 200),
    ("post", "/v1/step", {"json": SEED1}, 200),
    ("post", "/v1/analysis", {"json": {"config": {"draft": "biased", "seed": 1}}}, 200),
    ("get", "/nowhere", {}, 404),
    ("post", "/v1/step", {"json": {"config": {"draft": "biased", "seed": -1}}}, 422),
    ("post", "/v1/step", {"data": "{", "content_type": "application/json"}, 400),
])
def test_failing_metrics_never_change_an_answer(monkeypatch, caplog, broken, method, path, kwargs, status):
    """The kind: whatever prometheus_client raises, when the metrics are made or when a
    request is counted, each answer is the one the service gives with working metrics (its
    status, body and X-Request-Id), and the error log names the request; ``/metrics`` itself
    is then a 500 problem when no metrics could be made, never an HTML page."""
    from specdec_service import observe

    app = create_app({"TESTING": True})
    expected = getattr(app.test_client(), method)(path, **kwargs)
    if broken == "made":
        def failing():
            raise PermissionError(13, "Permission denied", "/metrics-dir")
        monkeypatch.setattr(observe, "metrics", failing)
    else:
        monkeypatch.setattr(observe, "metrics", lambda: _Broken())
    answer = getattr(app.test_client(), method)(path, headers={"X-Request-Id": "count-me"}, **kwargs)
    assert (answer.status_code, answer.get_data()) == (status, expected.get_data())
    assert answer.headers["X-Request-Id"] == "count-me"
    assert "metrics not recorded (request_id=count-me)" in caplog.text
    scraped = app.test_client().get("/metrics")
    if broken == "made":  # nothing to expose
        assert scraped.status_code == 500 and scraped.headers["Content-Type"] == "application/problem+json"
    else:  # what the registry holds
        assert scraped.status_code == 200 and scraped.headers["Content-Type"].startswith("text/plain")


# -- JSON log lines ----------------------------------------------------------------------

def test_json_log_lines_one_object_per_request(capsys):
    client = create_app({"TESTING": True, "LOG_FORMAT": "json"}).test_client()
    capsys.readouterr()
    client.post("/v1/analysis", json={"config": {"draft": "biased", "seed": 1}}, headers={"X-Request-Id": "job-7"})
    client.get("/v1/grade/suites/nope")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert list(first) == ["time", "id", "method", "route", "status", "duration_ms", "work_units", "unit", "problem", "pid"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", first["time"])
    assert (first["id"], first["method"], first["route"], first["status"]) == ("job-7", "POST", "/v1/analysis", 200)
    assert first["work_units"] == analysis_cost(*parse_analysis({"config": {"draft": "biased", "seed": 1}})[:3])
    assert first["unit"] == "analysis units" and first["problem"] is None
    assert isinstance(first["duration_ms"], float) and first["duration_ms"] >= 0
    assert HEX32.fullmatch(second["id"]) and second["route"] == "/v1/grade/suites/<name>"
    assert (second["status"], second["problem"], second["work_units"]) == (404, "about:blank", None)


def test_text_logs_write_nothing_of_their_own(capsys):
    client = create_app({"TESTING": True, "LOG_FORMAT": "text"}).test_client()
    capsys.readouterr()
    client.get("/health")
    assert capsys.readouterr().out == ""


def test_an_unknown_log_format_is_refused(monkeypatch):
    with pytest.raises(ValueError, match="SPECDEC_LOG_FORMAT must be one of text, json, not 'xml'"):
        create_app({"LOG_FORMAT": "xml"})
    monkeypatch.setenv("SPECDEC_LOG_FORMAT", "yaml")
    with pytest.raises(ValueError, match="not 'yaml'"):
        create_app()
    monkeypatch.setenv("SPECDEC_LOG_FORMAT", "json")
    assert create_app().config["LOG_FORMAT"] == "json"


def test_gunicorn_json_setting_turns_its_access_line_off():
    def run(value: str) -> subprocess.CompletedProcess:
        code = "import runpy; c = runpy.run_module('specdec_service.gunicorn_conf'); print(repr(c['accesslog']))"
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                              env={**_env(), "SPECDEC_LOG_FORMAT": value})

    assert run("json").stdout == "None\n" and run("text").stdout == "'-'\n" and run("").stdout == "'-'\n"
    refused = run("xml")
    assert refused.returncode == 1
    assert refused.stderr == "specdec-service: SPECDEC_LOG_FORMAT must be one of text, json, not 'xml'\n"


def _env() -> dict:
    """This environment without the service's settings."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("SPECDEC_", "PROMETHEUS_"))}


def test_gunicorn_hooks_make_mark_and_remove_the_metrics_directory(monkeypatch, tmp_path):
    """on_starting makes a private directory (none was set) and names it to the workers;
    child_exit drops a dead worker's live gauge (requests in progress) and keeps its counters;
    on_exit removes the private directory."""
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", "")
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR")  # unset here, and again after the test
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    config = runpy.run_module("specdec_service.gunicorn_conf")
    config["on_starting"](None)
    directory = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    assert directory.parent == tmp_path and directory.name.startswith("specdec-metrics-")
    for name in ("gauge_livesum_4242.db", "counter_4242.db", "gauge_livesum_4343.db"):
        (directory / name).write_bytes(b"")
    config["child_exit"](None, SimpleNamespace(pid=4242))
    assert sorted(path.name for path in directory.iterdir()) == ["counter_4242.db", "gauge_livesum_4343.db"]
    config["on_exit"](None)
    assert not directory.exists()


# -- under gunicorn with several workers ---------------------------------------------------

@pytest.mark.server
def test_metrics_sum_every_gunicorn_worker(tmp_path, monkeypatch):
    """3 workers, JSON logs: /health is asked from 4 threads until the log lines (which name
    the worker's pid) show at least 2 workers served; every scrape, whichever worker answers
    it, counts every request. The operator's metrics directory is emptied at start (a stale
    file there would break the sum) and left in place."""
    directory = tmp_path / "metrics"
    directory.mkdir()
    (directory / "counter_999999.db").write_bytes(b"stale")
    for key in set(os.environ) - set(_env()):
        monkeypatch.delenv(key)
    monkeypatch.setenv("SPECDEC_LOG_FORMAT", "json")
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(directory))
    port, log_path = free_port(), tmp_path / "gunicorn.log"
    url = f"http://127.0.0.1:{port}"
    with open(log_path, "w") as log:
        process = start_gunicorn(port, log, workers=3)
        try:
            wait_for_health(url, process)
            served = _serve_until_two_workers(url, log_path)
            for _ in range(6):
                metrics = requests.get(f"{url}/metrics", timeout=10, headers={"Connection": "close"})
                assert metrics.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
                found = samples(metrics.text)
                assert value(found, "specdec_http_requests_total", method="GET", route="/health", status="200") == served
                assert value(found, "specdec_http_request_duration_seconds_count", method="GET", route="/health") == served
        finally:
            stop(process)
    assert not (directory / "counter_999999.db").exists() and directory.is_dir()
    pids = {json.loads(line)["pid"] for line in _lines(log_path)}
    assert len(pids) >= 2


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.startswith("{")]


def _serve_until_two_workers(url: str, log_path: Path, most: int = 400) -> int:
    """GET /health (new connections, 4 threads) until 2 workers have served; how many were asked
    (every one after wait_for_health's, which the log also holds)."""
    def ask(count: int) -> None:
        for _ in range(count):
            assert requests.get(f"{url}/health", timeout=10, headers={"Connection": "close"}).status_code == 200

    while True:
        threads = [threading.Thread(target=ask, args=(10,)) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        health = [json.loads(line) for line in _lines(log_path)]
        health = [line for line in health if line["route"] == "/health"]
        if len({line["pid"] for line in health}) >= 2 or len(health) >= most:
            return len(health)
