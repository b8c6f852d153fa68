"""Shared fixtures: the Flask app and its test client, and the real service
under gunicorn (``live_url``, session-scoped; the SDK's integration tests
reuse it).

Pattern of the Flask tutorial: ``app`` honours a test config, ``client``
is its test client.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import requests
from hypothesis import settings

from specdec_service import create_app

settings.register_profile("specdec", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "specdec"))
"""No test depends on timing: hypothesis's per-example deadline (200 ms by default) is off for
every property test (a loaded machine took 354 ms for one example of test_fast_json, issue 18).
The profile is loaded here, before any test module builds its ``@settings``, which inherit it;
``HYPOTHESIS_PROFILE=default`` brings hypothesis's own defaults back."""

ROOT = Path(__file__).resolve().parents[1]
SEED1 = {"config": {"draft": "biased", "seed": 1}}
"""The SPEC section 4 worked example's starting state."""


@pytest.fixture
def app():
    """The app in testing mode."""
    return create_app({"TESTING": True})


@pytest.fixture
def client(app):
    """The app's Flask test client."""
    return app.test_client()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_health(url: str, process: subprocess.Popen, timeout: float = 30.0) -> None:
    """Poll ``url/health`` until it answers 200; raise if the process dies
    or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited with status {process.returncode}")
        try:
            if requests.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except requests.RequestException:  # not listening yet, or no worker answering yet
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url}/health did not answer within {timeout} s")


def start_gunicorn(port: int, log, workers: int = 1) -> subprocess.Popen:
    """``specdec-service serve`` (gunicorn with the repository's
    ``gunicorn.conf.py``) on ``port``."""
    env = {**os.environ, "SPECDEC_BIND": f"127.0.0.1:{port}", "SPECDEC_WORKERS": str(workers),
           "SPECDEC_GUNICORN_CONF": str(ROOT / "gunicorn.conf.py")}
    return subprocess.Popen(
        [sys.executable, "-m", "specdec_service.cli", "serve"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )


def stop(process: subprocess.Popen) -> None:
    """SIGTERM (gunicorn's graceful stop), then SIGKILL after 15 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def live_url():
    """Base URL (``http://127.0.0.1:<port>``) of the real service under
    gunicorn, started once per test session and stopped at its end."""
    with tempfile.TemporaryFile(mode="w+") as log:
        port = free_port()
        process = start_gunicorn(port, log)
        url = f"http://127.0.0.1:{port}"
        try:  # the server is stopped whatever happens, a failed start included
            try:
                wait_for_health(url, process)
            except RuntimeError as error:
                log.seek(0)
                pytest.fail(f"the live service did not start: {error}\n{log.read()[-4000:]}")
            yield url
        finally:
            stop(process)
