"""``deploy/local.py``'s command line: ``--run-dir`` is accepted before and after the
subcommand, as its docstring and docs/deploy.md write it (the edge itself is tested in
tests/test_edge.py). Nothing is started here."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOCAL = ROOT / "deploy" / "local.py"


@pytest.fixture
def local(monkeypatch):
    """deploy/local.py as a module, its four commands replaced by recorders of their arguments."""
    spec = importlib.util.spec_from_file_location("deploy_local_cli", LOCAL)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "deploy_local_cli", module)  # dataclasses look the module up
    spec.loader.exec_module(module)
    module.calls = []
    for name in ("up", "restart", "status", "down"):
        monkeypatch.setattr(module, name, lambda *args, name=name: module.calls.append((name, *args)) or 0)
    return module


@pytest.mark.parametrize("argv, expected", [
    (["status"], ("status",)),
    (["down"], ("down",)),
    (["restart", "2"], ("restart", 2)),
    (["up", "--port", "8080", "--replicas", "3"], ("up", "127.0.0.1", 8080, 3, 1)),
])
def test_run_dir_before_or_after_the_subcommand(local, tmp_path, argv, expected):
    run = tmp_path / "run"
    name, *rest = expected
    assert local.main(["--run-dir", str(run), *argv]) == 0
    assert local.main([*argv, "--run-dir", str(run)]) == 0
    assert local.main([argv[0], "--run-dir", str(run), *argv[1:]]) == 0
    assert local.main(argv) == 0  # the default
    assert local.calls == [(name, run, *rest)] * 3 + [(name, local.DEFAULT_RUN_DIR.resolve(), *rest)]


def test_after_the_subcommand_it_wins(local, tmp_path):
    assert local.main(["--run-dir", str(tmp_path / "a"), "status", "--run-dir", str(tmp_path / "b")]) == 0
    assert local.calls == [("status", tmp_path / "b")]


def test_the_script_reads_run_dir_after_the_subcommand(tmp_path):
    result = subprocess.run([sys.executable, str(LOCAL), "status", "--run-dir", str(tmp_path)],
                            capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"deploy/local.py: no deployment in {tmp_path}\n"
