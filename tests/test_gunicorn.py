"""The real service under gunicorn (``live_url``), the gunicorn settings
(``specdec_service.gunicorn_conf``, re-exported by gunicorn.conf.py) and the
``specdec-service`` command."""

import json
import os
import runpy
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from specdec_service import __version__
from specdec_service import cli
from specdec_service.cli import main

ROOT = Path(__file__).resolve().parents[1]
SEED1 = {"config": {"draft": "biased", "seed": 1}}

pytestmark = pytest.mark.server


def test_live_service_answers_health_and_a_step(live_url):
    health = requests.get(f"{live_url}/health", timeout=10)
    assert health.status_code == 200 and health.json() == {"status": "ok", "version": __version__}
    step = requests.post(f"{live_url}/v1/step", json=SEED1, timeout=10)
    assert step.status_code == 200 and step.headers["Content-Type"] == "application/json"
    body = step.json()
    assert body["block"]["committed"] == ["A", "C"] and body["state"]["position"] == 6
    again = requests.post(f"{live_url}/v1/step", json=body["state"], timeout=10)
    assert again.json()["block"]["prefix"] == ["A", "C"]


def test_live_service_problems_and_contract(live_url):
    too_big = requests.post(f"{live_url}/v1/step", data=b"[" + b" " * (300 * 1024) + b"]",
                            headers={"Content-Type": "application/json"}, timeout=10)
    assert too_big.status_code == 413 and too_big.headers["Content-Type"] == "application/problem+json"
    contract = requests.get(f"{live_url}/openapi.yaml", timeout=10)
    assert contract.content == (ROOT / "openapi.yaml").read_bytes()


def test_live_chunked_body_over_the_limit_is_413(live_url):
    """A body without Content-Length (a generator: requests sends it chunked)."""
    def chunks(size):
        yield b'{"config": {"draft": "biased", "seed": 1}, "pad": "'
        for _ in range(size // 1024):
            yield b"a" * 1024
        yield b'"}'

    too_big = requests.post(f"{live_url}/v1/step", data=chunks(300 * 1024),
                            headers={"Content-Type": "application/json"}, timeout=10)
    assert too_big.request.headers.get("Transfer-Encoding") == "chunked"
    assert too_big.status_code == 413 and too_big.headers["Content-Type"] == "application/problem+json"
    assert "262144" in too_big.json()["detail"]
    seed1 = iter([b'{"config": {"draft": "biased",', b' "seed": 1}}'])
    fits = requests.post(f"{live_url}/v1/step", data=seed1, headers={"Content-Type": "application/json"}, timeout=10)
    assert fits.status_code == 200 and fits.json()["block"]["committed"] == ["A", "C"]


ENV = ("SPECDEC_BIND", "SPECDEC_WORKERS", "SPECDEC_TIMEOUT", "SPECDEC_GUNICORN_CONF")


@pytest.mark.parametrize("framing", [b"zz\r\n{}\r\n0\r\n\r\n", b"2\r\n{}XX0\r\n\r\n"])
def test_live_malformed_chunked_body_is_a_400_problem(live_url, framing):
    """gunicorn raises InvalidChunkSize / ChunkMissingTerminator while the app reads the body."""
    host, port = live_url.removeprefix("http://").split(":")
    request = (b"POST /v1/step HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + framing)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 "), answer
    assert b"Content-Type: application/problem+json" in head
    assert json.loads(body)["detail"].startswith("The request body could not be read: ")


def test_on_starting_builds_the_contract_before_the_workers_fork(monkeypatch, tmp_path):
    from specdec_service.api.openapi import openapi_yaml

    openapi_yaml.cache_clear()
    config = config_with(monkeypatch)
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))  # the metrics directory (tests/test_observe.py)
    (tmp_path / "histogram_1.db").write_bytes(b"")
    config["on_starting"](None)
    assert openapi_yaml.cache_info().currsize == 1
    assert list(tmp_path.iterdir()) == []  # an earlier run's metrics are gone


def config_with(monkeypatch, **env):
    """The settings of ``specdec_service.gunicorn_conf`` run afresh under ``env``."""
    for key in ENV:
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return runpy.run_module("specdec_service.gunicorn_conf")


def test_gunicorn_conf_defaults_and_environment(monkeypatch):
    import multiprocessing

    defaults = config_with(monkeypatch)
    assert defaults["bind"] == "127.0.0.1:8000" and defaults["workers"] == multiprocessing.cpu_count()
    assert defaults["accesslog"] == "-" and defaults["wsgi_app"] == "specdec_service:create_app()"
    custom = config_with(monkeypatch, SPECDEC_BIND="0.0.0.0:9000", SPECDEC_WORKERS="3", SPECDEC_TIMEOUT="5")
    assert (custom["bind"], custom["workers"], custom["timeout"]) == ("0.0.0.0:9000", 3, 5)


@pytest.mark.parametrize("name, value", [("SPECDEC_WORKERS", "abc"), ("SPECDEC_WORKERS", "0"),
                                         ("SPECDEC_TIMEOUT", "-5"), ("SPECDEC_WORKERS", "\uff12")])
def test_gunicorn_conf_refuses_a_bad_number_in_one_line(monkeypatch, name, value):
    with pytest.raises(SystemExit) as stopped:
        config_with(monkeypatch, **{name: value})
    assert str(stopped.value) == f"specdec-service: {name} must be a positive integer, not {value!r}"


def test_repository_gunicorn_conf_re_exports_the_package_settings(monkeypatch):
    from specdec_service import gunicorn_conf

    exported = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    settings = {k: v for k, v in vars(gunicorn_conf).items() if not k.startswith("_") and not callable(v)
                and not isinstance(v, type(os))}
    assert {"bind", "workers", "timeout", "wsgi_app", "preload_app"} <= set(settings)
    assert {k: exported[k] for k in settings} == settings


def test_gunicorn_accepts_the_config():
    check = subprocess.run([sys.executable, "-m", "gunicorn", "--check-config", "--config", "gunicorn.conf.py"],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stderr


# ---------------------------------------------------------------- specdec-service serve


def serve_argv(monkeypatch, *args):
    """The command line ``specdec-service serve *args`` would exec."""
    calls = []
    monkeypatch.setattr(cli.os, "execv", lambda path, argv: calls.append((path, argv)))
    assert main(["serve", *args]) == 0
    [(path, argv)] = calls
    assert path == sys.executable and argv[:3] == [sys.executable, "-m", "gunicorn"]
    return argv[3:]


@pytest.mark.parametrize("args", [
    ["--workers", "1"], ["-w", "1"], ["--bind", "127.0.0.1:9999"], ["--bind=127.0.0.1:9999", "-w1"],
    ["--print-config"], ["--check-config", "--log-level", "debug"], ["-h"], ["--version"], [],
])
def test_serve_passes_every_gunicorn_option_through(monkeypatch, args):
    monkeypatch.delenv("SPECDEC_GUNICORN_CONF", raising=False)
    assert serve_argv(monkeypatch, *args) == ["--config", "python:specdec_service.gunicorn_conf", *args,
                                              "specdec_service:create_app()"]
    assert serve_argv(monkeypatch, "--", *args)[2:-1] == args  # a leading -- is dropped


def test_serve_uses_the_file_specdec_gunicorn_conf_names(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("SPECDEC_GUNICORN_CONF", str(ROOT / "gunicorn.conf.py"))
    assert serve_argv(monkeypatch, "-w", "1")[:2] == ["--config", str(ROOT / "gunicorn.conf.py")]
    monkeypatch.setenv("SPECDEC_GUNICORN_CONF", str(tmp_path / "missing.py"))
    with pytest.raises(SystemExit) as stopped:
        main(["serve"])
    assert stopped.value.code == 2
    assert capsys.readouterr().err == f"specdec-service: SPECDEC_GUNICORN_CONF names no file: {tmp_path / 'missing.py'}\n"


def test_serve_outside_the_repository_uses_the_package_settings(tmp_path):
    """``specdec-service serve --print-config`` from an unrelated directory:
    the SPECDEC_* settings apply and gunicorn's options override them."""
    env = {k: v for k, v in os.environ.items() if k not in ENV}
    env.update(SPECDEC_BIND="127.0.0.1:8123", SPECDEC_WORKERS="3")
    printed = subprocess.run([sys.executable, "-m", "specdec_service.cli", "serve", "-w", "1", "--print-config"],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert printed.returncode == 0, printed.stderr
    config = {key.strip(): value.strip() for key, value in
              (line.split(" = ", 1) for line in printed.stdout.splitlines() if " = " in line)}
    assert config["bind"] == "['127.0.0.1:8123']" and config["workers"] == "1"
    assert config["wsgi_app"] == "specdec_service:create_app()" and config["preload_app"] == "True"
    assert config["config"] == "python:specdec_service.gunicorn_conf"
    assert "Traceback" not in printed.stderr


# ---------------------------------------------------------------- specdec-service openapi


def test_cli_openapi_check_and_write(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["openapi", "--check"]) == 0
    monkeypatch.chdir(ROOT / "docs")  # found from a subdirectory too
    assert main(["openapi", "--check"]) == 0
    stale = tmp_path / "openapi.yaml"
    stale.write_text("openapi: 3.1.0\n")
    assert main(["openapi", "--check", "--path", str(stale)]) == 1
    assert "specdec-service openapi --write" in capsys.readouterr().err
    assert main(["openapi", "--write", "--path", str(stale)]) == 0
    assert stale.read_bytes() == (ROOT / "openapi.yaml").read_bytes()


@pytest.mark.parametrize("flag", ["--check", "--write"])
def test_cli_openapi_outside_the_repository_says_so(tmp_path, capsys, monkeypatch, flag):
    """Not the package's directory (site-packages for a regular install): one line, status 2."""
    (tmp_path / "openapi.yaml").write_text("openapi: 3.1.0\n")  # another project's contract is left alone
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "other"\n')
    monkeypatch.chdir(tmp_path)
    assert main(["openapi", flag]) == 2
    err = capsys.readouterr().err
    assert err.startswith("specdec-service: no openapi.yaml found") and "--path" in err and err.count("\n") == 1
    assert (tmp_path / "openapi.yaml").read_text() == "openapi: 3.1.0\n"
    assert main(["openapi"]) == 0 and capsys.readouterr().out.startswith("openapi: 3.1")
