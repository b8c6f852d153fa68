"""The real service under gunicorn (``live_url``), gunicorn.conf.py and the
``specdec-service`` command."""

import runpy
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from specdec_service import __version__
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


def config_with(monkeypatch, **env):
    for key in ("SPECDEC_BIND", "SPECDEC_WORKERS", "SPECDEC_TIMEOUT"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return runpy.run_path(str(ROOT / "gunicorn.conf.py"))


def test_gunicorn_conf_defaults_and_environment(monkeypatch):
    import multiprocessing

    defaults = config_with(monkeypatch)
    assert defaults["bind"] == "127.0.0.1:8000" and defaults["workers"] == multiprocessing.cpu_count()
    assert defaults["accesslog"] == "-" and defaults["wsgi_app"] == "specdec_service:create_app()"
    custom = config_with(monkeypatch, SPECDEC_BIND="0.0.0.0:9000", SPECDEC_WORKERS="3", SPECDEC_TIMEOUT="5")
    assert (custom["bind"], custom["workers"], custom["timeout"]) == ("0.0.0.0:9000", 3, 5)


def test_gunicorn_accepts_the_config():
    check = subprocess.run([sys.executable, "-m", "gunicorn", "--check-config", "--config", "gunicorn.conf.py"],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stderr


def test_cli_openapi_check_and_write(tmp_path, capsys):
    assert main(["openapi", "--check"]) == 0
    stale = tmp_path / "openapi.yaml"
    stale.write_text("openapi: 3.1.0\n")
    assert main(["openapi", "--check", "--path", str(stale)]) == 1
    assert "specdec-service openapi --write" in capsys.readouterr().err
    assert main(["openapi", "--write", "--path", str(stale)]) == 0
    assert stale.read_bytes() == (ROOT / "openapi.yaml").read_bytes()
