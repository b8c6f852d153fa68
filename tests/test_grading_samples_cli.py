"""``specdec grade --samples N`` with --exec and --python, and --samples-from (issue 20 items 1-2):
the student sampler of tests/students/sampler.py, correct and with planted mistakes."""

import json
import sys
from pathlib import Path

import pytest
import responses
from specdec_client import Client
from specdec_client.cli import main
from specdec_client.sampler_grading import sample_configs
from client.service_backend import forward_to_app

BASE = "http://samples.test"
SAMPLER = Path(__file__).resolve().parent / "students" / "sampler.py"
PROGRAM = f"{sys.executable} {SAMPLER}"
N = "2000"


@pytest.fixture
def service():
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        for method, path in (("GET", "/v1/grade/suites/standard"), ("GET", "/v1/grade/suites/all"),
                             ("GET", "/v1/grade/suites/all%401"), ("GET", "/v1/models"), ("POST", "/v1/grade/samples")):
            mock.add_callback(method, BASE + path, callback=forward_to_app)
        yield mock


def configs() -> int:
    """How many configs the standard suite grades by samples (greedy left out, configs that
    differ only by their seed taken once): read from the service through the SDK."""
    count = len(sample_configs(Client(BASE)))
    assert count >= 4
    return count


def test_a_correct_program_passes_every_sample_config(service, tmp_path, capsys):
    results = tmp_path / "results.json"
    assert main(["grade", "--exec", PROGRAM, "--samples", N, "--gradescope", str(results), "--url", BASE]) == 0
    out = capsys.readouterr().out
    n = configs()
    assert f"{n}/{n} configs passed" in out
    gradescope = json.loads(results.read_text())
    assert gradescope["score"] == 10.0 * n and len(gradescope["tests"]) == n


@pytest.mark.parametrize("planted, named", [("correction-from-p", "resample-from-p"),
                                            ("bonus-at-limit", "bonus-past-limit"),
                                            ("argmax-proposals", "argmax-proposals-tested-as-samples"),
                                            ("overshoot", None), ("one-draw", None)])
def test_planted_mistakes_fail_with_the_mistake_named_where_catalogued(service, capsys, monkeypatch, planted, named):
    monkeypatch.setenv("SAMPLER_MISTAKE", planted)
    assert main(["grade", "--exec", PROGRAM, "--samples", N, "--json", "--url", BASE]) == 1
    tests = json.loads(capsys.readouterr().out)
    failed = [t for t in tests if not t["passed"]]
    assert failed
    names = {(t["report"]["mistake"]["named"] or {}).get("id") for t in failed}
    if named is None:
        assert names == {None}
        assert all("No catalogued mistake" in t["report"]["reason"] or "no catalogued" in t["report"]["reason"].lower()
                   for t in failed)
    else:
        assert named in names
        message = next(t["message"] for t in failed if (t["report"]["mistake"]["named"] or {}).get("id") == named)
        assert f"[{named}]" in message and "Evidence: ln L(mistake) - ln L(target) = " in message
        assert "Most deviating: position " in message or "Incomplete sessions" in message


def test_a_correct_python_function_passes_through_the_sdk(service):
    """The suite has configs of modes block and tree: the function takes ``mode``, ``drafts`` and
    ``sampling`` (tests/students/modes_sampler.py; a function without them fails those configs,
    tests/test_grading_samples_modes.py)."""
    sys.path.insert(0, str(SAMPLER.parent))
    import modes_sampler

    modes_sampler.MISTAKE = ""
    calls = []
    tests = Client(BASE).grade_sampler(modes_sampler.decode, samples=int(N),
                                       progress=lambda *call: calls.append(call))
    n = configs()
    assert [t.passed for t in tests] == [True] * n
    # the bar follows the function's calls in batches of 50 samples, then the grading config by config
    drawn = [done for stage, done, total in calls if stage == "sample" and total == n * int(N)]
    assert drawn[0] == 0 and drawn[-1] == n * int(N) and drawn == sorted(drawn)
    assert set(range(0, n * int(N) + 1, 50)) <= set(drawn)
    assert [c for c in calls if c[0] != "sample"] == [("samples", i, n) for i in range(n + 1)]
    assert main(["grade", "--python", f"{SAMPLER.parent / 'modes_sampler.py'}:decode", "--samples", "500",
                 "--url", BASE]) == 0


def test_timeouts_crashes_junk_and_wrong_counts_fail_only_their_config(service, tmp_path, capsys):
    junk = tmp_path / "junk.py"
    junk.write_text("import json, sys\njob = json.load(sys.stdin)\n"
                    "if job['config']['mode'] == 'autoregressive': print('hello')\n"
                    "elif job['config']['eos'] is not None: __import__('time').sleep(30)\n"
                    "elif job['config']['mode'] == 'block': sys.exit(3)\n"
                    "else:\n    [print(json.dumps(['A'] * job['config']['limit'])) for _ in range(job['samples'] - 1)]\n")
    assert main(["grade", "--exec", f"{sys.executable} {junk}", "--samples", "20", "--json", "--timeout", "2",
                 "--suite", "all", "--url", BASE]) == 1  # all: its block configs too
    tests = {t["id"]: t for t in json.loads(capsys.readouterr().out)}
    problems = sorted(t["problem"] for t in tests.values())
    assert any("printed 19 lines, not 20" in p for p in problems)
    assert any("exited with status 3" in p for p in problems)
    assert any("line 1 of 1 is not JSON: 'hello'" in p and "standard error" in p for p in problems)
    assert any("ran longer than 2 s and was stopped" in p for p in problems)
    assert len(problems) == len(sample_configs(Client(BASE), "all"))  # every config failed with its own problem


def test_samples_from_a_file(service, tmp_path, capsys):
    lines = tmp_path / "samples.jsonl"
    lines.write_text("\n".join(json.dumps(["A"] * 9) for _ in range(30)) + "\n")
    config = json.dumps({"target": "toy", "limit": 8})
    assert main(["grade", "--samples-from", str(lines), "--config", config, "--url", BASE]) == 1
    out = capsys.readouterr().out
    assert "30 of 30 samples are too long: 30 by 1 token" in out
    assert main(["grade", "--samples-from", str(lines), "--url", BASE]) == 2


HALF_THEN_WAIT = """
import json, os, sys, time
job = json.load(sys.stdin)
n, flag = job["samples"], sys.argv[1]
for i in range(n):
    if i == n // 2:
        sys.stdout.flush()
        deadline = time.monotonic() + 30
        while not os.path.exists(flag) and time.monotonic() < deadline:
            time.sleep(0.01)
    print(json.dumps(["A"] * job["config"]["limit"]))
"""


def test_a_programs_progress_moves_with_the_lines_it_prints(service, tmp_path):
    """``--samples --exec``: the bar counts the lines each program has printed so far, not only
    finished programs. The program prints half its samples, then waits until the progress has
    shown them (the callback creates the file it waits for), so the test is causal, not timed."""
    script, flag = tmp_path / "half.py", tmp_path / "seen"
    script.write_text(HALF_THEN_WAIT)
    calls = []

    def progress(stage, done, total):
        calls.append((stage, done, total))
        if stage == "sample" and 0 < done < total:
            flag.touch()

    config = {"target": "toy", "draft": "biased", "mode": "speculative", "width": 2, "limit": 2, "eos": None}
    Client(BASE).grade_sampler(command=f"{sys.executable} {script} {flag}", configs=[("a", config)], samples=200,
                               progress=progress, timeout=60)
    drawn = [done for stage, done, total in calls if stage == "sample"]
    assert drawn[0] == 0 and drawn[-1] == 200 and drawn == sorted(drawn)
    assert any(0 < done < 200 for done in drawn)  # lines seen while the program still ran (it waits for them)
    assert [c for c in calls if c[0] == "samples"][-1] == ("samples", 1, 1)
