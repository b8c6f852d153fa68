"""Progress on standard error (specdec_client.progress): drawn only on a terminal or with
FORCE_COLOR, coloured unless NO_COLOR, never on stdout, absent without tqdm (the cli extra),
and reported by the SDK's long tasks as ``progress(stage, done, total)``. No timing is
asserted: the bar's delay and redraw interval are set to 0 where a test reads the bar."""

import io
import json
import sys
from pathlib import Path

import pytest

from specdec_client import cli, progress
from specdec_client.harness import Row, grade_program, grade_rows

from .service_backend import BASE, run_body

STUDENT = Path(__file__).resolve().parents[1] / "students" / "student.py"


class Tty(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch):
    monkeypatch.setenv("SPECDEC_URL", BASE)
    for name in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm")


@pytest.fixture
def immediate(monkeypatch):
    """Bars drawn at once and at every update (no timing in the test)."""
    monkeypatch.setattr(progress, "DELAY", 0)
    monkeypatch.setattr(progress, "MIN_INTERVAL", 0)


@pytest.mark.parametrize("env, stream, expected", [
    ({}, Tty(), True), ({}, io.StringIO(), False), ({"TERM": "dumb"}, Tty(), False),
    ({"FORCE_COLOR": "1"}, io.StringIO(), True), ({"FORCE_COLOR": ""}, io.StringIO(), False),
    ({"NO_COLOR": "1"}, Tty(), True),  # NO_COLOR takes the colour away, not the bar
])
def test_wanted(monkeypatch, env, stream, expected):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert progress.wanted(stream) is expected


def test_bars_on_a_terminal(immediate):
    pytest.importorskip("tqdm")
    stream = Tty()
    with progress.Bars(stream) as bars:
        for done in range(4):
            bars("grade", done, 3)
        bars("run", 0, 2)  # a new stage: a new bar
    text = stream.getvalue()
    assert "grading" in text and "0/3" in text and "3/3" in text and "running" in text and "0/2" in text
    assert "\x1b[" not in text.replace("\x1b[A", "")  # uncoloured unless asked


def test_coloured_bars(immediate):
    pytest.importorskip("tqdm")
    stream = Tty()
    with progress.Bars(stream, color=True) as bars:
        bars("grade", 1, 2)
    assert "\x1b[32m" in stream.getvalue()  # tqdm's green


def test_nothing_off_a_terminal_or_without_tqdm(monkeypatch, immediate):
    stream = io.StringIO()
    with progress.Bars(stream) as bars:
        bars("grade", 0, 3)
        bars("grade", 3, 3)
    assert stream.getvalue() == "" and not bars.active
    monkeypatch.setitem(sys.modules, "tqdm", None)  # the cli extra not installed
    stream = Tty()
    with progress.Bars(stream) as bars:
        bars("grade", 0, 3)
    assert stream.getvalue() == "" and not bars.active


def files(tmp_path, count):
    names = []
    for seed in range(count):
        path = tmp_path / f"t{seed}.json"
        path.write_text(json.dumps(run_body({"draft": "biased", "seed": seed})))
        names.append(str(path))
    return names


def test_grade_files_reports_each_request(service, tmp_path):
    seen = []
    rows = [Row(name, json.loads(Path(name).read_text())) for name in files(tmp_path, 3)]
    with _client() as client:
        grade_rows(rows, client, batch=2, progress=lambda *call: seen.append(call))
    assert seen == [("grade", 0, 3), ("grade", 2, 3), ("grade", 3, 3)]


def _client():
    from specdec_client import Client
    return Client(BASE, timeout=5, backoff_factor=0)


def test_grade_exec_reports_runs_then_grading(service):
    seen = []
    with _client() as client:
        tests = grade_program(client, f"{sys.executable} {STUDENT}", suite="quick", jobs=2,
                              progress=lambda *call: seen.append(call))
        n = len(client.suite("quick")["configs"])  # the quick suite's size (regenerated with the catalogue)
    assert all(t.passed for t in tests) and len(tests) == n
    assert seen == [("run", i, n) for i in range(n + 1)] + [("grade", 0, n), ("grade", n, n)]


def test_replay_reports_each_block(service):
    seen = []
    with _client() as client:
        report = client.replay(run_body({"draft": "biased", "seed": 1}), progress=lambda *call: seen.append(call))
    assert report.ok and seen == [("replay", i, 4) for i in range(5)]


def test_the_command_draws_on_stderr_only(service, tmp_path, capsys, monkeypatch, immediate):
    pytest.importorskip("tqdm")
    names = files(tmp_path, 3)
    assert cli.main(["grade", *names, "--batch", "1"]) == 0
    plain_out, plain_err = capsys.readouterr()
    assert plain_err == ""  # stderr is not a terminal: no bar

    monkeypatch.setenv("FORCE_COLOR", "1")
    assert cli.main(["grade", *names, "--batch", "1", "--color", "never"]) == 0
    out, err = capsys.readouterr()
    assert out == plain_out  # the table is untouched
    assert "grading" in err and "1/3" in err and "3/3" in err and "\x1b[32m" not in err

    monkeypatch.setenv("NO_COLOR", "1")
    assert cli.main(["grade", *names, "--batch", "1", "--json"]) == 0
    out, err = capsys.readouterr()
    assert len(json.loads(out)) == 3 and "3/3" in err and "\x1b[32m" not in err
