"""The repository as checked code: ``mypy`` in its default mode passes on
``service/specdec_service``, and ruff's classic rules pass on the whole repository (service,
SDK, tests, bench, docs/figures), with the settings pyproject.toml states (``[tool.mypy]``: the
files, and the modules without type information; ``[tool.ruff.lint]``: the rules and the few
per-file exceptions; C901 with max-complexity 15: no function of the service or the SDK above
cyclomatic complexity 15). The SDK is checked, --strict, by tests/client/test_typing.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVICE = "service/specdec_service"


def test_the_service_passes_mypy(tmp_path):
    # `mypy` alone: pyproject.toml's [tool.mypy] names the service's files
    result = subprocess.run([sys.executable, "-m", "mypy", "--no-color-output", "--cache-dir", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    checked = result.stdout.strip().splitlines()[-1]
    assert checked.startswith("Success: no issues found in ") and checked.endswith(" source files"), checked
    # every module of the service, not a part of it
    modules = sum(1 for _ in (ROOT / SERVICE).rglob("*.py"))
    assert checked == f"Success: no issues found in {modules} source files"


def test_ruff_passes_on_the_whole_repository():
    # `ruff check .`: every Python file of the repository (ruff skips .venv, build and .git)
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    # the files checked include the tests, the benchmarks and the figures, not only the packages
    listed = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--show-files", "."],
                            cwd=ROOT, capture_output=True, text=True, timeout=300).stdout
    for part in ("tests/test_lint.py", "bench/", "docs/figures/make.py", "client/specdec_client/cli.py", SERVICE):
        assert part in listed, part
    # the rule set is the one pyproject.toml names (the SDK's), whatever ruff's default of the day
    shown = subprocess.run([sys.executable, "-m", "ruff", "check", "--show-settings", f"{SERVICE}/__init__.py"],
                           cwd=ROOT, capture_output=True, text=True, timeout=300).stdout
    assert "unused-import (F401)" in shown and "lambda-assignment (E731)" in shown
    assert "non-pep604-annotation-optional (UP045)" not in shown
    # no function of the service or the SDK above cyclomatic complexity 15 (ruff's default is 10)
    for package in (SERVICE, "client/specdec_client"):
        shown = subprocess.run([sys.executable, "-m", "ruff", "check", "--show-settings", f"{package}/__init__.py"],
                               cwd=ROOT, capture_output=True, text=True, timeout=300).stdout
        assert "complex-structure (C901)" in shown and "linter.mccabe.max_complexity = 15" in shown, package
