"""``specdec grade --samples``: the instructor's common mistakes get a clear sentence and the
documented exit status (docs/sdk.md, "Exit status"; docs/grading.md, "The command and the SDK").

The kinds walked: a function with the wrong signature (a parameter missing, renamed, or one
more required), a function that prints, a program that prints other lines among its samples
(before, between, after; text, a JSON object, a JSON list of numbers), a wrong number of lines,
a ``--config`` that is not JSON or that the service refuses; and each failure message shows
what the sampler was really given (the count asked for, not ``null``)."""

import json
import sys

import pytest
from specdec_client.cli import main
from specdec_client.sampler_grading import read_lines

from test_grading_samples_cli import BASE, service  # noqa: F401  (the fixture)

pytestmark = pytest.mark.usefixtures("service")  # every test talks to the app through the SDK

CONFIG = {"target": "toy", "draft": "biased", "mode": "speculative", "width": 2, "limit": 3, "eos": None}
GOOD_BODY = """
def _sample(row, rng):
    u, c = rng.random(), 0.0
    for i, x in enumerate(row):
        c += x
        if u < c:
            return i
    return len(row) - 1

def _decode(target, limit, rng):
    out = []
    while len(out) < limit:
        out.append(target.vocab[_sample(target(out), rng)])
    return out
"""


def grade_function(tmp_path, source, name, capsys, *extra):
    student = tmp_path / "student.py"
    student.write_text(GOOD_BODY + source)
    status = main(["grade", "--python", f"{student}:{name}", "--samples", "200", "--config",
                   json.dumps(CONFIG), "--json", "--url", BASE, *extra])
    captured = capsys.readouterr()
    return status, json.loads(captured.out), captured.err


@pytest.mark.parametrize("signature, missing", [
    ("target, draft, gamma", "'gamma'"),                              # the exercise's own names
    ("target, draft, width, limit, eos", "unexpected keyword argument 'rng'"),
    ("target, draft, width, max_len, eos, rng", "'max_len'"),
    ("target, draft, width, limit, eos, rng, temperature", "'temperature'"),
])
def test_a_function_with_the_wrong_signature_is_told_which_parameter(tmp_path, capsys, signature, missing):
    status, tests, _ = grade_function(tmp_path, f"def fn({signature}):\n    return []\n", "fn", capsys)
    assert status == 1
    problem = tests[0]["problem"]
    assert problem.startswith("the function cannot be called as fn(target=, draft=, rng=, width=, limit=, eos=): ")
    assert missing in problem and f"its signature is fn({signature})" in problem
    assert "sampling.py" not in problem  # not a frame of the harness


def test_an_exception_names_the_students_line(tmp_path, capsys):
    source = "def fn(target, draft, width, limit, eos, rng):\n    return [target.vocab[9]]\n"
    status, tests, _ = grade_function(tmp_path, source, "fn", capsys)
    assert status == 1
    problem = tests[0]["problem"]
    assert problem.startswith("the function raised IndexError: list index out of range (")
    assert f"{tmp_path / 'student.py'}:" in problem


def test_a_function_that_prints_leaves_the_json_whole(tmp_path, capsys):
    source = ("def fn(target, draft, width, limit, eos, rng):\n    print('debug', limit)\n"
              "    return _decode(target, limit, rng)\n")
    status, tests, err = grade_function(tmp_path, source, "fn", capsys)
    assert status == 0 and tests[0]["passed"] and tests[0]["samples"] == 200
    assert err.count("debug 3") == 200  # its prints go to standard error


def test_a_failure_message_shows_what_the_function_was_given(tmp_path, capsys):
    source = "def fn(target, draft, width, limit, eos, rng):\n    return _decode(target, limit + 1, rng)\n"
    status, tests, _ = grade_function(tmp_path, source, "fn", capsys)
    assert status == 1
    message = tests[0]["message"]
    assert "Input on standard input" not in message  # a function has none
    assert f"Called 200 times with the models of the config {json.dumps(CONFIG, separators=(',', ':'))}" in message
    assert "rng = random.Random(0)" in message
    assert "200 of 200 samples are too long: 200 by 1 token" in message


@pytest.mark.parametrize("output, problem", [
    ("starting\n" + '["A","B","C"]\n' * 20, "line 1 of 21 is not JSON: 'starting'"),
    ('["A","B","C"]\n' * 10 + "half way\n" + '["A","B","C"]\n' * 10, "line 11 of 21 is not JSON: 'half way'"),
    ('["A","B","C"]\n' * 20 + '{"done": true}\n', "line 21 of 21 is not a JSON list of token labels"),
    ('["A","B","C"]\n' * 19 + "[1, 2, 3]\n", "line 20 of 20 is not a JSON list of token labels: '[1, 2, 3]'"),
    ('["A","B","C"]\n' * 19 + "null\n", "line 20 of 20 is not a JSON list of token labels: 'null'"),
])
def test_junk_among_the_samples_is_named_with_its_line(output, problem):
    samples, said = read_lines(output.encode(), 20)
    assert samples == [] and said is not None
    assert said.startswith(problem)
    assert said.endswith("(print only the samples on standard output, one JSON list of labels a line; "
                         "messages go to standard error)")


@pytest.mark.parametrize("lines, said", [(19, "it printed 19 lines, not 20"), (21, "it printed 21 lines, not 20"),
                                         (0, "it printed 0 lines, not 20")])
def test_a_wrong_count_of_good_lines_is_counted(lines, said):
    assert read_lines(('["A"]\n' * lines).encode(), 20) == ([], said + " (one JSON list of labels per sample)")


def test_a_failure_message_shows_the_programs_whole_input(tmp_path, capsys):
    program = tmp_path / "sd.py"
    program.write_text("import json, sys\njob = json.load(sys.stdin)\n"
                       "[print(json.dumps(['A'] * 5)) for _ in range(job['samples'])]\n")
    status = main(["grade", "--exec", f"{sys.executable} {program}", "--samples", "30", "--config",
                   json.dumps(CONFIG), "--url", BASE])
    out = capsys.readouterr().out
    assert status == 1
    stdin = json.dumps({"config": CONFIG, "samples": 30, "seed": 0}, separators=(",", ":"))
    assert f"\nInput on standard input: {stdin}\n" in out  # whole, the count given (never null)
    assert "30 of 30 samples are too long: 30 by 2 tokens" in out


def test_the_config_of_a_file_is_shown_as_the_config(tmp_path, capsys):
    lines = tmp_path / "samples.jsonl"
    lines.write_text('["A"]\n' * 30)
    assert main(["grade", "--samples-from", str(lines), "--config", json.dumps(CONFIG), "--url", BASE]) == 1
    out = capsys.readouterr().out
    assert f"\nGraded against the config: {json.dumps(CONFIG, separators=(',', ':'))}\n" in out
    assert "Input on standard input" not in out


@pytest.mark.parametrize("how", ["samples-from", "exec"])
def test_a_bad_config_is_a_usage_error_or_a_refusal_not_a_failed_student(tmp_path, capsys, how):
    lines = tmp_path / "samples.jsonl"
    lines.write_text('["A","B","C"]\n' * 20)
    program = f"{sys.executable} -c \"import sys; sys.stdin.read(); print(open({str(lines)!r}).read())\""
    source = ["--samples-from", str(lines)] if how == "samples-from" else ["--exec", program, "--samples", "20"]
    # not JSON: a usage error (2) that says it is --config
    assert main(["grade", *source, "--config", '{"target": "toy", "limit": 3', "--url", BASE]) == 2
    err = capsys.readouterr().err
    assert "--config is not JSON (" in err and "'{\"target\": \"toy\", \"limit\": 3'" in err
    # refused by the service: 4 (docs/sdk.md, "Exit status"), naming the field
    assert main(["grade", *source, "--config", '{"target": "toy", "limt": 3}', "--url", BASE]) == 4
    assert "#/config/limt" in capsys.readouterr().err
    assert main(["grade", *source, "--config", '{"target": "toy", "width": 40, "limit": 3}', "--url", BASE]) == 4
    assert "#/config/width" in capsys.readouterr().err
    # with a good config the samples are graded (20 identical sessions deviate: the student's fail, 1)
    assert main(["grade", *source, "--config", '{"target": "toy", "limit": 3}', "--url", BASE]) == 1
    assert "Failed: The samples deviate from the target" in capsys.readouterr().out
    # a label outside the vocabulary is the sampler's mistake too: 1, not 4
    assert main(["grade", *source, "--config", '{"target": {"vocab": ["A", "B", "D"], "start": [0.5, 0.25, 0.25], '
                 '"next": {"A": [0.5, 0.25, 0.25], "B": [0.5, 0.25, 0.25], "D": [0.5, 0.25, 0.25]}}, "limit": 3}', "--url", BASE]) == 1
    assert "'C' is not a token of the vocabulary" in capsys.readouterr().out


@pytest.mark.parametrize("returned, problem", [
    ("[target.vocab.index(t) for t in _decode(target, limit, rng)]",
     "the function returned token ids ["),                                      # ids, not labels
    ("None", "the function returned NoneType None, not a list of token labels"),  # forgot the return
    ("' '.join(_decode(target, limit, rng))", "the function returned str '"),     # one string
    ("[{'token': t} for t in _decode(target, limit, rng)]", "the function returned [{'token': "),
])
def test_a_function_returning_something_else_than_labels_is_told_what(tmp_path, capsys, returned, problem):
    source = f"def fn(target, draft, width, limit, eos, rng):\n    return {returned}\n"
    status, tests, _ = grade_function(tmp_path, source, "fn", capsys)
    assert status == 1
    assert tests[0]["problem"].startswith(problem) and tests[0]["samples"] == 0
    if "ids" in problem:
        assert tests[0]["problem"].endswith("not labels: return the labels, [target.vocab[i] for i in ids]")


def test_a_tuple_or_any_iterable_of_labels_is_taken(tmp_path, capsys):
    source = "def fn(target, draft, width, limit, eos, rng):\n    return tuple(_decode(target, limit, rng))\n"
    status, tests, _ = grade_function(tmp_path, source, "fn", capsys)
    assert status == 0 and tests[0]["samples"] == 200


def test_an_endless_loop_fails_its_config_and_does_not_hang_the_grader(tmp_path, capsys):
    """The classic: after a rejection nothing is appended, ``while len(out) < limit`` never ends.
    One call may take ``--timeout`` seconds (here 1); the function's own ``except Exception``
    does not swallow the stop; the next config is graded."""
    source = ("def fn(target, draft, width, limit, eos, rng):\n"
              "    out = []\n"
              "    while len(out) < limit:\n"
              "        try:\n"
              "            if width:\n"
              "                continue  # forgot to append after the rejection\n"
              "            out.append(target.vocab[0])\n"
              "        except Exception:\n"
              "            pass\n"
              "    return _decode(target, limit, rng)\n")
    student = tmp_path / "student.py"
    student.write_text(GOOD_BODY + source)
    auto = {**CONFIG, "mode": "autoregressive"}
    status = main(["grade", "--python", f"{student}:fn", "--samples", "50", "--timeout", "1", "--json",
                   "--config", json.dumps(CONFIG), "--url", BASE])
    tests = json.loads(capsys.readouterr().out)
    assert status == 1
    problem = tests[0]["problem"]
    assert problem.startswith("call 1 of the function ran longer than 1 s and was stopped (at ")
    assert f"{student}:" in problem and problem.endswith("an endless loop? (--timeout sets the limit of one call)")
    assert main(["grade", "--python", f"{student}:fn", "--samples", "50", "--timeout", "1",
                 "--config", json.dumps(auto), "--url", BASE]) == 0  # graded: the alarm was disarmed
    assert "ran longer" not in capsys.readouterr().out


def test_sys_exit_in_the_function_fails_its_config_only(tmp_path, capsys):
    """``sys.exit`` (or ``exit()``) in the student's function is its failure, not the grader's
    end: before, the grader stopped with the student's message, nothing graded, no JSON."""
    source = "def fn(target, draft, width, limit, eos, rng):\n    raise SystemExit('bad state')\n"
    status, tests, _ = grade_function(tmp_path, source, "fn", capsys)
    assert status == 1
    assert tests[0]["problem"].startswith("the function raised SystemExit: bad state (")
    assert f"{tmp_path / 'student.py'}:" in tests[0]["problem"]


@pytest.mark.parametrize("top_level, status, said", [
    ("print('loading the student module')\n", 0, None),                      # prints: stderr, JSON whole
    ("import sys\nsys.exit('usage: student.py N')\n", 2, "raised SystemExit: usage: student.py N"),
    ("raise RuntimeError('no GPU')\n", 2, "raised RuntimeError: no GPU"),
])
def test_the_students_module_at_import(tmp_path, capsys, top_level, status, said):
    student = tmp_path / "student.py"
    student.write_text(top_level + GOOD_BODY + "def fn(target, draft, width, limit, eos, rng):\n"
                       "    return _decode(target, limit, rng)\n")
    assert main(["grade", "--python", f"{student}:fn", "--samples", "200", "--config", json.dumps(CONFIG),
                 "--json", "--url", BASE]) == status
    captured = capsys.readouterr()
    if said is None:
        assert json.loads(captured.out)[0]["passed"] and "loading the student module" in captured.err
    else:
        assert captured.out == "" and f"specdec grade: error: importing {student} {said}" in captured.err


def test_a_samples_file_with_other_lines_or_none(tmp_path, capsys):
    """A file is told about its lines (not about standard output); an empty one is a usage error."""
    lines = tmp_path / "samples.jsonl"
    lines.write_text("# collected on Monday\n" + '["A","B","C"]\n' * 20)
    assert main(["grade", "--samples-from", str(lines), "--config", json.dumps(CONFIG), "--url", BASE]) == 1
    out = capsys.readouterr().out
    assert ("Failed: line 1 of 21 is not JSON: '# collected on Monday' (each line of the file must be one JSON "
            "list of labels: one whole session's output)") in out
    lines.write_text("\n\n")
    assert main(["grade", "--samples-from", str(lines), "--config", json.dumps(CONFIG), "--url", BASE]) == 2
    assert f"specdec grade: error: {lines} holds no samples (one JSON list of labels a line)" in capsys.readouterr().err


def test_jobs_runs_programs_at_once_and_is_refused_for_a_function(tmp_path, capsys):
    """``--jobs`` was silently ignored with ``--samples``: it now runs that many programs at once
    (each config still gets its own seed and its own result), and is a usage error with
    ``--python`` (a function is called in this process)."""
    program = tmp_path / "sd.py"
    program.write_text("import json, sys\njob = json.load(sys.stdin)\n"
                       "print(json.dumps({'seed': job['seed']}) if job['config']['mode'] == 'block' else '')\n")
    assert main(["grade", "--exec", f"{sys.executable} {program}", "--samples", "1", "--jobs", "3", "--json",
                 "--url", BASE]) == 1
    tests = json.loads(capsys.readouterr().out)
    assert [t["seed"] for t in tests] == list(range(len(tests)))  # suite order, seeds 0, 1, ...
    for t in tests:
        expected = ("line 1 of 1 is not a JSON list of token labels: '{\"seed\": " + str(t["seed"]) + "}'"
                    if t["config"]["mode"] == "block" else "it printed 0 lines, not 1")
        assert t["problem"].startswith(expected), t["problem"]
    student = tmp_path / "student.py"
    student.write_text(GOOD_BODY + "def fn(target, draft, width, limit, eos, rng):\n    return _decode(target, limit, rng)\n")
    assert main(["grade", "--python", f"{student}:fn", "--samples", "10", "--jobs", "2", "--url", BASE]) == 2
    assert "a Python function is called in this process, one call at a time" in capsys.readouterr().err
