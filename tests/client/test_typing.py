"""The SDK as a typed package (issue 22 section 2): ``mypy --strict`` passes on it, a user's
project that imports it from the built wheel is type-checked against its annotations (PEP 561:
``py.typed`` ships in the wheel), and ruff's classic rules pass (client/pyproject.toml selects
them). The service is not checked here."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "client"

USER_FILE = '''\
from specdec_client import Client, InvalidInput, Trace


def output(url: str) -> tuple[str, ...]:
    with Client(url, timeout=5) as client:
        trace: Trace = client.run(draft="biased", seed=1)
        return trace.output


def width_error(error: InvalidInput) -> list[str]:
    return [e.where for e in error.errors]


wrong: int = Client("http://localhost:8000").base_url
'''
"""A user's module: typed use of the SDK, and one deliberate error (``base_url`` is a str)."""
DELIBERATE = 'user.py:14: error: Incompatible types in assignment (expression has type "str", variable has type "int")'


def mypy(*args: str, cwd: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    # without PYTHONPATH/MYPYPATH: a user's project sees the SDK only as installed (the python given
    # by --python-executable inherits the environment, and a PYTHONPATH entry would be read as source)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    return subprocess.run([sys.executable, "-m", "mypy", "--no-color-output", "--no-error-summary",
                           "--cache-dir", str(cache), *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_the_sdk_passes_mypy_strict(tmp_path):
    result = mypy("--strict", "client/specdec_client", cwd=ROOT, cache=tmp_path / "cache")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""


def installed_wheel(tmp_path: Path) -> tuple[Path, Path]:
    """A virtual environment (no pip) with the client wheel unpacked in its site-packages, as
    ``pip install`` would put it: (its python, its site-packages)."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(CLIENT / name, source / name)
    shutil.copytree(CLIENT / "specdec_client", source / "specdec_client",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                    "-w", str(tmp_path / "dist"), str(source)], check=True, timeout=600)
    wheel, = (tmp_path / "dist").glob("*.whl")
    env = tmp_path / "env"
    venv.create(env, with_pip=False)
    site, = env.glob("lib/python*/site-packages")
    zipfile.ZipFile(wheel).extractall(site)
    return env / "bin" / "python", site


def test_a_users_project_type_checks_against_the_installed_wheel(tmp_path):
    python, site = installed_wheel(tmp_path)
    assert (site / "specdec_client" / "py.typed").is_file()
    project = tmp_path / "project"
    project.mkdir()
    (project / "user.py").write_text(USER_FILE)
    result = mypy("--strict", "--python-executable", str(python), "user.py", cwd=project, cache=tmp_path / "cache")
    # the SDK's types reach the user's code: exactly the deliberate error, no import-untyped
    assert result.stdout.splitlines() == [DELIBERATE + "  [assignment]"], result.stdout + result.stderr
    assert result.returncode == 1

    # without the marker, the same project cannot see the SDK's types (what users met before)
    (site / "specdec_client" / "py.typed").unlink()
    result = mypy("--strict", "--python-executable", str(python), "user.py", cwd=project, cache=tmp_path / "cache2")
    assert "import-untyped" in result.stdout and DELIBERATE not in result.stdout, result.stdout


def test_ruff_passes_on_the_sdk():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "client/"],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    # the rule set is the one client/pyproject.toml names, whatever ruff's default of the day
    shown = subprocess.run([sys.executable, "-m", "ruff", "check", "--show-settings",
                            "client/specdec_client/__init__.py"],
                           cwd=ROOT, capture_output=True, text=True, timeout=300).stdout
    assert "unused-import (F401)" in shown and "lambda-assignment (E731)" in shown
    assert "non-pep604-annotation-optional (UP045)" not in shown
